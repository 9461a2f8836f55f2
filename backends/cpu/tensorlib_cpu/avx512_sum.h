/* The float32 sum of p[0:m] in four 16-lane AVX-512 accumulators, 64 elements a step, the
   rest in masked 16-lane loads into the first, the four added as a tree: the one order of
   layer_norm's row sums (norm_kernels.pyx, whose pipelined rows repeat it inline) and of
   fastreduce's contiguous float32 runs. Compiled for AVX-512 by its attribute, whatever the
   build targets: callers check the CPU first. */
#ifndef TENSORLIB_AVX512_SUM_H
#define TENSORLIB_AVX512_SUM_H
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
#endif
#endif
