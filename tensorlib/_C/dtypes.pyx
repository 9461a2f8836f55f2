"""dtypes and PyTorch's type promotion, in Cython because every op consults them."""
import numpy as np
import ml_dtypes

cdef str _PACKAGE = "tensorlib"


def set_package_name(str name):
    """The package name reprs and type names start with: "torch" while the `torch` alias is
    installed (tensorlib.torch_compat), so `str(x.shape)`, `str(x.dtype)` and `x.type()` read
    as they do under PyTorch (programs print them and compare them with text)."""
    global _PACKAGE
    _PACKAGE = name


cpdef str package_name():
    return _PACKAGE


cdef class dtype:
    """A tensor element type (`tensorlib.float32`, ...). Compared by identity, like torch's."""

    def __init__(self, *args):
        raise TypeError("cannot create tensorlib.dtype instances; use tensorlib.float32 etc.")

    def __repr__(self):
        return _PACKAGE + "." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    @property
    def is_complex(self):
        return self.category == 3

    def to_numpy(self):
        return self.np


cdef dict _SCALAR_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
    "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


cdef dtype _make(int code, str name, object npdtype, int category):
    cdef dtype d = dtype.__new__(dtype)
    d.code = code
    d.name = name
    d.np = np.dtype(npdtype)
    d.itemsize = d.np.itemsize
    d.category = category
    d.is_floating_point = category == 2
    d.is_signed = name not in ("bool", "uint8", "uint16", "uint32", "uint64")
    d.scalar_name = _SCALAR_NAMES[name]
    return d


cdef list DTYPES = [
    _make(BOOL, "bool", np.bool_, 0),
    _make(UINT8, "uint8", np.uint8, 1),
    _make(INT8, "int8", np.int8, 1),
    _make(INT16, "int16", np.int16, 1),
    _make(INT32, "int32", np.int32, 1),
    _make(INT64, "int64", np.int64, 1),
    _make(FLOAT16, "float16", np.float16, 2),
    _make(BFLOAT16, "bfloat16", ml_dtypes.bfloat16, 2),
    _make(FLOAT32, "float32", np.float32, 2),
    _make(FLOAT64, "float64", np.float64, 2),
    _make(COMPLEX64, "complex64", np.complex64, 3),
    _make(COMPLEX128, "complex128", np.complex128, 3),
    _make(UINT16, "uint16", np.uint16, 1),
    _make(UINT32, "uint32", np.uint32, 1),
    _make(UINT64, "uint64", np.uint64, 1),
]

bool_ = DTYPES[BOOL]
uint8 = DTYPES[UINT8]
int8 = DTYPES[INT8]
int16 = DTYPES[INT16]
int32 = DTYPES[INT32]
int64 = DTYPES[INT64]
float16 = DTYPES[FLOAT16]
bfloat16 = DTYPES[BFLOAT16]
float32 = DTYPES[FLOAT32]
float64 = DTYPES[FLOAT64]
complex64 = DTYPES[COMPLEX64]
complex128 = DTYPES[COMPLEX128]
uint16 = DTYPES[UINT16]
uint32 = DTYPES[UINT32]
uint64 = DTYPES[UINT64]
all_dtypes = tuple(DTYPES)

cdef dict _BY_NAME = {d.name: d for d in DTYPES}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "long": int64,
                 "int": int32, "short": int16, "bool_": bool_, "cfloat": complex64,
                 "cdouble": complex128})
cdef dict _BY_NUMPY = {d.np: d for d in DTYPES}

cdef dtype _default = DTYPES[FLOAT32]


def _dtype_by_name(str name):
    return _BY_NAME[name]


cdef dtype default_float():
    return _default


def get_default_dtype():
    return _default


def set_default_dtype(dtype d):
    """Set the dtype of float literals and factory functions (float32 or float64, as torch)."""
    global _default
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d!r}")
    _default = d


def from_numpy_dtype(npdtype):
    """The tensorlib dtype holding values of a numpy dtype; TypeError for unsupported ones."""
    d = _BY_NUMPY.get(np.dtype(npdtype))
    if d is None:
        raise TypeError(f"can't convert np.ndarray of type {np.dtype(npdtype)}. The only "
                        "supported types are: complex128, complex64, float64, float32, "
                        "float16, bfloat16, int64, int32, int16, int8, uint64, uint32, "
                        "uint16, uint8, and bool.")
    return d


# PyTorch's promote_types: bool < integers < floats < complex; uint8 with a signed int widens
# to int16; float16 with bfloat16 meets at float32; complex64 with float64 is complex128.
# uint16/32/64 meet only themselves and the real floating types: any other pair is -1, an error.
cdef int _PROMO[NUM_DTYPES][NUM_DTYPES]


cdef bint is_barebones_unsigned(dtype d):
    """uint16, uint32 or uint64: PyTorch gives them copies and comparisons, little arithmetic."""
    return d.code >= UINT16


cdef dtype complex_of(dtype d):
    """The complex dtype whose parts have d's precision (at least float32's)."""
    if d.category == 3:
        return d
    return <dtype>DTYPES[COMPLEX128 if d.code == FLOAT64 else COMPLEX64]


cdef int _promote_codes(int a, int b):
    if a == b:
        return a
    if a >= UINT16 or b >= UINT16:
        other = b if a >= UINT16 else a
        if (<dtype>DTYPES[other]).category == 2:
            return other
        return -1
    if a == BOOL:
        return b
    if b == BOOL:
        return a
    cdef dtype da = DTYPES[a], db = DTYPES[b]
    if da.category == 3 or db.category == 3:
        if da.category == 3 and db.category == 3:
            return a if a > b else b
        c, other = (da, db) if da.category == 3 else (db, da)
        return COMPLEX128 if c.code == COMPLEX128 or other.code == FLOAT64 else COMPLEX64
    if da.category == 2 and db.category == 2:
        if (a == FLOAT16 and b == BFLOAT16) or (a == BFLOAT16 and b == FLOAT16):
            return FLOAT32
        return a if a > b else b
    if da.category == 2:
        return a
    if db.category == 2:
        return b
    if a == UINT8 or b == UINT8:
        other = b if a == UINT8 else a
        return INT16 if other == INT8 else other
    return a if a > b else b


cdef int _i, _j
for _i in range(NUM_DTYPES):
    for _j in range(NUM_DTYPES):
        _PROMO[_i][_j] = _promote_codes(_i, _j)


cpdef dtype promote_types(dtype a, dtype b):
    """The smallest dtype both convert to without losing category (torch.promote_types)."""
    cdef int code = _PROMO[a.code][b.code]
    if code < 0:
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {a.scalar_name} and {b.scalar_name}")
    return <dtype>DTYPES[code]


def can_cast(dtype from_, dtype to):
    """torch.can_cast: no cast to a lower category (float->int, int->bool)."""
    return from_.category <= to.category
