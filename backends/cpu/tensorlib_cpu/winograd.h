/* A Winograd F(2x2, 3x3) float32 convolution: 3x3 kernels, stride 1, dilation 1, one group,
   any padding, written straight into an NCHW output with the bias added (included by
   conv_kernels.pyx).

   Why: a 3x3 convolution with many channels (32->64 on 16x16 images) runs on oneDNN's
   direct jit:avx2 kernel near the two cores' FMA peak, so a faster kernel must do fewer
   multiply-adds. F(2x2, 3x3) computes each 2x2 output tile from a 4x4 input patch with 16
   products per (input, output) channel pair instead of 36 (2.25x fewer); its transforms
   have only 0, +-1 and +-1/2 entries, so float32 keeps its accuracy.

       V = B^T d B   (per input channel, tile)     B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
       U = G g G^T   (per output, input channel)   G   = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]
       M[xi] = U[xi] (Cout x Cin) @ V[xi] (Cin x tiles), xi = 0..15
       Y = A^T M A   (per output channel, tile)    A^T = [1 1 1 0; 0 1 -1 -1]

   Layout: the transformed tensors are never whole. The tiles are cut into blocks (a range
   of tile rows of one column chunk, across images) sized so that V's block fits in L2; per
   block a thread transforms its input tiles, then per chunk of WG_OCB output channels runs
   the 16 products (an AVX2 register tile of 4 output channels x 24 tiles, the weights
   broadcast) and transforms them back into the output. Tile row r of a block holds tile
   columns at V[xi][c][r * tcwp + j], tcwp a multiple of 8 (the vector width), so that the
   transforms run over 8 tile columns of one row at a time: the input rows are split into
   even and odd columns (zero-padded), and tile j's columns 2j..2j+3 are then even[j],
   odd[j], even[j+1], odd[j+1]: four unit-stride loads.

   Measured (AMD EPYC, one thread, 32->64 on 32x32x16x16): 2.6-3.2 ms against oneDNN's
   4.0-4.5 ms; of it the products ~1.9 ms (near the FMA peak: 12 FMAs per 7 loads), the
   input transform 0.35-0.45 ms, the output transform 0.25 ms. Tried: the rows split one by
   one or through memcpy, 3.1-3.3 ms in all; 160 KiB blocks (a 16-tile tail per product) and
   unaligned blocks, no difference above the shared machine's noise.

   In AVX-512 builds (WINOGRAD_AVX512) the products run on 512-bit registers: on the AMD
   EPYC Zen 5 (one thread, same shape) 1.14 ms against 1.64 ms with the 256-bit ones and
   oneDNN's 1.43-1.65 ms. Blocks hold at least WG_MIN_TILES tiles: with 128 and 256
   channels on 14x14 images V's budget had left 24 and 8, and the products' partial
   register tiles took 1.6-2.2x oneDNN's time (now 0.95-1.0x).

   Built only where the compiler targets AVX2 and FMA (WINOGRAD_SIMD); elsewhere the caller
   keeps oneDNN / im2col. Not a tracked dependency of conv_kernels.c: touch conv_kernels.pyx
   after editing this file. */
#include <stdlib.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define WINOGRAD_SIMD 1
#else
#define WINOGRAD_SIMD 0
#endif
/* whether the products run on 512-bit registers (wg_products) */
#if WINOGRAD_SIMD && defined(__AVX512F__)
#define WINOGRAD_AVX512 1
#else
#define WINOGRAD_AVX512 0
#endif

#define WG_OB 4                  /* output channels per register tile */
#define WG_OCB 16                /* output channels per product chunk (M's block) */
#define WG_MAX_TCW 64            /* tile columns per block at most (a column chunk) */
#define WG_V_BYTES (192 << 10)   /* V's block (of 512 KiB L2 per core) */
#define WG_MIN_TILES 48          /* tiles a block has at least (V may pass WG_V_BYTES) */

/* Transformed weights of output-channel blocks [ob0, ob1): u[((xi * OBs + ob) * C + c) *
   WG_OB + o] = U[xi] of output channel ob * WG_OB + o and input channel c (0 past the last
   output channel; OBs = ceil(O / WG_OB)). w: (O, C, 3, 3) contiguous. */
static void winograd_weights(const float* w, float* u, Py_ssize_t O, Py_ssize_t C,
                             Py_ssize_t ob0, Py_ssize_t ob1) {
    Py_ssize_t obs = (O + WG_OB - 1) / WG_OB;
    for (Py_ssize_t ob = ob0; ob < ob1; ob++)
        for (int o = 0; o < WG_OB; o++) {
            Py_ssize_t oc = ob * WG_OB + o;
            for (Py_ssize_t c = 0; c < C; c++) {
                float r[4][4] = {{0.0f}};
                if (oc < O) {
                    const float* g = w + (oc * C + c) * 9;
                    float t[4][3];
                    for (int j = 0; j < 3; j++) {      /* G g: rows of G against columns */
                        t[0][j] = g[j];
                        t[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
                        t[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
                        t[3][j] = g[6 + j];
                    }
                    for (int i = 0; i < 4; i++) {      /* (G g) G^T */
                        r[i][0] = t[i][0];
                        r[i][1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
                        r[i][2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
                        r[i][3] = t[i][2];
                    }
                }
                for (int xi = 0; xi < 16; xi++)
                    u[((xi * obs + ob) * C + c) * WG_OB + o] = r[xi / 4][xi % 4];
            }
        }
}

#if WINOGRAD_SIMD
/* One input row split into even and odd padded columns: ev[j] = row[x0 + 2 j],
   od[j] = row[x0 + 2 j + 1] (0 outside [0, W)) for j <= n, n a multiple of 8. Unit-stride
   rows go 16 columns at a time through masked loads (no lane outside the row is read) and
   broadcast rows (stride 0) through masks, the last pair and other strides one by one. */
static inline void wg_split_row(const float* row, Py_ssize_t W, Py_ssize_t sw, Py_ssize_t x0,
                                Py_ssize_t n, float* ev, float* od) {
    Py_ssize_t k = 0;
    if (sw == 0) {          /* a broadcast row (y.sum()'s gradient): one value, zero padded */
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i below = _mm256_set1_epi32(-1), end = _mm256_set1_epi32((int)W);
        const __m256 value = _mm256_set1_ps(row[0]);
        for (; k < n; k += 8) {                 /* even column x0 + 2 (k + i), odd one more */
            __m256i qe = _mm256_add_epi32(_mm256_set1_epi32((int)(x0 + 2 * k)),
                                          _mm256_add_epi32(lane, lane));
            __m256i qo = _mm256_add_epi32(qe, _mm256_set1_epi32(1));
            __m256i me = _mm256_and_si256(_mm256_cmpgt_epi32(qe, below),
                                          _mm256_cmpgt_epi32(end, qe));
            __m256i mo = _mm256_and_si256(_mm256_cmpgt_epi32(qo, below),
                                          _mm256_cmpgt_epi32(end, qo));
            _mm256_storeu_ps(ev + k, _mm256_and_ps(value, _mm256_castsi256_ps(me)));
            _mm256_storeu_ps(od + k, _mm256_and_ps(value, _mm256_castsi256_ps(mo)));
        }
    } else if (sw == 1) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i below = _mm256_set1_epi32(-1), end = _mm256_set1_epi32((int)W);
        for (; k < n; k += 8) {
            Py_ssize_t q = x0 + 2 * k;              /* the first of 16 columns */
            __m256 a, b;
            if (q >= 0 && q + 16 <= W) {
                a = _mm256_loadu_ps(row + q);
                b = _mm256_loadu_ps(row + q + 8);
            } else {
                __m256i qa = _mm256_add_epi32(_mm256_set1_epi32((int)q), lane);
                __m256i qb = _mm256_add_epi32(qa, _mm256_set1_epi32(8));
                __m256i ma = _mm256_and_si256(_mm256_cmpgt_epi32(qa, below),
                                              _mm256_cmpgt_epi32(end, qa));
                __m256i mb = _mm256_and_si256(_mm256_cmpgt_epi32(qb, below),
                                              _mm256_cmpgt_epi32(end, qb));
                a = _mm256_maskload_ps(row + q, ma);
                b = _mm256_maskload_ps(row + q + 8, mb);
            }
            __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
            __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
            _mm256_storeu_ps(ev + k, _mm256_castpd_ps(_mm256_permute4x64_pd(
                _mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0))));
            _mm256_storeu_ps(od + k, _mm256_castpd_ps(_mm256_permute4x64_pd(
                _mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0))));
        }
    }
    for (; k <= n; k++) {
        Py_ssize_t a = x0 + 2 * k, b = a + 1;
        ev[k] = a >= 0 && a < W ? row[a * sw] : 0.0f;
        od[k] = b >= 0 && b < W ? row[b * sw] : 0.0f;
    }
}

/* V for one tile row of one input plane: tiles j < tcwp (a multiple of 8) at
   v[xi * vs + j]. ev/od: the 4 split rows of the patch, tcwp + 1 read of each. */
static inline void wg_input_row(float* const ev[4], float* const od[4], Py_ssize_t tcwp,
                                float* v, Py_ssize_t vs) {
    for (Py_ssize_t j = 0; j < tcwp; j += 8) {
        __m256 c[4][4];
        for (int k = 0; k < 4; k++) {          /* d B along the width */
            __m256 e0 = _mm256_loadu_ps(ev[k] + j), o0 = _mm256_loadu_ps(od[k] + j);
            __m256 e1 = _mm256_loadu_ps(ev[k] + j + 1), o1 = _mm256_loadu_ps(od[k] + j + 1);
            c[k][0] = _mm256_sub_ps(e0, e1);
            c[k][1] = _mm256_add_ps(o0, e1);
            c[k][2] = _mm256_sub_ps(e1, o0);
            c[k][3] = _mm256_sub_ps(o0, o1);
        }
        for (int q = 0; q < 4; q++) {          /* B^T (d B) along the height */
            _mm256_storeu_ps(v + (0 * 4 + q) * vs + j, _mm256_sub_ps(c[0][q], c[2][q]));
            _mm256_storeu_ps(v + (1 * 4 + q) * vs + j, _mm256_add_ps(c[1][q], c[2][q]));
            _mm256_storeu_ps(v + (2 * 4 + q) * vs + j, _mm256_sub_ps(c[2][q], c[1][q]));
            _mm256_storeu_ps(v + (3 * 4 + q) * vs + j, _mm256_sub_ps(c[1][q], c[3][q]));
        }
    }
}

/* m[o * T + t ...] = sum_c u[c * WG_OB + o] v[c * T + t ...] for o < WG_OB and 24, 16 or 8
   tiles from t: the register tiles of one product (named accumulators: an array of them went
   through the stack in direct_conv.h). */
static inline void wg_mm24(const float* u, const float* v, Py_ssize_t C, Py_ssize_t T,
                           float* m) {
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00,
           a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
    for (Py_ssize_t c = 0; c < C; c++, u += WG_OB, v += T) {
        __m256 x0 = _mm256_loadu_ps(v), x1 = _mm256_loadu_ps(v + 8), x2 = _mm256_loadu_ps(v + 16);
        /* the three loads once, in registers: gcc otherwise folds them into each of the 12
           FMAs (16 loads a step instead of 7; the load ports then bound the loop) */
        __asm__("" : "+x"(x0), "+x"(x1), "+x"(x2));
        __m256 w = _mm256_broadcast_ss(u);
        a00 = _mm256_fmadd_ps(w, x0, a00); a01 = _mm256_fmadd_ps(w, x1, a01);
        a02 = _mm256_fmadd_ps(w, x2, a02);
        w = _mm256_broadcast_ss(u + 1);
        a10 = _mm256_fmadd_ps(w, x0, a10); a11 = _mm256_fmadd_ps(w, x1, a11);
        a12 = _mm256_fmadd_ps(w, x2, a12);
        w = _mm256_broadcast_ss(u + 2);
        a20 = _mm256_fmadd_ps(w, x0, a20); a21 = _mm256_fmadd_ps(w, x1, a21);
        a22 = _mm256_fmadd_ps(w, x2, a22);
        w = _mm256_broadcast_ss(u + 3);
        a30 = _mm256_fmadd_ps(w, x0, a30); a31 = _mm256_fmadd_ps(w, x1, a31);
        a32 = _mm256_fmadd_ps(w, x2, a32);
    }
    _mm256_storeu_ps(m, a00); _mm256_storeu_ps(m + 8, a01); _mm256_storeu_ps(m + 16, a02);
    m += T;
    _mm256_storeu_ps(m, a10); _mm256_storeu_ps(m + 8, a11); _mm256_storeu_ps(m + 16, a12);
    m += T;
    _mm256_storeu_ps(m, a20); _mm256_storeu_ps(m + 8, a21); _mm256_storeu_ps(m + 16, a22);
    m += T;
    _mm256_storeu_ps(m, a30); _mm256_storeu_ps(m + 8, a31); _mm256_storeu_ps(m + 16, a32);
}

static inline void wg_mm16(const float* u, const float* v, Py_ssize_t C, Py_ssize_t T,
                           float* m) {
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00,
           a30 = a00, a31 = a00;
    for (Py_ssize_t c = 0; c < C; c++, u += WG_OB, v += T) {
        __m256 x0 = _mm256_loadu_ps(v), x1 = _mm256_loadu_ps(v + 8);
        __m256 w0 = _mm256_broadcast_ss(u), w1 = _mm256_broadcast_ss(u + 1);
        a00 = _mm256_fmadd_ps(w0, x0, a00); a01 = _mm256_fmadd_ps(w0, x1, a01);
        a10 = _mm256_fmadd_ps(w1, x0, a10); a11 = _mm256_fmadd_ps(w1, x1, a11);
        __m256 w2 = _mm256_broadcast_ss(u + 2), w3 = _mm256_broadcast_ss(u + 3);
        a20 = _mm256_fmadd_ps(w2, x0, a20); a21 = _mm256_fmadd_ps(w2, x1, a21);
        a30 = _mm256_fmadd_ps(w3, x0, a30); a31 = _mm256_fmadd_ps(w3, x1, a31);
    }
    _mm256_storeu_ps(m, a00); _mm256_storeu_ps(m + 8, a01); m += T;
    _mm256_storeu_ps(m, a10); _mm256_storeu_ps(m + 8, a11); m += T;
    _mm256_storeu_ps(m, a20); _mm256_storeu_ps(m + 8, a21); m += T;
    _mm256_storeu_ps(m, a30); _mm256_storeu_ps(m + 8, a31);
}

static inline void wg_mm8(const float* u, const float* v, Py_ssize_t C, Py_ssize_t T,
                          float* m) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (Py_ssize_t c = 0; c < C; c++, u += WG_OB, v += T) {
        __m256 x0 = _mm256_loadu_ps(v);
        a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(u), x0, a0);
        a1 = _mm256_fmadd_ps(_mm256_broadcast_ss(u + 1), x0, a1);
        a2 = _mm256_fmadd_ps(_mm256_broadcast_ss(u + 2), x0, a2);
        a3 = _mm256_fmadd_ps(_mm256_broadcast_ss(u + 3), x0, a3);
    }
    _mm256_storeu_ps(m, a0); _mm256_storeu_ps(m + T, a1); _mm256_storeu_ps(m + 2 * T, a2);
    _mm256_storeu_ps(m + 3 * T, a3);
}

#if WINOGRAD_AVX512
/* The products on 512-bit registers where the build targets AVX-512 (-march=native): 48
   tiles from t, as wg_mm24 (4 output channels, the weights broadcast); wg_products runs the
   tail of fewer than 48 on the 256-bit tiles. On the AMD
   EPYC Zen 5 (two 512-bit FMA pipes) this halves the products' time against the 256-bit
   ones; on split 512-bit units (Zen 4) it issues half the instructions for the same work. */
static inline void wg_mm48(const float* u, const float* v, Py_ssize_t C, Py_ssize_t T,
                           float* m) {
    __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00,
           a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
    for (Py_ssize_t c = 0; c < C; c++, u += WG_OB, v += T) {
        __m512 x0 = _mm512_loadu_ps(v), x1 = _mm512_loadu_ps(v + 16);
        __m512 x2 = _mm512_loadu_ps(v + 32);
        __asm__("" : "+v"(x0), "+v"(x1), "+v"(x2));   /* loaded once (see wg_mm24) */
        __m512 w = _mm512_set1_ps(u[0]);
        a00 = _mm512_fmadd_ps(w, x0, a00); a01 = _mm512_fmadd_ps(w, x1, a01);
        a02 = _mm512_fmadd_ps(w, x2, a02);
        w = _mm512_set1_ps(u[1]);
        a10 = _mm512_fmadd_ps(w, x0, a10); a11 = _mm512_fmadd_ps(w, x1, a11);
        a12 = _mm512_fmadd_ps(w, x2, a12);
        w = _mm512_set1_ps(u[2]);
        a20 = _mm512_fmadd_ps(w, x0, a20); a21 = _mm512_fmadd_ps(w, x1, a21);
        a22 = _mm512_fmadd_ps(w, x2, a22);
        w = _mm512_set1_ps(u[3]);
        a30 = _mm512_fmadd_ps(w, x0, a30); a31 = _mm512_fmadd_ps(w, x1, a31);
        a32 = _mm512_fmadd_ps(w, x2, a32);
    }
    _mm512_storeu_ps(m, a00); _mm512_storeu_ps(m + 16, a01); _mm512_storeu_ps(m + 32, a02);
    m += T;
    _mm512_storeu_ps(m, a10); _mm512_storeu_ps(m + 16, a11); _mm512_storeu_ps(m + 32, a12);
    m += T;
    _mm512_storeu_ps(m, a20); _mm512_storeu_ps(m + 16, a21); _mm512_storeu_ps(m + 32, a22);
    m += T;
    _mm512_storeu_ps(m, a30); _mm512_storeu_ps(m + 16, a31); _mm512_storeu_ps(m + 32, a32);
}
#endif

/* The 16 products' register tiles over `used` tiles (a multiple of 8) of one block. */
static inline void wg_products(const float* u, const float* v, Py_ssize_t C, Py_ssize_t T,
                               Py_ssize_t used, float* m) {
    Py_ssize_t t = 0;
#if WINOGRAD_AVX512
    for (; t + 48 <= used; t += 48) wg_mm48(u, v + t, C, T, m + t);
#endif
    for (; t + 24 <= used; t += 24) wg_mm24(u, v + t, C, T, m + t);
    if (t + 16 <= used) { wg_mm16(u, v + t, C, T, m + t); t += 16; }
    if (t < used) wg_mm8(u, v + t, C, T, m + t);
}

/* Stores n (<= 8) floats of acc at dst. */
static inline void wg_store(float* dst, Py_ssize_t n, __m256 acc) {
    if (n >= 8) {
        _mm256_storeu_ps(dst, acc);
    } else if (n > 0) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        _mm256_maskstore_ps(dst, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), lane), acc);
    }
}

/* Output rows 2ty, 2ty+1 (those below oh) of one channel from M's tile row: 8 tiles at a
   time, tiles j < tcw, M entry xi of tile j at m[xi * ms + j]; dst at column 2 tx0. */
static inline void wg_output_row(const float* m, Py_ssize_t ms, Py_ssize_t tcw, float bias,
                                 float* dst, Py_ssize_t sy, int rows, Py_ssize_t cols) {
    __m256 b = _mm256_set1_ps(bias);
    for (Py_ssize_t j = 0; j < tcw; j += 8) {
        __m256 s[2][4];
        for (int q = 0; q < 4; q++) {          /* A^T M along the height */
            __m256 m0 = _mm256_loadu_ps(m + (0 * 4 + q) * ms + j);
            __m256 m1 = _mm256_loadu_ps(m + (1 * 4 + q) * ms + j);
            __m256 m2 = _mm256_loadu_ps(m + (2 * 4 + q) * ms + j);
            __m256 m3 = _mm256_loadu_ps(m + (3 * 4 + q) * ms + j);
            s[0][q] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
            s[1][q] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
        }
        Py_ssize_t left = cols - 2 * j;         /* output columns from this vector's first */
        for (int i = 0; i < rows; i++) {        /* (A^T M) A along the width, interleaved */
            __m256 y0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s[i][0], s[i][1]), s[i][2]), b);
            __m256 y1 = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(s[i][1], s[i][2]), s[i][3]), b);
            __m256 lo = _mm256_unpacklo_ps(y0, y1), hi = _mm256_unpackhi_ps(y0, y1);
            float* d = dst + i * sy + 2 * j;
            wg_store(d, left, _mm256_permute2f128_ps(lo, hi, 0x20));
            wg_store(d + 8, left - 8, _mm256_permute2f128_ps(lo, hi, 0x31));
        }
    }
}
#endif

/* out (N, O, oh, ow) with strides (son, soc, soy, 1) = conv2d(x, w) + bias for 3x3 weights,
   stride 1, padding (ph, pw): oh = H + 2 ph - 2, ow = W + 2 pw - 2. x: (N, C, H, W) with
   strides (sxn, sxc, sxh, sxw); w: (O, C, 3, 3) contiguous, transformed on the same threads
   (a share of the output channels each) before the blocks; bias: (O,) contiguous or NULL.
   Returns 1 when done, 0 when it cannot run here (no AVX2/FMA build, or out of memory:
   nothing written then). */
static int winograd_conv2d(const float* x, Py_ssize_t N, Py_ssize_t C, Py_ssize_t H,
                           Py_ssize_t W, Py_ssize_t sxn, Py_ssize_t sxc, Py_ssize_t sxh,
                           Py_ssize_t sxw, const float* w, Py_ssize_t O, const float* bias,
                           float* out, Py_ssize_t son, Py_ssize_t soc, Py_ssize_t soy,
                           Py_ssize_t oh, Py_ssize_t ow, int ph, int pw, int nt) {
#if WINOGRAD_SIMD
    Py_ssize_t th = (oh + 1) / 2, tw = (ow + 1) / 2, obs = (O + WG_OB - 1) / WG_OB;
    Py_ssize_t chunks = (tw + WG_MAX_TCW - 1) / WG_MAX_TCW;   /* column chunks */
    Py_ssize_t tcw = (tw + chunks - 1) / chunks, tcwp = (tcw + 7) / 8 * 8;
    /* tile rows per block: V's block within WG_V_BYTES, at least one row */
    Py_ssize_t rows = WG_V_BYTES / (Py_ssize_t)sizeof(float) / (16 * C * tcwp);
    Py_ssize_t all_rows = N * th;
    /* at least WG_MIN_TILES tiles a block: the products' register tiles stay whole */
    Py_ssize_t min_rows = (WG_MIN_TILES + tcwp - 1) / tcwp;
    if (rows < min_rows) rows = min_rows;
    /* enough blocks for the threads */
    while (rows > min_rows && (all_rows + rows - 1) / rows * chunks < 4 * nt) rows /= 2;
    if (rows < min_rows) rows = min_rows;
    Py_ssize_t row_blocks = (all_rows + rows - 1) / rows, blocks = row_blocks * chunks;
    Py_ssize_t T = rows * tcwp, ocb = WG_OCB < obs * WG_OB ? WG_OCB : obs * WG_OB;
    float* u = (float*)malloc((size_t)(16 * obs * WG_OB * C) * sizeof(float));
    if (u == NULL) return 0;
    int failed = 0;
    #pragma omp parallel num_threads(nt)
    {
        float* v = NULL, * m = NULL;
        if (posix_memalign((void**)&v, 64, (size_t)(16 * C * T) * sizeof(float))) v = NULL;
        if (posix_memalign((void**)&m, 64, (size_t)(16 * ocb * T) * sizeof(float))) m = NULL;
        /* 4 split rows, even and odd (tcwp + 1 used of each) */
        Py_ssize_t sl = tcwp + 8;
        float* split = (float*)malloc((size_t)(8 * sl) * sizeof(float));
        if (v == NULL || m == NULL || split == NULL) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp barrier
        if (!failed) {
            #pragma omp for schedule(static)
            for (Py_ssize_t ob = 0; ob < obs; ob++) winograd_weights(w, u, O, C, ob, ob + 1);
            float* ev[4], * od[4];
            for (int k = 0; k < 4; k++) {
                ev[k] = split + 2 * k * sl;
                od[k] = ev[k] + sl;
            }
            #pragma omp for schedule(static)
            for (Py_ssize_t blk = 0; blk < blocks; blk++) {
                Py_ssize_t r0 = (blk / chunks) * rows, chunk = blk % chunks;
                Py_ssize_t r1 = r0 + rows < all_rows ? r0 + rows : all_rows;
                Py_ssize_t tx0 = chunk * tcw, ncol = tw - tx0 < tcw ? tw - tx0 : tcw;
                /* the block's V, plane by plane; a tile row's patch shares its first two
                   rows with the last two of the tile row above it in the same image: those
                   are split once */
                for (Py_ssize_t c = 0; c < C; c++) {
                    Py_ssize_t last_n = -1, last_y = 0;
                    for (Py_ssize_t r = r0; r < r1; r++) {
                        Py_ssize_t n = r / th, y0 = 2 * (r % th) - ph;
                        const float* plane = x + n * sxn + c * sxc;
                        int k0 = 0;
                        if (n == last_n && y0 == last_y + 2) {
                            float* e0 = ev[0], * e1 = ev[1], * o0 = od[0], * o1 = od[1];
                            ev[0] = ev[2]; ev[1] = ev[3]; od[0] = od[2]; od[1] = od[3];
                            ev[2] = e0; ev[3] = e1; od[2] = o0; od[3] = o1;
                            k0 = 2;
                        }
                        for (int k = k0; k < 4; k++) {
                            Py_ssize_t y = y0 + k;
                            if (y < 0 || y >= H) {
                                memset(ev[k], 0, (size_t)sl * sizeof(float));
                                memset(od[k], 0, (size_t)sl * sizeof(float));
                            } else {
                                wg_split_row(plane + y * sxh, W, sxw, 2 * tx0 - pw, tcwp,
                                             ev[k], od[k]);
                            }
                        }
                        last_n = n;
                        last_y = y0;
                        wg_input_row(ev, od, tcwp, v + c * T + (r - r0) * tcwp, C * T);
                    }
                }
                Py_ssize_t used = (r1 - r0) * tcwp;  /* tiles of V computed */
                for (Py_ssize_t oc0 = 0; oc0 < obs * WG_OB; oc0 += ocb) {
                    Py_ssize_t oc1 = oc0 + ocb < obs * WG_OB ? oc0 + ocb : obs * WG_OB;
                    for (int xi = 0; xi < 16; xi++)
                        for (Py_ssize_t o = oc0; o < oc1; o += WG_OB) {
                            const float* uu = u + ((xi * obs + o / WG_OB) * C) * WG_OB;
                            const float* vv = v + xi * C * T;
                            float* mm = m + (xi * ocb + (o - oc0)) * T;
                            wg_products(uu, vv, C, T, used, mm);
                        }
                    for (Py_ssize_t r = r0; r < r1; r++) {
                        Py_ssize_t n = r / th, ty = r % th;
                        int orows = 2 * ty + 1 < oh ? 2 : 1;
                        for (Py_ssize_t o = oc0; o < oc1 && o < O; o++)
                            wg_output_row(m + (o - oc0) * T + (r - r0) * tcwp, ocb * T, ncol,
                                          bias == NULL ? 0.0f : bias[o],
                                          out + n * son + o * soc + 2 * ty * soy + 2 * tx0,
                                          soy, orows, 2 * ncol < ow - 2 * tx0
                                                      ? 2 * ncol : ow - 2 * tx0);
                    }
                }
            }
        }
        free(v);
        free(m);
        free(split);
    }
    free(u);
    return !failed;
#else
    (void)x; (void)N; (void)C; (void)H; (void)W; (void)sxn; (void)sxc; (void)sxh; (void)sxw;
    (void)w; (void)O; (void)bias; (void)out; (void)son; (void)soc; (void)soy; (void)oh;
    (void)ow; (void)ph; (void)pw; (void)nt;
    return 0;
#endif
}
