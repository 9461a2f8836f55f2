# cython: boundscheck=False, wraparound=False, cdivision=True
"""pow, fmod and remainder, lerp, addcmul and addcdiv of float32/float64 tensors as one
threaded pass. numpy runs the first three on one thread through the scalar libm functions:
x.pow(3) on 1M floats took 32 ms against PyTorch's 0.05, fmod 7.8 against 0.6 ms (AMD EPYC
Zen 4, 2 threads); the ops composed the other three of 3-4 passes (0.3x PyTorch).

pow by a number takes PyTorch's shortcuts and equals its results bit for bit at 2 (x * x), 3
(x * x * x), -0.5 (1 / sqrt), -1 (1 / x) and -2 (1 / (x * x)); 0.5 is the correctly
rounded sqrt, 1 a copy, 0 ones. Other exponents and tensor exponents call libmvec's vector
pow (glibc, within 1 ulp), a number exponent on |x| with the sign (odd integer exponent) or
NaN (a fraction) set after: libmvec takes each negative lane through scalar code (5x slower).

fmod is exact, as libm's: the quotient's integer part comes from a / b (off by at most one
while it is below 2^23, 2^52 in float64), one correction step makes it right, and a fused
multiply-add gives the remainder exactly; a zero or infinite divisor, an infinite dividend or
a larger quotient takes libm's fmod. remainder is fmod moved to the divisor's sign,
PyTorch's formula. lerp, addcmul and addcdiv order their arithmetic as PyTorch's vector
loops do.

Built without -ffast-math (setup.py's EXACT_MATH): 1 / sqrt must not become an approximate
reciprocal square root, and NaN and inf must go through as libm's functions give them. The
kernels take contiguous operands of the output's shape and dtype, or a broadcast single
value: pow, fmod and remainder run numpy's ufunc for anything else, lerp, addcmul and
addcdiv return False (the op then composes the result)."""
import numpy as np

cimport numpy as cnp

from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous, numel

from tensorlib_cpu import fastreduce
from tensorlib_cpu.ufunc_kernels import UfuncKernel

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    /* glibc declares the vector versions only under -ffast-math; the declarations alone let
       gcc call them from `omp simd` loops here (linked with -lmvec) */
    #if defined(__x86_64__) && defined(__linux__)
    #pragma omp declare simd notinbranch
    extern float powf(float, float);
    #pragma omp declare simd notinbranch
    extern double pow(double, double);
    #endif
    #define PAR_MIN 65536
    #define PIECE 4096
    /* y = EXPR over i in [0, n), in pieces of PIECE elements shared by the threads; below
       PAR_MIN no OpenMP region at all (entering one costs about what 16 elements do) */
    #define FOR_PIECES(n, nt, ...)                                                          \\
        Py_ssize_t p_, pieces_ = ((n) + PIECE - 1) / PIECE;                                \\
        if ((n) < PAR_MIN) {                                                               \\
            Py_ssize_t lo = 0, hi = (n), i;                                                \\
            __VA_ARGS__                                                                    \\
        } else {                                                                           \\
            _Pragma("omp parallel for num_threads(nt)")                                    \\
            for (p_ = 0; p_ < pieces_; p_++) {                                             \\
                Py_ssize_t lo = p_ * PIECE, hi = lo + PIECE < (n) ? lo + PIECE : (n), i;   \\
                __VA_ARGS__                                                                \\
            }                                                                              \\
        }
    #define SIMD_LOOP(stmt) _Pragma("omp simd") for (i = lo; i < hi; i++) { stmt; }
    /* an operand is a full array (step 1) or one value (step 0); each pair of steps gets
       its own loop, the steps constants in it (a variable step compiles to gathers, which
       made fmod 7x slower on Zen 4); A_I and B_I are the operands' i-th elements */
    #define BY_STEPS(sa, sb, ...)                                                           \\
        if ((sa) && (sb)) { enum { SA_ = 1, SB_ = 1 }; __VA_ARGS__ }                        \\
        else if (sa) { enum { SA_ = 1, SB_ = 0 }; __VA_ARGS__ }                             \\
        else if (sb) { enum { SA_ = 0, SB_ = 1 }; __VA_ARGS__ }                             \\
        else { enum { SA_ = 0, SB_ = 0 }; __VA_ARGS__ }
    #define A_I a[i * SA_]
    #define B_I b[i * SB_]
    #define DEFINE_ARITH(T, POW, SQRT, FMOD, FMA, FABS, TRUNC, COPYSIGN, QUOTIENT_MAX)       \\
    static void pow_number_##T(const T* x, T e, T* y, Py_ssize_t n, int nt) {              \\
        if (e == 2) { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = x[i] * x[i])) }                   \\
        else if (e == 3) { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = x[i] * x[i] * x[i])) }       \\
        else if (e == 0.5) { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = SQRT(x[i]))) }             \\
        else if (e == -0.5) { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = (T)1 / SQRT(x[i]))) }     \\
        else if (e == -1) { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = (T)1 / x[i])) }             \\
        else if (e == -2) { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = (T)1 / (x[i] * x[i]))) }    \\
        else if (e == 1) { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = x[i])) }                      \\
        else if (e == 0) { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = 1)) }                         \\
        /* the vector pow handles a negative base lane by lane in scalar code (5x slower):  \\
           it gets |x|, and the sign (an odd integer exponent) or NaN (a fraction) after */  \\
        else if (e != TRUNC(e)) {                                                           \\
            FOR_PIECES(n, nt, SIMD_LOOP(T v = POW(FABS(x[i]), e);                           \\
                                        y[i] = x[i] < 0 && x[i] > -HUGE_VAL##T ? (T)NAN : v))\\
        } else if (FABS(e) < HUGE_VAL##T && FMOD(e, (T)2) != 0) {                           \\
            FOR_PIECES(n, nt, SIMD_LOOP(y[i] = COPYSIGN(POW(FABS(x[i]), e), x[i])))         \\
        } else { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = POW(FABS(x[i]), e))) }                  \\
    }                                                                                       \\
    static void pow_##T(const T* a, int sa, const T* b, int sb, T* y, Py_ssize_t n,        \\
                        int nt) {                                                           \\
        BY_STEPS(sa, sb, FOR_PIECES(n, nt, SIMD_LOOP(y[i] = POW(A_I, B_I))))                \\
    }                                                                                       \\
    /* fmod by the corrected truncated quotient; `slow` marks what libm must do */          \\
    static inline T fmod_quick_##T(T a, T b, int* slow) {                                   \\
        T q = a / b;                                                                        \\
        *slow = !(FABS(q) < QUOTIENT_MAX) || !(FABS(b) < HUGE_VAL##T) || b == 0;           \\
        q = TRUNC(q);                                                                       \\
        T s = (a < 0) != (b < 0) ? (T)-1 : (T)1;     /* the quotient's sign */             \\
        T r = FMA(-q, b, a);                                                                \\
        q = (r != 0 && (r < 0) != (a < 0)) ? q - s : (FABS(r) >= FABS(b) ? q + s : q);      \\
        return COPYSIGN(FMA(-q, b, a), a);                                                  \\
    }                                                                                       \\
    static void fmod_##T(const T* a, int sa, const T* b, int sb, T* y, Py_ssize_t n,       \\
                         int nt, int python_sign) {                                         \\
        BY_STEPS(sa, sb, FOR_PIECES(n, nt,                                                  \\
            int any = 0;                                                                    \\
            _Pragma("omp simd reduction(|:any)")                                           \\
            for (i = lo; i < hi; i++) {                                                     \\
                int slow; y[i] = fmod_quick_##T(A_I, B_I, &slow); any |= slow;              \\
            }                                                                               \\
            if (any)                                                                        \\
                for (i = lo; i < hi; i++) {                                                 \\
                    int slow; fmod_quick_##T(A_I, B_I, &slow);                              \\
                    if (slow) y[i] = FMOD(A_I, B_I);                                        \\
                }                                                                           \\
            if (python_sign)                                                                \\
                SIMD_LOOP(T m = y[i]; T d = B_I;                                            \\
                          y[i] = m != 0 && ((d < 0) != (m < 0)) ? m + d : m)                \\
        ))                                                                                  \\
    }
    /* lerp as PyTorch's vector loop: fma(weight or weight - 1, end - start, start or end),
       the nearer end by |weight| < 0.5; w NULL: the one weight wv */
    #define DEFINE_BLEND(T, FMA, FABS)                                                      \\
    static void lerp_##T(const T* s, const T* e, const T* w, T wv, T* y, Py_ssize_t n,     \\
                         int nt) {                                                          \\
        if (w) {                                                                            \\
            FOR_PIECES(n, nt, SIMD_LOOP(int near = FABS(w[i]) < (T)0.5;                     \\
                                        y[i] = FMA(near ? w[i] : w[i] - 1, e[i] - s[i],     \\
                                                   near ? s[i] : e[i])))                    \\
        } else if (FABS(wv) < (T)0.5) {                                                     \\
            FOR_PIECES(n, nt, SIMD_LOOP(y[i] = FMA(wv, e[i] - s[i], s[i])))                 \\
        } else {                                                                            \\
            const T c = wv - 1;                                                             \\
            FOR_PIECES(n, nt, SIMD_LOOP(y[i] = FMA(c, e[i] - s[i], e[i])))                  \\
        }                                                                                   \\
    }                                                                                       \\
    /* s + value * a * b (or / b), PyTorch's order of operations */                         \\
    static void addc_##T(const T* s, const T* a, const T* b, T v, T* y, Py_ssize_t n,      \\
                         int nt, int divide) {                                              \\
        if (divide) { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = s[i] + v * a[i] / b[i])) }          \\
        else { FOR_PIECES(n, nt, SIMD_LOOP(y[i] = s[i] + v * a[i] * b[i])) }                \\
    }
    DEFINE_BLEND(float, fmaf, fabsf)
    DEFINE_BLEND(double, fma, fabs)
    #define HUGE_VALfloat HUGE_VALF
    #define HUGE_VALdouble HUGE_VAL
    DEFINE_ARITH(float, powf, sqrtf, fmodf, fmaf, fabsf, truncf, copysignf, 8388608.0f)
    DEFINE_ARITH(double, pow, sqrt, fmod, fma, fabs, trunc, copysign, 4503599627370496.0)
    """
    void pow_number_float(const float* x, float e, float* y, Py_ssize_t n, int nt) nogil
    void pow_number_double(const double* x, double e, double* y, Py_ssize_t n, int nt) nogil
    void pow_float(const float* a, int sa, const float* b, int sb, float* y, Py_ssize_t n,
                   int nt) nogil
    void pow_double(const double* a, int sa, const double* b, int sb, double* y,
                    Py_ssize_t n, int nt) nogil
    void fmod_float(const float* a, int sa, const float* b, int sb, float* y, Py_ssize_t n,
                    int nt, int python_sign) nogil
    void fmod_double(const double* a, int sa, const double* b, int sb, double* y,
                     Py_ssize_t n, int nt, int python_sign) nogil
    void lerp_float(const float* s, const float* e, const float* w, float wv, float* y,
                    Py_ssize_t n, int nt) nogil
    void lerp_double(const double* s, const double* e, const double* w, double wv, double* y,
                     Py_ssize_t n, int nt) nogil
    void addc_float(const float* s, const float* a, const float* b, float v, float* y,
                    Py_ssize_t n, int nt, int divide) nogil
    void addc_double(const double* s, const double* a, const double* b, double v, double* y,
                     Py_ssize_t n, int nt, int divide) nogil
    int PAR_MIN


cdef inline void* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + t._offset * t._dtype.itemsize


cdef int _step(TensorImpl t, TensorImpl out):
    """1: t is contiguous with out's shape and dtype, and out may overwrite it (t is out or
    shares no storage with it); 0: t is one value broadcast (every stride 0); -1: neither."""
    if t._dtype is not out._dtype:
        return -1
    if t._sizes == out._sizes and is_contiguous(t):
        if t._storage is out._storage and t._offset != out._offset:
            return -1
        return 1
    for s in t._strides:
        if s != 0:
            return -1
    return -1 if t._storage is out._storage else 0    # out would overwrite the value


cdef int _kind(TensorImpl out):
    """1 float32, 2 float64, 0 another dtype or a layout the kernels do not write."""
    if not is_contiguous(out):
        return 0
    if out._dtype.np.type is np.float32:
        return 1
    if out._dtype.np.type is np.float64:
        return 2
    return 0


cdef inline int _threads(Py_ssize_t n):
    return fastreduce.threads_now() if n >= PAR_MIN else 1


cdef bint _pow(TensorImpl out, TensorImpl a, TensorImpl b):
    cdef int kind = _kind(out), sa, sb, nt
    if kind == 0:
        return False
    sa, sb = _step(a, out), _step(b, out)
    if sa < 0 or sb < 0:
        return False
    cdef Py_ssize_t n = numel(out._sizes)
    cdef void* pa = _data(a)
    cdef void* pb = _data(b)
    cdef void* po = _data(out)
    nt = _threads(n)
    with nogil:
        if (sa == 1 and sb == 0) or n == 1:     # one element: whatever its steps read
            if kind == 1:
                pow_number_float(<float*>pa, (<float*>pb)[0], <float*>po, n, nt)
            else:
                pow_number_double(<double*>pa, (<double*>pb)[0], <double*>po, n, nt)
        elif kind == 1:
            pow_float(<float*>pa, sa, <float*>pb, sb, <float*>po, n, nt)
        else:
            pow_double(<double*>pa, sa, <double*>pb, sb, <double*>po, n, nt)
    return True


cdef bint _fmod(TensorImpl out, TensorImpl a, TensorImpl b, int python_sign):
    cdef int kind = _kind(out), sa, sb, nt
    if kind == 0:
        return False
    sa, sb = _step(a, out), _step(b, out)
    if sa < 0 or sb < 0:
        return False
    cdef Py_ssize_t n = numel(out._sizes)
    cdef void* pa = _data(a)
    cdef void* pb = _data(b)
    cdef void* po = _data(out)
    nt = _threads(n)
    with nogil:
        if kind == 1:
            fmod_float(<float*>pa, sa, <float*>pb, sb, <float*>po, n, nt, python_sign)
        else:
            fmod_double(<double*>pa, sa, <double*>pb, sb, <double*>po, n, nt, python_sign)
    return True


_pow_general = UfuncKernel(np.power, quiet=True)
_fmod_general = UfuncKernel(np.fmod, quiet=True, integer_division=True)
_remainder_general = UfuncKernel(np.remainder, quiet=True, integer_division=True)


def pow(TensorImpl out, TensorImpl a, TensorImpl b):  # noqa: A001 - the op's name
    """out = a ** b: one threaded pass for float tensors, numpy's ufunc otherwise."""
    if not _pow(out, a, b):
        _pow_general(out, a, b)


def fmod(TensorImpl out, TensorImpl a, TensorImpl b):
    """out = C's fmod(a, b) (the dividend's sign): one threaded pass for float tensors."""
    if not _fmod(out, a, b, 0):
        _fmod_general(out, a, b)


def remainder(TensorImpl out, TensorImpl a, TensorImpl b):
    """out = a mod b with the divisor's sign (Python's %): one threaded pass for floats."""
    if not _fmod(out, a, b, 1):
        _remainder_general(out, a, b)


cdef bint _all_full(TensorImpl out, tuple tensors):
    """Every tensor of out's dtype and shape, contiguous, and out itself or apart from it."""
    for t in tensors:
        if _step(<TensorImpl>t, out) != 1:
            return False
    return True


def lerp(TensorImpl out, TensorImpl start, TensorImpl end, weight):
    """out = lerp(start, end, weight) in one pass, weight a number or a tensor like start;
    False for other dtypes and layouts (the op then composes it)."""
    cdef int kind = _kind(out)
    cdef bint by_tensor = isinstance(weight, TensorImpl)
    if kind == 0 or not _all_full(out, (start, end, weight) if by_tensor else (start, end)):
        return False
    cdef Py_ssize_t n = numel(out._sizes)
    cdef int nt = _threads(n)
    cdef double wv = 0.0 if by_tensor else weight
    cdef void* ps = _data(start)
    cdef void* pe = _data(end)
    cdef void* pw = _data(<TensorImpl>weight) if by_tensor else NULL
    cdef void* po = _data(out)
    if n < PAR_MIN:                     # a small pass keeps the GIL: its release costs more
        _run_lerp(kind, ps, pe, pw, wv, po, n, nt)
    else:
        with nogil:
            _run_lerp(kind, ps, pe, pw, wv, po, n, nt)
    return True


cdef void _run_lerp(int kind, void* ps, void* pe, void* pw, double wv, void* po, Py_ssize_t n,
                    int nt) noexcept nogil:
    if kind == 1:
        lerp_float(<float*>ps, <float*>pe, <float*>pw, <float>wv, <float*>po, n, nt)
    else:
        lerp_double(<double*>ps, <double*>pe, <double*>pw, wv, <double*>po, n, nt)


def _addc(TensorImpl out, TensorImpl input, TensorImpl a, TensorImpl b, double value,
          int divide):
    cdef int kind = _kind(out)
    if kind == 0 or not _all_full(out, (input, a, b)):
        return False
    cdef Py_ssize_t n = numel(out._sizes)
    cdef int nt = _threads(n)
    cdef void* ps = _data(input)
    cdef void* pa = _data(a)
    cdef void* pb = _data(b)
    cdef void* po = _data(out)
    if n < PAR_MIN:                     # as in lerp
        _run_addc(kind, ps, pa, pb, value, po, n, nt, divide)
    else:
        with nogil:
            _run_addc(kind, ps, pa, pb, value, po, n, nt, divide)
    return True


cdef void _run_addc(int kind, void* ps, void* pa, void* pb, double value, void* po,
                    Py_ssize_t n, int nt, int divide) noexcept nogil:
    if kind == 1:
        addc_float(<float*>ps, <float*>pa, <float*>pb, <float>value, <float*>po, n, nt, divide)
    else:
        addc_double(<double*>ps, <double*>pa, <double*>pb, value, <double*>po, n, nt, divide)


def addcmul(TensorImpl out, TensorImpl input, TensorImpl tensor1, TensorImpl tensor2,
            double value):
    """out = input + value * tensor1 * tensor2 in one pass; False where it does not apply."""
    return _addc(out, input, tensor1, tensor2, value, 0)


def addcdiv(TensorImpl out, TensorImpl input, TensorImpl tensor1, TensorImpl tensor2,
            double value):
    """out = input + value * tensor1 / tensor2 in one pass; False where it does not apply."""
    return _addc(out, input, tensor1, tensor2, value, 1)


KERNELS = {"pow": pow, "fmod": fmod, "remainder": remainder, "lerp": lerp,
           "addcmul": addcmul, "addcdiv": addcdiv}
