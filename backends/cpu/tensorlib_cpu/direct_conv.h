/* A direct float32 2-D convolution for inputs with few channels per group (an image's RGB
   planes), written straight into an NCHW output, bias included (included by
   conv_kernels.pyx).

   Why: oneDNN 3.2 computes such a convolution into its blocked layout (nChw8c) and then
   reorders the result back to NCHW: for conv2d 3->32 on 32x32x32x32 the reorder is a third
   of the call (0.18 of 0.70 ms, ONEDNN_VERBOSE), one more pass over a 4 MiB output. With
   C * kh * kw products per output (27 for 3x3 RGB), the output is vectorised along its width
   instead: per tile of DC_OB output channels x DC_WV vectors of 8 or 16 columns, every
   kernel tap is DC_WV loads of the input row, DC_OB weight broadcasts and DC_OB * DC_WV
   fused multiply-adds into registers, and each output element is stored once.

   Layout: each task zero-pads one image's input planes (any strides) into its own buffer,
   rows DC_TILE columns wider than needed so that every load is in bounds, and computes one
   range of output-channel blocks of that image, a band of output rows at a time (all the
   blocks of a band read the same input rows, which fit in L1). Weights are packed per
   block (tap-major, DC_OB channels a tap, zeros past the group's last channel), so a block
   never straddles two groups. Stride along the width must be 1 (the loads are contiguous);
   stride along the height, dilation and padding are free. The output's width stride is 1.

   Runs where the CPU has AVX2 and FMA (direct_conv_width, chosen at import): elsewhere
   the caller keeps oneDNN / im2col. Not a tracked dependency of conv_kernels.c: touch
   conv_kernels.pyx after editing this file.

   Tile shapes measured (one thread, 3->32 on 32x32x32x32): 4 channels x 2 vectors
   0.67-0.73 ms (~80 GFLOP/s), 6 x 2 0.83-0.94 ms, 3 x 4 1.02-1.36 ms; streaming stores
   0.92-1.01 ms (the output is read next, and stays in cache with plain stores). Where the
   CPU has AVX-512 the vectors are 16 columns wide (same tile, same order of the
   multiply-adds per output, so the same results): on the shared Intel Xeon (Emerald
   Rapids) 0.54-0.78 ms against 0.76-1.31 ms with 8-column vectors, alternating runs. */
#include <stdlib.h>
#include <string.h>

/* The vector loops are compiled by function attributes (AVX2 + FMA, AVX-512) whatever the
   build targets, and direct_conv_detect (at import) picks the widest the CPU has; a CPU
   with neither leaves the convolution to oneDNN / im2col. */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define DIRECT_CONV_SIMD 1
#define DC_ATTR_AVX2 __attribute__((target("avx2,fma")))
#define DC_ATTR_AVX512 __attribute__((target("avx512f")))
#else
#define DIRECT_CONV_SIMD 0
#endif
static int direct_conv_width = 0;      /* output columns per vector: 16, 8, or 0 (none) */
static void direct_conv_detect(void) {
#if DIRECT_CONV_SIMD
    __builtin_cpu_init();
    direct_conv_width = __builtin_cpu_supports("avx512f") ? 16
                        : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 8
                        : 0;
#endif
}

#define DC_OB 4                  /* output channels per register tile */
#define DC_WV 2                  /* vectors of output columns per register tile */
#define DC_TILE (16 * DC_WV)     /* the widest tile's columns (the rows' padding) */
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

/* Store acc (16 or 8 output columns from dst) where they lie inside the row (left of
   them). */
DC_ATTR_AVX512 static inline void direct_conv_store512(float* dst, Py_ssize_t left,
                                                       __m512 acc) {
    if (left >= 16)
        _mm512_storeu_ps(dst, acc);
    else if (left > 0)
        _mm512_mask_storeu_ps(dst, (__mmask16)((1u << left) - 1u), acc);
}
DC_ATTR_AVX2 static inline void direct_conv_store256(float* dst, Py_ssize_t left,
                                                     __m256 acc) {
    if (left >= 8) {
        _mm256_storeu_ps(dst, acc);
    } else if (left > 0) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        _mm256_maskstore_ps(dst, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), lane), acc);
    }
}

/* Output rows [y0, y1) of one block, in vectors of VL columns (count <= DC_OB channels stored; out at its first
   channel):
   tap t reads the padded planes at offset taps[t] from the tile's row start, and the
   DC_OB weights pack[t * DC_OB ...]. The accumulators are named variables (an array of
   them went through the stack on every tap). */
#define DEFINE_DIRECT_CONV_BLOCK(NAME, ATTR, V, VL, LOAD, SET1, FMADD, STORE)               \
ATTR static void NAME(const float* planes, Py_ssize_t Wp, const Py_ssize_t* taps,           \
                      Py_ssize_t K, const float* pack, int sh, const float* bias,           \
                      int count, float* out, Py_ssize_t so, Py_ssize_t sy, Py_ssize_t y0,   \
                      Py_ssize_t y1, Py_ssize_t ow) {                                       \
    float b[DC_OB];                                                                         \
    for (int o = 0; o < DC_OB; o++) b[o] = bias != NULL && o < count ? bias[o] : 0.0f;      \
    for (Py_ssize_t y = y0; y < y1; y++) {                                                  \
        for (Py_ssize_t q0 = 0; q0 < ow; q0 += VL * DC_WV) {                                \
            const float* base = planes + y * sh * Wp + q0;                                  \
            V a00 = SET1(b[0]), a01 = a00, a10 = SET1(b[1]), a11 = a10,                     \
              a20 = SET1(b[2]), a21 = a20, a30 = SET1(b[3]), a31 = a30;                     \
            const float* wt = pack;                                                         \
            for (Py_ssize_t t = 0; t < K; t++, wt += DC_OB) {                               \
                const float* at = base + taps[t];                                           \
                V x0 = LOAD(at), x1 = LOAD(at + VL);                                        \
                V w0 = SET1(wt[0]), w1 = SET1(wt[1]);                                       \
                a00 = FMADD(w0, x0, a00);                                                   \
                a01 = FMADD(w0, x1, a01);                                                   \
                a10 = FMADD(w1, x0, a10);                                                   \
                a11 = FMADD(w1, x1, a11);                                                   \
                V w2 = SET1(wt[2]), w3 = SET1(wt[3]);                                       \
                a20 = FMADD(w2, x0, a20);                                                   \
                a21 = FMADD(w2, x1, a21);                                                   \
                a30 = FMADD(w3, x0, a30);                                                   \
                a31 = FMADD(w3, x1, a31);                                                   \
            }                                                                               \
            Py_ssize_t left = ow - q0;                                                      \
            float* dst = out + y * sy + q0;                                                 \
            STORE(dst, left, a00);                                                          \
            STORE(dst + VL, left - VL, a01);                                                \
            if (count > 1) {                                                                \
                STORE(dst + so, left, a10);                                                 \
                STORE(dst + so + VL, left - VL, a11);                                       \
            }                                                                               \
            if (count > 2) {                                                                \
                STORE(dst + 2 * so, left, a20);                                             \
                STORE(dst + 2 * so + VL, left - VL, a21);                                   \
            }                                                                               \
            if (count > 3) {                                                                \
                STORE(dst + 3 * so, left, a30);                                             \
                STORE(dst + 3 * so + VL, left - VL, a31);                                   \
            }                                                                               \
        }                                                                                   \
    }                                                                                       \
}
DEFINE_DIRECT_CONV_BLOCK(direct_conv_block512, DC_ATTR_AVX512, __m512, 16, _mm512_loadu_ps,
                         _mm512_set1_ps, _mm512_fmadd_ps, direct_conv_store512)
DEFINE_DIRECT_CONV_BLOCK(direct_conv_block256, DC_ATTR_AVX2, __m256, 8, _mm256_loadu_ps,
                         _mm256_set1_ps, _mm256_fmadd_ps, direct_conv_store256)
#endif

/* out (N, O, oh, ow) with strides (son, soc, soy, 1) = conv2d(x, w) + bias. x: (N, C, H, W)
   with strides (sxn, sxc, sxh, sxw); pack: direct_conv_pack's; bias: (O,) contiguous or
   NULL. Returns 1 when done, 0 when it cannot run here (no AVX2/FMA on this CPU, or out
   of memory: nothing written then). */
static int direct_conv2d(const float* x, Py_ssize_t N, Py_ssize_t C, Py_ssize_t H,
                         Py_ssize_t W, Py_ssize_t sxn, Py_ssize_t sxc, Py_ssize_t sxh,
                         Py_ssize_t sxw, const float* pack, Py_ssize_t O, Py_ssize_t G,
                         int kh, int kw, const float* bias, float* out, Py_ssize_t son,
                         Py_ssize_t soc, Py_ssize_t soy, Py_ssize_t oh, Py_ssize_t ow,
                         int sh, int ph, int pw, int dh, int dw, int nt) {
#if DIRECT_CONV_SIMD
    if (direct_conv_width == 0) return 0;
    void (*block)(const float*, Py_ssize_t, const Py_ssize_t*, Py_ssize_t, const float*, int,
                  const float*, int, float*, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t,
                  Py_ssize_t) = direct_conv_width == 16 ? direct_conv_block512
                                                         : direct_conv_block256;
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
                        block(buf + (g - gfirst) * cg * Hp * Wp, Wp, taps, K,
                              pack + b * K * DC_OB, sh, bias == NULL ? NULL : bias + oc0,
                              count, out + n * son + oc0 * soc, soc, soy, y0,
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
