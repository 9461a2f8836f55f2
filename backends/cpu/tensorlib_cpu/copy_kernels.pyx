# cython: boundscheck=False, wraparound=False, cdivision=True
"""cat and stack as one kernel each, and the `copy` primitive: C loops over any strides, rows
by memcpy, large copies split over the backend's OpenMP threads. As a copy primitive per
input, a cat of four small pieces paid four numpy views of the slices and four np.copyto
calls, several times its memory traffic; a small copy's numpy views and np.copyto cost ~2 us
before the first byte moves. numpy's copies run on one thread, a transposing one (x.t()
.contiguous()) element by element across cache lines (5x PyTorch's time on 1M floats), and
its float32 -> float16 cast in software (70x): here a transpose copies 32x32 tiles and the
float conversions use the F16C/AVX-512 instructions, rounding to nearest even as PyTorch."""
import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

from cython.parallel cimport prange

from tensorlib._C.dtypes cimport FLOAT16, FLOAT32, FLOAT64
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl cimport TensorImpl, host_array, is_contiguous, wrap

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #include <immintrin.h>
    #ifdef _OPENMP
    #include <omp.h>
    #endif
    typedef struct { uint64_t lo, hi; } cp_pair64;
    #define CP_TILE 8
    static inline Py_ssize_t cp_min(Py_ssize_t a, Py_ssize_t b) { return a < b ? a : b; }

    /* [lo, hi) of n items for thread t of nt, the bounds multiples of `align` */
    #define CP_SHARE(n, t, nt, align, lo, hi)                                            \
        Py_ssize_t per_ = ((n) / (nt) + (align) - 1) / (align) * (align);                 \
        Py_ssize_t lo = cp_min((Py_ssize_t)(t) * per_, (n)), hi = cp_min(lo + per_, (n));

    static void cp_memcpy(char* d, const char* s, Py_ssize_t bytes, int nt) {
        if (nt <= 1) {                  /* no OpenMP region: its setup costs a small copy's time */
            memcpy(d, s, bytes);
            return;
        }
        #pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int t = 0, m = 1;
            #ifdef _OPENMP
            t = omp_get_thread_num(); m = omp_get_num_threads();
            #endif
            CP_SHARE(bytes, t, m, 4096, lo, hi)
            if (hi > lo) memcpy(d + lo, s + lo, hi - lo);
        }
    }

    /* One CP_TILE x CP_TILE tile, s stepping one element along i and d one along j (si, dj
       in elements): read along i into a buffer, written out along j. Full tiles have fixed
       bounds the compiler unrolls; few strided lines (often a power of two apart: one cache
       set) are live at a time. */
    #define CP_TILE_LOOP(T)                                                               \
        {                                                                                 \
            const T* st = (const T*)s; T* dt = (T*)dd;                                    \
            Py_ssize_t sj = s_j / (Py_ssize_t)sizeof(T), di = d_i / (Py_ssize_t)sizeof(T); \
            if (mi == CP_TILE && mj == CP_TILE) {                                         \
                T buf[CP_TILE][CP_TILE];                                                  \
                for (int j = 0; j < CP_TILE; j++)                                         \
                    for (int i = 0; i < CP_TILE; i++) buf[i][j] = st[i + j * sj];         \
                for (int i = 0; i < CP_TILE; i++)                                         \
                    for (int j = 0; j < CP_TILE; j++) dt[i * di + j] = buf[i][j];         \
            } else {                                                                      \
                for (Py_ssize_t i = 0; i < mi; i++)                                       \
                    for (Py_ssize_t j = 0; j < mj; j++) dt[i * di + j] = st[i + j * sj];  \
            }                                                                             \
        }

    #if defined(__AVX__)
    /* the 4-byte full tile in registers: 8 rows of 8 loaded, transposed by unpack and
       shuffle, stored as 8 rows */
    static inline void cp_tile8x8_32(const float* s, Py_ssize_t sj, float* d, Py_ssize_t di) {
        __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + sj);
        __m256 r2 = _mm256_loadu_ps(s + 2 * sj), r3 = _mm256_loadu_ps(s + 3 * sj);
        __m256 r4 = _mm256_loadu_ps(s + 4 * sj), r5 = _mm256_loadu_ps(s + 5 * sj);
        __m256 r6 = _mm256_loadu_ps(s + 6 * sj), r7 = _mm256_loadu_ps(s + 7 * sj);
        __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
        __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
        __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
        __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
        __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
        __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
        _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
        _mm256_storeu_ps(d + di, _mm256_permute2f128_ps(u1, u5, 0x20));
        _mm256_storeu_ps(d + 2 * di, _mm256_permute2f128_ps(u2, u6, 0x20));
        _mm256_storeu_ps(d + 3 * di, _mm256_permute2f128_ps(u3, u7, 0x20));
        _mm256_storeu_ps(d + 4 * di, _mm256_permute2f128_ps(u0, u4, 0x31));
        _mm256_storeu_ps(d + 5 * di, _mm256_permute2f128_ps(u1, u5, 0x31));
        _mm256_storeu_ps(d + 6 * di, _mm256_permute2f128_ps(u2, u6, 0x31));
        _mm256_storeu_ps(d + 7 * di, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    #define CP_TILE_32                                                                    \
        if (mi == CP_TILE && mj == CP_TILE)                                               \
            cp_tile8x8_32((const float*)s, s_j / 4, (float*)dd, d_i / 4);                 \
        else CP_TILE_LOOP(uint32_t)
    #else
    #define CP_TILE_32 CP_TILE_LOOP(uint32_t)
    #endif

    /* dst = src over (batch..., ni, nj), where src steps by one element along i and dst by
       one along j: tiles shared out over the threads. Strides in bytes (s_i, d_j: the
       element size); the batch dims' strides in bss/bds. */
    static void cp_transpose(int nb, const Py_ssize_t* bshape, const Py_ssize_t* bss,
                             const Py_ssize_t* bds, const char* src, Py_ssize_t s_j,
                             char* dst, Py_ssize_t d_i, Py_ssize_t ni, Py_ssize_t nj,
                             int size, int nt) {
        Py_ssize_t ti = (ni + CP_TILE - 1) / CP_TILE, tj = (nj + CP_TILE - 1) / CP_TILE;
        Py_ssize_t batch = 1, w;
        for (int d = 0; d < nb; d++) batch *= bshape[d];
        #pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
        for (w = 0; w < batch * ti * tj; w++) {
            Py_ssize_t b = w / (ti * tj), a = w % (ti * tj) / tj, c = w % tj, so = 0, dof = 0;
            for (int d = nb - 1; d >= 0; d--) {
                Py_ssize_t p = b % bshape[d];
                b /= bshape[d];
                so += p * bss[d];
                dof += p * bds[d];
            }
            const char* s = src + so + (a * CP_TILE) * size + c * CP_TILE * s_j;
            char* dd = dst + dof + a * CP_TILE * d_i + (c * CP_TILE) * size;
            Py_ssize_t mi = cp_min(CP_TILE, ni - a * CP_TILE);
            Py_ssize_t mj = cp_min(CP_TILE, nj - c * CP_TILE);
            switch (size) {
                case 1: CP_TILE_LOOP(uint8_t) break;
                case 2: CP_TILE_LOOP(uint16_t) break;
                case 4: CP_TILE_32 break;
                case 8: CP_TILE_LOOP(uint64_t) break;
                default: CP_TILE_LOOP(cp_pair64) break;
            }
        }
    }

    /* Float conversions of contiguous arrays, split over the threads. float <-> half by the
       F16C / AVX-512 instructions (round to nearest even; NaN stays NaN with its sign, inf
       inf), as PyTorch's vectorized conversion. */
    #if defined(__F16C__)
    #define CP_HAVE_F16C 1
    static inline void cp_f32_f16(const float* s, uint16_t* d, Py_ssize_t n) {
        Py_ssize_t i = 0;
        #if defined(__AVX512F__)
        for (; i + 16 <= n; i += 16)
            _mm256_storeu_si256((__m256i*)(d + i), _mm512_cvtps_ph(_mm512_loadu_ps(s + i),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        #endif
        for (; i + 8 <= n; i += 8)
            _mm_storeu_si128((__m128i*)(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(s + i),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        for (; i < n; i++) d[i] = _cvtss_sh(s[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    static inline void cp_f16_f32(const uint16_t* s, float* d, Py_ssize_t n) {
        Py_ssize_t i = 0;
        #if defined(__AVX512F__)
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(d + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(s + i))));
        #endif
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(s + i))));
        for (; i < n; i++) d[i] = _cvtsh_ss(s[i]);
    }
    static inline void cp_f16_f64(const uint16_t* s, double* d, Py_ssize_t n) {
        float buf[256];
        for (Py_ssize_t i = 0; i < n; i += 256) {
            Py_ssize_t m = cp_min(256, n - i);
            cp_f16_f32(s + i, buf, m);
            for (Py_ssize_t j = 0; j < m; j++) d[i + j] = buf[j];
        }
    }
    /* as PyTorch: rounded to float first, then to half */
    static inline void cp_f64_f16(const double* s, uint16_t* d, Py_ssize_t n) {
        float buf[256];
        for (Py_ssize_t i = 0; i < n; i += 256) {
            Py_ssize_t m = cp_min(256, n - i);
            for (Py_ssize_t j = 0; j < m; j++) buf[j] = (float)s[i + j];
            cp_f32_f16(buf, d + i, m);
        }
    }
    #else
    #define CP_HAVE_F16C 0
    static inline void cp_f64_f16(const double* s, uint16_t* d, Py_ssize_t n) {}
    static inline void cp_f32_f16(const float* s, uint16_t* d, Py_ssize_t n) {}
    static inline void cp_f16_f32(const uint16_t* s, float* d, Py_ssize_t n) {}
    static inline void cp_f16_f64(const uint16_t* s, double* d, Py_ssize_t n) {}
    #endif
    static inline void cp_f32_f64(const float* s, double* d, Py_ssize_t n) {
        for (Py_ssize_t i = 0; i < n; i++) d[i] = s[i];
    }
    static inline void cp_f64_f32(const double* s, float* d, Py_ssize_t n) {
        for (Py_ssize_t i = 0; i < n; i++) d[i] = (float)s[i];
    }

    enum { CP_F32_F16, CP_F16_F32, CP_F16_F64, CP_F64_F16, CP_F32_F64, CP_F64_F32 };
    static const int cp_src_size[] = {4, 2, 2, 8, 4, 8};
    static const int cp_dst_size[] = {2, 4, 8, 2, 8, 4};

    static inline void cp_convert_run(int kind, const char* s, char* d, Py_ssize_t n) {
        switch (kind) {
            case CP_F32_F16: cp_f32_f16((const float*)s, (uint16_t*)d, n); break;
            case CP_F16_F32: cp_f16_f32((const uint16_t*)s, (float*)d, n); break;
            case CP_F16_F64: cp_f16_f64((const uint16_t*)s, (double*)d, n); break;
            case CP_F64_F16: cp_f64_f16((const double*)s, (uint16_t*)d, n); break;
            case CP_F32_F64: cp_f32_f64((const float*)s, (double*)d, n); break;
            case CP_F64_F32: cp_f64_f32((const double*)s, (float*)d, n); break;
        }
    }

    /* n items into contiguous d, the source's ss bytes apart (0: one value broadcast):
       gathered 256 at a time into a buffer the vector conversion reads */
    static void cp_convert_row(int kind, const char* s, Py_ssize_t ss, char* d, Py_ssize_t n) {
        int sz = cp_src_size[kind], dz = cp_dst_size[kind];
        if (ss == sz) {
            cp_convert_run(kind, s, d, n);
            return;
        }
        uint64_t buf[256];
        for (Py_ssize_t i = 0; i < n; i += 256) {
            Py_ssize_t m = cp_min(256, n - i), j;
            const char* src = s + i * ss;
            if (sz == 2) for (j = 0; j < m; j++) ((uint16_t*)buf)[j] = *(const uint16_t*)(src + j * ss);
            else if (sz == 4) for (j = 0; j < m; j++) ((uint32_t*)buf)[j] = *(const uint32_t*)(src + j * ss);
            else for (j = 0; j < m; j++) buf[j] = *(const uint64_t*)(src + j * ss);
            cp_convert_run(kind, (const char*)buf, d + i * dz, m);
        }
    }

    /* d (contiguous) = s converted over coalesced dims (strides ss in bytes), by rows of the
       last dim shared out over the threads; one row is split in pieces. */
    static void cp_convert(int kind, int nd, const Py_ssize_t* shape, const Py_ssize_t* ss,
                           const char* s, char* d, int nt) {
        Py_ssize_t inner = shape[nd - 1], outer = 1, r;
        int dz = cp_dst_size[kind];
        for (int k = 0; k < nd - 1; k++) outer *= shape[k];
        if (outer == 1) {
            #pragma omp parallel num_threads(nt) if (nt > 1)
            {
                int t = 0, m = 1;
                #ifdef _OPENMP
                t = omp_get_thread_num(); m = omp_get_num_threads();
                #endif
                CP_SHARE(inner, t, m, 64, lo, hi)
                if (hi > lo) cp_convert_row(kind, s + lo * ss[nd - 1], ss[nd - 1], d + lo * dz, hi - lo);
            }
            return;
        }
        #pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
        for (r = 0; r < outer; r++) {
            Py_ssize_t rest = r, off = 0;
            for (int k = nd - 2; k >= 0; k--) {
                off += rest % shape[k] * ss[k];
                rest /= shape[k];
            }
            cp_convert_row(kind, s + off, ss[nd - 1], d + r * inner * dz, inner);
        }
    }
    """
    int CP_HAVE_F16C
    enum:
        CP_F32_F16
        CP_F16_F32
        CP_F16_F64
        CP_F64_F16
        CP_F32_F64
        CP_F64_F32
    void cp_memcpy(char* d, const char* s, Py_ssize_t nbytes, int nt) nogil
    void cp_transpose(int nb, const Py_ssize_t* bshape, const Py_ssize_t* bss,
                      const Py_ssize_t* bds, const char* src, Py_ssize_t s_j, char* dst,
                      Py_ssize_t d_i, Py_ssize_t ni, Py_ssize_t nj, int size, int nt) nogil
    void cp_convert(int kind, int nd, const Py_ssize_t* shape, const Py_ssize_t* ss,
                    const char* s, char* d, int nt) nogil

DEF MAXD = 64

ctypedef struct pair64:
    uint64_t lo, hi

ctypedef fused item:
    uint8_t
    uint16_t
    uint32_t
    uint64_t
    pair64


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


cdef void _rows(const item* s, item* d, Py_ssize_t n, Py_ssize_t ss, Py_ssize_t ds) noexcept nogil:
    """One row, strides in items. A broadcast source (a gradient of sum, expanded) and a
    contiguous destination get loops of their own: with both steps unknown the compiler
    leaves the loop scalar (0.55 ms for 1M floats against 0.05 for the fill)."""
    cdef Py_ssize_t j
    cdef item v = s[0]
    if ss == 0 and ds == 1:
        for j in range(n):
            d[j] = v
    elif ds == 1:
        for j in range(n):
            d[j] = s[j * ss]
    else:
        for j in range(n):
            d[j * ds] = s[j * ss]


cdef void _row(char* src, char* dst, Py_ssize_t n, Py_ssize_t si, Py_ssize_t di,
               int size) noexcept nogil:
    """dst = src over one row of n items; strides in bytes."""
    if si == size and di == size:
        memcpy(dst, src, n * size)
    elif size == 1:
        _rows[uint8_t](<uint8_t*>src, <uint8_t*>dst, n, si, di)
    elif size == 2:
        _rows[uint16_t](<uint16_t*>src, <uint16_t*>dst, n, si // 2, di // 2)
    elif size == 4:
        _rows[uint32_t](<uint32_t*>src, <uint32_t*>dst, n, si // 4, di // 4)
    elif size == 8:
        _rows[uint64_t](<uint64_t*>src, <uint64_t*>dst, n, si // 8, di // 8)
    else:
        _rows[pair64](<pair64*>src, <pair64*>dst, n, si // 16, di // 16)


cdef void _copy_range(int nd, const Py_ssize_t* shape, char* src, const Py_ssize_t* ss,
                      char* dst, const Py_ssize_t* ds, int size, Py_ssize_t first,
                      Py_ssize_t stop) noexcept nogil:
    """dst = src elementwise over `shape` for the outer rows [first, stop) (all dims but the
    last, row-major); strides in bytes."""
    cdef Py_ssize_t pos[MAXD]
    cdef Py_ssize_t o, rest = first, so = 0, do = 0
    cdef int last = nd - 1, d
    cdef Py_ssize_t inner = shape[last], si = ss[last], di = ds[last]
    for d in range(last - 1, -1, -1):
        pos[d] = rest % shape[d]
        rest //= shape[d]
        so += pos[d] * ss[d]
        do += pos[d] * ds[d]
    for o in range(first, stop):
        _row(src + so, dst + do, inner, si, di, size)
        d = last - 1
        while d >= 0:
            pos[d] += 1
            so += ss[d]
            do += ds[d]
            if pos[d] < shape[d]:
                break
            so -= ss[d] * shape[d]
            do -= ds[d] * shape[d]
            pos[d] = 0
            d -= 1


cdef int _coalesce(int nd, Py_ssize_t* shape, Py_ssize_t* ss, Py_ssize_t* ds) noexcept nogil:
    """Merge dims that both sides step through as one (row-major runs) and drop size-1 dims,
    in place; returns the new number of dims (at least 1). A cat along dim 0 of contiguous
    pieces becomes one memcpy per piece instead of one per row."""
    cdef int d, k = 0
    for d in range(nd):
        if shape[d] == 1 and nd > 1:
            continue
        if k > 0 and ss[k - 1] == ss[d] * shape[d] and ds[k - 1] == ds[d] * shape[d]:
            shape[k - 1] *= shape[d]
            ss[k - 1], ds[k - 1] = ss[d], ds[d]
            continue
        shape[k], ss[k], ds[k] = shape[d], ss[d], ds[d]
        k += 1
    if k == 0:
        shape[0], k = 1, 1
    return k


cdef void _memory_order(int nd, Py_ssize_t* shape, Py_ssize_t* ss, Py_ssize_t* ds) noexcept nogil:
    """Put the dims in decreasing destination stride when the source's strides fall in the
    same order (size-1 dims aside), in place: a copy between two alike transposed layouts
    then runs along memory and coalesces (1024 x 1024 float32: 14 ms -> 0.2 ms)."""
    cdef int i, j
    cdef Py_ssize_t t
    for i in range(1, nd):
        j = i
        while j > 0 and ds[j - 1] < ds[j]:
            t = shape[j]; shape[j] = shape[j - 1]; shape[j - 1] = t
            t = ss[j]; ss[j] = ss[j - 1]; ss[j - 1] = t
            t = ds[j]; ds[j] = ds[j - 1]; ds[j - 1] = t
            j -= 1


cdef bint _alike_order(int nd, Py_ssize_t* shape, Py_ssize_t* ss, Py_ssize_t* ds) noexcept nogil:
    """True when sorting the dims by destination stride sorts the source's too, and it
    changes something (the dims are not already in that order)."""
    cdef int a, b
    cdef bint unsorted = False
    for a in range(nd):
        for b in range(a + 1, nd):
            if shape[a] == 1 or shape[b] == 1:
                continue
            if (ds[a] < ds[b]) != (ss[a] < ss[b]) or (ds[a] == ds[b]) != (ss[a] == ss[b]):
                return False
            if ds[a] < ds[b]:
                unsorted = True
    return unsorted


cdef void _place(TensorImpl out, TensorImpl t, int dim, Py_ssize_t start, bint stacked) except *:
    """Copy t into out at offset `start` along dim. t has out's sizes but along dim (cat), or
    out's sizes without dim (stack: t counts as size 1 there). Another dtype than out's, or
    memory numpy does not own, is converted by numpy."""
    cdef int nd = len(out._sizes), d, k, size = out._dtype.itemsize
    cdef Py_ssize_t shape[MAXD]
    cdef Py_ssize_t ss[MAXD]
    cdef Py_ssize_t ds[MAXD]
    cdef Py_ssize_t count = 1
    if len(t._sizes) != nd - stacked:
        raise ValueError(f"{'stack' if stacked else 'cat'}: an input of {len(t._sizes)} dims "
                         f"for a {nd}-dim output")
    for d in range(nd):
        ds[d] = <Py_ssize_t>out._strides[d] * size
        if stacked and d == dim:
            shape[d], ss[d] = 1, 0
            continue
        k = d - 1 if stacked and d > dim else d
        shape[d] = t._sizes[k]
        ss[d] = <Py_ssize_t>t._strides[k] * size
        count *= shape[d]
    if not count:
        return
    cdef char* dst = _data(out) + start * ds[dim]
    cdef char* src
    cdef int nt = _threads(count)
    if t._dtype is out._dtype and type(t._storage.handle) is np.ndarray:
        src = _data(t)
        if count < PARALLEL_MIN:        # the GIL's release and retake cost more than this copy
            _copy_strided(_coalesce(nd, shape, ss, ds), shape, src, ss, dst, ds, size, nt)
            return
        with nogil:
            _copy_strided(_coalesce(nd, shape, ss, ds), shape, src, ss, dst, ds, size, nt)
        return
    sizes = tuple([shape[d] for d in range(nd)])
    part = wrap(out._storage, sizes, out._strides,
                out._offset + start * <Py_ssize_t>out._strides[dim], out._dtype)
    np.copyto(host_array(part), host_array(t).reshape(sizes), casting="unsafe")


def cat(TensorImpl out, list tensors, int dim):
    """out = tensors joined along dim. Each has out's shape but along dim, where their sizes
    add up to out's; a legacy empty (0,) tensor is skipped."""
    cdef int nd = len(out._sizes)
    if nd == 0 or nd > MAXD:
        raise ValueError(f"cat: a {nd}-dim output")
    cdef Py_ssize_t start = 0
    cdef TensorImpl t
    for obj in tensors:
        t = <TensorImpl>obj
        if t._sizes == (0,):
            continue
        _place(out, t, dim, start, False)
        start += t._sizes[dim]


def stack(TensorImpl out, list tensors, int dim):
    """out = tensors joined along a new dim: each has out's shape without dim, and out's size
    there is their number (no unsqueezed view per input)."""
    cdef int nd = len(out._sizes)
    if nd == 0 or nd > MAXD:
        raise ValueError(f"stack: a {nd}-dim output")
    cdef Py_ssize_t i
    for i in range(len(tensors)):
        _place(out, <TensorImpl>tensors[i], dim, i, True)


cdef Py_ssize_t PARALLEL_MIN = 1 << 16   # elements: below, one thread copies


cdef inline int _threads(Py_ssize_t count):
    return fastreduce.threads_now() if count >= PARALLEL_MIN else 1


cdef bint _disjoint(int nd, const Py_ssize_t* shape, char* a, const Py_ssize_t* sa, char* b,
                    const Py_ssize_t* sb, int size) noexcept nogil:
    """The byte ranges two strided tensors span do not meet (numpy copies overlaps)."""
    cdef char* alo = a
    cdef char* ahi = a + size
    cdef char* blo = b
    cdef char* bhi = b + size
    cdef int d
    for d in range(nd):
        if sa[d] < 0: alo += sa[d] * (shape[d] - 1)
        else: ahi += sa[d] * (shape[d] - 1)
        if sb[d] < 0: blo += sb[d] * (shape[d] - 1)
        else: bhi += sb[d] * (shape[d] - 1)
    return ahi <= blo or bhi <= alo


cdef void _copy_strided(int nd, Py_ssize_t* shape, char* src, Py_ssize_t* ss, char* dst,
                        Py_ssize_t* ds, int size, int nt) noexcept nogil:
    """dst = src over coalesced dims. A dst walking its last dim while src walks another
    (a transpose) goes by tiles; otherwise rows, the outer ones shared out over threads."""
    cdef int last = nd - 1, k = -1, d, t
    cdef Py_ssize_t outer = 1, per, ni, nj, s_j, d_i
    if (ds[last] == size) != (ss[last] == size):
        for d in range(last):
            if (ss[d] if ds[last] == size else ds[d]) == size:
                k = d
    if k >= 0:
        # i: the dim src steps through by one element (k, or the last when dst steps by one
        # along k), j the other; the batch dims, all but k and the last, moved down
        ni, nj = (shape[k], shape[last]) if ss[k] == size else (shape[last], shape[k])
        s_j = ss[last] if ss[k] == size else ss[k]
        d_i = ds[k] if ss[k] == size else ds[last]
        for d in range(k, last - 1):
            shape[d], ss[d], ds[d] = shape[d + 1], ss[d + 1], ds[d + 1]
        cp_transpose(last - 1, shape, ss, ds, src, s_j, dst, d_i, ni, nj, size, nt)
        return
    for d in range(last):
        outer *= shape[d]
    if nd == 1 and ss[0] == size and ds[0] == size:
        cp_memcpy(dst, src, shape[0] * size, nt)
    elif nd == 1 and nt > 1:                # one long strided row: pieces of it
        per = (shape[0] + nt - 1) // nt
        for t in prange(nt, num_threads=nt, schedule="static"):
            if t * per < shape[0]:
                _row(src + t * per * ss[0], dst + t * per * ds[0],
                     shape[0] - t * per if (t + 1) * per > shape[0] else per, ss[0], ds[0], size)
    elif nt == 1 or outer < nt:
        _copy_range(nd, shape, src, ss, dst, ds, size, 0, outer)
    else:
        per = (outer + nt - 1) // nt
        for t in prange(nt, num_threads=nt, schedule="static"):
            _copy_range(nd, shape, src, ss, dst, ds, size, t * per,
                        outer if (t + 1) * per > outer else (t + 1) * per)


cdef int _conversion(int src_code, int dst_code):
    """The cp_convert kind for src -> dst, or -1 (numpy converts)."""
    if CP_HAVE_F16C and src_code == FLOAT32 and dst_code == FLOAT16:
        return CP_F32_F16
    if CP_HAVE_F16C and src_code == FLOAT16 and dst_code == FLOAT32:
        return CP_F16_F32
    if CP_HAVE_F16C and src_code == FLOAT16 and dst_code == FLOAT64:
        return CP_F16_F64
    if CP_HAVE_F16C and src_code == FLOAT64 and dst_code == FLOAT16:
        return CP_F64_F16
    if src_code == FLOAT32 and dst_code == FLOAT64:
        return CP_F32_F64
    if src_code == FLOAT64 and dst_code == FLOAT32:
        return CP_F64_F32
    return -1


cdef bint _copy_tensor(TensorImpl out, TensorImpl src):
    """The C copy for non-overlapping host tensors of one shape: any strides for one dtype,
    any source strides into a contiguous destination for the float conversions; False where
    it cannot."""
    cdef int nd = len(out._sizes), d, size = out._dtype.itemsize, kind = -1
    if (nd > MAXD or src._sizes != out._sizes or type(src._storage.handle) is not np.ndarray
            or not isinstance(out._storage.handle, np.ndarray)):
        return False
    if src._dtype is not out._dtype:
        kind = _conversion(src._dtype.code, out._dtype.code)
        if kind < 0:
            return False
    cdef Py_ssize_t shape[MAXD]
    cdef Py_ssize_t ss[MAXD]
    cdef Py_ssize_t ds[MAXD]
    cdef Py_ssize_t count = 1
    cdef int ssize = src._dtype.itemsize
    if nd == 0:                             # one element
        nd = 1
        shape[0] = 1
        ss[0], ds[0] = ssize, size
    for d in range(len(out._sizes)):
        shape[d] = out._sizes[d]
        count *= shape[d]
        ss[d] = <Py_ssize_t>src._strides[d] * ssize
        ds[d] = <Py_ssize_t>out._strides[d] * size
    if count == 0:
        return True
    cdef char* sp = _data(src)
    cdef char* dp = _data(out)
    if kind < 0 and not _disjoint(nd, shape, sp, ss, dp, ds, size):
        return False
    cdef int nt = _threads(count)
    if kind >= 0:
        if not is_contiguous(out):
            return False
        nd = _coalesce(nd, shape, ss, ds)
        if ss[nd - 1] != 0 and ss[nd - 1] != ssize:
            return False                    # rows across the source's lines: copy() stages
        with nogil:
            cp_convert(kind, nd, shape, ss, sp, dp, nt)
        return True
    if _alike_order(nd, shape, ss, ds):
        _memory_order(nd, shape, ss, ds)
    if count < PARALLEL_MIN:            # as in _place: a small copy keeps the GIL
        _copy_strided(_coalesce(nd, shape, ss, ds), shape, sp, ss, dp, ds, size, nt)
        return True
    with nogil:
        _copy_strided(_coalesce(nd, shape, ss, ds), shape, sp, ss, dp, ds, size, nt)
    return True


def copy(TensorImpl out, TensorImpl src):
    """out = src (same shape), converting src's dtype to out's."""
    if _copy_tensor(out, src):
        return
    if (src._dtype is not out._dtype and src._sizes == out._sizes
            and _conversion(src._dtype.code, out._dtype.code) >= 0):
        # a float conversion from a transposed layout: the tiled copy into src's dtype, then
        # the conversion along contiguous rows
        staged = empty(src._sizes, src._dtype, src._device)
        if _copy_tensor(staged, src) and _copy_tensor(out, staged):
            return
    values = host_array(src)
    if src._dtype.code == FLOAT64 and out._dtype.code == FLOAT16:
        values = values.astype(np.float32)      # PyTorch rounds to float, then to half
    np.copyto(host_array(out), values, casting="unsafe")


KERNELS = {"cat": cat, "stack": stack}
