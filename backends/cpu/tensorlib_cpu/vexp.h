/* exp of float32 vectors, 16 lanes at a time with AVX-512, 8 and 4 with AVX-512VL (numpy's
   loop and glibc's libmvec ran exp at about half PyTorch's speed here): n = round(x log2 e),
   r = x - n ln 2 in two parts (Cody-Waite), e^r by its degree-7 Taylor polynomial
   (|r| <= ln2/2: truncation error under 3e-9, within an ulp), and 2^n applied by vscalefps,
   which also gives inf past the overflow, 0 past the underflow and exact subnormals between.
   NaN passes through (the clamps keep a NaN operand). Builds without AVX-512 leave exp to
   numpy's loop (TL_HAVE_VEXP is 0 there). */
#ifndef TENSORLIB_VEXP_H
#define TENSORLIB_VEXP_H
#include <math.h>
#include <stdint.h>

#if defined(__AVX512F__)
#define TL_HAVE_VEXP 1
#include <immintrin.h>
/* One definition for every vector width W (empty for 128 bits, 256, 512) of vector type V:
   the compiled kernels (codegen.py) take the 128- and 256-bit ones too, as the vector
   variants of their exp. min/max return their second operand when either is NaN: x goes
   second. */
#define TL_DEFINE_VEXP(NAME, W, V)                                                         \
static inline V NAME(V x) {                                                                \
    x = _mm##W##_min_ps(_mm##W##_set1_ps(89.0f), _mm##W##_max_ps(_mm##W##_set1_ps(-104.0f), x)); \
    V n = _mm##W##_roundscale_ps(_mm##W##_mul_ps(x, _mm##W##_set1_ps(1.44269504088896341f)),  \
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);           \
    V r = _mm##W##_fnmadd_ps(n, _mm##W##_set1_ps(0.693359375f), x);                       \
    r = _mm##W##_fnmadd_ps(n, _mm##W##_set1_ps(-2.12194440e-4f), r);                      \
    V p = _mm##W##_set1_ps(1.0f / 5040.0f);                                                \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f / 720.0f));                          \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f / 120.0f));                          \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f / 24.0f));                           \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f / 6.0f));                            \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(0.5f));                                   \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f));                                   \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f));                                   \
    return _mm##W##_scalef_ps(p, n);                                                       \
}
TL_DEFINE_VEXP(tl_exp16, 512, __m512)
#if defined(__AVX512VL__)
TL_DEFINE_VEXP(tl_exp8, 256, __m256)
TL_DEFINE_VEXP(tl_exp4, , __m128)
#endif

static inline void tl_exp_float(const float* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, tl_exp16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, tl_exp16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
#else
#define TL_HAVE_VEXP 0
static inline void tl_exp_float(const float* x, float* y, int64_t n) {
    (void)x; (void)y; (void)n;     /* never called: TL_HAVE_VEXP is 0 */
}
#endif
#endif
