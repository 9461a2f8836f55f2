/* The float32 sum of p[0:m] in four vector accumulators, the rest in masked loads into the
   first, the four added as a tree. AVX-512: 16 lanes, 64 elements a step, the one order of
   layer_norm's row sums (norm_kernels.pyx, whose pipelined rows repeat it inline) and of
   fastreduce's contiguous float32 runs. AVX2: 8 lanes, 32 a step, for fastreduce's runs on
   CPUs without AVX-512 (gcc's own loop, on an AMD EPYC Zen 3, left a 4096x4096 sum(-1) at
   0.8x PyTorch's speed). Compiled for their instruction sets by attribute, whatever the
   build targets: callers check the CPU first. */
#ifndef TENSORLIB_VECTOR_SUM_H
#define TENSORLIB_VECTOR_SUM_H
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#include <stddef.h>

__attribute__((target("avx512f")))
static inline float tl_sum_avx512(const float* p, ptrdiff_t m) {
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    ptrdiff_t j = 0;
    for (; j + 64 <= m; j += 64) {
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(p + j));
        a1 = _mm512_add_ps(a1, _mm512_loadu_ps(p + j + 16));
        a2 = _mm512_add_ps(a2, _mm512_loadu_ps(p + j + 32));
        a3 = _mm512_add_ps(a3, _mm512_loadu_ps(p + j + 48));
    }
    for (; j < m; j += 16) {
        const __mmask16 k = m - j >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (m - j)) - 1u);
        a0 = _mm512_add_ps(a0, _mm512_maskz_loadu_ps(k, p + j));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

__attribute__((target("avx2")))
static inline float tl_sum_avx2(const float* p, ptrdiff_t m) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    ptrdiff_t j = 0;
    for (; j + 32 <= m; j += 32) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p + j));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + j + 8));
        a2 = _mm256_add_ps(a2, _mm256_loadu_ps(p + j + 16));
        a3 = _mm256_add_ps(a3, _mm256_loadu_ps(p + j + 24));
    }
    for (; j < m; j += 8) {
        const __m256i k = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(m - j < 8 ? m - j : 8)),
                                             _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        a0 = _mm256_add_ps(a0, _mm256_maskload_ps(p + j, k));
    }
    const __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}
#endif
#endif
