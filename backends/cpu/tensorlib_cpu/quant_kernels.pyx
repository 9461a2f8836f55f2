# cython: boundscheck=False, wraparound=False, cdivision=True
"""The host-side steps of the dynamically quantized Linear in C: the activation's range,
its quantization parameters (fbgemm's ChooseQuantizationParams, what PyTorch's
quantized::linear_dynamic calls per batch) and its quantization to quint8, then, where no
oneDNN primitive does it, the int32 product's rescale to float32 with the bias.

In float64 numpy these took ~60% of a 784-512-256-10 MLP's quantized forward (one thread).
Built without fast-math (setup.py's EXACT_MATH): the quantization rounds once,
rint(fma(x, 1 / scale, zero_point)) as fbgemm's AVX2 kernel, and the rescale must
round as oneDNN's matmul does, so both paths give the same bits."""
from libc.math cimport isfinite
from libc.stdint cimport int32_t, uint8_t

cdef extern from *:
    """
    #include <math.h>
    #include <omp.h>
    /* Range and quantization of a (m, k) float32 array; split across threads for more
       than 64k elements (below that the region costs more than it saves). rintf rounds
       half to even as nearbyintf does (the default rounding mode) and becomes one vector
       instruction; nearbyintf stayed a libm call per element (4x the time). */
    #define Q_PARALLEL(n, threads) ((threads) > 1 && (n) > 65536)

    /* 64 lanes of running min and max (four 512-bit registers each): one accumulator
       chain waits out vminps' latency per 16 floats, 3x the time on 128x784. */
    #define Q_LANES 64
    static void q_range_part(const float* x, Py_ssize_t n, float* lo_io, float* hi_io) {
        float lo = *lo_io, hi = *hi_io, l[Q_LANES], h[Q_LANES];
        Py_ssize_t i = 0;
        int j;
        for (j = 0; j < Q_LANES; j++) { l[j] = lo; h[j] = hi; }
        for (; i + Q_LANES <= n; i += Q_LANES) {
            #pragma omp simd
            for (j = 0; j < Q_LANES; j++) {
                float v = x[i + j];
                l[j] = v < l[j] ? v : l[j];
                h[j] = v > h[j] ? v : h[j];
            }
        }
        for (j = 0; j < Q_LANES; j++) {
            lo = l[j] < lo ? l[j] : lo;
            hi = h[j] > hi ? h[j] : hi;
        }
        for (; i < n; i++) {
            lo = x[i] < lo ? x[i] : lo;
            hi = x[i] > hi ? x[i] : hi;
        }
        *lo_io = lo; *hi_io = hi;
    }

    static void q_range(const float* x, Py_ssize_t n, float* lo_out, float* hi_out,
                        int threads) {
        float lo = INFINITY, hi = -INFINITY;
        if (!Q_PARALLEL(n, threads)) {
            q_range_part(x, n, &lo, &hi);
        } else {
            #pragma omp parallel num_threads(threads)
            {
                int t = omp_get_thread_num(), nt = omp_get_num_threads();
                Py_ssize_t start = n * t / nt, end = n * (t + 1) / nt;
                float l = INFINITY, h = -INFINITY;
                q_range_part(x + start, end - start, &l, &h);
                #pragma omp critical
                {
                    lo = l < lo ? l : lo;
                    hi = h > hi ? h : hi;
                }
            }
        }
        *lo_out = lo; *hi_out = hi;
    }

    #if defined(__AVX512F__) && defined(__AVX512BW__)
    #include <immintrin.h>
    /* Rounding in the conversion (vcvtps2dq, to nearest even in the default mode) and
       clamping the integers: 0.3x the time of the loop below as GCC vectorizes it
       (a rounding, two float clamps, a truncation and two permutes per 16 values). */
    static void q_quantize_row(const float* xr, uint8_t* qr, Py_ssize_t k, Py_ssize_t kp,
                               float inv_scale, float zero_point, float qmax) {
        const __m512 inv = _mm512_set1_ps(inv_scale), zp = _mm512_set1_ps(zero_point);
        const __m512i lo = _mm512_setzero_si512(), hi = _mm512_set1_epi32((int)qmax);
        Py_ssize_t i = 0;
        for (; i < k; i += 16) {
            __mmask16 mask = k - i >= 16 ? (__mmask16)0xFFFF
                                         : (__mmask16)((1u << (k - i)) - 1);
            __m512 v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, xr + i), inv, zp);
            __m512i r = _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(v), lo), hi);
            _mm_mask_storeu_epi8(qr + i, mask, _mm512_cvtepi32_epi8(r));
        }
        for (i = k; i < kp; i++) qr[i] = (uint8_t)(int)zero_point;
    }
    #else
    static void q_quantize_row(const float* xr, uint8_t* qr, Py_ssize_t k, Py_ssize_t kp,
                               float inv_scale, float zero_point, float qmax) {
        Py_ssize_t i;
        #pragma omp simd
        for (i = 0; i < k; i++) {
            float v = rintf(fmaf(xr[i], inv_scale, zero_point));
            v = v < 0.0f ? 0.0f : v;
            v = v > qmax ? qmax : v;
            qr[i] = (uint8_t)(int)v;
        }
        for (i = k; i < kp; i++) qr[i] = (uint8_t)(int)zero_point;
    }
    #endif

    /* q (m, kp) = x (m, k) quantized, row by row; the kp - k columns of padding get the
       zero point (they stand for 0). */
    static void q_quantize(const float* x, uint8_t* q, Py_ssize_t m, Py_ssize_t k,
                           Py_ssize_t kp, float inv_scale, float zero_point, float qmax,
                           int threads) {
        Py_ssize_t r;
        if (!Q_PARALLEL(m * k, threads)) {
            for (r = 0; r < m; r++)
                q_quantize_row(x + r * k, q + r * kp, k, kp, inv_scale, zero_point, qmax);
            return;
        }
        #pragma omp parallel for num_threads(threads) schedule(static)
        for (r = 0; r < m; r++)
            q_quantize_row(x + r * k, q + r * kp, k, kp, inv_scale, zero_point, qmax);
    }

    /* out[i, j] = acc[i, j] * scale[j or 0] + bias[j]: one rounding for the product and
       one for the sum (no fma), as oneDNN's int8 matmul writes a float32 output. */
    static void q_rescale(const int32_t* acc, float* out, Py_ssize_t m, Py_ssize_t n,
                          const float* scale, int per_channel, const float* bias,
                          int threads) {
        Py_ssize_t i;
        #pragma omp parallel for num_threads(threads) if (Q_PARALLEL(m * n, threads)) \\
                schedule(static)
        for (i = 0; i < m; i++) {
            const int32_t* a = acc + i * n; float* o = out + i * n; Py_ssize_t j;
            for (j = 0; j < n; j++) {
                float p = (float)a[j] * scale[per_channel ? j : 0];
                o[j] = bias ? p + bias[j] : p;
            }
        }
    }
    """
    void q_range(const float* x, Py_ssize_t n, float* lo, float* hi, int threads) nogil
    void q_quantize(const float* x, uint8_t* q, Py_ssize_t m, Py_ssize_t k, Py_ssize_t kp,
                    float inv_scale, float zero_point, float qmax, int threads) nogil
    void q_rescale(const int32_t* acc, float* out, Py_ssize_t m, Py_ssize_t n,
                   const float* scale, int per_channel, const float* bias, int threads) nogil


cdef double _rint(double v) noexcept nogil:
    """Round half to even (np.rint, std::nearbyint in the default mode)."""
    cdef double f = <double><long long>v
    cdef double d = v - f
    if d > 0.5 or (d == 0.5 and (<long long>f) % 2 != 0):
        return f + 1.0
    if d < -0.5 or (d == -0.5 and (<long long>f) % 2 != 0):
        return f - 1.0
    return f


def choose_qparams(double lo, double hi, int qmin, int qmax):
    """fbgemm's ChooseQuantizationParams: the range widened to hold 0, the zero point from
    whichever end loses less, rounded half to even; a zero or too-small scale becomes 0.1.
    Returns (scale as a float32 value, zero point)."""
    cdef float scale, one = 1.0
    cdef double from_min, from_max, initial
    lo = min(lo, 0.0)
    hi = max(hi, 0.0)
    scale = <float>((hi - lo) / (qmax - qmin))
    if scale == 0.0 or not isfinite(one / scale):
        scale = 0.1
    from_min = qmin - lo / scale
    from_max = qmax - hi / scale
    initial = (from_min if abs(qmin) + abs(lo / scale) < abs(qmax) + abs(hi / scale)
               else from_max)
    initial = _rint(initial)
    return scale, int(min(max(initial, qmin), qmax))


def quantize_activation(const float[:, ::1] x, uint8_t[:, ::1] out, int qmax, int threads):
    """out[:, :k] = x (m, k) quantized to 0..qmax with the parameters its own range gives (an
    empty x: scale 1, zero point 0, as PyTorch's); out may be wider than x (a K padded for
    the int8 product), its other columns get the zero point. Returns (scale, zero point)."""
    cdef Py_ssize_t m = x.shape[0], k = x.shape[1], n = m * k
    cdef float lo = 0, hi = 0, scale, inv
    cdef int zp
    if out.shape[0] != m or out.shape[1] < k:
        raise ValueError("quantize_activation: out is smaller than x")
    if n == 0:
        out[:, :] = 0
        return 1.0, 0
    with nogil:
        q_range(&x[0, 0], n, &lo, &hi, max(threads, 1))
    scale, zp = choose_qparams(lo, hi, 0, qmax)
    inv = 1.0 / scale
    with nogil:
        q_quantize(&x[0, 0], &out[0, 0], m, k, out.shape[1], inv, <float>zp, <float>qmax,
                   max(threads, 1))
    return scale, zp


def rescale(const int32_t[:, ::1] acc, float[:, ::1] out, const float[::1] scale,
            bias, int threads):
    """out = acc * scale (one per column, or one for all) + bias (a float32 vector or
    None), rounded as oneDNN's matmul rounds (see q_rescale)."""
    cdef const float[::1] b
    cdef const float* bp = NULL
    cdef Py_ssize_t m = acc.shape[0], n = acc.shape[1]
    cdef int per_channel = scale.shape[0] > 1
    if out.shape[0] != m or out.shape[1] != n or scale.shape[0] not in (1, n):
        raise ValueError("rescale: shapes do not match")
    if m == 0 or n == 0:
        return
    if bias is not None:
        b = bias
        if b.shape[0] != n:
            raise ValueError("rescale: the bias has the wrong length")
        bp = &b[0]
    with nogil:
        q_rescale(&acc[0, 0], &out[0, 0], m, n, &scale[0], per_channel, bp, max(threads, 1))
