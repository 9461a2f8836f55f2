/* Small float64 and float32 GEMMs with an AVX-512 register-blocked kernel (included by
   small_gemm.pyx). Row-major C (m, n) = alpha op(A) op(B) + beta C in gemm.pyx's layouts:
   op(A)[i, l] is a[i * lda + l] ('N') or a[l * lda + i] ('T'); op(B)[l, j] is
   b[l * ldb + j] ('N') or b[j * ldb + l] ('T').

   Why: an LSTM's products (97x51x204, 204x97x51...) cost OpenBLAS 64-91 us a call on the
   Xeon, much of it per-call work (its buffer setup and packing of both operands) that a
   product this size cannot amortise; in float32, oneDNN's sgemm spends ~1.5 us a call before
   its kernel runs (a 16x32x96 Linear: 2.2 us), most of a small model's product. Here nothing
   is packed but op(B) read transposed: C is computed in column panels of up to three
   vectors (24 doubles or 48 floats, the last masked), each panel row by row in tiles of up
   to 8 rows, 24 accumulators in registers; op(B)'s panel (k_block x 3 vectors) stays in L1
   across the panel's row tiles, op(A)'s elements are broadcast straight from memory. k is
   cut into blocks of SG_KC_d / SG_KC_s so a transposed B's packed panel fits on the stack.
   Through gemm.gemm_bias, one thread, Intel Xeon, against oneDNN: 16x32x96 1.7 -> 1.1 us (B
   transposed, a Linear's forward: 2.2 -> 1.4), 64^3 5.1 -> 4.3 (6.1 -> 4.6); float32's
   transposed panels are copied 16x16 at a time through registers (a scalar copy left the
   transposed 16x64x256 at 9.7 us against oneDNN's 5.7).

   sg_dgemm / sg_sgemm return 1 when they computed C, 0 (nothing written) when the CPU has
   no AVX-512 (the caller's BLAS is the portable path) or the product is above
   SG_MAX_MACS_d / _s, where BLAS's cache blocking wins. beta == 0 ignores C's old values
   (NaN included), as BLAS. The _bias forms add a row `bias` (n) instead of beta C: a Linear
   layer's forward without a pass that first copies the bias into every row of C (97x51x204
   took 51 us that way against 45 for the plain product, on one AMD EPYC core). */
#include <stddef.h>

/* Products above this many multiply-adds go to BLAS: measured on the Xeon (one thread,
   best of many): see the threshold notes in docs/performance.md. float32: up to 512K the
   kernel won every shape tried; at 1M, 64x256x64 lost (16.2 us against oneDNN's 15.0). */
#define SG_MAX_MACS_d (1 << 22)
#define SG_MAX_MACS_s (1 << 19)
/* k block: float32's 128 keeps a panel (128 x 48 floats, 24 KB) in L1 beside A's rows;
   256 left 64x256x64 at 18.3 us against 16.2 */
#define SG_KC_d 256
#define SG_KC_s 128
#define SG_MR 8
#define SG_NV 3

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define SG_AVX512 __attribute__((target("avx512f")))
static int sg_has_avx512 = 0;
static void sg_detect(void) {
    __builtin_cpu_init();
    sg_has_avx512 = __builtin_cpu_supports("avx512f");
}

/* The kernel is written once for both types: SG_(name, T) is the AVX-512 intrinsic
   _mm512_<name>_pd for double and _mm512_<name>_ps for float; a vector holds SG_LANES_T. */
#define SG_VEC_double __m512d
#define SG_VEC_float __m512
#define SG_MASK_double __mmask8
#define SG_MASK_float __mmask16
#define SG_LANES_double 8
#define SG_LANES_float 16
#define SG_SFX_double pd
#define SG_SFX_float ps
#define SG_INTRIN_(name, sfx) _mm512_##name##_##sfx
#define SG_INTRIN(name, sfx) SG_INTRIN_(name, sfx)          /* sfx expanded first */
#define SG_(name, T) SG_INTRIN(name, SG_SFX_##T)

/* packed[l][jj] = b[jj * ldb + l] for jj < nr, l < kc (rows of 3 vectors): the panel of a
   transposed B. float64 copies element by element; float32 moves 16x16 blocks through
   registers (masked loads past kc, zeros past nr). */
static inline void sg_pack_bt_d(const double* b, ptrdiff_t ldb, int nr, int kc,
                                double* packed) {
    for (int jj = 0; jj < nr; jj++)
        for (int l = 0; l < kc; l++) packed[l * SG_NV * 8 + jj] = b[jj * ldb + l];
}

/* r[x] becomes column x of the 16x16 block whose rows were r[0..15] */
static inline __attribute__((always_inline)) SG_AVX512 void sg_transpose16(__m512 r[16]) {
    __m512 t[16], u[16];
    for (int i = 0; i < 8; i++) {          /* pairs of rows, interleaved per 128-bit lane */
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {          /* u[4i + c], lane L: column 4L + c, rows 4i.. */
        __m512d a0 = _mm512_castps_pd(t[4 * i]), a1 = _mm512_castps_pd(t[4 * i + 1]);
        __m512d b0 = _mm512_castps_pd(t[4 * i + 2]), b1 = _mm512_castps_pd(t[4 * i + 3]);
        u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, b0));
        u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, b0));
        u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, b1));
        u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, b1));
    }
    for (int c = 0; c < 4; c++) {          /* gather lane L of u[c], u[4+c], u[8+c], u[12+c] */
        __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
        __m512 v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
        __m512 w0 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
        __m512 w1 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
        r[c] = _mm512_shuffle_f32x4(v0, w0, 0x88);
        r[4 + c] = _mm512_shuffle_f32x4(v1, w1, 0x88);
        r[8 + c] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
        r[12 + c] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
    }
}

static inline SG_AVX512 void sg_pack_bt_s(const float* b, ptrdiff_t ldb, int nr, int kc,
                                          float* packed) {
    for (int g = 0; 16 * g < nr; g++) {
        int rows = nr - 16 * g < 16 ? nr - 16 * g : 16;
        for (int lb = 0; lb < kc; lb += 16) {
            int cols = kc - lb < 16 ? kc - lb : 16;
            __mmask16 cm = (__mmask16)((1u << cols) - 1);
            __m512 r[16];
            for (int i = 0; i < 16; i++)
                r[i] = i < rows ? _mm512_maskz_loadu_ps(cm, b + (ptrdiff_t)(16 * g + i) * ldb + lb)
                                : _mm512_setzero_ps();
            sg_transpose16(r);
            for (int x = 0; x < cols; x++)
                _mm512_storeu_ps(packed + (ptrdiff_t)(lb + x) * SG_NV * 16 + 16 * g, r[x]);
        }
    }
}

/* One tile: C[0:MR, 0:LANES NV] (last vector masked by `last`) = alpha op(A) op(B) + beta C
   over kc terms, or + bias[0:LANES NV] where bias is given; a steps rsa per row and csa per
   term, b is the panel (row stride ldb). MR and NV are constants in each instantiation, so
   the accumulators live in registers. */
#define SG_DEFINE(T, P)                                                                     \
static inline __attribute__((always_inline)) SG_AVX512 void                                 \
sg_tile_##P(const int MR, const int NV, int kc, const T* a, ptrdiff_t rsa, ptrdiff_t csa,   \
            const T* b, ptrdiff_t ldb, SG_MASK_##T last, T alpha, T beta, const T* bias,    \
            T* c, ptrdiff_t ldc) {                                                          \
    const int W = SG_LANES_##T;                                                             \
    SG_VEC_##T acc[SG_MR][SG_NV];                                                           \
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++)                                    \
        _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) acc[i][v] = SG_(setzero, T)(); \
    for (int l = 0; l < kc; l++) {                                                          \
        SG_VEC_##T bv[SG_NV];                                                               \
        const T* br = b + l * ldb;                                                          \
        _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)                                \
            bv[v] = v == NV - 1 ? SG_(maskz_loadu, T)(last, br + W * v)                     \
                                : SG_(loadu, T)(br + W * v);                                \
        const T* ac = a + l * csa;                                                          \
        _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {                              \
            SG_VEC_##T ai = SG_(set1, T)(ac[i * rsa]);                                      \
            _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++)                            \
                acc[i][v] = SG_(fmadd, T)(ai, bv[v], acc[i][v]);                            \
        }                                                                                   \
    }                                                                                       \
    SG_VEC_##T va = SG_(set1, T)(alpha), vb = SG_(set1, T)(beta);                           \
    _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++)                                    \
        _Pragma("GCC unroll 3") for (int v = 0; v < NV; v++) {                              \
            SG_MASK_##T mk = v == NV - 1 ? last : (SG_MASK_##T)-1;                          \
            T* cp = c + i * ldc + W * v;                                                    \
            SG_VEC_##T r = SG_(mul, T)(va, acc[i][v]);                                      \
            if (bias)                                                                       \
                r = SG_(add, T)(r, SG_(maskz_loadu, T)(mk, bias + W * v));                  \
            else if (beta != 0)                                                             \
                r = SG_(fmadd, T)(vb, SG_(maskz_loadu, T)(mk, cp), r);                      \
            SG_(mask_storeu, T)(cp, mk, r);                                                 \
        }                                                                                   \
}                                                                                           \
SG_TILE_ROWS(T, P)                                                                          \
typedef void (*sg_tile_##P##_t)(int, const T*, ptrdiff_t, ptrdiff_t, const T*, ptrdiff_t,   \
                                SG_MASK_##T, T, T, const T*, T*, ptrdiff_t);                \
static const sg_tile_##P##_t sg_tiles_##P[SG_MR][SG_NV] = {                                 \
    SG_TILE_REF(P, 1), SG_TILE_REF(P, 2), SG_TILE_REF(P, 3), SG_TILE_REF(P, 4),             \
    SG_TILE_REF(P, 5), SG_TILE_REF(P, 6), SG_TILE_REF(P, 7), SG_TILE_REF(P, 8)};            \
                                                                                            \
static SG_AVX512 void sg_##P##gemm_avx512(char ta, char tb, int m, int n, int k, T alpha,   \
                                          const T* a, int lda, const T* b, int ldb, T beta, \
                                          const T* bias, T* c, int ldc) {                   \
    const int W = SG_LANES_##T, NR = SG_NV * SG_LANES_##T;                                  \
    T packed[SG_KC_##P * SG_NV * SG_LANES_##T] __attribute__((aligned(64)));                \
    ptrdiff_t rsa = ta == 'N' ? lda : 1, csa = ta == 'N' ? 1 : lda;                         \
    for (int j0 = 0; j0 < n; j0 += NR) {                                                    \
        int nr = n - j0 < NR ? n - j0 : NR, nv = (nr + W - 1) / W;                          \
        SG_MASK_##T last = (SG_MASK_##T)((1u << (nr - W * (nv - 1))) - 1);                  \
        for (int l0 = 0; l0 < k; l0 += SG_KC_##P) {                                         \
            int kc = k - l0 < SG_KC_##P ? k - l0 : SG_KC_##P;                               \
            const T* panel;                                                                 \
            ptrdiff_t ldp;                                                                  \
            if (tb == 'N') {                                                                \
                panel = b + (ptrdiff_t)l0 * ldb + j0;                                       \
                ldp = ldb;                                                                  \
            } else {    /* op(B)'s columns are b's rows: copy the panel transposed */       \
                sg_pack_bt_##P(b + (ptrdiff_t)j0 * ldb + l0, ldb, nr, kc, packed);          \
                panel = packed;                                                             \
                ldp = NR;                                                                   \
            }                                                                               \
            T bt = l0 == 0 ? beta : (T)1;                                                   \
            const T* bb = l0 == 0 && bias ? bias + j0 : NULL;                               \
            for (int i0 = 0; i0 < m; i0 += SG_MR) {                                         \
                int mr = m - i0 < SG_MR ? m - i0 : SG_MR;                                   \
                sg_tiles_##P[mr - 1][nv - 1](kc, a + i0 * rsa + l0 * csa, rsa, csa, panel,  \
                                             ldp, last, alpha, bt, bb,                      \
                                             c + (ptrdiff_t)i0 * ldc + j0, ldc);            \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
}                                                                                           \
                                                                                            \
static int sg_##P##gemm(char ta, char tb, int m, int n, int k, T alpha, const T* a,         \
                        int lda, const T* b, int ldb, T beta, T* c, int ldc) {              \
    if (!sg_has_avx512 || m <= 0 || n <= 0 || k <= 0                                        \
            || (double)m * n * k > (double)SG_MAX_MACS_##P)                                 \
        return 0;                                                                           \
    sg_##P##gemm_avx512(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, NULL, c, ldc);        \
    return 1;                                                                               \
}                                                                                           \
                                                                                            \
/* C = op(A) op(B) + bias (n), bias broadcast over C's rows; 1 when computed, as above */   \
static int sg_##P##gemm_bias(char ta, char tb, int m, int n, int k, const T* a, int lda,    \
                             const T* b, int ldb, const T* bias, T* c, int ldc) {           \
    if (!sg_has_avx512 || m <= 0 || n <= 0 || k <= 0                                        \
            || (double)m * n * k > (double)SG_MAX_MACS_##P)                                 \
        return 0;                                                                           \
    sg_##P##gemm_avx512(ta, tb, m, n, k, (T)1, a, lda, b, ldb, (T)0, bias, c, ldc);         \
    return 1;                                                                               \
}

/* the tile for each (MR, NV): MR and NV constants, so acc[][] is registers */
#define SG_TILE_FN(T, P, MR, NV)                                                            \
static SG_AVX512 void sg_tile_##P##_##MR##_##NV(int kc, const T* a, ptrdiff_t rsa,          \
        ptrdiff_t csa, const T* b, ptrdiff_t ldb, SG_MASK_##T last, T alpha, T beta,        \
        const T* bias, T* c, ptrdiff_t ldc) {                                               \
    sg_tile_##P(MR, NV, kc, a, rsa, csa, b, ldb, last, alpha, beta, bias, c, ldc);          \
}
#define SG_TILE_ROW(T, P, MR) SG_TILE_FN(T, P, MR, 1) SG_TILE_FN(T, P, MR, 2)                \
    SG_TILE_FN(T, P, MR, 3)
#define SG_TILE_ROWS(T, P) SG_TILE_ROW(T, P, 1) SG_TILE_ROW(T, P, 2) SG_TILE_ROW(T, P, 3)    \
    SG_TILE_ROW(T, P, 4) SG_TILE_ROW(T, P, 5) SG_TILE_ROW(T, P, 6) SG_TILE_ROW(T, P, 7)     \
    SG_TILE_ROW(T, P, 8)
#define SG_TILE_REF(P, MR) {sg_tile_##P##_##MR##_1, sg_tile_##P##_##MR##_2,                  \
                            sg_tile_##P##_##MR##_3}

SG_DEFINE(double, d)
SG_DEFINE(float, s)
#else
static void sg_detect(void) {}
static int sg_has_avx512 = 0;
#define SG_NONE(T, P)                                                                       \
static int sg_##P##gemm(char ta, char tb, int m, int n, int k, T alpha, const T* a,         \
                        int lda, const T* b, int ldb, T beta, T* c, int ldc) { return 0; }  \
static int sg_##P##gemm_bias(char ta, char tb, int m, int n, int k, const T* a, int lda,    \
                             const T* b, int ldb, const T* bias, T* c, int ldc) { return 0; }
SG_NONE(double, d)
SG_NONE(float, s)
#endif
