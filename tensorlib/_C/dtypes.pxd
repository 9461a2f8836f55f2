# The dtype object and the type promotion contract other Cython modules cimport.

cdef enum:
    BOOL = 0
    UINT8 = 1
    INT8 = 2
    INT16 = 3
    INT32 = 4
    INT64 = 5
    FLOAT16 = 6
    BFLOAT16 = 7
    FLOAT32 = 8
    FLOAT64 = 9
    COMPLEX64 = 10
    COMPLEX128 = 11
    UINT16 = 12         # the barebones unsigned types of PyTorch 2.3+: copies, comparisons,
    UINT32 = 13         # a few bitwise ops; no promotion with other integer types
    UINT64 = 14
    NUM_DTYPES = 15

cdef class dtype:
    cdef readonly int code
    cdef readonly str name
    cdef readonly int itemsize
    cdef readonly bint is_floating_point
    cdef readonly bint is_signed
    cdef readonly int category      # 0 bool, 1 integer, 2 floating, 3 complex
    cdef readonly object np         # the numpy dtype that holds our values
    cdef readonly str scalar_name   # PyTorch's ScalarType name, used in error messages

cdef list DTYPES                    # indexed by code
cdef dtype default_float()
cdef dtype complex_of(dtype d)
cpdef dtype promote_types(dtype a, dtype b)
cdef bint is_barebones_unsigned(dtype d)
