# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Fused 4-D grid_sample (bilinear and nearest, every padding mode, align_corners either way),
forward and backward, for float32/float64 on the CPU.

The composite path (nn/_functional/vision.py) builds every tap's index and weight as tensors
and reads them with one gather (and its backward with one scatter-add): about ten
full-size temporaries. Here a block of 64 output points computes its source positions, tap
offsets and weights once, in branch-free loops, and reuses them for every channel (a
channel's block of outputs is one contiguous row of writes). The arithmetic is PyTorch's
(GridSampler.h): unnormalize, then clip / reflect; a tap outside the input reads 0; a
clipped coordinate passes no gradient. Non-finite coordinates behave as in PyTorch's CPU
kernel: clipping sends NaN to 0, and bilinear sampling with zero padding gives NaN.

float32 bilinear, zero or border padding: the taps, gathers and grid gradient run 16 points
at a time on AVX-512, else 8 on AVX2 + FMA (grid_avx2.h), bit-identical to the scalar loops;
from 8 channels the forward samples a channels-last copy of each batch instead
(gs_forward_nhwc: a tap is one load of 16 or 8 channels, not gathers).

Forward: blocks split across OpenMP threads. Backward: batches split across threads when
the input's gradient is wanted (each thread scatters into its own batch's
planes, so no atomics), blocks otherwise. Both handed out as threads come free (dynamic): a thread that
loses its core to another process holds up a few blocks, not a static share. Input and
grid may have any strides (channels_last included)."""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t

from tensorlib._C.tensor_impl cimport TensorImpl, host_array
from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    #include <stdlib.h>
    #include <omp.h>
    #include <string.h>

    enum { GS_BILINEAR = 0, GS_NEAREST = 1 };
    enum { GS_ZEROS = 0, GS_BORDER = 1, GS_REFLECTION = 2 };
    #define GS_BLOCK 64           /* output points whose taps are computed together */

    /* Source position of one normalized coordinate and d(position)/d(coordinate). */
    #define DEFINE_GRID_COORD(T, FLOOR, FMOD)                                                 \\
    /* Branch-free, so the block loops below vectorise. */                                  \\
    static inline T gs_clip_##T(T x, int64_t size, T* g) {                                  \\
        T hi = (T)(size - 1);                                                                 \\
        *g = (x > 0 && x < hi) ? *g : 0;                                                      \\
        return x > 0 ? (x < hi ? x : hi) : 0;                 /* NaN goes to 0, as torch's */ \\
    }                                                                                         \\
    static inline T gs_reflect_##T(T x, T twice_low, T twice_high, T* g) {                  \\
        if (twice_low == twice_high) { *g = 0; return 0; }                                    \\
        T low = twice_low / 2, span = (twice_high - twice_low) / 2;                           \\
        x -= low;                                                                             \\
        T sign = x < 0 ? -1 : 1;                                                              \\
        x = x < 0 ? -x : x;                                                                   \\
        T extra = FMOD(x, span);                                                              \\
        T flips = FLOOR(x / span);                                                            \\
        int even = FMOD(flips, (T)2) == 0;                                                    \\
        *g *= even ? sign : -sign;                                                            \\
        return even ? extra + low : span - extra + low;                                       \\
    }                                                                                         \\
    static inline T gs_source_##T(T coord, int64_t size, int padding, int align, T* g) {    \\
        T x;                                                                                  \\
        if (align) { x = (coord + 1) / 2 * (T)(size - 1); *g = (T)(size - 1) / 2; }           \\
        else { x = ((coord + 1) * (T)size - 1) / 2; *g = (T)size / 2; }                       \\
        if (padding == GS_BORDER) {                                                           \\
            T gc = 1; x = gs_clip_##T(x, size, &gc); *g *= gc;                                \\
        } else if (padding == GS_REFLECTION) {                                                \\
            if (align) x = gs_reflect_##T(x, 0, (T)(2 * (size - 1)), g);                      \\
            else x = gs_reflect_##T(x, -1, (T)(2 * size - 1), g);                             \\
            T gc = 1; x = gs_clip_##T(x, size, &gc); *g *= gc;                                \\
        }                                                                                     \\
        return x;                                                                             \\
    }

    /* A block of output points' taps, corner k = (dy, dx) = (k >> 1, k & 1) of the bilinear
       cell (nearest: corner 0 only): the input offset (0 for a tap outside, which `ok`
       marks and which reads 0), the weight, and for the backward the cell's fractions, the
       d(position)/d(coordinate) factors and the contiguous plane offset. */
    #define DEFINE_GRID_TAPS(T)                                                               \\
    typedef struct {                                                                          \\
        int32_t off[4][GS_BLOCK], flat[4][GS_BLOCK];   /* the wrapper checks they fit */      \\
        T w[4][GS_BLOCK], tx[GS_BLOCK], ty[GS_BLOCK], mx[GS_BLOCK], my[GS_BLOCK];             \\
        int32_t ok[4][GS_BLOCK];                 /* 32-bit lanes like the offsets */      \\
    } gs_block_##T;
    #define DEFINE_GRID_SAMPLE(T, FLOOR, NEARBYINT, FABS)                                    \\
    static void gs_block_taps_##T(gs_block_##T* b, const T* grid, const int64_t* gst,       \\
                                  int64_t n, int64_t p0, int64_t len, int64_t Wo,            \\
                                  int64_t H, int64_t W, const int64_t* is, int mode,         \\
                                  int padding, int align) {                                  \\
        int64_t j, h = p0 / Wo, w = p0 % Wo;                                                  \\
        if (gs_vector_taps_##T(b, grid, gst, n, p0, len, Wo, H, W, is, mode, padding, align, \\
                               0))                                                            \\
            return;                                                                           \\
        int32_t W32 = (int32_t)W, H32 = (int32_t)H, s2 = (int32_t)is[2], s3 = (int32_t)is[3]; \\
        T ix[GS_BLOCK], iy[GS_BLOCK];                                                         \\
        for (j = 0; j < len; j++) {                                                           \\
            const T* gp = grid + n * gst[0] + h * gst[1] + w * gst[2];                        \\
            ix[j] = gp[0]; iy[j] = gp[gst[3]];                                                \\
            if (++w == Wo) { w = 0; h++; }                                                    \\
        }                                                                                     \\
        for (j = 0; j < len; j++) {                                                           \\
            ix[j] = gs_source_##T(ix[j], W, padding, align, &b->mx[j]);                       \\
            iy[j] = gs_source_##T(iy[j], H, padding, align, &b->my[j]);                       \\
        }                                                                                     \\
        if (mode == GS_NEAREST) {                                                             \\
            for (j = 0; j < len; j++) {                                                       \\
                T x = NEARBYINT(ix[j]), y = NEARBYINT(iy[j]);                                 \\
                int in = x >= 0 && x < (T)W && y >= 0 && y < (T)H;                            \\
                int64_t xi = in ? (int64_t)x : 0, yi = in ? (int64_t)y : 0;                   \\
                b->ok[0][j] = in; b->w[0][j] = 1;                                             \\
                b->off[0][j] = (int32_t)(yi * is[2] + xi * is[3]);                            \\
                b->flat[0][j] = (int32_t)(yi * W + xi);                                       \\
            }                                                                                 \\
            return;                                                                           \\
        }                                                                                     \\
        for (j = 0; j < len; j++) {                                                           \\
            T x = ix[j], y = iy[j];                                                           \\
            /* far outside: no tap; a non-finite position gives NaN weights (so a NaN        \\
               value, 0 * NaN), as in torch's CPU kernel */                                   \\
            int far = !(FABS(x) <= (T)1e15 && FABS(y) <= (T)1e15);                            \\
            int finite = x - x == 0 && y - y == 0;                                            \\
            x = far ? -10 : x; y = far ? -10 : y;                                             \\
            x = x < -2 ? -2 : (x < (T)W + 2 ? x : (T)W + 2);   /* no tap lies beyond: these */\\
            y = y < -2 ? -2 : (y < (T)H + 2 ? y : (T)H + 2);   /* fit in 32 bits */           \\
            T fx = FLOOR(x), fy = FLOOR(y), tx = x - fx, ty = y - fy;                         \\
            int32_t x0 = (int32_t)fx, y0 = (int32_t)fy, k;                                    \\
            b->tx[j] = tx; b->ty[j] = ty;                                                     \\
            for (k = 0; k < 4; k++) {                                                         \\
                int32_t xk = x0 + (k & 1), yk = y0 + (k >> 1);                                \\
                int32_t in = xk >= 0 && xk < W32 && yk >= 0 && yk < H32;                      \\
                T wk = ((k & 1) ? tx : 1 - tx) * ((k >> 1) ? ty : 1 - ty);                    \\
                xk = in ? xk : 0; yk = in ? yk : 0;                                           \\
                b->ok[k][j] = in;                                                             \\
                b->off[k][j] = yk * s2 + xk * s3;                                             \\
                b->flat[k][j] = yk * W32 + xk;                                                \\
                b->w[k][j] = far ? (finite ? 0 : (T)NAN) : wk;                                \\
            }                                                                                 \\
        }                                                                                     \\
    }                                                                                         \\
    static int gs_forward_nhwc_##T(T* out, const T* in, const int64_t* is, const T* grid,  \\
                                   const int64_t* gst, int64_t N, int64_t C, int64_t H,      \\
                                   int64_t W, int64_t Ho, int64_t Wo, int mode, int padding, \\
                                   int align, int nt);                                       \\
    /* out (N, C, Ho, Wo) contiguous; input (N, C, H, W) and grid (N, Ho, Wo, 2) strided. */ \\
    static void gs_forward_##T(T* out, const T* in, const int64_t* is, const T* grid,       \\
                               const int64_t* gst, int64_t N, int64_t C, int64_t H,          \\
                               int64_t W, int64_t Ho, int64_t Wo, int mode, int padding,     \\
                               int align, int nt) {                                          \\
        int64_t P = Ho * Wo, nb = (P + GS_BLOCK - 1) / GS_BLOCK, q;                           \\
        if (gs_forward_nhwc_##T(out, in, is, grid, gst, N, C, H, W, Ho, Wo, mode, padding,   \\
                                align, nt))                                                   \\
            return;                                                                           \\
        _Pragma("omp parallel for schedule(dynamic, 4) num_threads(nt)")                       \\
        for (q = 0; q < N * nb; q++) {                                                        \\
            int64_t n = q / nb, p0 = (q % nb) * GS_BLOCK, c, j;                               \\
            int64_t len = P - p0 < GS_BLOCK ? P - p0 : GS_BLOCK;                              \\
            gs_block_##T b;                                                                   \\
            gs_block_taps_##T(&b, grid, gst, n, p0, len, Wo, H, W, is, mode, padding, align); \\
            if (mode == GS_BILINEAR &&                                                        \\
                gs_bilinear_channels_##T(out + n * C * P + p0, P, in + n * is[0], is[1], C,  \\
                                         &b, len))                                            \\
                continue;                                                                     \\
            for (c = 0; c < C; c++) {                                                         \\
                const T* plane = in + n * is[0] + c * is[1];                                  \\
                T* o = out + (n * C + c) * P + p0;                                            \\
                if (mode == GS_NEAREST) {                                                     \\
                    for (j = 0; j < len; j++) {                                               \\
                        T v = plane[b.off[0][j]];                                             \\
                        o[j] = b.ok[0][j] ? v : 0;                                            \\
                    }                                                                         \\
                    continue;                                                                 \\
                }                                                                             \\
                gs_bilinear_##T(o, plane, &b, len);                                           \\
            }                                                                                 \\
        }                                                                                     \\
    }                                                                                         \\
    /* One block's backward: gin taps (if gin: contiguous (C, H, W) of this batch) and the   \\
       grid's gradient gg (len x 2). */                                                       \\
    static void gs_block_backward_##T(const gs_block_##T* b, T* gin, T* gg, const T* gout,  \\
                                      int64_t P, const T* base, const int64_t* is,           \\
                                      int64_t C, int64_t H, int64_t W, int64_t len,          \\
                                      int mode) {                                            \\
        int64_t c, j, k;                                                                      \\
        T gix[GS_BLOCK], giy[GS_BLOCK];                                                       \\
        for (j = 0; j < len; j++) { gix[j] = 0; giy[j] = 0; }                                 \\
        for (c = 0; c < C; c++) {                                                             \\
            const T* plane = base + c * is[1];                                                \\
            const T* g = gout + c * P;                                                        \\
            T* gpl = gin ? gin + c * H * W : 0;                                               \\
            if (mode == GS_NEAREST) {                                                         \\
                if (gpl)                                                                      \\
                    for (j = 0; j < len; j++) if (b->ok[0][j]) gpl[b->flat[0][j]] += g[j];    \\
                continue;                                                                     \\
            }                                                                                 \\
            gs_position_grad_##T(gix, giy, plane, g, b, len);   /* d(value)/d(position) */ \\
            if (gpl)                         /* the scatter into the input's gradient */     \\
                for (j = 0; j < len; j++)                                                     \\
                    for (k = 0; k < 4; k++)                                                   \\
                        if (b->ok[k][j]) gpl[b->flat[k][j]] += b->w[k][j] * g[j];             \\
        }                                                                                     \\
        for (j = 0; j < len; j++) {                                                           \\
            gg[2 * j] = mode == GS_NEAREST ? 0 : b->mx[j] * gix[j];                           \\
            gg[2 * j + 1] = mode == GS_NEAREST ? 0 : b->my[j] * giy[j];                       \\
        }                                                                                     \\
    }                                                                                         \\
    /* gin (N, C, H, W) contiguous or NULL, gg (N, Ho, Wo, 2) contiguous, gout contiguous.   \\
       With gin, batches split across threads (each scatters into its own planes). */        \\
    static void gs_backward_##T(T* gin, T* gg, const T* gout, const T* in,                  \\
                                const int64_t* is, const T* grid, const int64_t* gst,        \\
                                int64_t N, int64_t C, int64_t H, int64_t W, int64_t Ho,      \\
                                int64_t Wo, int mode, int padding, int align, int nt) {      \\
        int64_t P = Ho * Wo, nb = (P + GS_BLOCK - 1) / GS_BLOCK, n, q;                        \\
        if (gin) {                                                                            \\
            memset(gin, 0, sizeof(T) * N * C * H * W);                                        \\
            _Pragma("omp parallel for schedule(dynamic, 1) num_threads(nt)")                   \\
            for (n = 0; n < N; n++) {                                                         \\
                gs_block_##T b;                                                               \\
                for (int64_t p0 = 0; p0 < P; p0 += GS_BLOCK) {                                \\
                    int64_t len = P - p0 < GS_BLOCK ? P - p0 : GS_BLOCK;                      \\
                    gs_block_taps_##T(&b, grid, gst, n, p0, len, Wo, H, W, is, mode, padding, \\
                                      align);                                                 \\
                    gs_block_backward_##T(&b, gin + n * C * H * W, gg + (n * P + p0) * 2,     \\
                                          gout + n * C * P + p0, P, in + n * is[0], is, C,    \\
                                          H, W, len, mode);                                   \\
                }                                                                             \\
            }                                                                                 \\
            return;                                                                           \\
        }                                                                                     \\
        _Pragma("omp parallel for schedule(dynamic, 4) num_threads(nt)")                       \\
        for (q = 0; q < N * nb; q++) {                                                        \\
            int64_t nn = q / nb, p0 = (q % nb) * GS_BLOCK;                                    \\
            int64_t len = P - p0 < GS_BLOCK ? P - p0 : GS_BLOCK;                              \\
            gs_block_##T b;                                                                   \\
            gs_block_taps_##T(&b, grid, gst, nn, p0, len, Wo, H, W, is, mode, padding, align);\\
            gs_block_backward_##T(&b, 0, gg + (nn * P + p0) * 2, gout + nn * C * P + p0, P,  \\
                                  in + nn * is[0], is, C, H, W, len, mode);                   \\
        }                                                                                     \\
    }

    DEFINE_GRID_COORD(float, floorf, fmodf)
    DEFINE_GRID_COORD(double, floor, fmod)
    DEFINE_GRID_TAPS(float)
    DEFINE_GRID_TAPS(double)

    /* One channel of a block: the bilinear value of each point, and the forward's
       d(value)/d(position) accumulated for the backward. A tap outside reads 0. */
    #define DEFINE_GRID_CHANNEL(T)                                                            \\
    static inline void gs_bilinear_##T(T* o, const T* plane, const gs_block_##T* b,          \\
                                       int64_t len) {                                         \\
        for (int64_t j = 0; j < len; j++) {                                                   \\
            T v0 = plane[b->off[0][j]], v1 = plane[b->off[1][j]];                             \\
            T v2 = plane[b->off[2][j]], v3 = plane[b->off[3][j]];                             \\
            v0 = b->ok[0][j] ? v0 : 0; v1 = b->ok[1][j] ? v1 : 0;                             \\
            v2 = b->ok[2][j] ? v2 : 0; v3 = b->ok[3][j] ? v3 : 0;                             \\
            o[j] = v0 * b->w[0][j] + v1 * b->w[1][j] + v2 * b->w[2][j] + v3 * b->w[3][j];     \\
        }                                                                                     \\
    }                                                                                         \\
    static inline void gs_position_grad_scalar_##T(T* gix, T* giy, const T* plane,          \\
                                                   const T* g, const gs_block_##T* b,        \\
                                                   int64_t len) {                            \\
        for (int64_t j = 0; j < len; j++) {                                                   \\
            T v0 = plane[b->off[0][j]], v1 = plane[b->off[1][j]];                             \\
            T v2 = plane[b->off[2][j]], v3 = plane[b->off[3][j]];                             \\
            v0 = b->ok[0][j] ? v0 : 0; v1 = b->ok[1][j] ? v1 : 0;                             \\
            v2 = b->ok[2][j] ? v2 : 0; v3 = b->ok[3][j] ? v3 : 0;                             \\
            T tx = b->tx[j], ty = b->ty[j], gj = g[j];                                        \\
            gix[j] += gj * ((v1 - v0) * (1 - ty) + (v3 - v2) * ty);                           \\
            giy[j] += gj * ((v2 - v0) * (1 - tx) + (v3 - v1) * tx);                           \\
        }                                                                                     \\
    }
    DEFINE_GRID_CHANNEL(double)
    DEFINE_GRID_CHANNEL(float)
    #define gs_position_grad_double gs_position_grad_scalar_double
    static inline int gs_bilinear_channels_double(double* o, int64_t P, const double* in,
                                                  int64_t cstride, int64_t C,
                                                  const gs_block_double* b, int64_t len) {
        return 0;
    }
    static inline int gs_vector_taps_double(gs_block_double* b, const double* grid,
                                            const int64_t* gst, int64_t n, int64_t p0,
                                            int64_t len, int64_t Wo, int64_t H, int64_t W,
                                            const int64_t* is, int mode, int padding,
                                            int align, int flat_only) { return 0; }
    /* float32 taps, gathers and grid gradient in vectors: grid_avx512.h (16 points),
       grid_avx2.h (8), bit-identical to the scalar loops. Compiled for their instruction
       sets by function attributes whatever the build targets, and chosen at run time on a
       CPU that has them (gs_detect, gs_use), so a portable build keeps them. */
    static int gs_cpu_avx512 = 0, gs_cpu_avx2 = 0;     /* what the CPU has */
    static int gs_has_avx512 = 0, gs_has_avx2 = 0;     /* the loops that run (gs_use) */
    #if defined(__GNUC__) && defined(__x86_64__)
    #include <immintrin.h>
    #define GS_AVX512 __attribute__((target("avx512f")))
    static void gs_detect(void) {
        __builtin_cpu_init();
        gs_cpu_avx512 = __builtin_cpu_supports("avx512f");
        gs_cpu_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }
    #include "grid_avx512.h"
    #include "grid_avx2.h"
    #else
    static void gs_detect(void) {}
    #define gs_bilinear_channels_avx512(...) 0
    #define gs_bilinear_channels_avx2(...) 0
    #define gs_position_grad_avx512(...) ((void)0)
    #define gs_position_grad_avx2(...) ((void)0)
    #define gs_vector_taps_avx512(...) 0
    #define gs_vector_taps_avx2(...) 0
    #endif
    /* The widest loops the CPU has (level 2, at import), at most AVX2 (1) or scalar (0) */
    static void gs_use(int level) {
        gs_has_avx512 = level >= 2 && gs_cpu_avx512;
        gs_has_avx2 = level >= 1 && gs_cpu_avx2 && !gs_has_avx512;
    }
    /* float32: the AVX-512 loops where the CPU has them, else AVX2, else the scalar ones */
    static inline int gs_bilinear_channels_float(float* o, int64_t P, const float* in,
                                                 int64_t cstride, int64_t C,
                                                 const gs_block_float* b, int64_t len) {
        if (gs_has_avx512) return gs_bilinear_channels_avx512(o, P, in, cstride, C, b, len);
        return gs_has_avx2 && gs_bilinear_channels_avx2(o, P, in, cstride, C, b, len);
    }
    static inline void gs_position_grad_float(float* gix, float* giy, const float* plane,
                                              const float* g, const gs_block_float* b,
                                              int64_t len) {
        if (gs_has_avx512) gs_position_grad_avx512(gix, giy, plane, g, b, len);
        else if (gs_has_avx2) gs_position_grad_avx2(gix, giy, plane, g, b, len);
        else gs_position_grad_scalar_float(gix, giy, plane, g, b, len);
    }
    static inline int gs_vector_taps_float(gs_block_float* b, const float* grid,
                                           const int64_t* gst, int64_t n, int64_t p0,
                                           int64_t len, int64_t Wo, int64_t H, int64_t W,
                                           const int64_t* is, int mode, int padding,
                                           int align, int flat_only) {
        if (gs_has_avx512)
            return gs_vector_taps_avx512(b, grid, gst, n, p0, len, Wo, H, W, is, mode, padding,
                                         align, flat_only);
        return gs_has_avx2 && gs_vector_taps_avx2(b, grid, gst, n, p0, len, Wo, H, W, is, mode,
                                                  padding, align, flat_only);
    }
    DEFINE_GRID_SAMPLE(float, floorf, nearbyintf, fabsf)
    DEFINE_GRID_SAMPLE(double, floor, nearbyint, fabs)

    /* The float32 bilinear forward (zero or border padding) from a channels-last copy of the
       input, on AVX-512: a point's four taps are then four rows of C contiguous floats,
       read 16 channels per load, where the per-channel path (gs_bilinear_channels_avx512)
       gathers 16 scattered floats per tap and channel (the gathers were most of its time:
       1 thread, 8x16x64x64 at a random 64x64 grid, 0.65 ms). The copy is one pass over the
       input in 16x16 transposes (skipped for a channels-last input); a block's 16 points x
       16 channels are transposed back into the (N, C, Ho, Wo) rows. Each output is
       v0 * w0 + v1 * w1 + v2 * w2 + v3 * w3 with a tap outside read as 0, the same
       operations in the same order as the per-channel loops: bit-identical. From
       GS_NHWC_MIN_C channels (at 8 on par with the gathers, at 12 and 24 1.4-1.5x faster;
       below, most of a 16-float load is wasted). AVX2 (grid_avx2.h): 8 channels a load. */
    #define GS_NHWC_MIN_C 8
    #define GS_NHWC_MAX_SCRATCH (64.0 * 1024 * 1024)      /* bytes of copies, all threads */
    #if defined(__GNUC__) && defined(__x86_64__)
    /* dst's first nd rows (ds apart, lanes sm of each written) = the columns of src's 16
       rows (ss apart; the first ns read, lanes lm of each, the others taken as 0). */
    GS_AVX512 static inline void gs_t16(const float* src, int64_t ss, int ns, __mmask16 lm,
                                        float* dst, int64_t ds, int nd, __mmask16 sm) {
        __m512 r[16], t[16];
        int i;
        for (i = 0; i < 16; i++)
            r[i] = i < ns ? _mm512_maskz_loadu_ps(lm, src + i * ss) : _mm512_setzero_ps();
        for (i = 0; i < 16; i += 2) {            /* in each 128-bit lane: a0 b0 a1 b1 / a2 b2 a3 b3 */
            t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
            t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
        }
        for (i = 0; i < 16; i += 4) {            /* r[i + k] lane L: column 4L + k of rows i..i+3 */
            r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
            r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
            r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
            r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
        }
        for (i = 0; i < 4; i++) {
            t[i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0x88);
            t[4 + i] = _mm512_shuffle_f32x4(r[i], r[4 + i], 0xDD);
            t[8 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0x88);
            t[12 + i] = _mm512_shuffle_f32x4(r[8 + i], r[12 + i], 0xDD);
        }
        for (i = 0; i < 4; i++) {
            r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
            r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xDD);
            r[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88);
            r[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xDD);
        }
        if (nd == 16 && sm == 0xFFFF)
            for (i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ds, r[i]);
        else
            for (i = 0; i < nd; i++) _mm512_mask_storeu_ps(dst + i * ds, sm, r[i]);
    }
    /* One input row (src: channel 0 of row h, strides is) into W x C channels-last at t. */
    GS_AVX512 static void gs_hwc_row_avx512(float* t, const float* src, const int64_t* is,
                                            int64_t C, int64_t W) {
        for (int64_t c0 = 0; c0 < C; c0 += 16)
            for (int64_t w0 = 0; w0 < W; w0 += 16) {
                int cn = C - c0 < 16 ? (int)(C - c0) : 16, wn = W - w0 < 16 ? (int)(W - w0) : 16;
                if (is[3] == 1) {
                    gs_t16(src + c0 * is[1] + w0, is[1], cn, gs_lanes(wn), t + w0 * C + c0, C,
                           wn, gs_lanes(cn));
                    continue;
                }
                for (int64_t c = c0; c < C && c < c0 + 16; c++)
                    for (int64_t w = w0; w < W && w < w0 + 16; w++)
                        t[w * C + c] = src[c * is[1] + w * is[3]];
            }
    }
    /* One block from channels-last t (H x W x C); o: the block's first output of channel 0,
       channels P apart. */
    GS_AVX512 static void gs_hwc_block_avx512(float* o, int64_t P, const float* t, int64_t C,
                                              const gs_block_float* b, int64_t len) {
        float tile[16 * 16] __attribute__((aligned(64)));
        for (int64_t j = 0; j < len; j += 16) {
            int64_t jn = len - j < 16 ? len - j : 16;
            for (int64_t c0 = 0; c0 < C; c0 += 16) {
                int64_t cn = C - c0 < 16 ? C - c0 : 16;
                __mmask16 cm = gs_lanes(cn);
                for (int64_t i = 0; i < jn; i++) {
                    int64_t p = j + i;
                    __m512 v[4];
                    for (int k = 0; k < 4; k++)
                        v[k] = _mm512_maskz_loadu_ps(b->ok[k][p] ? cm : 0,
                                                     t + (int64_t)b->flat[k][p] * C + c0);
                    __m512 acc = _mm512_mul_ps(v[0], _mm512_set1_ps(b->w[0][p]));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(v[1], _mm512_set1_ps(b->w[1][p])));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(v[2], _mm512_set1_ps(b->w[2][p])));
                    acc = _mm512_add_ps(acc, _mm512_mul_ps(v[3], _mm512_set1_ps(b->w[3][p])));
                    _mm512_store_ps(tile + 16 * i, acc);
                }
                gs_t16(tile, 16, (int)jn, 0xFFFF, o + c0 * P + j, P, (int)cn, gs_lanes(jn));
            }
        }
    }
    #define GS_NHWC 1
    #define gs_hwc_row(...) (gs_has_avx512 ? gs_hwc_row_avx512(__VA_ARGS__) \
                                           : gs_hwc_row_avx2(__VA_ARGS__))
    #define gs_hwc_block(...) (gs_has_avx512 ? gs_hwc_block_avx512(__VA_ARGS__) \
                                             : gs_hwc_block_avx2(__VA_ARGS__))
    #else
    #define GS_NHWC 0
    #define gs_hwc_row(...) ((void)0)
    #define gs_hwc_block(...) ((void)0)
    #endif
    static int gs_forward_nhwc_float(float* out, const float* in, const int64_t* is,
                                     const float* grid, const int64_t* gst, int64_t N,
                                     int64_t C, int64_t H, int64_t W, int64_t Ho, int64_t Wo,
                                     int mode, int padding, int align, int nt) {
        if (!GS_NHWC || !(gs_has_avx512 || gs_has_avx2) || mode != GS_BILINEAR
                || padding == GS_REFLECTION || C < GS_NHWC_MIN_C)
            return 0;
        /* A channels-last input is read in place. Otherwise each thread copies a batch into
           its own plane (C x H x W) of scratch, which stays in its core's cache with the
           batch's output. From two batches a thread, a batch a thread (dynamic); else
           every thread copies every batch and takes a share of its blocks (a copy shared between
           the threads, read across cores from a whole-input scratch, took 1.2-1.3x the
           per-channel path's time at 2 threads). */
        int last = is[1] == 1 && is[3] == C && is[2] == W * C;
        int own = nt <= 1 || N >= 2 * nt;
        int64_t plane = H * W * C, P = Ho * Wo, nb = (P + GS_BLOCK - 1) / GS_BLOCK, n;
        if (!last && (double)sizeof(float) * plane * nt > GS_NHWC_MAX_SCRATCH) return 0;
        float* t = last ? NULL : (float*)malloc(sizeof(float) * plane * nt);
        if (!last && !t) return 0;                     /* the per-channel path needs none */
        if (own) {
            _Pragma("omp parallel for schedule(dynamic, 1) num_threads(nt)")
            for (n = 0; n < N; n++) {
                float* tn = last ? NULL : t + plane * omp_get_thread_num();
                if (!last)
                    for (int64_t h = 0; h < H; h++)
                        gs_hwc_row(tn + h * W * C, in + n * is[0] + h * is[2], is, C, W);
                for (int64_t p0 = 0; p0 < P; p0 += GS_BLOCK) {
                    gs_block_float b;
                    int64_t len = P - p0 < GS_BLOCK ? P - p0 : GS_BLOCK;
                    if (!gs_vector_taps_float(&b, grid, gst, n, p0, len, Wo, H, W, is, mode, padding,
                                              align, 1))      /* flat, ok and w only */
                        gs_block_taps_float(&b, grid, gst, n, p0, len, Wo, H, W, is, mode, padding,
                                            align);
                    gs_hwc_block(out + n * C * P + p0, P, last ? in + n * is[0] : tn, C,
                                        &b, len);
                }
            }
            free(t);
            return 1;
        }
        _Pragma("omp parallel num_threads(nt)")
        {
            float* tn = last ? NULL : t + plane * omp_get_thread_num();
            for (int64_t m = 0; m < N; m++) {
                if (!last)
                    for (int64_t h = 0; h < H; h++)
                        gs_hwc_row(tn + h * W * C, in + m * is[0] + h * is[2], is, C, W);
                /* no barrier: a thread's blocks read only its own copy */
                _Pragma("omp for schedule(dynamic, 4) nowait")
                for (int64_t q = 0; q < nb; q++) {
                    int64_t p0 = q * GS_BLOCK, len = P - p0 < GS_BLOCK ? P - p0 : GS_BLOCK;
                    gs_block_float b;
                    if (!gs_vector_taps_float(&b, grid, gst, m, p0, len, Wo, H, W, is, mode, padding,
                                              align, 1))      /* flat, ok and w only */
                        gs_block_taps_float(&b, grid, gst, m, p0, len, Wo, H, W, is, mode, padding,
                                            align);
                    gs_hwc_block(out + m * C * P + p0, P, last ? in + m * is[0] : tn, C,
                                        &b, len);
                }
            }
        }
        free(t);
        return 1;
    }
    static int gs_forward_nhwc_double(double* out, const double* in, const int64_t* is,
                                      const double* grid, const int64_t* gst, int64_t N,
                                      int64_t C, int64_t H, int64_t W, int64_t Ho,
                                      int64_t Wo, int mode, int padding, int align, int nt) {
        return 0;
    }
    """
    void gs_detect()
    void gs_use(int level)
    int gs_cpu_avx512, gs_cpu_avx2, gs_has_avx512, gs_has_avx2
    void gs_forward_float(float* out, const float* inp, const int64_t* strides,
                          const float* grid, const int64_t* gstrides, long long N,
                          long long C, long long H, long long W, long long Ho, long long Wo,
                          int mode, int padding, int align, int nt) nogil
    void gs_forward_double(double* out, const double* inp, const int64_t* strides,
                           const double* grid, const int64_t* gstrides, long long N,
                           long long C, long long H, long long W, long long Ho, long long Wo,
                           int mode, int padding, int align, int nt) nogil
    void gs_backward_float(float* gin, float* gg, const float* gout, const float* inp,
                           const int64_t* strides, const float* grid,
                           const int64_t* gstrides, long long N, long long C, long long H,
                           long long W, long long Ho, long long Wo, int mode, int padding,
                           int align, int nt) nogil
    void gs_backward_double(double* gin, double* gg, const double* gout, const double* inp,
                            const int64_t* strides, const double* grid,
                            const int64_t* gstrides, long long N, long long C,
                            long long H, long long W, long long Ho, long long Wo, int mode,
                            int padding, int align, int nt) nogil

gs_detect()
gs_use(2)
# Whether this CPU has the float32 bilinear loops' AVX-512, and AVX2 + FMA (which run where
# it has no AVX-512; the widest is chosen at import).
AVX512 = bool(gs_cpu_avx512)
AVX2 = bool(gs_cpu_avx2)
_ISAS = ("scalar", "avx2", "avx512")


def use_vector_loops(str isa):
    """Run the float32 loops on at most `isa` ("avx512": the widest the CPU has, as at
    import; "avx2"; "scalar"), so the tests can compare the vector loops with the scalar
    ones bit for bit; returns the previous choice."""
    before = "avx512" if gs_has_avx512 else "avx2" if gs_has_avx2 else "scalar"
    gs_use(_ISAS.index(isa))
    return before

_MODES = {"bilinear": 0, "nearest": 1}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


cdef cnp.ndarray _element_strides(object a):
    return np.asarray(a.strides, dtype=np.int64) // a.itemsize


cdef bint _supported(cnp.ndarray x, cnp.ndarray g, str mode, str padding):
    """The ranks, dtypes and modes the kernels cover, with every tap offset inside one plane
    fitting the kernels' 32-bit offsets."""
    if not (x.ndim == 4 and g.ndim == 4 and x.dtype in (np.float32, np.float64)
            and g.dtype == x.dtype and mode in _MODES and padding in _PADDINGS):
        return False
    extent = sum((x.shape[d] - 1) * abs(x.strides[d] // x.itemsize) for d in (2, 3))
    return extent < 2 ** 31 and x.shape[2] * x.shape[3] < 2 ** 31


def grid_sampler_2d(TensorImpl out, TensorImpl input, TensorImpl grid, str mode,
                    str padding_mode, bint align_corners):
    """out (N, C, Ho, Wo), contiguous, sampled from input (N, C, H, W) at grid
    (N, Ho, Wo, 2); False (nothing written) for modes, dtypes or ranks it does not cover."""
    cdef cnp.ndarray xv = host_array(input), gv = host_array(grid), ov = host_array(out)
    if not _supported(xv, gv, mode, padding_mode) or not ov.flags.c_contiguous:
        return False
    cdef cnp.ndarray xs = _element_strides(xv), gs = _element_strides(gv)
    cdef const int64_t* xsp = <int64_t*>cnp.PyArray_DATA(xs)
    cdef const int64_t* gsp = <int64_t*>cnp.PyArray_DATA(gs)
    cdef long long N = xv.shape[0], C = xv.shape[1], H = xv.shape[2], W = xv.shape[3]
    cdef long long Ho = gv.shape[1], Wo = gv.shape[2]
    cdef int m = _MODES[mode], p = _PADDINGS[padding_mode], a = align_corners
    cdef int nt = fastreduce.threads_now()
    cdef void* od = cnp.PyArray_DATA(ov)
    cdef void* xd = cnp.PyArray_DATA(xv)
    cdef void* gd = cnp.PyArray_DATA(gv)
    if xv.dtype == np.float32:
        with nogil:
            gs_forward_float(<float*>od, <float*>xd, xsp, <float*>gd, gsp, N, C, H, W, Ho, Wo,
                             m, p, a, nt)
    else:
        with nogil:
            gs_forward_double(<double*>od, <double*>xd, xsp, <double*>gd, gsp, N, C, H, W, Ho,
                              Wo, m, p, a, nt)
    return True


def grid_sampler_2d_backward(grad_input, TensorImpl grad_grid, TensorImpl grad_out,
                             TensorImpl input, TensorImpl grid, str mode, str padding_mode,
                             bint align_corners):
    """grad_input (N, C, H, W; or None when not wanted) and grad_grid (N, Ho, Wo, 2), both
    contiguous and overwritten, from grad_out (N, C, Ho, Wo, contiguous); False (nothing
    written) where the forward kernel would have declined."""
    cdef cnp.ndarray xv = host_array(input), gv = host_array(grid)
    cdef cnp.ndarray ggv = host_array(grad_grid), gov = host_array(grad_out)
    cdef cnp.ndarray giv = host_array(grad_input) if grad_input is not None else None
    if (not _supported(xv, gv, mode, padding_mode) or not ggv.flags.c_contiguous
            or not gov.flags.c_contiguous or gov.dtype != xv.dtype
            or (giv is not None and not giv.flags.c_contiguous)):
        return False
    cdef cnp.ndarray xs = _element_strides(xv), gs = _element_strides(gv)
    cdef const int64_t* xsp = <int64_t*>cnp.PyArray_DATA(xs)
    cdef const int64_t* gsp = <int64_t*>cnp.PyArray_DATA(gs)
    cdef long long N = xv.shape[0], C = xv.shape[1], H = xv.shape[2], W = xv.shape[3]
    cdef long long Ho = gv.shape[1], Wo = gv.shape[2]
    cdef int m = _MODES[mode], p = _PADDINGS[padding_mode], a = align_corners
    cdef int nt = fastreduce.threads_now()
    cdef void* gid = cnp.PyArray_DATA(giv) if giv is not None else NULL
    cdef void* ggd = cnp.PyArray_DATA(ggv)
    cdef void* god = cnp.PyArray_DATA(gov)
    cdef void* xd = cnp.PyArray_DATA(xv)
    cdef void* gd = cnp.PyArray_DATA(gv)
    if xv.dtype == np.float32:
        with nogil:
            gs_backward_float(<float*>gid, <float*>ggd, <float*>god, <float*>xd, xsp,
                              <float*>gd, gsp, N, C, H, W, Ho, Wo, m, p, a, nt)
    else:
        with nogil:
            gs_backward_double(<double*>gid, <double*>ggd, <double*>god, <double*>xd, xsp,
                               <double*>gd, gsp, N, C, H, W, Ho, Wo, m, p, a, nt)
    return True


KERNELS = {"grid_sampler_2d": grid_sampler_2d,
           "grid_sampler_2d_backward": grid_sampler_2d_backward}
