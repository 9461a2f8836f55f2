/* grid_kernels.pyx's float32 bilinear loops (zero or border padding) on AVX2 for x86 CPUs
   without AVX-512 (AMD Zen 2/3, older Intel): the taps, gathers and grid gradient 8 points
   at a time, and the channels-last forward. gcc leaves the scalar loops' gathers and
   branch-free taps scalar: the forward ran at 0.43-0.67x PyTorch's speed on a Zen 3
   (8x16x64x64, 2 threads). The same operations in the same order as the scalar loops (no
   contraction: the module is built with -ffp-contract=off, and no FMA intrinsic is used), so
   the results are bit-identical to them. Compiled for AVX2 + FMA by a function attribute
   whatever the build targets, and chosen at run time (gs_detect) where the CPU has both but
   not AVX-512. Included by grid_kernels.pyx after its block and tap types; not a tracked
   dependency: touch grid_kernels.pyx after editing this file. */
#define GS_AVX2 __attribute__((target("avx2,fma")))

/* all bits set in the first `left` lanes (at most 8), for the masked loads and stores */
GS_AVX2 static inline __m256i gs_lanes8(int64_t left) {
    int n = left >= 8 ? 8 : left <= 0 ? 0 : (int)left;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
/* x where x < hi, else hi (NaN: hi), as the scalar `x < hi ? x : hi` */
GS_AVX2 static inline __m256 gs_below8(__m256 x, __m256 hi) {
    return _mm256_blendv_ps(hi, x, _mm256_cmp_ps(x, hi, _CMP_LT_OQ));
}
/* lanes of m whose block flag `ok` is set, as a float mask for the gathers */
GS_AVX2 static inline __m256 gs_ok8(const int32_t* ok, __m256i m) {
    __m256i zero = _mm256_cmpeq_epi32(_mm256_maskload_epi32(ok, m), _mm256_setzero_si256());
    return _mm256_castsi256_ps(_mm256_andnot_si256(zero, m));
}
GS_AVX2 static inline __m256 gs_tap8(const float* plane, const gs_block_float* b, int k,
                                     int64_t j, __m256i m) {
    return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), plane,
                                    _mm256_maskload_epi32(b->off[k] + j, m),
                                    gs_ok8(b->ok[k] + j, m), 4);
}

/* Every channel of a block, 8 points at a time with their taps held in registers across
   the channels; o: the block's first output of channel 0, channels P apart. */
GS_AVX2 static int gs_bilinear_channels_avx2(float* o, int64_t P, const float* in,
                                             int64_t cstride, int64_t C,
                                             const gs_block_float* b, int64_t len) {
    for (int64_t j = 0; j < len; j += 8) {
        __m256i m = gs_lanes8(len - j), off[4];
        __m256 ok[4], w[4];
        int full = len - j >= 8;
        for (int k = 0; k < 4; k++) {
            off[k] = _mm256_maskload_epi32(b->off[k] + j, m);
            ok[k] = gs_ok8(b->ok[k] + j, m);
            w[k] = _mm256_maskload_ps(b->w[k] + j, m);
        }
        for (int64_t c = 0; c < C; c++) {
            const float* plane = in + c * cstride;
            __m256 v0 = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), plane, off[0], ok[0], 4);
            __m256 v1 = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), plane, off[1], ok[1], 4);
            __m256 v2 = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), plane, off[2], ok[2], 4);
            __m256 v3 = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), plane, off[3], ok[3], 4);
            __m256 acc = _mm256_mul_ps(v0, w[0]);
            acc = _mm256_add_ps(acc, _mm256_mul_ps(v1, w[1]));
            acc = _mm256_add_ps(acc, _mm256_mul_ps(v2, w[2]));
            acc = _mm256_add_ps(acc, _mm256_mul_ps(v3, w[3]));
            if (full) _mm256_storeu_ps(o + c * P + j, acc);
            else _mm256_maskstore_ps(o + c * P + j, m, acc);
        }
    }
    return 1;
}

/* d(value)/d(position) of one channel, accumulated into gix, giy (the backward's grid
   gradient). */
GS_AVX2 static void gs_position_grad_avx2(float* gix, float* giy, const float* plane,
                                          const float* g, const gs_block_float* b,
                                          int64_t len) {
    const __m256 one = _mm256_set1_ps(1.0f);
    for (int64_t j = 0; j < len; j += 8) {
        __m256i m = gs_lanes8(len - j);
        __m256 v0 = gs_tap8(plane, b, 0, j, m), v1 = gs_tap8(plane, b, 1, j, m);
        __m256 v2 = gs_tap8(plane, b, 2, j, m), v3 = gs_tap8(plane, b, 3, j, m);
        __m256 tx = _mm256_maskload_ps(b->tx + j, m), ty = _mm256_maskload_ps(b->ty + j, m);
        __m256 gj = _mm256_maskload_ps(g + j, m);
        __m256 dx = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v1, v0), _mm256_sub_ps(one, ty)),
                                  _mm256_mul_ps(_mm256_sub_ps(v3, v2), ty));
        __m256 dy = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(v2, v0), _mm256_sub_ps(one, tx)),
                                  _mm256_mul_ps(_mm256_sub_ps(v3, v1), tx));
        /* gix, giy: the block's GS_BLOCK rows, whose lanes past len are never read */
        _mm256_storeu_ps(gix + j, _mm256_add_ps(_mm256_loadu_ps(gix + j), _mm256_mul_ps(gj, dx)));
        _mm256_storeu_ps(giy + j, _mm256_add_ps(_mm256_loadu_ps(giy + j), _mm256_mul_ps(gj, dy)));
    }
}

/* The taps of a block, 8 points at a time: bilinear with zero or border padding (the other
   modes return 0 and take the scalar loops); flat_only: flat, ok and w only. */
GS_AVX2 static int gs_vector_taps_avx2(gs_block_float* b, const float* grid,
                                       const int64_t* gst, int64_t n, int64_t p0,
                                       int64_t len, int64_t Wo, int64_t H, int64_t W,
                                       const int64_t* is, int mode, int padding, int align,
                                       int flat_only) {
    if (mode != GS_BILINEAR || padding == GS_REFLECTION) return 0;
    int64_t j;
    float ix[GS_BLOCK], iy[GS_BLOCK];
    const float* gp = grid + n * gst[0];
    if (gst[3] == 1 && gst[2] == 2 && gst[1] == 2 * Wo) {     /* points contiguous */
        for (j = 0; j < len; j += 8) {
            int64_t left = len - j;
            /* x0 y0 .. x3 y3 | x4 y4 .. x7 y7 -> per 128 bits x0 x1 x4 x5 | x2 x3 x6 x7 */
            __m256 lo = _mm256_maskload_ps(gp + 2 * (p0 + j), gs_lanes8(2 * left));
            __m256 hi = _mm256_maskload_ps(gp + 2 * (p0 + j) + 8, gs_lanes8(2 * left - 8));
            __m256d xs = _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88));
            __m256d ys = _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD));
            _mm256_storeu_ps(ix + j, _mm256_castpd_ps(_mm256_permute4x64_pd(xs, 0xD8)));
            _mm256_storeu_ps(iy + j, _mm256_castpd_ps(_mm256_permute4x64_pd(ys, 0xD8)));
        }
    } else {
        int64_t h = p0 / Wo, w = p0 % Wo;
        for (j = 0; j < len; j++) {
            const float* q = gp + h * gst[1] + w * gst[2];
            ix[j] = q[0]; iy[j] = q[gst[3]];
            if (++w == Wo) { w = 0; h++; }
        }
        for (; j % 8; j++) { ix[j] = 0; iy[j] = 0; }       /* the last vector's tail */
    }
    const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
    const __m256 zero = _mm256_setzero_ps();
    const __m256 fw = _mm256_set1_ps((float)W), fh = _mm256_set1_ps((float)H);
    const __m256 wm1 = _mm256_set1_ps((float)(W - 1)), hm1 = _mm256_set1_ps((float)(H - 1));
    const __m256 gxs = _mm256_set1_ps(align ? (float)(W - 1) / 2 : (float)W / 2);
    const __m256 gys = _mm256_set1_ps(align ? (float)(H - 1) / 2 : (float)H / 2);
    const __m256 big = _mm256_set1_ps((float)1e15), m10 = _mm256_set1_ps(-10.0f);
    const __m256 m2 = _mm256_set1_ps(-2.0f), nan = _mm256_set1_ps(NAN);
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const __m256 wp2 = _mm256_add_ps(fw, two), hp2 = _mm256_add_ps(fh, two);
    const __m256i ione = _mm256_set1_epi32(1), ineg = _mm256_set1_epi32(-1);
    const __m256i iW = _mm256_set1_epi32((int32_t)W), iH = _mm256_set1_epi32((int32_t)H);
    const __m256i s2 = _mm256_set1_epi32((int32_t)is[2]);
    const __m256i s3 = _mm256_set1_epi32((int32_t)is[3]);
    /* Whole-vector stores (a masked store is slow on AMD): the block's rows have room, and
       the lanes past len are never read. */
    for (j = 0; j < len; j += 8) {
        __m256 x = _mm256_loadu_ps(ix + j), y = _mm256_loadu_ps(iy + j);
        __m256 gx = gxs, gy = gys;
        if (align) {
            x = _mm256_mul_ps(_mm256_div_ps(_mm256_add_ps(x, one), two), wm1);
            y = _mm256_mul_ps(_mm256_div_ps(_mm256_add_ps(y, one), two), hm1);
        } else {
            x = _mm256_mul_ps(_mm256_add_ps(x, one), fw);
            y = _mm256_mul_ps(_mm256_add_ps(y, one), fh);
            x = _mm256_div_ps(_mm256_sub_ps(x, one), two);
            y = _mm256_div_ps(_mm256_sub_ps(y, one), two);
        }
        if (padding == GS_BORDER) {     /* gs_clip: NaN and x <= 0 go to 0 */
            __m256 xpos = _mm256_cmp_ps(x, zero, _CMP_GT_OQ);
            __m256 ypos = _mm256_cmp_ps(y, zero, _CMP_GT_OQ);
            gx = _mm256_and_ps(_mm256_and_ps(xpos, _mm256_cmp_ps(x, wm1, _CMP_LT_OQ)), gx);
            gy = _mm256_and_ps(_mm256_and_ps(ypos, _mm256_cmp_ps(y, hm1, _CMP_LT_OQ)), gy);
            x = _mm256_and_ps(xpos, gs_below8(x, wm1));
            y = _mm256_and_ps(ypos, gs_below8(y, hm1));
        }
        if (!flat_only) { _mm256_storeu_ps(b->mx + j, gx); _mm256_storeu_ps(b->my + j, gy); }
        __m256 near = _mm256_and_ps(_mm256_cmp_ps(_mm256_and_ps(x, absm), big, _CMP_LE_OQ),
                                    _mm256_cmp_ps(_mm256_and_ps(y, absm), big, _CMP_LE_OQ));
        __m256 finite = _mm256_and_ps(_mm256_cmp_ps(_mm256_sub_ps(x, x), zero, _CMP_EQ_OQ),
                                      _mm256_cmp_ps(_mm256_sub_ps(y, y), zero, _CMP_EQ_OQ));
        x = _mm256_blendv_ps(m10, x, near); y = _mm256_blendv_ps(m10, y, near);
        x = _mm256_blendv_ps(gs_below8(x, wp2), m2, _mm256_cmp_ps(x, m2, _CMP_LT_OQ));
        y = _mm256_blendv_ps(gs_below8(y, hp2), m2, _mm256_cmp_ps(y, m2, _CMP_LT_OQ));
        __m256 fx = _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m256 fy = _mm256_round_ps(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m256 tx = _mm256_sub_ps(x, fx), ty = _mm256_sub_ps(y, fy);
        __m256i x0 = _mm256_cvttps_epi32(fx), y0 = _mm256_cvttps_epi32(fy);
        if (!flat_only) { _mm256_storeu_ps(b->tx + j, tx); _mm256_storeu_ps(b->ty + j, ty); }
        __m256 far_w = _mm256_andnot_ps(finite, nan);
        for (int k = 0; k < 4; k++) {
            __m256i xk = (k & 1) ? _mm256_add_epi32(x0, ione) : x0;
            __m256i yk = (k >> 1) ? _mm256_add_epi32(y0, ione) : y0;
            /* 0 <= xk < W and 0 <= yk < H */
            __m256i in = _mm256_and_si256(_mm256_cmpgt_epi32(xk, ineg),
                                          _mm256_cmpgt_epi32(iW, xk));
            in = _mm256_and_si256(in, _mm256_and_si256(_mm256_cmpgt_epi32(yk, ineg),
                                                       _mm256_cmpgt_epi32(iH, yk)));
            __m256 wk = _mm256_mul_ps((k & 1) ? tx : _mm256_sub_ps(one, tx),
                                      (k >> 1) ? ty : _mm256_sub_ps(one, ty));
            xk = _mm256_and_si256(in, xk); yk = _mm256_and_si256(in, yk);
            _mm256_storeu_si256((__m256i*)(b->ok[k] + j), _mm256_and_si256(in, ione));
            if (!flat_only)
                _mm256_storeu_si256((__m256i*)(b->off[k] + j), _mm256_add_epi32(
                    _mm256_mullo_epi32(yk, s2), _mm256_mullo_epi32(xk, s3)));
            _mm256_storeu_si256((__m256i*)(b->flat[k] + j), _mm256_add_epi32(
                _mm256_mullo_epi32(yk, iW), xk));
            _mm256_storeu_ps(b->w[k] + j, _mm256_blendv_ps(far_w, wk, near));
        }
    }
    return 1;
}

/* The channels-last forward (gs_forward_nhwc_float) on AVX2: a tap is one load of 8
   channels, not 8 gathered floats. dst's 8 rows (ds apart) = the columns of src's 8 rows
   (ss apart). */
GS_AVX2 static inline void gs_t8(const float* src, int64_t ss, float* dst, int64_t ds) {
    __m256 r[8], t[8];
    int i;
    for (i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + i * ss);
    for (i = 0; i < 8; i += 2) {       /* per 128 bits: a0 b0 a1 b1 / a2 b2 a3 b3 */
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (i = 0; i < 8; i += 4) {       /* r[i + k], per 128 bits L: column 4L + k of rows i..i+3 */
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (i = 0; i < 4; i++) {
        _mm256_storeu_ps(dst + i * ds, _mm256_permute2f128_ps(r[i], r[4 + i], 0x20));
        _mm256_storeu_ps(dst + (4 + i) * ds, _mm256_permute2f128_ps(r[i], r[4 + i], 0x31));
    }
}
/* One input row (src: channel 0 of row h, strides is) into W x C channels-last at t. */
GS_AVX2 static void gs_hwc_row_avx2(float* t, const float* src, const int64_t* is, int64_t C,
                                    int64_t W) {
    for (int64_t c0 = 0; c0 < C; c0 += 8)
        for (int64_t w0 = 0; w0 < W; w0 += 8) {
            if (is[3] == 1 && C - c0 >= 8 && W - w0 >= 8) {
                gs_t8(src + c0 * is[1] + w0, is[1], t + w0 * C + c0, C);
                continue;
            }
            for (int64_t c = c0; c < C && c < c0 + 8; c++)
                for (int64_t w = w0; w < W && w < w0 + 8; w++)
                    t[w * C + c] = src[c * is[1] + w * is[3]];
        }
}
/* One block from channels-last t (H x W x C); o: the block's first output of channel 0,
   channels P apart. Each output v0 * w0 + v1 * w1 + v2 * w2 + v3 * w3, a tap outside read
   as 0 (its offset is 0, in bounds; the load is masked to zeros). */
GS_AVX2 static void gs_hwc_block_avx2(float* o, int64_t P, const float* t, int64_t C,
                                      const gs_block_float* b, int64_t len) {
    float tile[8 * 8] __attribute__((aligned(32)));
    for (int64_t j = 0; j < len; j += 8) {
        int64_t jn = len - j < 8 ? len - j : 8;
        for (int64_t c0 = 0; c0 < C; c0 += 8) {
            int64_t cn = C - c0 < 8 ? C - c0 : 8;
            __m256i cm = gs_lanes8(cn);
            for (int64_t i = 0; i < jn; i++) {
                int64_t p = j + i;
                __m256 v[4];
                for (int k = 0; k < 4; k++) {
                    __m256i okm = _mm256_set1_epi32(-b->ok[k][p]);
                    const float* at = t + (int64_t)b->flat[k][p] * C + c0;
                    v[k] = cn == 8 ? _mm256_and_ps(_mm256_loadu_ps(at), _mm256_castsi256_ps(okm))
                                   : _mm256_maskload_ps(at, _mm256_and_si256(cm, okm));
                }
                __m256 acc = _mm256_mul_ps(v[0], _mm256_set1_ps(b->w[0][p]));
                acc = _mm256_add_ps(acc, _mm256_mul_ps(v[1], _mm256_set1_ps(b->w[1][p])));
                acc = _mm256_add_ps(acc, _mm256_mul_ps(v[2], _mm256_set1_ps(b->w[2][p])));
                acc = _mm256_add_ps(acc, _mm256_mul_ps(v[3], _mm256_set1_ps(b->w[3][p])));
                _mm256_store_ps(tile + 8 * i, acc);
            }
            if (jn == 8 && cn == 8) {
                gs_t8(tile, 8, o + c0 * P + j, P);
                continue;
            }
            for (int64_t c = 0; c < cn; c++)
                for (int64_t i = 0; i < jn; i++) o[(c0 + c) * P + j + i] = tile[8 * i + c];
        }
    }
}
