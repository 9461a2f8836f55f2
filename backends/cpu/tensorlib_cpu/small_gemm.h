/* Small float64 GEMMs with an AVX-512 register-blocked kernel (included by small_gemm.pyx).
   Row-major C (m, n) = alpha op(A) op(B) + beta C in gemm.pyx's layouts: op(A)[i, l] is
   a[i * lda + l] ('N') or a[l * lda + i] ('T'); op(B)[l, j] is b[l * ldb + j] ('N') or
   b[j * ldb + l] ('T').

   Why: an LSTM's products (97x51x204, 204x97x51...) cost OpenBLAS 64-91 us a call on the
   Xeon, much of it per-call work (its buffer setup and packing of both operands) that a
   product this size cannot amortise. Here nothing is packed but op(B) read transposed: C is
   computed in column panels of up to 24 (three 8-double vectors, the last masked), each
   panel row by row in tiles of up to 8 rows, 24 accumulators in registers; op(B)'s panel
   (k_block x 24) stays in L1 across the panel's row tiles, op(A)'s elements are broadcast
   straight from memory. k is cut into blocks of SG_KC so a transposed B's packed panel
   fits on the stack.

   sg_dgemm returns 1 when it computed C, 0 (nothing written) when the CPU has no AVX-512
   (the caller's BLAS is the portable path) or the product is above SG_MAX_MACS, where
   BLAS's cache blocking wins. beta == 0 ignores C's old values (NaN included), as BLAS.
   sg_dgemm_bias adds a row `bias` (n) instead of beta C: a Linear layer's forward without a
   pass that first copies the bias into every row of C (97x51x204 took 51 us that way
   against 45 for the plain product, on one AMD EPYC core). */
#include <stddef.h>

/* Products above this many multiply-adds go to BLAS: measured on the Xeon (one thread,
   best of many): see the threshold note in docs/performance.md. */
#define SG_MAX_MACS (1 << 22)
#define SG_KC 256
#define SG_MR 8
#define SG_NV 3
#define SG_NR (8 * SG_NV)

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define SG_AVX512 __attribute__((target("avx512f")))
static int sg_has_avx512 = 0;
static void sg_detect(void) {
    __builtin_cpu_init();
    sg_has_avx512 = __builtin_cpu_supports("avx512f");
}

/* One tile: C[0:MR, 0:8 NV] (last vector masked by `last`) = alpha op(A) op(B) + beta C over
   kc terms, or + bias[0:8 NV] where bias is given; a steps rsa per row and csa per term, b
   is the panel (row stride ldb). MR and NV are constants in each instantiation, so the
   accumulators live in registers. */
static inline __attribute__((always_inline)) SG_AVX512 void
sg_tile(const int MR, const int NV, int kc, const double* a, ptrdiff_t rsa, ptrdiff_t csa,
        const double* b, ptrdiff_t ldb, __mmask8 last, double alpha, double beta,
        const double* bias, double* c, ptrdiff_t ldc) {
    __m512d acc[SG_MR][SG_NV];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_pd();
    for (int l = 0; l < kc; l++) {
        __m512d bv[SG_NV];
        const double* br = b + l * ldb;
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++)
            bv[v] = v == NV - 1 ? _mm512_maskz_loadu_pd(last, br + 8 * v)
                                : _mm512_loadu_pd(br + 8 * v);
        const double* ac = a + l * csa;
#pragma GCC unroll 8
        for (int i = 0; i < MR; i++) {
            __m512d ai = _mm512_set1_pd(ac[i * rsa]);
#pragma GCC unroll 3
            for (int v = 0; v < NV; v++) acc[i][v] = _mm512_fmadd_pd(ai, bv[v], acc[i][v]);
        }
    }
    __m512d va = _mm512_set1_pd(alpha), vb = _mm512_set1_pd(beta);
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++) {
            __mmask8 mk = v == NV - 1 ? last : (__mmask8)0xFF;
            double* cp = c + i * ldc + 8 * v;
            __m512d r = _mm512_mul_pd(va, acc[i][v]);
            if (bias)
                r = _mm512_add_pd(r, _mm512_maskz_loadu_pd(mk, bias + 8 * v));
            else if (beta != 0)
                r = _mm512_fmadd_pd(vb, _mm512_maskz_loadu_pd(mk, cp), r);
            _mm512_mask_storeu_pd(cp, mk, r);
        }
}

#define SG_TILE_FN(MR, NV)                                                                  \
static SG_AVX512 void sg_tile_##MR##_##NV(int kc, const double* a, ptrdiff_t rsa,           \
                                          ptrdiff_t csa, const double* b, ptrdiff_t ldb,    \
                                          __mmask8 last, double alpha, double beta,         \
                                          const double* bias, double* c, ptrdiff_t ldc) {   \
    sg_tile(MR, NV, kc, a, rsa, csa, b, ldb, last, alpha, beta, bias, c, ldc);              \
}
#define SG_TILE_ROW(MR) SG_TILE_FN(MR, 1) SG_TILE_FN(MR, 2) SG_TILE_FN(MR, 3)
SG_TILE_ROW(1) SG_TILE_ROW(2) SG_TILE_ROW(3) SG_TILE_ROW(4)
SG_TILE_ROW(5) SG_TILE_ROW(6) SG_TILE_ROW(7) SG_TILE_ROW(8)

typedef void (*sg_tile_t)(int, const double*, ptrdiff_t, ptrdiff_t, const double*, ptrdiff_t,
                          __mmask8, double, double, const double*, double*, ptrdiff_t);
#define SG_TILE_REF(MR) {sg_tile_##MR##_1, sg_tile_##MR##_2, sg_tile_##MR##_3}
static const sg_tile_t sg_tiles[SG_MR][SG_NV] = {
    SG_TILE_REF(1), SG_TILE_REF(2), SG_TILE_REF(3), SG_TILE_REF(4),
    SG_TILE_REF(5), SG_TILE_REF(6), SG_TILE_REF(7), SG_TILE_REF(8)};

static SG_AVX512 void sg_dgemm_avx512(char ta, char tb, int m, int n, int k, double alpha,
                                      const double* a, int lda, const double* b, int ldb,
                                      double beta, const double* bias, double* c, int ldc) {
    double packed[SG_KC * SG_NR] __attribute__((aligned(64)));
    ptrdiff_t rsa = ta == 'N' ? lda : 1, csa = ta == 'N' ? 1 : lda;
    for (int j0 = 0; j0 < n; j0 += SG_NR) {
        int nr = n - j0 < SG_NR ? n - j0 : SG_NR, nv = (nr + 7) / 8;
        __mmask8 last = (__mmask8)((1u << (nr - 8 * (nv - 1))) - 1);
        for (int l0 = 0; l0 < k; l0 += SG_KC) {
            int kc = k - l0 < SG_KC ? k - l0 : SG_KC;
            const double* panel;
            ptrdiff_t ldp;
            if (tb == 'N') {
                panel = b + (ptrdiff_t)l0 * ldb + j0;
                ldp = ldb;
            } else {            /* op(B)'s columns are b's rows: copy the panel transposed */
                for (int jj = 0; jj < nr; jj++) {
                    const double* col = b + (ptrdiff_t)(j0 + jj) * ldb + l0;
                    for (int l = 0; l < kc; l++) packed[l * SG_NR + jj] = col[l];
                }
                panel = packed;
                ldp = SG_NR;
            }
            double bt = l0 == 0 ? beta : 1.0;
            const double* bb = l0 == 0 && bias ? bias + j0 : NULL;
            for (int i0 = 0; i0 < m; i0 += SG_MR) {
                int mr = m - i0 < SG_MR ? m - i0 : SG_MR;
                sg_tiles[mr - 1][nv - 1](kc, a + i0 * rsa + l0 * csa, rsa, csa, panel, ldp,
                                         last, alpha, bt, bb, c + (ptrdiff_t)i0 * ldc + j0,
                                         ldc);
            }
        }
    }
}

static int sg_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double* a,
                    int lda, const double* b, int ldb, double beta, double* c, int ldc) {
    if (!sg_has_avx512 || m <= 0 || n <= 0 || k <= 0
            || (double)m * n * k > (double)SG_MAX_MACS)
        return 0;
    sg_dgemm_avx512(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, NULL, c, ldc);
    return 1;
}

/* C = op(A) op(B) + bias (n), bias broadcast over C's rows; 1 when computed, as sg_dgemm. */
static int sg_dgemm_bias(char ta, char tb, int m, int n, int k, const double* a, int lda,
                         const double* b, int ldb, const double* bias, double* c, int ldc) {
    if (!sg_has_avx512 || m <= 0 || n <= 0 || k <= 0
            || (double)m * n * k > (double)SG_MAX_MACS)
        return 0;
    sg_dgemm_avx512(ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, bias, c, ldc);
    return 1;
}
#else
static void sg_detect(void) {}
static int sg_has_avx512 = 0;
static int sg_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double* a,
                    int lda, const double* b, int ldb, double beta, double* c, int ldc) {
    return 0;
}
static int sg_dgemm_bias(char ta, char tb, int m, int n, int k, const double* a, int lda,
                         const double* b, int ldb, const double* bias, double* c, int ldc) {
    return 0;
}
#endif
