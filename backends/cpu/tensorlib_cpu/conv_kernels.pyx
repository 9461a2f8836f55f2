# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""CPU composite kernels for 2-D convolution: forward, input gradient (transposed
convolution) and weight gradient, replacing nn.functional's decomposition on the CPU.

Each is threaded im2col / col2im (OpenMP `prange`, GIL released) around one large BLAS GEMM
per group (tensorlib_cpu.gemm, on the same OpenMP threads), over a chunk of the batch at a
time so that the column buffer stays bounded:

    cols  (C*kh*kw, n*L)      im2col of a batch chunk, one row per (channel, kernel offset)
    fwd:  res (O, n*L)   = W (O, C*K) @ cols            -> out[n, o, l] (a parallel transpose)
    wgt:  gW (O, C*K)   += g^T (O, n*L) @ cols^T        (g^T: a parallel transpose of g)
    inp:  cols (C*K, n*L) = W^T (C*K, O) @ g^T          -> col2im, one task per (n, c) plane

Groups split the rows of cols (channels are group-major) and of W. The phases run one after
the other on one thread team. Kernels take tensors
(any strides; outputs contiguous from the framework) with the signature of the dispatch
table: ``kernel(out, x, w_or_g, stride, padding, dilation, groups)``.
"""
import os

import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange
from libc.stdlib cimport calloc, free, malloc

from tensorlib._C.dtypes import from_numpy_dtype
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import host_array

from tensorlib_cpu import blas_choice, fastreduce
from tensorlib_cpu.gemm import gemm

cnp.import_array()

ctypedef fused real:
    float
    double

# Threads for the im2col / col2im / transpose phases (None: fastreduce.threads_now()).
THREADS = None


def _threads():
    return fastreduce.threads_now() if THREADS is None else THREADS


# Column buffer budget per chunk (elements): bounds memory for big images / batches.
CHUNK_ELEMENTS = 1 << 23


cdef inline void _valid_columns(Py_ssize_t ow, Py_ssize_t W, int sw, Py_ssize_t shift,
                                Py_ssize_t* lo, Py_ssize_t* hi) noexcept nogil:
    """[lo, hi): the output columns q whose input column q*sw + shift lies in [0, W)."""
    lo[0] = 0 if shift >= 0 else (-shift + sw - 1) // sw
    hi[0] = 0 if W - shift <= 0 else min(ow, (W - shift + sw - 1) // sw)
    if hi[0] < lo[0]:
        hi[0] = lo[0]


cdef void _im2col_row(const real* x, real* dst, Py_ssize_t nb, Py_ssize_t C, Py_ssize_t H,
                      Py_ssize_t W, Py_ssize_t c, int i, int j, int sh, int sw, int ph, int pw,
                      int dh, int dw, Py_ssize_t oh, Py_ssize_t ow) noexcept nogil:
    """One row of cols (channel c, kernel offset (i, j)) for nb images from x."""
    cdef Py_ssize_t n, y, q, iy, lo, hi, shift = j * dw - pw
    cdef const real* src
    cdef real* out
    _valid_columns(ow, W, sw, shift, &lo, &hi)
    for n in range(nb):
        for y in range(oh):
            out = dst + (n * oh + y) * ow
            iy = y * sh - ph + i * dh
            if iy < 0 or iy >= H:
                for q in range(ow):
                    out[q] = 0
                continue
            src = x + ((n * C + c) * H + iy) * W + shift
            for q in range(lo):
                out[q] = 0
            if sw == 1:
                for q in range(lo, hi):
                    out[q] = src[q]
            else:
                for q in range(lo, hi):
                    out[q] = src[q * sw]
            for q in range(hi, ow):
                out[q] = 0


def _im2col(const real[:, :, :, ::1] x, real[:, ::1] cols, Py_ssize_t n0, Py_ssize_t nb,
            int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw,
            Py_ssize_t oh, Py_ssize_t ow, int nt):
    """cols[(c*kh + i)*kw + j, (n - n0)*oh*ow + y*ow + q] = x[n, c, y*sh - ph + i*dh,
    q*sw - pw + j*dw] (0 outside); one row of cols per task."""
    cdef Py_ssize_t C = x.shape[1], H = x.shape[2], W = x.shape[3]
    cdef Py_ssize_t rows = C * kh * kw, r
    if nb == 0 or rows == 0:
        return
    cdef const real* xp = &x[n0, 0, 0, 0]
    cdef real* cp = &cols[0, 0]
    cdef Py_ssize_t ld = cols.strides[0] // sizeof(real)
    with nogil:
        for r in prange(rows, schedule='static', num_threads=nt):
            _im2col_row(xp, cp + r * ld, nb, C, H, W, r // (kh * kw), (r // kw) % kh, r % kw,
                        sh, sw, ph, pw, dh, dw, oh, ow)


cdef void _col2im_plane(const real* cols, Py_ssize_t ld, real* gx, Py_ssize_t n,
                        Py_ssize_t c, Py_ssize_t H, Py_ssize_t W, int kh, int kw, int sh,
                        int sw, int ph, int pw, int dh, int dw, Py_ssize_t oh,
                        Py_ssize_t ow) noexcept nogil:
    """Plane (n, c) of gx: every column entry that im2col read from it, summed back."""
    cdef Py_ssize_t i, j, y, q, iy, lo, hi, shift, L = oh * ow
    cdef const real* src
    cdef real* dst
    for q in range(H * W):
        gx[q] = 0
    for i in range(kh):
        for j in range(kw):
            shift = j * dw - pw
            _valid_columns(ow, W, sw, shift, &lo, &hi)
            for y in range(oh):
                iy = y * sh - ph + i * dh
                if iy < 0 or iy >= H:
                    continue
                src = cols + ((c * kh + i) * kw + j) * ld + n * L + y * ow
                dst = gx + iy * W + shift
                if sw == 1:
                    for q in range(lo, hi):
                        dst[q] += src[q]
                else:
                    for q in range(lo, hi):
                        dst[q * sw] += src[q]


def _col2im(const real[:, ::1] cols, real[:, :, :, ::1] gx, Py_ssize_t n0, Py_ssize_t nb,
            int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw,
            Py_ssize_t oh, Py_ssize_t ow, int nt):
    """gx[n0:n0+nb] = the adjoint of _im2col (overlaps summed); one task per (n, c) plane."""
    cdef Py_ssize_t C = gx.shape[1], H = gx.shape[2], W = gx.shape[3], t
    if nb == 0 or C == 0:
        return
    cdef const real* cp = &cols[0, 0]
    cdef real* gp = &gx[n0, 0, 0, 0]
    cdef Py_ssize_t ld = cols.strides[0] // sizeof(real)
    with nogil:
        for t in prange(nb * C, schedule='static', num_threads=nt):
            _col2im_plane(cp, ld, gp + t * H * W, t // C, t % C, H, W, kh, kw, sh, sw, ph, pw,
                          dh, dw, oh, ow)


def _rows_to_batch(const real[:, ::1] res, real[:, :, ::1] out, Py_ssize_t n0, Py_ssize_t nb,
                   int nt):
    """out[n0 + n, o, :] = res[o, n*L:(n+1)*L]."""
    cdef Py_ssize_t O = out.shape[1], L = out.shape[2]
    cdef Py_ssize_t t, n, o, l
    with nogil:
        for t in prange(nb * O, schedule='dynamic', num_threads=nt):
            n = t // O
            o = t % O
            for l in range(L):
                out[n0 + n, o, l] = res[o, n * L + l]


def _batch_to_rows(const real[:, :, :, :] g, real[:, ::1] res, Py_ssize_t n0, Py_ssize_t nb,
                   int nt):
    """res[o, n*L + i*ow + j] = g[n0 + n, o, i, j], for g with any strides: a broadcast
    output gradient (stride 0, from y.sum()) is read as it is, with no dense copy first."""
    cdef Py_ssize_t O = g.shape[1], oh = g.shape[2], ow = g.shape[3], L = oh * ow
    cdef Py_ssize_t t, n, o, i, j
    with nogil:
        for t in prange(nb * O, schedule='dynamic', num_threads=nt):
            n = t // O
            o = t % O
            for i in range(oh):
                for j in range(ow):
                    res[o, n * L + i * ow + j] = g[n0 + n, o, i, j]


# ---- a direct weight gradient for thin convolutions -------------------------------------------
# With few rows per output (C * kh * kw, e.g. 9 for a 3x3 conv on one channel) the weight
# gradient's GEMM has a long reduction and almost no reuse, and im2col + the transposes move
# 10x the data it needs (343 vs 143 us for 64x1x28x28 -> 16 channels here). This works on
# "wide" rows instead (stride 1, one group, input zero-padded beforehand): the output-gradient
# plane laid out W columns wide (zeros in the last kw - 1 of each row) makes every kernel tap
# one long contiguous dot with the input. (The same trick for the forward pass measured no
# faster than im2col + GEMM, so the forward keeps GEMM.)
DIRECT_MAX_ROWS = 32


cdef void _direct_weight_grad(const real* x, const real* g, real* gw, Py_ssize_t N,
                              Py_ssize_t C, Py_ssize_t H, Py_ssize_t W, Py_ssize_t O, int kh,
                              int kw, int dh, int dw, Py_ssize_t oh, Py_ssize_t ow,
                              int* failed, int nt) noexcept nogil:
    """gw[o, c, i, j] = sum over (n, y, q) of g[n, o, y, q] * x[n, c] shifted; one (o, c) pair
    per task, g laid out wide (zeros in the thrown-away columns) so every tap is one long dot.
    Per-plane sums in the working type, their total over the batch in double. A failed
    allocation sets *failed."""
    cdef Py_ssize_t t, n, o, c, i, j, p, y, q, k, taps = kh * kw, span = (oh - 1) * W + ow
    cdef real part
    cdef real* wide
    cdef double* total
    cdef const real* src
    for t in prange(O * C, schedule="dynamic", num_threads=nt):
        o = t // C
        c = t % C
        wide = <real*>malloc(span * sizeof(real))
        total = <double*>calloc(taps, sizeof(double))
        if wide == NULL or total == NULL:
            failed[0] = 1
        else:
            for p in range(span):
                wide[p] = 0
            for n in range(N):
                for y in range(oh):
                    for q in range(ow):
                        wide[y * W + q] = g[((n * O + o) * oh + y) * ow + q]
                for i in range(kh):
                    for j in range(kw):
                        src = x + (n * C + c) * H * W + i * dh * W + j * dw
                        part = 0
                        for p in range(span):
                            part = part + wide[p] * src[p]
                        total[i * kw + j] += part
            for k in range(taps):
                gw[t * taps + k] = <real>total[k]
        free(wide)
        free(total)


def _direct(rows, stride, groups, dt):
    """Whether the weight gradient takes the direct kernel."""
    return rows <= DIRECT_MAX_ROWS and groups == 1 and tuple(stride) == (1, 1) and dt in (
        np.float32, np.float64)


def _padded(xa, padding):
    if not any(padding):
        return xa
    return np.pad(xa, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))


def _direct_wgrad(cnp.ndarray xa, cnp.ndarray ga, cnp.ndarray gw, padding, dilation, int nt):
    """gw (O, C, kh, kw) = the weight gradient from the zero-padded input and ga."""
    xa = _padded(xa, padding)
    cdef Py_ssize_t N = xa.shape[0], C = xa.shape[1], H = xa.shape[2], W = xa.shape[3]
    cdef Py_ssize_t O = ga.shape[1], oh = ga.shape[2], ow = ga.shape[3]
    cdef int kh = gw.shape[2], kw = gw.shape[3], dh = dilation[0], dw = dilation[1]
    cdef void* xp = cnp.PyArray_DATA(xa)
    cdef void* gp = cnp.PyArray_DATA(ga)
    cdef void* rp = cnp.PyArray_DATA(gw)
    cdef bint single = xa.dtype == np.float32
    cdef int failed = 0
    with nogil:
        if single:
            _direct_weight_grad[float](<float*>xp, <float*>gp, <float*>rp, N, C, H, W, O, kh,
                                       kw, dh, dw, oh, ow, &failed, nt)
        else:
            _direct_weight_grad[double](<double*>xp, <double*>gp, <double*>rp, N, C, H, W, O,
                                        kh, kw, dh, dw, oh, ow, &failed, nt)
    if failed:
        raise MemoryError("conv2d: out of memory for a weight-gradient work plane")


# ---- a direct forward for few input channels (direct_conv.h) -------------------------------
cdef extern from "direct_conv.h":
    int DC_OB
    int direct_conv_width
    void direct_conv_detect()
    void direct_conv_pack(const float* w, float* pack, Py_ssize_t O, Py_ssize_t G,
                          Py_ssize_t K) noexcept nogil
    int direct_conv2d(const float* x, Py_ssize_t N, Py_ssize_t C, Py_ssize_t H, Py_ssize_t W,
                      Py_ssize_t sxn, Py_ssize_t sxc, Py_ssize_t sxh, Py_ssize_t sxw,
                      const float* pack, Py_ssize_t O, Py_ssize_t G, int kh, int kw,
                      const float* bias, float* out, Py_ssize_t son, Py_ssize_t soc,
                      Py_ssize_t soy, Py_ssize_t oh, Py_ssize_t ow, int sh, int ph, int pw,
                      int dh, int dw, int nt) noexcept nogil

direct_conv_detect()
# Whether direct_conv.h's kernel runs on this CPU (AVX2 and FMA); conv2d_direct declines if
# not. DIRECT_CONV_WIDTH: its vectors' columns (16 with AVX-512, 8 with AVX2).
DIRECT_CONV_WIDTH = direct_conv_width
DIRECT_CONV_AVAILABLE = DIRECT_CONV_WIDTH > 0
# Input channels per group up to which the forward takes direct_conv.h rather than oneDNN.
# Measured (AMD EPYC, nn.Conv2d 3x3 forwards, direct / oneDNN time): 1 and 3 channels
# 0.6-0.75x on one thread and 0.4-0.95x on two, 4 channels 0.6-0.95x, 6 and 8 channels
# 0.85-0.9x on one thread but 1.0-1.4x on two. At least DC_OB output channels per group: a
# depthwise convolution would fill a quarter of each register tile (oneDNN's depthwise
# kernel took 0.6x its time).
DIRECT_FWD_MAX_CHANNELS = 4
# Multiply-adds per thread below which fewer threads run it: waking a second thread costs
# more than a small convolution's work (and, on a loaded machine, waits for a core).
DIRECT_MACS_PER_THREAD = 1 << 18


def conv2d_direct(out, x, w, b, stride, padding, dilation, int groups):
    """out (N, O, oh, ow) = conv2d(x, w) (+ b when not None) by direct_conv.h, for float32
    with at most DIRECT_FWD_MAX_CHANNELS input channels and at least DC_OB output channels
    per group, width stride 1 and an output whose rows are contiguous (NCHW); returns whether it ran (False: nothing
    written, the caller takes another kernel)."""
    if not DIRECT_CONV_AVAILABLE or stride[1] != 1:
        return False
    cdef cnp.ndarray oa = host_array(out)
    cdef cnp.ndarray xa = host_array(x)
    if (oa.dtype != np.float32 or xa.dtype != np.float32 or oa.size == 0 or xa.size == 0
            or oa.strides[3] != 4 or xa.shape[1] // groups > DIRECT_FWD_MAX_CHANNELS
            or oa.shape[1] // groups < DC_OB):
        return False
    cdef cnp.ndarray wa = np.ascontiguousarray(host_array(w))
    if wa.dtype != np.float32 or (b is not None and host_array(b).dtype != np.float32):
        return False
    cdef cnp.ndarray ba = None if b is None else np.ascontiguousarray(host_array(b))
    cdef Py_ssize_t N = xa.shape[0], C = xa.shape[1], H = xa.shape[2], W = xa.shape[3]
    cdef Py_ssize_t O = oa.shape[1], oh = oa.shape[2], ow = oa.shape[3]
    cdef int kh = wa.shape[2], kw = wa.shape[3]
    cdef Py_ssize_t K = (C // groups) * kh * kw
    cdef Py_ssize_t blocks = groups * ((O // groups + DC_OB - 1) // DC_OB)
    cdef cnp.ndarray pack = np.empty(blocks * K * DC_OB, np.float32)
    cdef const float* xp = <const float*>cnp.PyArray_DATA(xa)
    cdef const float* bp = NULL if ba is None else <const float*>cnp.PyArray_DATA(ba)
    cdef Py_ssize_t sxn = xa.strides[0] // 4, sxc = xa.strides[1] // 4
    cdef Py_ssize_t sxh = xa.strides[2] // 4, sxw = xa.strides[3] // 4
    cdef Py_ssize_t son = oa.strides[0] // 4, soc = oa.strides[1] // 4, soy = oa.strides[2] // 4
    cdef int sh = stride[0], ph = padding[0], pw = padding[1], dh = dilation[0]
    cdef int dw = dilation[1], done
    cdef int nt = min(_threads(), max(1, N * O * oh * ow * K // DIRECT_MACS_PER_THREAD))
    with nogil:
        direct_conv_pack(<const float*>cnp.PyArray_DATA(wa), <float*>cnp.PyArray_DATA(pack),
                         O, groups, K)
        done = direct_conv2d(xp, N, C, H, W, sxn, sxc, sxh, sxw,
                             <const float*>cnp.PyArray_DATA(pack), O, groups, kh, kw, bp,
                             <float*>cnp.PyArray_DATA(oa), son, soc, soy, oh, ow, sh, ph, pw,
                             dh, dw, nt)
    return bool(done)


# ---- Winograd F(2x2, 3x3) for 3x3 convolutions with many channels (winograd.h) --------------
cdef extern from "winograd.h":
    int WINOGRAD_SIMD
    int WINOGRAD_AVX512
    int winograd_conv2d(const float* x, Py_ssize_t N, Py_ssize_t C, Py_ssize_t H, Py_ssize_t W,
                        Py_ssize_t sxn, Py_ssize_t sxc, Py_ssize_t sxh, Py_ssize_t sxw,
                        const float* w, Py_ssize_t O, const float* bias, float* out,
                        Py_ssize_t son, Py_ssize_t soc, Py_ssize_t soy, Py_ssize_t oh,
                        Py_ssize_t ow, int ph, int pw, int nt) noexcept nogil

_WINOGRAD_SETTING = os.environ.get("TENSORLIB_WINOGRAD", "").strip().lower()
# Whether winograd.h was built with its kernel (AVX2 and FMA) and not switched off by
# TENSORLIB_WINOGRAD=0 (read at import); the winograd entry points decline otherwise.
WINOGRAD_AVAILABLE = bool(WINOGRAD_SIMD) and _WINOGRAD_SETTING not in ("0", "off", "false", "no")
# Whether onednn_conv tries Winograd before oneDNN for forwards (FORWARD) and for input
# gradients (GRAD); without oneDNN it always does (im2col is slower still), and
# TENSORLIB_WINOGRAD=1 forces both. On CPUs with full-width AVX-512 oneDNN runs its AVX-512
# kernels, so there Winograd goes first for forwards only when its products are 512-bit too
# (WINOGRAD_512_BIT), and never for input gradients. Measured (AMD EPYC Zen 5, nn.Conv2d
# 3x3 pad 1, oneDNN / Winograd time, 1 and 2 threads): with 256-bit products, forwards 0.80-0.81x (32->64 16x16), 0.88-0.93x (16->16 32x32), 0.80x (64->128
# 28x28); with 512-bit ones 1.17-1.28x, 0.95-1.09x, 1.22-1.34x, 1.20-1.30x (64->64 16x16),
# 0.98-1.07x (128 and 256 channels on 14x14). The input gradients on 512-bit Winograd
# against oneDNN's (which shares its reorder of the output gradient with the weight
# gradient's): 0.95x on 32->64, 0.92x on 16->16, 1.04-1.10x on 64->64, 0.95-1.10x on
# 64->128, 0.95x on 128->128, so oneDNN keeps them. On AVX2 CPUs (Zen 3) Winograd took
# 0.4-0.9x oneDNN's time (the size rule below); Zen 4 (512-bit instructions split in two)
# keeps it first for both, as measured there against torch, not against oneDNN.
WINOGRAD_512_BIT = bool(WINOGRAD_AVX512)       # an AVX-512 build: 512-bit products
_FORCE_WINOGRAD = _WINOGRAD_SETTING in ("1", "on", "true", "yes")
_FULL_WIDTH_AVX512 = blas_choice.full_width_avx512()
WINOGRAD_FORWARD_BEFORE_ONEDNN = WINOGRAD_AVAILABLE and (
    _FORCE_WINOGRAD or not _FULL_WIDTH_AVX512 or WINOGRAD_512_BIT)
WINOGRAD_GRAD_BEFORE_ONEDNN = WINOGRAD_AVAILABLE and (_FORCE_WINOGRAD or not _FULL_WIDTH_AVX512)
# Input and output channels from which a 3x3 stride-1 convolution takes winograd.h.
# Measured (AMD EPYC, one thread, 16x16 and 32x32 forwards, Winograd / oneDNN time): 32->64
# 0.4-0.8x, 16->16 0.7-0.9x, 16->32 and 32->16 0.7-1.0x, 8->8 and 8->16 0.86-1.06x; no upper
# limit: 64 to 512 channels on 28x28 and 32x32 0.55-0.9x.
WINOGRAD_MIN_CHANNELS = 16
# The fewest multiply-adds a direct convolution does per one of winograd.h's products
# (_winograd_gain) for which it takes the case. Measured (AMD EPYC, one thread, forward,
# Winograd / oneDNN time): gain 2.25 (16x16, 32x32 outputs) 0.4-0.8x, 1.97 (28x28) 0.8x,
# 1.7 (13x13, 24x24) 0.9-1.0x, 1.42 (the CNN's 16->32 on 11x11) 1.2-1.35x, 1.12 (8x8) 1.7x:
# the tile rows are padded to 8 tiles (a vector), so small images waste lanes.
WINOGRAD_MIN_GAIN = 1.8
cdef extern from "winograd.h":
    int WG_MAX_TCW


def _winograd_gain(Py_ssize_t oh, Py_ssize_t ow):
    """Direct multiply-adds per Winograd product for an oh x ow output: 9 oh ow against 16
    per 2x2 tile computed, partial tiles and the padding of each tile row to 8 included (the
    column chunks of winograd_conv2d)."""
    th, tw = (oh + 1) // 2, (ow + 1) // 2
    chunks = (tw + WG_MAX_TCW - 1) // WG_MAX_TCW
    tcwp = ((tw + chunks - 1) // chunks + 7) // 8 * 8
    return 9.0 * oh * ow / (16.0 * th * chunks * tcwp)


def _winograd_shape_ok(xa, oa, padding):
    """Whether winograd.h takes oa = conv2d(xa, a 3x3 weight, padding): float32, non-empty,
    the output's rows contiguous and its size the 3x3 stride-1 one, channels and size
    within the measured limits."""
    return (oa.dtype == np.float32 and xa.dtype == np.float32 and oa.size != 0
            and xa.size != 0 and oa.strides[3] == 4 and min(padding) >= 0
            and xa.shape[1] >= WINOGRAD_MIN_CHANNELS and oa.shape[1] >= WINOGRAD_MIN_CHANNELS
            and oa.shape[0] == xa.shape[0] and oa.shape[2] == xa.shape[2] + 2 * padding[0] - 2
            and oa.shape[3] == xa.shape[3] + 2 * padding[1] - 2
            and _winograd_gain(oa.shape[2], oa.shape[3]) >= WINOGRAD_MIN_GAIN)


def _winograd_run(cnp.ndarray oa, cnp.ndarray xa, cnp.ndarray wa, b, padding):
    """oa = conv2d(xa, wa) (+ b) for a contiguous float32 (O, C, 3, 3) wa; whether it ran."""
    cdef cnp.ndarray ba = None if b is None else np.ascontiguousarray(host_array(b))
    if ba is not None and ba.dtype != np.float32:
        return False
    cdef Py_ssize_t N = xa.shape[0], C = xa.shape[1], H = xa.shape[2], W = xa.shape[3]
    cdef Py_ssize_t O = oa.shape[1], oh = oa.shape[2], ow = oa.shape[3]
    cdef const float* bp = NULL if ba is None else <const float*>cnp.PyArray_DATA(ba)
    cdef Py_ssize_t sxn = xa.strides[0] // 4, sxc = xa.strides[1] // 4
    cdef Py_ssize_t sxh = xa.strides[2] // 4, sxw = xa.strides[3] // 4
    cdef Py_ssize_t son = oa.strides[0] // 4, soc = oa.strides[1] // 4, soy = oa.strides[2] // 4
    cdef int ph = padding[0], pw = padding[1], done
    cdef int nt = min(_threads(), max(1, N * O * oh * ow * C * 4 // DIRECT_MACS_PER_THREAD))
    with nogil:
        done = winograd_conv2d(<const float*>cnp.PyArray_DATA(xa), N, C, H, W, sxn, sxc, sxh,
                               sxw, <const float*>cnp.PyArray_DATA(wa), O, bp,
                               <float*>cnp.PyArray_DATA(oa), son, soc, soy, oh, ow, ph, pw, nt)
    return bool(done)


def conv2d_winograd(out, x, w, b, stride, padding, dilation, int groups):
    """out (N, O, oh, ow) = conv2d(x, w) (+ b when not None) by winograd.h, for float32 3x3
    weights, stride 1, dilation 1, one group, at least WINOGRAD_MIN_CHANNELS input and output
    channels and an output whose rows are contiguous; returns whether it ran (False: nothing
    written, the caller takes another kernel)."""
    if (not WINOGRAD_AVAILABLE or groups != 1 or tuple(stride) != (1, 1)
            or tuple(dilation) != (1, 1) or tuple(w._sizes[2:]) != (3, 3)):
        return False
    oa, xa = host_array(out), host_array(x)
    if not _winograd_shape_ok(xa, oa, padding) or tuple(w._sizes[:2]) != (oa.shape[1],
                                                                         xa.shape[1]):
        return False
    wa = np.ascontiguousarray(host_array(w))
    return wa.dtype == np.float32 and _winograd_run(oa, xa, wa, b, padding)


def conv_transpose2d_winograd(out, g, w, stride, padding, dilation, int groups):
    """out (N, C, H, W) = conv2d's input gradient for output gradient g by winograd.h: for a
    stride-1 3x3 convolution with padding p it is the convolution of g with the weights
    turned 180 degrees, input and output channels swapped, padding 2 - p. The cases of
    conv2d_winograd with p <= 2; returns whether it ran."""
    if (not WINOGRAD_AVAILABLE or groups != 1 or tuple(stride) != (1, 1)
            or tuple(dilation) != (1, 1) or tuple(w._sizes[2:]) != (3, 3)
            or max(padding) > 2):
        return False
    oa, ga = host_array(out), host_array(g)
    turned = (2 - padding[0], 2 - padding[1])
    if not _winograd_shape_ok(ga, oa, turned) or tuple(w._sizes[:2]) != (ga.shape[1],
                                                                        oa.shape[1]):
        return False
    wa = host_array(w)
    if wa.dtype != np.float32:
        return False
    return _winograd_run(oa, ga, np.ascontiguousarray(wa.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1]),
                         None, turned)


# ---- the kernels ----------------------------------------------------------------------------
def _work_dtype(dt):
    return dt if dt in (np.float32, np.float64) else np.float32


def _prep(a, dtype):
    return np.ascontiguousarray(a, dtype=dtype)


def _product(a, b, out, beta=0.0):
    """out = a @ b + beta * out."""
    if not gemm(a, b, out, 1.0, beta):
        if beta:
            out += np.matmul(a, b)
        else:
            np.matmul(a, b, out=out)


def _scratch(shape, dt, device):
    """(tensor, its numpy array): an uninitialised `shape` of dtype `dt` from the backend's
    memory pool. Keep the tensor while the array is used: the pool takes the buffer back
    when the tensor dies. The im2col/col2im buffers are MiBs: the pool hands the same
    pages back each call, where numpy's fresh buffers could come back from the OS."""
    t = empty(tuple(shape), from_numpy_dtype(dt), device)
    return t, host_array(t)


def _chunk(n, rows, big_l):
    per = max(1, CHUNK_ELEMENTS // max(1, rows * big_l))
    return min(n, per)


def _geometry(xshape, kernel, stride, padding, dilation):
    oh = (xshape[2] + 2 * padding[0] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    ow = (xshape[3] + 2 * padding[1] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    return oh, ow


def conv2d(out, x, w, stride, padding, dilation, groups):
    """out (N, O, oh, ow) = conv2d(x (N, C, H, W), w (O, C/G, kh, kw))."""
    o_arr = host_array(out)
    dt = _work_dtype(o_arr.dtype)
    xa = _prep(host_array(x), dt)
    wa = _prep(host_array(w), dt)
    n, c = xa.shape[:2]
    o = wa.shape[0]
    kh, kw = wa.shape[2:]
    oh, ow = _geometry(xa.shape, (kh, kw), stride, padding, dilation)
    big_l = oh * ow
    rows = c * kh * kw
    if n == 0 or o == 0:
        return
    if rows == 0:
        o_arr[...] = 0
        return
    nt = _threads()
    res_all = o_arr if (o_arr.dtype == dt and o_arr.flags.c_contiguous) else np.empty(
        o_arr.shape, dt)
    res3 = res_all.reshape(n, o, big_l)
    w2 = wa.reshape(o, rows // groups)
    og, rg = o // groups, rows // groups
    nb_max = _chunk(n, rows, big_l)
    cols_t, cols = _scratch((rows, nb_max * big_l), dt, out._device)
    res_t, res = _scratch((o, nb_max * big_l), dt, out._device)
    for n0 in range(0, n, nb_max):
        nb = min(nb_max, n - n0)
        if nb < nb_max:     # the last chunk
            cols_t, cols = _scratch((rows, nb * big_l), dt, out._device)
            res_t, res = _scratch((o, nb * big_l), dt, out._device)
        _im2col(xa, cols, n0, nb, kh, kw, stride[0], stride[1], padding[0], padding[1],
                dilation[0], dilation[1], oh, ow, nt)
        for g in range(groups):
            _product(w2[g * og:(g + 1) * og], cols[g * rg:(g + 1) * rg],
                     res[g * og:(g + 1) * og])
        _rows_to_batch(res, res3, n0, nb, nt)
    if res_all is not o_arr:
        o_arr[...] = res_all


def conv2d_weight_grad(out, x, g, stride, padding, dilation, groups):
    """out (O, C/G, kh, kw) = the gradient of conv2d's weight for output gradient g."""
    o_arr = host_array(out)
    dt = _work_dtype(o_arr.dtype)
    xa = _prep(host_array(x), dt)
    ga = _prep(host_array(g), dt)
    n, c = xa.shape[:2]
    o = ga.shape[1]
    kh, kw = o_arr.shape[2:]
    oh, ow = ga.shape[2:]
    big_l = oh * ow
    rows = c * kh * kw
    og, rg = o // groups, rows // groups
    acc = np.zeros((o, rg), dt)
    if n == 0 or big_l == 0 or rows == 0:
        o_arr[...] = 0
        return
    nt = _threads()
    if _direct(rows, stride, groups, dt):
        _direct_wgrad(xa, ga, acc.reshape(o_arr.shape), padding, dilation, nt)
        o_arr[...] = acc.reshape(o_arr.shape)
        return
    nb_max = _chunk(n, rows + o, big_l)
    for n0 in range(0, n, nb_max):
        nb = min(nb_max, n - n0)
        cols_t, cols = _scratch((rows, nb * big_l), dt, out._device)
        gt_t, gt = _scratch((o, nb * big_l), dt, out._device)
        _im2col(xa, cols, n0, nb, kh, kw, stride[0], stride[1], padding[0], padding[1],
                dilation[0], dilation[1], oh, ow, nt)
        _batch_to_rows(ga, gt, n0, nb, nt)
        for gi in range(groups):
            a = gt[gi * og:(gi + 1) * og]
            b = cols[gi * rg:(gi + 1) * rg].T
            _product(a, b, acc[gi * og:(gi + 1) * og], 1.0 if n0 else 0.0)
    o_arr[...] = acc.reshape(o_arr.shape)


def conv_transpose2d(out, g, w, stride, padding, dilation, groups):
    """out (N, C, H, W) = the adjoint of conv2d in its input: col2im(W^T @ g)."""
    o_arr = host_array(out)
    dt = _work_dtype(o_arr.dtype)
    ga = host_array(g).astype(dt, copy=False)     # any strides (_batch_to_rows reads them)
    wa = _prep(host_array(w), dt)
    n, o = ga.shape[:2]
    oh, ow = ga.shape[2:]
    cg, kh, kw = wa.shape[1:]
    c = cg * groups
    big_l = oh * ow
    rows = c * kh * kw
    og, rg = o // groups, rows // groups
    res_all = o_arr if (o_arr.dtype == dt and o_arr.flags.c_contiguous) else np.empty(
        o_arr.shape, dt)
    if n == 0 or rows == 0:
        return
    if big_l == 0 or o == 0:
        res_all[...] = 0
    else:
        nt = _threads()
        w2 = wa.reshape(o, rg)
        # each group's W^T as a C-order copy (rows x o/groups, small): read transposed,
        # oneDNN's sgemm took fresh pages for every call in some processes (3->32 input
        # gradient, AMD EPYC Zen 4: 419 page faults and 3.0-4.5 ms a call against 0 and
        # 1.1 ms with the copy)
        wt = [np.ascontiguousarray(w2[gi * og:(gi + 1) * og].T) for gi in range(groups)]
        nb_max = _chunk(n, rows + o, big_l)
        for n0 in range(0, n, nb_max):
            nb = min(nb_max, n - n0)
            gt_t, gt = _scratch((o, nb * big_l), dt, out._device)
            cols_t, cols = _scratch((rows, nb * big_l), dt, out._device)
            _batch_to_rows(ga, gt, n0, nb, nt)
            for gi in range(groups):
                _product(wt[gi], gt[gi * og:(gi + 1) * og], cols[gi * rg:(gi + 1) * rg])
            _col2im(cols, res_all, n0, nb, kh, kw, stride[0], stride[1], padding[0],
                    padding[1], dilation[0], dilation[1], oh, ow, nt)
    if res_all is not o_arr:
        o_arr[...] = res_all


KERNELS = {"conv2d": conv2d, "conv2d_weight_grad": conv2d_weight_grad,
           "conv_transpose2d": conv_transpose2d}
