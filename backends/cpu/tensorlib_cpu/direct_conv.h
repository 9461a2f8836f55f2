/* A direct float32 2-D convolution for inputs with few channels per group (an image's RGB
   planes), written straight into an NCHW output, bias included (included by
   conv_kernels.pyx).

   Why: oneDNN 3.2 computes such a convolution into its blocked layout (nChw8c) and then
   reorders the result back to NCHW: for conv2d 3->32 on 32x32x32x32 the reorder is a third
   of the call (0.18 of 0.70 ms, ONEDNN_VERBOSE), one more pass over a 4 MiB output. With
   C * kh * kw products per output (27 for 3x3 RGB), the output is vectorised along its width
   instead: per tile of DC_OB output channels x DC_WV vectors of DC_VL columns, every
   kernel tap is DC_WV loads of the input row, DC_OB weight broadcasts and DC_OB * DC_WV fused multiply-adds
   into registers, and each output element is stored once.

   Layout: each task zero-pads one image's input planes (any strides) into its own buffer,
   rows DC_TILE columns wider than needed so that every load is in bounds, and computes one
   range of output-channel blocks of that image, a band of output rows at a time (all the
   blocks of a band read the same input rows, which fit in L1). Weights are packed per
   block (tap-major, DC_OB channels a tap, zeros past the group's last channel), so a block
   never straddles two groups. Stride along the width must be 1 (the loads are contiguous);
   stride along the height, dilation and padding are free. The output's width stride is 1.

   Built only where the compiler targets AVX2 and FMA (DIRECT_CONV_SIMD): elsewhere the
   caller keeps oneDNN / im2col. Not a tracked dependency of conv_kernels.c: touch
   conv_kernels.pyx after editing this file.

   Tile shapes measured (one thread, 3->32 on 32x32x32x32): 4 channels x 2 vectors
   0.67-0.73 ms (~80 GFLOP/s), 6 x 2 0.83-0.94 ms, 3 x 4 1.02-1.36 ms; streaming stores
   0.92-1.01 ms (the output is read next, and stays in cache with plain stores). Where the
   build targets AVX-512 the vectors are 16 columns wide (same tile, same order of the
   multiply-adds per output, so the same results): on the shared Intel Xeon (Emerald
   Rapids) 0.54-0.78 ms against 0.76-1.31 ms with 8-column vectors, alternating runs. */
#include <stdlib.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define DIRECT_CONV_SIMD 1
#else
#define DIRECT_CONV_SIMD 0
#endif

#define DC_OB 4                  /* output channels per register tile */
#define DC_WV 2                  /* vectors of DC_VL output columns per register tile */
#if DIRECT_CONV_SIMD && defined(__AVX512F__)
#define DC_VL 16                 /* 512-bit vectors where the build targets AVX-512 */
#else
#define DC_VL 8
#endif
#define DC_TILE (DC_VL * DC_WV)  /* output columns per register tile */
#define DC_L1_BYTES (24 << 10)   /* input rows a pass over the blocks reads (of 32 KiB L1d) */

/* The padded row length (elements) for an output width ow and a kernel reach along the
   width (kw - 1) * dw: the last tile's loads stay inside the row. */
static inline Py_ssize_t direct_conv_row(Py_ssize_t W, int pw, Py_ssize_t ow,
                                         Py_ssize_t reach) {
    Py_ssize_t tiles = (ow + DC_TILE - 1) / DC_TILE, need = tiles * DC_TILE + reach;
    return need > W + 2 * pw ? need : W + 2 * pw;
}

/* Packed weights: pack[(blk * K + t) * DC_OB + o] = w[oc0(blk) + o, t] (K = Cg * kh * kw
   taps), 0 where block blk has fewer than DC_OB channels. w: (O, Cg, kh, kw) contiguous. */
static void direct_conv_pack(const float* w, float* pack, Py_ssize_t O, Py_ssize_t G,
                             Py_ssize_t K) {
    Py_ssize_t og = O / G, per = (og + DC_OB - 1) / DC_OB;
    for (Py_ssize_t g = 0; g < G; g++)
        for (Py_ssize_t k = 0; k < per; k++) {
            float* dst = pack + (g * per + k) * K * DC_OB;
            for (Py_ssize_t t = 0; t < K; t++)
                for (int o = 0; o < DC_OB; o++) {
                    Py_ssize_t c = k * DC_OB + o;
                    dst[t * DC_OB + o] = c < og ? w[(g * og + c) * K + t] : 0.0f;
                }
        }
}

#if DIRECT_CONV_SIMD
/* One padded image: plane c row r is buf[(c * Hp + r) * Wp ...]. */
static void direct_conv_pad(const float* x, Py_ssize_t C, Py_ssize_t H, Py_ssize_t W,
                            Py_ssize_t sc, Py_ssize_t sh, Py_ssize_t sw, int ph, int pw,
                            float* buf, Py_ssize_t Hp, Py_ssize_t Wp) {
    for (Py_ssize_t c = 0; c < C; c++)
        for (Py_ssize_t r = 0; r < Hp; r++) {
            float* row = buf + (c * Hp + r) * Wp;
            Py_ssize_t y = r - ph;
            if (y < 0 || y >= H) {
                memset(row, 0, (size_t)Wp * sizeof(float));
                continue;
            }
            const float* src = x + c * sc + y * sh;
            memset(row, 0, (size_t)pw * sizeof(float));
            if (sw == 1)
                memcpy(row + pw, src, (size_t)W * sizeof(float));
            else
                for (Py_ssize_t q = 0; q < W; q++) row[pw + q] = src[q * sw];
            memset(row + pw + W, 0, (size_t)(Wp - pw - W) * sizeof(float));
        }
}

#if DC_VL == 16
typedef __m512 dc_vec;
#define dc_load _mm512_loadu_ps
#define dc_set1 _mm512_set1_ps
#define dc_fmadd _mm512_fmadd_ps
/* Stores acc (16 output columns from dst) where they lie inside the row (left of them). */
static inline void direct_conv_store(float* dst, Py_ssize_t left, __m512 acc) {
    if (left >= 16)
        _mm512_storeu_ps(dst, acc);
    else if (left > 0)
        _mm512_mask_storeu_ps(dst, (__mmask16)((1u << left) - 1u), acc);
}
#else
typedef __m256 dc_vec;
#define dc_load _mm256_loadu_ps
#define dc_set1 _mm256_set1_ps
#define dc_fmadd _mm256_fmadd_ps
/* Stores acc (8 output columns from dst) where they lie inside the row (left of them). */
static inline void direct_conv_store(float* dst, Py_ssize_t left, __m256 acc) {
    if (left >= 8) {
        _mm256_storeu_ps(dst, acc);
    } else if (left > 0) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        _mm256_maskstore_ps(dst, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), lane), acc);
    }
}
#endif

/* Output rows [y0, y1) of one block (count <= DC_OB channels stored; out at its first
   channel):
   tap t reads the padded planes at offset taps[t] from the tile's row start, and the
   DC_OB weights pack[t * DC_OB ...]. The accumulators are named variables (an array of
   them went through the stack on every tap). */
static void direct_conv_block(const float* planes, Py_ssize_t Wp, const Py_ssize_t* taps,
                              Py_ssize_t K, const float* pack, int sh, const float* bias,
                              int count, float* out, Py_ssize_t so, Py_ssize_t sy,
                              Py_ssize_t y0, Py_ssize_t y1, Py_ssize_t ow) {
    float b[DC_OB];
    for (int o = 0; o < DC_OB; o++) b[o] = bias != NULL && o < count ? bias[o] : 0.0f;
    for (Py_ssize_t y = y0; y < y1; y++) {
        for (Py_ssize_t q0 = 0; q0 < ow; q0 += DC_TILE) {
            const float* base = planes + y * sh * Wp + q0;
            dc_vec a00 = dc_set1(b[0]), a01 = a00, a10 = dc_set1(b[1]), a11 = a10,
                   a20 = dc_set1(b[2]), a21 = a20, a30 = dc_set1(b[3]), a31 = a30;
            const float* wt = pack;
            for (Py_ssize_t t = 0; t < K; t++, wt += DC_OB) {
                const float* at = base + taps[t];
                dc_vec x0 = dc_load(at), x1 = dc_load(at + DC_VL);
                dc_vec w0 = dc_set1(wt[0]), w1 = dc_set1(wt[1]);
                a00 = dc_fmadd(w0, x0, a00);
                a01 = dc_fmadd(w0, x1, a01);
                a10 = dc_fmadd(w1, x0, a10);
                a11 = dc_fmadd(w1, x1, a11);
                dc_vec w2 = dc_set1(wt[2]), w3 = dc_set1(wt[3]);
                a20 = dc_fmadd(w2, x0, a20);
                a21 = dc_fmadd(w2, x1, a21);
                a30 = dc_fmadd(w3, x0, a30);
                a31 = dc_fmadd(w3, x1, a31);
            }
            Py_ssize_t left = ow - q0;
            float* dst = out + y * sy + q0;
            direct_conv_store(dst, left, a00);
            direct_conv_store(dst + DC_VL, left - DC_VL, a01);
            if (count > 1) {
                direct_conv_store(dst + so, left, a10);
                direct_conv_store(dst + so + DC_VL, left - DC_VL, a11);
            }
            if (count > 2) {
                direct_conv_store(dst + 2 * so, left, a20);
                direct_conv_store(dst + 2 * so + DC_VL, left - DC_VL, a21);
            }
            if (count > 3) {
                direct_conv_store(dst + 3 * so, left, a30);
                direct_conv_store(dst + 3 * so + DC_VL, left - DC_VL, a31);
            }
        }
    }
}
#endif

/* out (N, O, oh, ow) with strides (son, soc, soy, 1) = conv2d(x, w) + bias. x: (N, C, H, W)
   with strides (sxn, sxc, sxh, sxw); pack: direct_conv_pack's; bias: (O,) contiguous or
   NULL. Returns 1 when done, 0 when it cannot run here (no AVX2/FMA build, or out of
   memory: nothing written then). */
static int direct_conv2d(const float* x, Py_ssize_t N, Py_ssize_t C, Py_ssize_t H,
                         Py_ssize_t W, Py_ssize_t sxn, Py_ssize_t sxc, Py_ssize_t sxh,
                         Py_ssize_t sxw, const float* pack, Py_ssize_t O, Py_ssize_t G,
                         int kh, int kw, const float* bias, float* out, Py_ssize_t son,
                         Py_ssize_t soc, Py_ssize_t soy, Py_ssize_t oh, Py_ssize_t ow,
                         int sh, int ph, int pw, int dh, int dw, int nt) {
#if DIRECT_CONV_SIMD
    Py_ssize_t cg = C / G, og = O / G, per = (og + DC_OB - 1) / DC_OB, blocks = G * per;
    Py_ssize_t K = cg * kh * kw, Hp = H + 2 * ph;
    Py_ssize_t Wp = direct_conv_row(W, pw, ow, (Py_ssize_t)(kw - 1) * dw);
    /* block ranges per image: enough tasks for the threads, images whole where possible */
    Py_ssize_t split = 1;
    while (N * split < 4 * nt && split < blocks) split *= 2;
    if (split > blocks) split = blocks;
    Py_ssize_t tasks = N * split;
    /* output rows per pass over the blocks: the input rows they read stay in L1 */
    Py_ssize_t band = DC_L1_BYTES / (Py_ssize_t)sizeof(float) / (cg * Wp);
    Py_ssize_t rows = band > (Py_ssize_t)(kh - 1) * dh ? (band - (kh - 1) * dh - 1) / sh + 1 : 1;
    Py_ssize_t* taps = (Py_ssize_t*)malloc((size_t)K * sizeof(Py_ssize_t));
    if (taps == NULL) return 0;
    for (Py_ssize_t c = 0, t = 0; c < cg; c++)     /* tap offsets into the padded planes */
        for (int i = 0; i < kh; i++)
            for (int j = 0; j < kw; j++, t++)
                taps[t] = (c * Hp + (Py_ssize_t)i * dh) * Wp + (Py_ssize_t)j * dw;
    int failed = 0;
    #pragma omp parallel num_threads(nt)
    {
        float* buf = (float*)malloc((size_t)(C * Hp * Wp) * sizeof(float));
        if (buf == NULL) {
            #pragma omp atomic write
            failed = 1;
        }
        #pragma omp barrier
        if (!failed) {
            #pragma omp for schedule(static)
            for (Py_ssize_t t = 0; t < tasks; t++) {
                Py_ssize_t n = t / split, part = t % split;
                Py_ssize_t b0 = blocks * part / split, b1 = blocks * (part + 1) / split;
                Py_ssize_t gfirst = b0 / per, glast = (b1 - 1) / per;
                /* only the planes of the groups this range touches */
                direct_conv_pad(x + n * sxn + gfirst * cg * sxc, (glast - gfirst + 1) * cg,
                                H, W, sxc, sxh, sxw, ph, pw, buf, Hp, Wp);
                for (Py_ssize_t y0 = 0; y0 < oh; y0 += rows)
                    for (Py_ssize_t b = b0; b < b1; b++) {
                        Py_ssize_t g = b / per, k = b % per, oc0 = g * og + k * DC_OB;
                        int count = (int)(og - k * DC_OB < DC_OB ? og - k * DC_OB : DC_OB);
                        direct_conv_block(buf + (g - gfirst) * cg * Hp * Wp, Wp, taps, K,
                                          pack + b * K * DC_OB, sh,
                                          bias == NULL ? NULL : bias + oc0, count,
                                          out + n * son + oc0 * soc, soc, soy, y0,
                                          y0 + rows < oh ? y0 + rows : oh, ow);
                    }
            }
        }
        free(buf);
    }
    free(taps);
    return !failed;
#else
    (void)x; (void)N; (void)C; (void)H; (void)W; (void)sxn; (void)sxc; (void)sxh; (void)sxw;
    (void)pack; (void)O; (void)G; (void)kh; (void)kw; (void)bias; (void)out; (void)son;
    (void)soc; (void)soy; (void)oh; (void)ow; (void)sh; (void)ph; (void)pw; (void)dh;
    (void)dw; (void)nt;
    return 0;
#endif
}
