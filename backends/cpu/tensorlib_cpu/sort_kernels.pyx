# cython: boundscheck=False, wraparound=False, cdivision=True
"""sort and topk along a dim as C loops over rows, the rows shared out over the backend's
threads. Each row's elements become unsigned keys that order as PyTorch orders the values
(NaN above everything, -0.0 equal to 0.0; complemented for descending / largest), then

- sort: an LSD radix sort of (key, position) by 8- or 11-bit digits, stable by
  construction, so ties keep their order as in PyTorch's stable sort; digits equal across a
  row are skipped. Long rows are first bucketed by their highest varying bits, and each
  bucket is sorted in cache. The sorted values are rebuilt from their keys unless the row
  holds NaN or -0.0 (then they are gathered from the input, keeping payloads and signs);
- topk: a heap of the k best (key, position) seen so far, a block of keys skipped at once
  when none beats the heap's worst; large k sorts the row instead.

numpy's stable argsort (timsort) and take_along_axis ran at 0.5x PyTorch's sort on 1M
float32 in rows of 1024, and topk sorted each row fully (0.01x). One row of 1M int64 or
float64 (a stable sort, and randperm's argsort of uniforms) took 46-60 ms by bytes, 14-18 ms
bucketed, with the scratch from the backend's pool (PyTorch: 24 ms int64, 114 ms float64)."""
import numpy as np

cimport numpy as cnp

from tensorlib._C.dtypes cimport (BOOL, UINT8, INT8, INT16, INT32, INT64, FLOAT16, BFLOAT16,
                                  FLOAT32, FLOAT64)
from tensorlib._C.device cimport device
from tensorlib._C.tensor_impl cimport TensorImpl
from tensorlib._C.factory cimport empty
from tensorlib._C.dtypes import uint8

from tensorlib_cpu import fastreduce

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    #ifdef _OPENMP
    #include <omp.h>
    #endif
    #define SK_MAXD 64
    /* tensorlib dtype codes (tensorlib/_C/dtypes.pxd) */
    enum { SK_BOOL = 0, SK_UINT8 = 1, SK_INT8 = 2, SK_INT16 = 3, SK_INT32 = 4, SK_INT64 = 5,
           SK_FLOAT16 = 6, SK_BFLOAT16 = 7, SK_FLOAT32 = 8, SK_FLOAT64 = 9 };

    typedef struct {
        int nd;                           /* the dims other than the sorted one */
        Py_ssize_t shape[SK_MAXD], xs[SK_MAXD], vs[SK_MAXD], is_[SK_MAXD];  /* in elements */
        Py_ssize_t rows, n, k;            /* row length; outputs per row (n for sort) */
        Py_ssize_t xn, vn, in_;           /* strides along the sorted dim, in elements */
        int code, size, flip;             /* dtype, item size, descending/largest */
        const char* x;
        char* v;
        int64_t* ind;
    } sk_plan;

    typedef struct { uint64_t key, pos; } sk_wide;

    static inline int sk_is_wide(int code) { return code == SK_INT64 || code == SK_FLOAT64; }

    /* Order-preserving keys: sign-magnitude floats to unsigned (negatives complemented,
       positives with the top bit set), every NaN above +inf, -0 as +0; two's complement
       integers with the sign bit flipped. */
    #define SK_FLOAT_KEY(U, bits, expmask, top)                                          \
        U a_ = (bits) & (U)~(top);                                                        \
        U u_ = a_ == 0 ? 0 : (bits);                                                      \
        U key_ = (u_ & (top)) ? (U)~u_ : (U)(u_ | (top));                                 \
        key_ = a_ > (expmask) ? (U)~(U)0 : key_;

    /* The row's keys; returns 1 when every value can be rebuilt from its key (no NaN, no
       -0.0), so the sorted values need no gather from the input. */
    static int sk_keys32(const sk_plan* p, const char* row, uint32_t* out) {
        Py_ssize_t n = p->n, s = p->xn, j;
        uint32_t flip = p->flip ? 0xFFFFFFFFu : 0;
        int special = 0;
        switch (p->code) {
        case SK_BOOL: case SK_UINT8:
            for (j = 0; j < n; j++) out[j] = ((const uint8_t*)row)[j * s] ^ flip;
            break;
        case SK_INT8:
            for (j = 0; j < n; j++) out[j] = (uint32_t)(((const uint8_t*)row)[j * s] ^ 0x80u) ^ flip;
            break;
        case SK_INT16:
            for (j = 0; j < n; j++) out[j] = (uint32_t)(((const uint16_t*)row)[j * s] ^ 0x8000u) ^ flip;
            break;
        case SK_INT32:
            for (j = 0; j < n; j++) out[j] = (((const uint32_t*)row)[j * s] ^ 0x80000000u) ^ flip;
            break;
        case SK_FLOAT16:
            for (j = 0; j < n; j++) {
                uint16_t b = ((const uint16_t*)row)[j * s];
                SK_FLOAT_KEY(uint16_t, b, 0x7C00u, 0x8000u)
                out[j] = (uint32_t)key_ ^ flip;
                special |= (a_ == 0) != (b == 0) || a_ > 0x7C00u;
            }
            break;
        case SK_BFLOAT16:
            for (j = 0; j < n; j++) {
                uint16_t b = ((const uint16_t*)row)[j * s];
                SK_FLOAT_KEY(uint16_t, b, 0x7F80u, 0x8000u)
                out[j] = (uint32_t)key_ ^ flip;
                special |= (a_ == 0) != (b == 0) || a_ > 0x7F80u;
            }
            break;
        default:    /* SK_FLOAT32 */
            for (j = 0; j < n; j++) {
                uint32_t b = ((const uint32_t*)row)[j * s];
                SK_FLOAT_KEY(uint32_t, b, 0x7F800000u, 0x80000000u)
                out[j] = key_ ^ flip;
                special |= (a_ == 0) != (b == 0) || a_ > 0x7F800000u;
            }
        }
        return !special;
    }

    static int sk_keys64(const sk_plan* p, const char* row, uint64_t* out, Py_ssize_t os) {
        Py_ssize_t n = p->n, s = p->xn, j;
        uint64_t flip = p->flip ? ~(uint64_t)0 : 0;
        int special = 0;
        if (p->code == SK_INT64) {
            for (j = 0; j < n; j++) out[j * os] = (((const uint64_t*)row)[j * s] ^ (1ull << 63)) ^ flip;
            return 1;
        }
        for (j = 0; j < n; j++) {
            uint64_t b = ((const uint64_t*)row)[j * s];
            SK_FLOAT_KEY(uint64_t, b, 0x7FF0000000000000ull, 0x8000000000000000ull)
            out[j * os] = key_ ^ flip;
            special |= (a_ == 0) != (b == 0) || a_ > 0x7FF0000000000000ull;
        }
        return !special;
    }

    /* A value's bits from its key (flip already undone), the inverse of the keys above
       where they had no NaN or -0.0. */
    static inline uint64_t sk_unkey(int code, uint64_t key) {
        switch (code) {
        case SK_BOOL: case SK_UINT8: return key;
        case SK_INT8: return key ^ 0x80u;
        case SK_INT16: return key ^ 0x8000u;
        case SK_INT32: return key ^ 0x80000000u;
        case SK_INT64: return key ^ (1ull << 63);
        case SK_FLOAT16: case SK_BFLOAT16:
            return (key & 0x8000u) ? key & 0x7FFFu : ~key & 0xFFFFu;
        case SK_FLOAT32:
            return (key & 0x80000000u) ? key & 0x7FFFFFFFu : ~key & 0xFFFFFFFFu;
        default:
            return (key >> 63) ? key & ~(1ull << 63) : ~key;
        }
    }

    /* Stable LSD radix sort by the key bits lo..hi-1 of each item, between a and b, in
       digits of `w` bits (11 for long rows: fewer passes over the items; 8 for short ones,
       where the counters' prefix sums would outweigh the items); returns where the result
       is. KEY(item) reads the key. Digits equal across the row are skipped. `count` holds
       SK_MAXPASS rows of 2048 counters. */
    #define SK_MAXPASS 8
    #define SK_RADIX(T, KEY)                                                              \
    static T* sk_radix_##T(T* a, T* b, Py_ssize_t n, int lo, int hi,                     \
                           uint32_t (*count)[2048]) {                                     \
        int w = n >= 4096 ? 11 : 8, passes = (hi - lo + w - 1) / w;                       \
        uint32_t mask = (1u << w) - 1;                                                    \
        memset(count, 0, (size_t)passes * sizeof *count);                                 \
        for (Py_ssize_t j = 0; j < n; j++) {                                              \
            uint64_t k = KEY(a[j]) >> lo;                                                 \
            for (int d = 0; d < passes; d++) count[d][(k >> (w * d)) & mask]++;           \
        }                                                                                 \
        for (int d = 0; d < passes; d++) {                                                \
            uint32_t* c = count[d], sum = 0;                                              \
            int shift = lo + w * d;                                                       \
            if (c[(KEY(a[0]) >> shift) & mask] == (uint32_t)n) continue;  /* skip */      \
            for (uint32_t q = 0; q <= mask; q++) { uint32_t t = c[q]; c[q] = sum; sum += t; } \
            for (Py_ssize_t j = 0; j < n; j++) b[c[(KEY(a[j]) >> shift) & mask]++] = a[j]; \
            T* t = a; a = b; b = t;                                                       \
        }                                                                                 \
        return a;                                                                         \
    }
    #define SK_PACKED_KEY(item) (item)
    #define SK_WIDE_KEY(item) ((item).key)
    SK_RADIX(uint64_t, SK_PACKED_KEY)
    SK_RADIX(sk_wide, SK_WIDE_KEY)

    /* Short rows: insertion sort (a radix pass's 256 counters outweigh a few items). The
       items are distinct (positions differ), so the order is the radix sort's. */
    #define SK_SHORT 32
    #define SK_PACKED_LESS(a, b) ((a) < (b))
    #define SK_WIDE_LESS(a, b) ((a).key < (b).key || ((a).key == (b).key && (a).pos < (b).pos))
    #define SK_INSERTION(T, LESS)                                                         \
    static void sk_insertion_##T(T* a, Py_ssize_t n) {                                    \
        for (Py_ssize_t i = 1; i < n; i++) {                                              \
            T v = a[i];                                                                   \
            Py_ssize_t j = i;                                                             \
            while (j > 0 && LESS(v, a[j - 1])) { a[j] = a[j - 1]; j--; }                  \
            a[j] = v;                                                                     \
        }                                                                                 \
    }
    SK_INSERTION(uint64_t, SK_PACKED_LESS)
    SK_INSERTION(sk_wide, SK_WIDE_LESS)

    /* Long rows: one stable pass on the highest varying 8 bits of the keys scatters the
       items into buckets, then each bucket (in cache for spread keys) is sorted by the bits
       below with the LSD sort above. An LSD pass over a long row writes to 2048 places far
       apart, each a cache miss; 1M float64 keys took 50 ms that way. `count` holds
       SK_MAXPASS + 2 rows of 2048 counters. The result is in b. */
    #define SK_MSD_MIN (1 << 16)
    #define SK_MSD(T, KEY)                                                                \
    static T* sk_msd_##T(T* a, T* b, Py_ssize_t n, int lo, int hi,                       \
                         uint32_t (*count)[2048]) {                                       \
        uint64_t first = KEY(a[0]), diff = 0;                                             \
        uint64_t bits = (hi >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << hi) - 1)               \
                        & ~(((uint64_t)1 << lo) - 1);                                     \
        for (Py_ssize_t j = 0; j < n; j++) diff |= KEY(a[j]) ^ first;                     \
        diff &= bits;                                                                     \
        if (diff == 0) { memcpy(b, a, (size_t)n * sizeof(T)); return b; }                 \
        int top = 64 - __builtin_clzll(diff), shift = top - 8 > lo ? top - 8 : lo;        \
        uint32_t mask = (1u << (top - shift)) - 1, *start = count[0], *end = count[1];    \
        memset(start, 0, sizeof count[0]);                                                \
        for (Py_ssize_t j = 0; j < n; j++) start[(KEY(a[j]) >> shift) & mask]++;          \
        uint32_t sum = 0;                                                                 \
        for (uint32_t q = 0; q <= mask; q++) { uint32_t t = start[q]; start[q] = end[q] = sum; sum += t; } \
        for (Py_ssize_t j = 0; j < n; j++) b[end[(KEY(a[j]) >> shift) & mask]++] = a[j];  \
        if (shift == lo) return b;                                                        \
        for (uint32_t q = 0; q <= mask; q++) {                                            \
            Py_ssize_t m = end[q] - start[q];                                             \
            T* bucket = b + start[q];                                                     \
            if (m <= SK_SHORT) { sk_insertion_##T(bucket, m); continue; }                 \
            T* s = sk_radix_##T(bucket, a + start[q], m, lo, shift, count + 2);           \
            if (s != bucket) memcpy(bucket, s, (size_t)m * sizeof(T));                    \
        }                                                                                 \
        return b;                                                                         \
    }
    SK_MSD(uint64_t, SK_PACKED_KEY)
    SK_MSD(sk_wide, SK_WIDE_KEY)

    static void sk_row_offsets(const sk_plan* p, Py_ssize_t r, Py_ssize_t* xo, Py_ssize_t* vo,
                               Py_ssize_t* io) {
        Py_ssize_t a = 0, b = 0, c = 0;
        for (int d = p->nd - 1; d >= 0; d--) {
            Py_ssize_t q = r % p->shape[d];
            r /= p->shape[d];
            a += q * p->xs[d]; b += q * p->vs[d]; c += q * p->is_[d];
        }
        *xo = a; *vo = b; *io = c;
    }

    /* Writes the first k chosen positions of a row (and their values, copied). */
    static inline void sk_emit(const sk_plan* p, const char* xrow, char* vrow, int64_t* irow,
                               Py_ssize_t j, uint64_t pos) {
        irow[j * p->in_] = (int64_t)pos;
        switch (p->size) {
        case 1: ((uint8_t*)vrow)[j * p->vn] = ((const uint8_t*)xrow)[pos * p->xn]; break;
        case 2: ((uint16_t*)vrow)[j * p->vn] = ((const uint16_t*)xrow)[pos * p->xn]; break;
        case 4: ((uint32_t*)vrow)[j * p->vn] = ((const uint32_t*)xrow)[pos * p->xn]; break;
        default: ((uint64_t*)vrow)[j * p->vn] = ((const uint64_t*)xrow)[pos * p->xn];
        }
    }

    /* Writes a chosen position and the value rebuilt from its key. */
    static inline void sk_emit_key(const sk_plan* p, char* vrow, int64_t* irow, Py_ssize_t j,
                                   uint64_t pos, uint64_t bits) {
        irow[j * p->in_] = (int64_t)pos;
        switch (p->size) {
        case 1: ((uint8_t*)vrow)[j * p->vn] = (uint8_t)bits; break;
        case 2: ((uint16_t*)vrow)[j * p->vn] = (uint16_t)bits; break;
        case 4: ((uint32_t*)vrow)[j * p->vn] = (uint32_t)bits; break;
        default: ((uint64_t*)vrow)[j * p->vn] = bits;
        }
    }

    /* The row's k first in (key, position) order, by a full radix sort; the values come
       from the keys where they can (a gather from the input is random access). */
    static void sk_sort_row(const sk_plan* p, const char* xrow, char* vrow, int64_t* irow,
                            void* scratch) {
        Py_ssize_t n = p->n, j;
        if (sk_is_wide(p->code)) {
            sk_wide* a = (sk_wide*)scratch;
            sk_wide* b = a + n;
            int exact = sk_keys64(p, xrow, &a[0].key, 2);
            uint64_t flip = p->flip ? ~(uint64_t)0 : 0;
            for (j = 0; j < n; j++) a[j].pos = (uint64_t)j;
            sk_wide* s = a;
            uint32_t (*count)[2048] = (uint32_t (*)[2048])(b + n);
            if (n <= SK_SHORT) sk_insertion_sk_wide(a, n);
            else if (n >= SK_MSD_MIN) s = sk_msd_sk_wide(a, b, n, 0, 64, count);
            else s = sk_radix_sk_wide(a, b, n, 0, 64, count);
            if (exact)
                for (j = 0; j < p->k; j++)
                    sk_emit_key(p, vrow, irow, j, s[j].pos, sk_unkey(p->code, s[j].key ^ flip));
            else
                for (j = 0; j < p->k; j++) sk_emit(p, xrow, vrow, irow, j, s[j].pos);
        } else {
            uint64_t* a = (uint64_t*)scratch;
            uint64_t* b = a + n;
            uint32_t* keys = (uint32_t*)(b + n);
            int exact = sk_keys32(p, xrow, keys);
            uint32_t flip = p->flip ? 0xFFFFFFFFu : 0;
            for (j = 0; j < n; j++) a[j] = (uint64_t)keys[j] << 32 | (uint64_t)j;
            uint64_t* s = a;
            uint32_t (*count)[2048] = (uint32_t (*)[2048])(keys + n + (n & 1));
            int hi = p->size >= 4 ? 64 : 32 + 8 * p->size;
            if (n <= SK_SHORT) sk_insertion_uint64_t(a, n);
            else if (n >= SK_MSD_MIN) s = sk_msd_uint64_t(a, b, n, 32, hi, count);
            else s = sk_radix_uint64_t(a, b, n, 32, hi, count);
            if (exact)
                for (j = 0; j < p->k; j++)
                    sk_emit_key(p, vrow, irow, j, s[j] & 0xFFFFFFFFu,
                                sk_unkey(p->code, (uint32_t)(s[j] >> 32) ^ flip));
            else
                for (j = 0; j < p->k; j++) sk_emit(p, xrow, vrow, irow, j, s[j] & 0xFFFFFFFFu);
        }
    }

    /* A min-heap of the k best items so far, the worst on top; "best" is the larger packed
       value: the key above, then the earlier position (stored complemented). */
    static void sk_sift(uint64_t* h, Py_ssize_t k, Py_ssize_t i) {
        uint64_t v = h[i];
        for (;;) {
            Py_ssize_t c = 2 * i + 1;
            if (c >= k) break;
            if (c + 1 < k && h[c + 1] < h[c]) c++;
            if (h[c] >= v) break;
            h[i] = h[c];
            i = c;
        }
        h[i] = v;
    }

    #define SK_BLOCK 64
    /* The best k of a row of 32-bit keys: the heap, then sorted best first. A key that
       ties the heap's worst never enters it (its position is later). */
    static void sk_topk_row32(const sk_plan* p, const char* xrow, char* vrow, int64_t* irow,
                              void* scratch) {
        Py_ssize_t n = p->n, k = p->k, m = 0, j;
        uint32_t* keys = (uint32_t*)scratch;
        uint64_t* heap = (uint64_t*)(keys + n + (n & 1));
        sk_keys32(p, xrow, keys);
        for (j = 0; j < k; j++) heap[j] = (uint64_t)keys[j] << 32 | (uint32_t)~(uint32_t)j;
        for (j = k / 2 - 1; j >= 0; j--) sk_sift(heap, k, j);
        m = k;
        while (m < n) {
            Py_ssize_t end = m + SK_BLOCK < n ? m + SK_BLOCK : n;
            uint32_t worst = (uint32_t)(heap[0] >> 32);
            int any = 0;
            for (j = m; j < end; j++) any |= keys[j] > worst;
            if (any)
                for (j = m; j < end; j++)
                    if (keys[j] > (uint32_t)(heap[0] >> 32)) {
                        heap[0] = (uint64_t)keys[j] << 32 | (uint32_t)~(uint32_t)j;
                        sk_sift(heap, k, 0);
                    }
            m = end;
        }
        for (j = k - 1; j >= 0; j--) {           /* pop the worst to the back */
            uint64_t top = heap[0];
            heap[0] = heap[j];
            sk_sift(heap, j, 0);
            sk_emit(p, xrow, vrow, irow, j, (uint32_t)~(uint32_t)top);
        }
    }

    static inline int sk_wide_less(sk_wide a, sk_wide b) {      /* a worse than b */
        return a.key < b.key || (a.key == b.key && a.pos > b.pos);
    }
    static void sk_sift_wide(sk_wide* h, Py_ssize_t k, Py_ssize_t i) {
        sk_wide v = h[i];
        for (;;) {
            Py_ssize_t c = 2 * i + 1;
            if (c >= k) break;
            if (c + 1 < k && sk_wide_less(h[c + 1], h[c])) c++;
            if (!sk_wide_less(h[c], v)) break;
            h[i] = h[c];
            i = c;
        }
        h[i] = v;
    }
    static void sk_topk_row64(const sk_plan* p, const char* xrow, char* vrow, int64_t* irow,
                              void* scratch) {
        Py_ssize_t n = p->n, k = p->k, m, j;
        uint64_t* keys = (uint64_t*)scratch;
        sk_wide* heap = (sk_wide*)(keys + n);
        sk_keys64(p, xrow, keys, 1);
        for (j = 0; j < k; j++) { heap[j].key = keys[j]; heap[j].pos = (uint64_t)j; }
        for (j = k / 2 - 1; j >= 0; j--) sk_sift_wide(heap, k, j);
        for (m = k; m < n; m++)
            if (keys[m] > heap[0].key) {
                heap[0].key = keys[m]; heap[0].pos = (uint64_t)m;
                sk_sift_wide(heap, k, 0);
            }
        for (j = k - 1; j >= 0; j--) {
            sk_wide top = heap[0];
            heap[0] = heap[j];
            sk_sift_wide(heap, j, 0);
            sk_emit(p, xrow, vrow, irow, j, top.pos);
        }
    }

    /* Scratch bytes per thread: for sort, two item arrays, the 32-bit keys and the radix
       counters; for topk, the keys and the heap. */
    static size_t sk_scratch(const sk_plan* p, int heap) {
        size_t wide = sk_is_wide(p->code), n = (size_t)p->n, k = (size_t)p->k;
        return 64 + (heap ? n * (wide ? 8 : 4) + k * (wide ? 16 : 8)
                          : n * (wide ? 32 : 20) + 8 + (SK_MAXPASS + 2) * 2048 * 4);
    }

    /* Every row of the plan, the rows shared out over nt threads; by the heap when `heap`,
       else by sorting. One thread uses `given` scratch when there is one. Returns 0 when
       scratch memory ran out (nothing usable written). */
    static int sk_run(const sk_plan* p, int heap, int nt, void* given) {
        size_t scratch = sk_scratch(p, heap);
        int failed = 0;
        Py_ssize_t r;
        #pragma omp parallel num_threads(nt) if (nt > 1)
        {
            void* buf = nt == 1 && given != NULL ? given : malloc(scratch);
            if (buf == NULL) {
                #pragma omp atomic write
                failed = 1;
            }
            #pragma omp for schedule(dynamic, 16)
            for (r = 0; r < p->rows; r++) {
                if (buf == NULL) continue;
                Py_ssize_t xo, vo, io;
                sk_row_offsets(p, r, &xo, &vo, &io);
                const char* xrow = p->x + xo * p->size;
                char* vrow = p->v + vo * p->size;
                int64_t* irow = p->ind + io;
                if (!heap) sk_sort_row(p, xrow, vrow, irow, buf);
                else if (sk_is_wide(p->code)) sk_topk_row64(p, xrow, vrow, irow, buf);
                else sk_topk_row32(p, xrow, vrow, irow, buf);
            }
            if (buf != given) free(buf);
        }
        return !failed;
    }
    """
    ctypedef struct sk_plan:
        int nd
        Py_ssize_t shape[64]
        Py_ssize_t xs[64]
        Py_ssize_t vs[64]
        Py_ssize_t is_[64]
        Py_ssize_t rows, n, k, xn, vn, in_
        int code, size, flip
        const char* x
        char* v
        cnp.int64_t* ind
    size_t sk_scratch(const sk_plan* p, int heap) nogil
    int sk_run(const sk_plan* p, int heap, int nt, void* given) nogil

DEF MAXD = 64
# Below this many input elements one thread does the rows.
cdef Py_ssize_t PARALLEL_MIN = 1 << 15
# One thread's scratch of at least this many bytes comes from the backend's pool.
cdef size_t POOLED_SCRATCH_MIN = 1 << 20
# topk keeps a heap for k up to this (or up to a 64th of the row); above, it sorts the row.
cdef Py_ssize_t HEAP_MAX_K = 32
_CODES = frozenset((BOOL, UINT8, INT8, INT16, INT32, INT64, FLOAT16, BFLOAT16, FLOAT32,
                    FLOAT64))


cdef inline char* _data(TensorImpl t):
    return <char*>cnp.PyArray_DATA(<cnp.ndarray>t._storage.handle) + \
        t._offset * t._dtype.itemsize


cdef bint _plan(sk_plan* p, TensorImpl values, TensorImpl indices, TensorImpl x, int dim,
                Py_ssize_t k, bint flip):
    """Fill the plan for rows of x along dim; False for what the C loops do not take
    (another dtype or memory, more than 2^31 elements in a row)."""
    cdef int nd = len(x._sizes), d, o = 0
    if (x._dtype.code not in _CODES or values._dtype is not x._dtype
            or indices._dtype.code != INT64 or nd == 0 or nd > MAXD
            or type(x._storage.handle) is not np.ndarray
            or type(values._storage.handle) is not np.ndarray
            or type(indices._storage.handle) is not np.ndarray):
        return False
    p.n = x._sizes[dim]
    if p.n >= (1 << 31) or p.n == 0:
        return False
    p.k, p.flip, p.code, p.size = k, flip, x._dtype.code, x._dtype.itemsize
    p.rows = 1
    for d in range(nd):
        if d == dim:
            continue
        p.shape[o] = x._sizes[d]
        p.xs[o], p.vs[o], p.is_[o] = x._strides[d], values._strides[d], indices._strides[d]
        p.rows *= p.shape[o]
        o += 1
    p.nd = o
    p.xn, p.vn, p.in_ = x._strides[dim], values._strides[dim], indices._strides[dim]
    p.x, p.v, p.ind = _data(x), _data(values), <cnp.int64_t*>_data(indices)
    return True


cdef bint _run(sk_plan* p, bint heap, device dev):
    cdef int nt = fastreduce.threads_now() if p.rows > 1 and p.rows * p.n >= PARALLEL_MIN \
        else 1
    cdef int ok
    cdef size_t nbytes = sk_scratch(p, heap)
    cdef void* given = NULL
    # One thread's large scratch comes from the backend's pool (hostmem.pyx): fresh pages
    # for 32 MB were a third of sorting 1M float64s.
    cdef TensorImpl pooled = empty((nbytes,), uint8, dev) \
        if nt == 1 and nbytes >= POOLED_SCRATCH_MIN else None
    if pooled is not None:
        given = _data(pooled)
    with nogil:
        ok = sk_run(p, heap, nt, given)
    if not ok:
        raise MemoryError(f"sort: no scratch memory for rows of {p.n}")
    return True


def sort(TensorImpl values, TensorImpl indices, TensorImpl x, int dim, bint descending):
    """values, indices = x sorted along dim (stable; NaN largest). False if not taken."""
    cdef sk_plan p
    if not _plan(&p, values, indices, x, dim, x._sizes[dim] if x._sizes else 0, descending):
        return False
    return _run(&p, False, x._device)


def topk(TensorImpl values, TensorImpl indices, TensorImpl x, int dim, Py_ssize_t k,
         bint largest):
    """values, indices = the k largest (smallest) of x along dim, best first, ties in index
    order; False if not taken."""
    cdef sk_plan p
    cdef Py_ssize_t n = x._sizes[dim] if x._sizes else 0
    cdef bint heap = k <= HEAP_MAX_K or k * 64 <= n
    # the heap keeps the largest keys; a sort puts the smallest first
    if k <= 0 or not _plan(&p, values, indices, x, dim, k, largest != heap):
        return False
    return _run(&p, heap, x._device)


KERNELS = {"topk": topk}
