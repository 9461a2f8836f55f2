/* exp of float32 vectors (numpy's loop and glibc's libmvec ran exp at about half PyTorch's
   speed on an Intel Xeon, numpy's at a third of it on an AMD EPYC Zen 3): n = round(x log2 e),
   r = x - n ln 2 in two parts (Cody-Waite), e^r by its degree-7 Taylor polynomial
   (|r| <= ln2/2: truncation error under 3e-9, within an ulp), then 2^n applied with one
   rounding, which gives inf past the overflow, 0 past the underflow and exact subnormals
   between. NaN passes through (the clamps keep a NaN operand).
   - 16 lanes (AVX-512, TL_HAVE_VEXP): 2^n by vscalefps.
   - 8 and 4 lanes (AVX2 and FMA, TL_HAVE_VEXP8): n = k1 + k2, each |k| <= 75; p * 2^k1 by
     adding k1 to p's exponent bits (exact: p is near 1, the result normal), then one product
     by 2^k2, the one rounding: the same values as vscalefps, bit for bit. (Two products,
     p * 2^k1 * 2^k2, would let -ffast-math fold 2^k1 * 2^k2 into an overflowing 2^128.)
   tl_exp_float runs a contiguous array on the widest of these; builds without AVX2 leave exp
   to numpy's loop (TL_HAVE_VEXP8 is 0 there). */
#ifndef TENSORLIB_VEXP_H
#define TENSORLIB_VEXP_H
#include <math.h>
#include <stdint.h>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

/* n and the polynomial p of e^r, for vector width W (empty for 128 bits, 256, 512) of vector
   type V. min/max return their second operand when either is NaN: x goes second. */
#define TL_VEXP_REDUCE(W, V, ROUND)                                                        \
    x = _mm##W##_min_ps(_mm##W##_set1_ps(89.0f), _mm##W##_max_ps(_mm##W##_set1_ps(-104.0f), x)); \
    V n = ROUND(_mm##W##_mul_ps(x, _mm##W##_set1_ps(1.44269504088896341f)),               \
                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);                            \
    V r = _mm##W##_fnmadd_ps(n, _mm##W##_set1_ps(0.693359375f), x);                       \
    r = _mm##W##_fnmadd_ps(n, _mm##W##_set1_ps(-2.12194440e-4f), r);                      \
    V p = _mm##W##_set1_ps(1.0f / 5040.0f);                                                \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f / 720.0f));                          \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f / 120.0f));                          \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f / 24.0f));                           \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f / 6.0f));                            \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(0.5f));                                   \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f));                                   \
    p = _mm##W##_fmadd_ps(p, r, _mm##W##_set1_ps(1.0f));

#if defined(__AVX2__) && defined(__FMA__)
#define TL_HAVE_VEXP8 1
/* VI is the integer vector type, SI its cast name (si128, si256). A NaN's n converts to
   INT_MIN: then k1 << 23 is 0 (p, NaN, is left as it is) and 2^k2's bits are 1.0's. */
#define TL_DEFINE_VEXP_FMA(NAME, W, V, VI, SI)                                             \
static inline V NAME(V x) {                                                                \
    TL_VEXP_REDUCE(W, V, _mm##W##_round_ps)                                                \
    VI k = _mm##W##_cvtps_epi32(n);                                                        \
    VI k1 = _mm##W##_srai_epi32(k, 1);                                                     \
    VI k2 = _mm##W##_sub_epi32(k, k1);                                                     \
    V pk1 = _mm##W##_castsi##SI##_ps(_mm##W##_add_epi32(_mm##W##_castps_si##SI(p),        \
                                                         _mm##W##_slli_epi32(k1, 23)));    \
    V s2 = _mm##W##_castsi##SI##_ps(                                                       \
        _mm##W##_slli_epi32(_mm##W##_add_epi32(k2, _mm##W##_set1_epi32(127)), 23));        \
    return _mm##W##_mul_ps(pk1, s2);                                                       \
}
TL_DEFINE_VEXP_FMA(tl_exp8, 256, __m256, __m256i, 256)
TL_DEFINE_VEXP_FMA(tl_exp4, , __m128, __m128i, 128)
#else
#define TL_HAVE_VEXP8 0
#endif

#if defined(__AVX512F__)
#define TL_HAVE_VEXP 1
static inline __m512 tl_exp16(__m512 x) {
    TL_VEXP_REDUCE(512, __m512, _mm512_roundscale_ps)
    return _mm512_scalef_ps(p, n);
}
#else
#define TL_HAVE_VEXP 0
#endif

#if TL_HAVE_VEXP
static inline void tl_exp_float(const float* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, tl_exp16(_mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, tl_exp16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
#elif TL_HAVE_VEXP8
static inline void tl_exp_float(const float* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, tl_exp8(_mm256_loadu_ps(x + i)));
    if (i < n) {
        __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - i)),
                                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_ps(y + i, m, tl_exp8(_mm256_maskload_ps(x + i, m)));
    }
}
#else
static inline void tl_exp_float(const float* x, float* y, int64_t n) {
    (void)x; (void)y; (void)n;     /* never called: TL_HAVE_VEXP8 is 0 */
}
#endif
#endif
