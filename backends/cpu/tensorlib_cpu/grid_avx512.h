/* grid_kernels.pyx's float32 bilinear loops (zero or border padding) on AVX-512: the taps of
   16 points, every channel of a block by masked gathers, and the grid gradient (gcc leaves
   the scalar loops' gathers scalar: 2.2-2.6x PyTorch's time on the Intel Xeon). The same
   operations in the same order as the scalar loops, so bit-identical results. Compiled for
   AVX-512 by a function attribute whatever the build targets, and chosen at run time
   (gs_detect). Included by grid_kernels.pyx after its block and tap types; not a tracked
   dependency: touch grid_kernels.pyx after editing this file. */
GS_AVX512 static inline __mmask16 gs_lanes(int64_t left) {
    return left >= 16 ? (__mmask16)0xFFFF
                      : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1u);
}
/* x where x < hi, else hi (NaN: hi), as the scalar `x < hi ? x : hi` */
GS_AVX512 static inline __m512 gs_below(__m512 x, __m512 hi) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, hi, _CMP_LT_OQ), hi, x);
}
GS_AVX512 static inline __m512 gs_tap(const float* plane, const gs_block_float* b, int k,
                                      int64_t j, __mmask16 lanes) {
    __m512i off = _mm512_maskz_loadu_epi32(lanes, b->off[k] + j);
    __mmask16 ok = _mm512_mask_cmpneq_epi32_mask(
        lanes, _mm512_maskz_loadu_epi32(lanes, b->ok[k] + j), _mm512_setzero_si512());
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok, off, plane, 4);
}
/* Every channel of a block, 16 points at a time with their taps held in registers
   across the channels (the per-channel loop reloaded them from the block: 0.2 of the
   forward's time); o: the block's first output of channel 0, channels P apart. */
GS_AVX512 static int gs_bilinear_channels_avx512(float* o, int64_t P, const float* in,
                                                 int64_t cstride, int64_t C,
                                                 const gs_block_float* b, int64_t len) {
    for (int64_t j = 0; j < len; j += 16) {
        __mmask16 m = gs_lanes(len - j), ok[4];
        __m512i off[4];
        __m512 w[4];
        for (int k = 0; k < 4; k++) {
            off[k] = _mm512_maskz_loadu_epi32(m, b->off[k] + j);
            ok[k] = _mm512_mask_cmpneq_epi32_mask(
                m, _mm512_maskz_loadu_epi32(m, b->ok[k] + j), _mm512_setzero_si512());
            w[k] = _mm512_maskz_loadu_ps(m, b->w[k] + j);
        }
        for (int64_t c = 0; c < C; c++) {
            const float* plane = in + c * cstride;
            __m512 v0 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok[0], off[0], plane, 4);
            __m512 v1 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok[1], off[1], plane, 4);
            __m512 v2 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok[2], off[2], plane, 4);
            __m512 v3 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), ok[3], off[3], plane, 4);
            __m512 acc = _mm512_mul_ps(v0, w[0]);
            acc = _mm512_add_ps(acc, _mm512_mul_ps(v1, w[1]));
            acc = _mm512_add_ps(acc, _mm512_mul_ps(v2, w[2]));
            acc = _mm512_add_ps(acc, _mm512_mul_ps(v3, w[3]));
            _mm512_mask_storeu_ps(o + c * P + j, m, acc);
        }
    }
    return 1;
}
GS_AVX512 static void gs_position_grad_avx512(float* gix, float* giy, const float* plane,
                                              const float* g, const gs_block_float* b,
                                              int64_t len) {
    const __m512 one = _mm512_set1_ps(1.0f);
    for (int64_t j = 0; j < len; j += 16) {
        __mmask16 m = gs_lanes(len - j);
        __m512 v0 = gs_tap(plane, b, 0, j, m), v1 = gs_tap(plane, b, 1, j, m);
        __m512 v2 = gs_tap(plane, b, 2, j, m), v3 = gs_tap(plane, b, 3, j, m);
        __m512 tx = _mm512_maskz_loadu_ps(m, b->tx + j);
        __m512 ty = _mm512_maskz_loadu_ps(m, b->ty + j);
        __m512 gj = _mm512_maskz_loadu_ps(m, g + j);
        __m512 dx = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(v1, v0), _mm512_sub_ps(one, ty)),
                                  _mm512_mul_ps(_mm512_sub_ps(v3, v2), ty));
        __m512 dy = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(v2, v0), _mm512_sub_ps(one, tx)),
                                  _mm512_mul_ps(_mm512_sub_ps(v3, v1), tx));
        _mm512_mask_storeu_ps(gix + j, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, gix + j), _mm512_mul_ps(gj, dx)));
        _mm512_mask_storeu_ps(giy + j, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, giy + j), _mm512_mul_ps(gj, dy)));
    }
}
/* The taps of a block, 16 points at a time: bilinear with zero or border padding (the
   other modes return 0 and take the scalar loops). The scalar loops' operations in the
   same order (no contraction: -ffp-contract=off), so bit-identical taps; scalar, they
   were 0.55 ms of the 8x16x64x64 forward's 1.3 ms (PyTorch's whole forward: 0.9 ms). */
GS_AVX512 static int gs_vector_taps_avx512(gs_block_float* b, const float* grid,
                                           const int64_t* gst, int64_t n, int64_t p0,
                                           int64_t len, int64_t Wo, int64_t H, int64_t W,
                                           const int64_t* is, int mode, int padding,
                                           int align, int flat_only) {
    if (mode != GS_BILINEAR || padding == GS_REFLECTION) return 0;
    int64_t j;
    float ix[GS_BLOCK], iy[GS_BLOCK];
    const float* gp = grid + n * gst[0];
    if (gst[3] == 1 && gst[2] == 2 && gst[1] == 2 * Wo) {     /* points contiguous */
        const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22,
                                                24, 26, 28, 30);
        const __m512i odds = _mm512_add_epi32(evens, _mm512_set1_epi32(1));
        for (j = 0; j < len; j += 16) {
            int64_t left = len - j;
            __m512 lo = _mm512_maskz_loadu_ps(gs_lanes(2 * left), gp + 2 * (p0 + j));
            __m512 hi = _mm512_maskz_loadu_ps(gs_lanes(2 * left - 16),
                                              gp + 2 * (p0 + j) + 16);
            _mm512_storeu_ps(ix + j, _mm512_permutex2var_ps(lo, evens, hi));
            _mm512_storeu_ps(iy + j, _mm512_permutex2var_ps(lo, odds, hi));
        }
    } else {
        int64_t h = p0 / Wo, w = p0 % Wo;
        for (j = 0; j < len; j++) {
            const float* q = gp + h * gst[1] + w * gst[2];
            ix[j] = q[0]; iy[j] = q[gst[3]];
            if (++w == Wo) { w = 0; h++; }
        }
    }
    const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
    const __m512 zero = _mm512_setzero_ps();
    const __m512 fw = _mm512_set1_ps((float)W), fh = _mm512_set1_ps((float)H);
    const __m512 wm1 = _mm512_set1_ps((float)(W - 1)), hm1 = _mm512_set1_ps((float)(H - 1));
    const __m512 gxs = _mm512_set1_ps(align ? (float)(W - 1) / 2 : (float)W / 2);
    const __m512 gys = _mm512_set1_ps(align ? (float)(H - 1) / 2 : (float)H / 2);
    const __m512 big = _mm512_set1_ps((float)1e15), m10 = _mm512_set1_ps(-10.0f);
    const __m512 m2 = _mm512_set1_ps(-2.0f), nan = _mm512_set1_ps(NAN);
    const __m512 wp2 = _mm512_add_ps(fw, two), hp2 = _mm512_add_ps(fh, two);
    const __m512i izero = _mm512_setzero_si512(), ione = _mm512_set1_epi32(1);
    const __m512i iW = _mm512_set1_epi32((int32_t)W), iH = _mm512_set1_epi32((int32_t)H);
    const __m512i s2 = _mm512_set1_epi32((int32_t)is[2]);
    const __m512i s3 = _mm512_set1_epi32((int32_t)is[3]);
    for (j = 0; j < len; j += 16) {
        __mmask16 m = gs_lanes(len - j);
        __m512 x = _mm512_loadu_ps(ix + j), y = _mm512_loadu_ps(iy + j);
        __m512 gx = gxs, gy = gys;
        if (align) {
            x = _mm512_mul_ps(_mm512_div_ps(_mm512_add_ps(x, one), two), wm1);
            y = _mm512_mul_ps(_mm512_div_ps(_mm512_add_ps(y, one), two), hm1);
        } else {
            x = _mm512_mul_ps(_mm512_add_ps(x, one), fw);
            y = _mm512_mul_ps(_mm512_add_ps(y, one), fh);
            x = _mm512_div_ps(_mm512_sub_ps(x, one), two);
            y = _mm512_div_ps(_mm512_sub_ps(y, one), two);
        }
        if (padding == GS_BORDER) {     /* gs_clip: NaN and x <= 0 go to 0 */
            __mmask16 xin = _mm512_cmp_ps_mask(x, zero, _CMP_GT_OQ)
                            & _mm512_cmp_ps_mask(x, wm1, _CMP_LT_OQ);
            __mmask16 yin = _mm512_cmp_ps_mask(y, zero, _CMP_GT_OQ)
                            & _mm512_cmp_ps_mask(y, hm1, _CMP_LT_OQ);
            gx = _mm512_maskz_mov_ps(xin, gx); gy = _mm512_maskz_mov_ps(yin, gy);
            x = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, zero, _CMP_GT_OQ), gs_below(x, wm1));
            y = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, zero, _CMP_GT_OQ), gs_below(y, hm1));
        }
        if (!flat_only) { _mm512_storeu_ps(b->mx + j, gx); _mm512_storeu_ps(b->my + j, gy); }
        __mmask16 near = _mm512_cmp_ps_mask(_mm512_abs_ps(x), big, _CMP_LE_OQ)
                         & _mm512_cmp_ps_mask(_mm512_abs_ps(y), big, _CMP_LE_OQ);
        __mmask16 finite = _mm512_cmp_ps_mask(_mm512_sub_ps(x, x), zero, _CMP_EQ_OQ)
                           & _mm512_cmp_ps_mask(_mm512_sub_ps(y, y), zero, _CMP_EQ_OQ);
        x = _mm512_mask_blend_ps(near, m10, x); y = _mm512_mask_blend_ps(near, m10, y);
        x = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, m2, _CMP_LT_OQ), gs_below(x, wp2), m2);
        y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(y, m2, _CMP_LT_OQ), gs_below(y, hp2), m2);
        __m512 fx = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m512 fy = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m512 tx = _mm512_sub_ps(x, fx), ty = _mm512_sub_ps(y, fy);
        __m512i x0 = _mm512_cvttps_epi32(fx), y0 = _mm512_cvttps_epi32(fy);
        if (!flat_only) { _mm512_storeu_ps(b->tx + j, tx); _mm512_storeu_ps(b->ty + j, ty); }
        __m512 far_w = _mm512_maskz_mov_ps(~finite, nan);
        for (int k = 0; k < 4; k++) {
            __m512i xk = (k & 1) ? _mm512_add_epi32(x0, ione) : x0;
            __m512i yk = (k >> 1) ? _mm512_add_epi32(y0, ione) : y0;
            __mmask16 in = _mm512_cmpge_epi32_mask(xk, izero) & _mm512_cmplt_epi32_mask(xk, iW);
            in &= _mm512_cmpge_epi32_mask(yk, izero) & _mm512_cmplt_epi32_mask(yk, iH);
            __m512 wk = _mm512_mul_ps((k & 1) ? tx : _mm512_sub_ps(one, tx),
                                      (k >> 1) ? ty : _mm512_sub_ps(one, ty));
            xk = _mm512_maskz_mov_epi32(in, xk); yk = _mm512_maskz_mov_epi32(in, yk);
            _mm512_mask_storeu_epi32(b->ok[k] + j, m, _mm512_maskz_mov_epi32(in, ione));
            if (!flat_only)
                _mm512_mask_storeu_epi32(b->off[k] + j, m, _mm512_add_epi32(
                    _mm512_mullo_epi32(yk, s2), _mm512_mullo_epi32(xk, s3)));
            _mm512_mask_storeu_epi32(b->flat[k] + j, m, _mm512_add_epi32(
                _mm512_mullo_epi32(yk, iW), xk));
            _mm512_mask_storeu_ps(b->w[k] + j, m, _mm512_mask_blend_ps(near, far_w, wk));
        }
    }
    return 1;
}
