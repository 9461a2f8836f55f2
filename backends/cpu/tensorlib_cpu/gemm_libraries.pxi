# Included by gemm.pyx (one extension module; this file is its library-binding half): the BLAS
# function pointer types and globals, how each library (numpy's OpenBLAS, scipy's BLAS, MKL,
# oneDNN's dnnl_sgemm, MKL's bf16/fp16 GEMMs) is found and bound, use_blas (the switch) and
# describe (the line `tensorlib info` prints). gemm.pyx's products call through these pointers.
ctypedef void (*sgemm64_t)(const char*, const char*, const int64_t*, const int64_t*,
                           const int64_t*, const float*, const float*, const int64_t*,
                           const float*, const int64_t*, const float*, float*,
                           const int64_t*) noexcept nogil
ctypedef void (*dgemm64_t)(const char*, const char*, const int64_t*, const int64_t*,
                           const int64_t*, const double*, const double*, const int64_t*,
                           const double*, const int64_t*, const double*, double*,
                           const int64_t*) noexcept nogil
ctypedef void (*sgemm32_t)(char*, char*, int*, int*, int*, float*, float*, int*, float*, int*,
                           float*, float*, int*) noexcept nogil
ctypedef void (*dgemm32_t)(char*, char*, int*, int*, int*, double*, double*, int*, double*,
                           int*, double*, double*, int*) noexcept nogil
ctypedef void (*set_threads_t)(int) noexcept nogil
ctypedef int (*get_threads_t)() noexcept nogil
# MKL's CBLAS, ILP64 entry points (`_64`): (layout, transa, transb, m, n, k, alpha, a, lda,
# [stride a,] b, ldb, [stride b,] beta, c, ldc[, stride c, batch])
ctypedef void (*cblas_sgemm_t)(int, int, int, int64_t, int64_t, int64_t, float, const float*,
                               int64_t, const float*, int64_t, float, float*,
                               int64_t) noexcept nogil
ctypedef void (*cblas_dgemm_t)(int, int, int, int64_t, int64_t, int64_t, double,
                               const double*, int64_t, const double*, int64_t, double, double*,
                               int64_t) noexcept nogil
ctypedef void (*cblas_sgemm_strided_t)(int, int, int, int64_t, int64_t, int64_t, float,
                                       const float*, int64_t, int64_t, const float*, int64_t,
                                       int64_t, float, float*, int64_t, int64_t,
                                       int64_t) noexcept nogil
ctypedef void (*cblas_dgemm_strided_t)(int, int, int, int64_t, int64_t, int64_t, double,
                                       const double*, int64_t, int64_t, const double*, int64_t,
                                       int64_t, double, double*, int64_t, int64_t,
                                       int64_t) noexcept nogil
# bf16 x bf16 -> f32 and f16 x f16 -> f32 (both operands 16-bit words)
# oneDNN's row-major sgemm (`dnnl_sgemm`: C = alpha op(A) op(B) + beta C, returns a status)
ctypedef int (*dnnl_sgemm_t)(char, char, int64_t, int64_t, int64_t, float, const float*,
                             int64_t, const float*, int64_t, float, float*,
                             int64_t) noexcept nogil
ctypedef void (*cblas_lowp_t)(int, int, int, int64_t, int64_t, int64_t, float, const uint16_t*,
                              int64_t, const uint16_t*, int64_t, float, float*,
                              int64_t) noexcept nogil

cdef enum:
    CBLAS_ROW_MAJOR = 101
    CBLAS_NO_TRANS = 111
    CBLAS_TRANS = 112
    MKL_THREADING_SEQUENTIAL = 1

cdef sgemm64_t _np_sgemm = NULL
cdef dgemm64_t _np_dgemm = NULL
cdef set_threads_t _np_set_threads = NULL
cdef get_threads_t _np_get_threads = NULL
cdef sgemm32_t sgemm = NULL           # scipy.linalg.cython_blas's, when numpy's is not found
cdef dgemm32_t dgemm = NULL
cdef cblas_sgemm_t _mkl_sgemm = NULL
cdef cblas_dgemm_t _mkl_dgemm = NULL
cdef cblas_sgemm_strided_t _mkl_sgemm_strided = NULL
cdef cblas_dgemm_strided_t _mkl_dgemm_strided = NULL
# "openblas+mkl": MKL's sgemm for the float32 products with B transposed, beside OpenBLAS
cdef cblas_sgemm_t _mkl_sgemm_bt = NULL
cdef dnnl_sgemm_t _dnnl_sgemm = NULL   # "onednn": float32 products (float64 on OpenBLAS)
cdef cblas_lowp_t _mkl_bf16 = NULL     # bound whenever MKL is found, whatever runs float32
cdef cblas_lowp_t _mkl_f16 = NULL

# (sgemm, dgemm, set threads, get threads) in numpy's 64-bit-integer OpenBLAS builds
_NUMPY_OPENBLAS_NAMES = (
    ("scipy_sgemm_64_", "scipy_dgemm_64_", "scipy_openblas_set_num_threads64_",
     "scipy_openblas_get_num_threads64_"),                          # numpy >= 2.0 wheels
    ("sgemm_64_", "dgemm_64_", "openblas_set_num_threads64_",
     "openblas_get_num_threads64_"),                                # numpy 1.2x wheels
)
_MKL_NAMES = ("cblas_sgemm_64", "cblas_dgemm_64", "cblas_sgemm_batch_strided_64",
              "cblas_dgemm_batch_strided_64")
_MKL_LOW_PRECISION_NAMES = ("cblas_gemm_bf16bf16f32_64", "cblas_gemm_f16f16f32_64")


def _address(lib, name):
    fn = getattr(lib, name, None)
    return ctypes.cast(fn, ctypes.c_void_p).value if fn is not None else None


def _unbind_all():
    global _np_sgemm, _np_dgemm, _np_set_threads, _np_get_threads, sgemm, dgemm
    global _mkl_sgemm, _mkl_dgemm, _mkl_sgemm_strided, _mkl_dgemm_strided, _mkl_sgemm_bt
    global _dnnl_sgemm
    _np_sgemm, _np_dgemm, _np_set_threads, _np_get_threads = NULL, NULL, NULL, NULL
    sgemm, dgemm = NULL, NULL
    _mkl_sgemm, _mkl_dgemm, _mkl_sgemm_strided, _mkl_dgemm_strided = NULL, NULL, NULL, NULL
    _mkl_sgemm_bt, _dnnl_sgemm = NULL, NULL


def _bind_numpy_openblas():
    """Use numpy's OpenBLAS if its library and symbols are found; returns its path."""
    global _np_sgemm, _np_dgemm, _np_set_threads, _np_get_threads
    for path in blas_choice.numpy_openblas_paths():
        lib = ctypes.CDLL(path)
        for names in _NUMPY_OPENBLAS_NAMES:
            found = [_address(lib, n) for n in names]
            if all(found):
                _unbind_all()
                _np_sgemm = <sgemm64_t><uintptr_t>found[0]
                _np_dgemm = <dgemm64_t><uintptr_t>found[1]
                _np_set_threads = <set_threads_t><uintptr_t>found[2]
                _np_get_threads = <get_threads_t><uintptr_t>found[3]
                return path
    return None


def _pin_scipy_blas():
    """Run scipy's OpenBLAS single-threaded (its threads would compete with ours); returns
    whether it could be found. Other BLAS builds behind scipy are left as they are."""
    import scipy
    base = os.path.dirname(scipy.__file__)
    for path in glob.glob(os.path.join(base, os.pardir, "scipy.libs", "*openblas*")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_set_num_threads", "openblas_set_num_threads"):
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(1)
                return True
    return False


def _cython_blas(name):
    """A function of scipy.linalg.cython_blas by its exported C pointer (no build-time
    dependency on scipy's .pxd files)."""
    from scipy.linalg import cython_blas
    capsule = cython_blas.__pyx_capi__[name]
    return <uintptr_t>PyCapsule_GetPointer(capsule, PyCapsule_GetName(capsule))


def _bind_scipy_blas():
    global sgemm, dgemm
    _pin_scipy_blas()
    _unbind_all()
    sgemm = <sgemm32_t><uintptr_t>_cython_blas("sgemm")
    dgemm = <dgemm32_t><uintptr_t>_cython_blas("dgemm")
    return "scipy.linalg.cython_blas"


_mkl_lib = None


def _open_mkl():
    """libmkl_rt on its sequential threading layer (our OpenMP team does the splitting), or
    None when the `mkl` wheel is not installed or lacks the ILP64 entry points."""
    global _mkl_lib
    if _mkl_lib is None:
        path = blas_choice.find_mkl()
        if path is None:
            return None
        lib = ctypes.CDLL(path)
        if not all(_address(lib, n) for n in _MKL_NAMES):
            return None
        lib.MKL_Set_Threading_Layer(MKL_THREADING_SEQUENTIAL)
        lib._tensorlib_path = path
        _mkl_lib = lib
    return _mkl_lib


def _mkl_version(lib):
    """E.g. "Intel(R) oneAPI Math Kernel Library Version 2026.2"."""
    buf = ctypes.create_string_buffer(256)
    lib.MKL_Get_Version_String(buf, len(buf))
    return buf.value.decode(errors="replace").split("-Product")[0].strip()


def _bind_mkl():
    """Use MKL for float32/float64 products; returns its path, or None when not found."""
    global _mkl_sgemm, _mkl_dgemm, _mkl_sgemm_strided, _mkl_dgemm_strided
    lib = _open_mkl()
    if lib is None:
        return None
    found = [_address(lib, n) for n in _MKL_NAMES]
    _unbind_all()
    _mkl_sgemm = <cblas_sgemm_t><uintptr_t>found[0]
    _mkl_dgemm = <cblas_dgemm_t><uintptr_t>found[1]
    _mkl_sgemm_strided = <cblas_sgemm_strided_t><uintptr_t>found[2]
    _mkl_dgemm_strided = <cblas_dgemm_strided_t><uintptr_t>found[3]
    return lib._tensorlib_path


def _bind_mkl_for_transposed_b():
    """Beside numpy's OpenBLAS (already bound): MKL's sgemm for the float32 products that
    read B transposed; returns whether MKL was found."""
    global _mkl_sgemm_bt
    lib = _open_mkl()
    if lib is None:
        return False
    _mkl_sgemm_bt = <cblas_sgemm_t><uintptr_t>_address(lib, _MKL_NAMES[0])
    return True


def _bind_onednn_sgemm():
    """Run float32 products on oneDNN's `dnnl_sgemm` (float64 stays on the BLAS bound before);
    returns the library's description, or None when oneDNN is not loaded. The GNU OpenMP
    build runs sequentially inside our regions (omp_in_parallel), so each thread's share is
    one single-threaded call, as with the other libraries."""
    global _dnnl_sgemm
    lib = onednn.library()
    if lib is None or not lib.openmp:
        return None
    _dnnl_sgemm = <dnnl_sgemm_t><uintptr_t>_address(lib._dll, "dnnl_sgemm")
    return onednn.describe()


def dnnl_sgemm_address():
    """The address of the `dnnl_sgemm` float32 products run on, or None when they run on
    another library (attention_kernels calls it too)."""
    return <uintptr_t>_dnnl_sgemm if _dnnl_sgemm != NULL else None


def _bind_low_precision():
    """MKL's bf16/fp16 GEMMs when MKL is installed; returns a description or None."""
    global _mkl_bf16, _mkl_f16
    lib = _open_mkl()
    found = [_address(lib, n) for n in _MKL_LOW_PRECISION_NAMES] if lib is not None else []
    if not found or not all(found):
        _mkl_bf16, _mkl_f16 = NULL, NULL
        return None
    _mkl_bf16 = <cblas_lowp_t><uintptr_t>found[0]
    _mkl_f16 = <cblas_lowp_t><uintptr_t>found[1]
    return f"{_mkl_version(lib)} (cblas_gemm_bf16bf16f32, cblas_gemm_f16f16f32)"


def use_blas(library):
    """Run float32/float64 products on "mkl" (the `mkl` wheel's libmkl_rt), "openblas"
    (numpy's; "numpy" is the same), "openblas+mkl" (OpenBLAS, MKL for the float32 products
    with B transposed) or "scipy" (scipy.linalg.cython_blas). A library that is not found
    falls back to the next: mkl, then numpy's OpenBLAS, then scipy's. Returns the path or
    name of what is in use for all other products (also in BLAS; LIBRARY names it)."""
    global BLAS, LIBRARY
    if library not in ("mkl", "onednn", "openblas", "openblas+mkl", "numpy", "scipy"):
        raise ValueError(f"use_blas: expected 'mkl', 'onednn', 'openblas', 'openblas+mkl' or "
                         f"'scipy', got {library!r}")
    bound = None
    if library == "mkl":
        bound, LIBRARY = _bind_mkl(), "mkl"
    if bound is None and library != "scipy":
        bound, LIBRARY = _bind_numpy_openblas(), "openblas"
        if bound is not None and library == "openblas+mkl" and _bind_mkl_for_transposed_b():
            LIBRARY = "openblas+mkl"
        if bound is not None and library == "onednn" and _bind_onednn_sgemm() is not None:
            LIBRARY = "onednn"
    if bound is None:
        bound, LIBRARY = _bind_scipy_blas(), "scipy"
    BLAS = bound
    return BLAS


def describe():
    """One line for `tensorlib info`: the library, its version where it says, how it runs."""
    openblas = lambda: f"numpy's OpenBLAS ({os.path.basename(BLAS)})"
    what = {"mkl": lambda: _mkl_version(_open_mkl()),
            "openblas": openblas,
            "openblas+mkl": lambda: (f"{openblas()}; float32 products with B transposed on "
                                     f"{_mkl_version(_open_mkl())}"),
            "onednn": lambda: (f"float32 on {onednn.describe()} (dnnl_sgemm); float64 on "
                               f"{openblas()}"),
            "scipy": lambda: "scipy.linalg.cython_blas"}[LIBRARY]()
    how = "single-threaded calls on the backend's OpenMP threads"
    why = (f"{blas_choice.ENV}={os.environ[blas_choice.ENV]}" if os.environ.get(blas_choice.ENV)
           else f"default for {blas_choice.cpu_vendor() or 'this CPU'}")
    return f"{what}, {how} ({why})"


# The library the products run on (LIBRARY: "mkl", "onednn", "openblas", "openblas+mkl" or
# "scipy"; BLAS: its path, or "scipy.linalg.cython_blas"); MKL's low-precision GEMMs (None: not
# found) and the dtypes matmul sends to them (the others run on float32 copies; see
# blas_choice).
LIBRARY = None
BLAS = use_blas(blas_choice.requested())
LOW_PRECISION = _bind_low_precision()
LOW_PRECISION_DTYPES = (blas_choice.low_precision_dtypes(LIBRARY) if LOW_PRECISION
                        else frozenset())
