/* exp of float32 vectors, 16 lanes at a time with AVX-512 (numpy's loop and glibc's libmvec
   ran exp at about half PyTorch's speed here): n = round(x log2 e), r = x - n ln 2 in two
   parts (Cody-Waite), e^r by its degree-7 Taylor polynomial (|r| <= ln2/2: truncation error
   under 3e-9, within an ulp), and 2^n applied by vscalefps, which also gives inf past the
   overflow, 0 past the underflow and exact subnormals between. NaN passes through (the
   clamps keep a NaN operand). Builds without AVX-512 leave exp to numpy's loop
   (TL_HAVE_VEXP is 0 there). */
#ifndef TENSORLIB_VEXP_H
#define TENSORLIB_VEXP_H
#include <math.h>
#include <stdint.h>

#if defined(__AVX512F__)
#define TL_HAVE_VEXP 1
#include <immintrin.h>
static inline __m512 tl_exp16(__m512 x) {
    /* min/max return their second operand when either is NaN: x goes second */
    x = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

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
