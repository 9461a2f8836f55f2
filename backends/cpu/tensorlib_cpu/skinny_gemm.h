/* GEMMs with a dimension of 1, as plain vector loops (included by gemm.pyx, which sends
   them here before BLAS). Row-major C (m, n) = alpha op(A) op(B) + beta C, the layouts as
   gemm.pyx gives them to BLAS: op(A)[i, l] is a[i * lda + l] ('N') or a[l * lda + i] ('T'),
   op(B)[l, j] is b[l * ldb + j] ('N') or b[j * ldb + l] ('T').

   Why: OpenBLAS runs these shapes through its blocked GEMM. An LSTM's products with input
   size 1 (k = 1: an outer product) and its Linear(51, 1) head (n = 1 forward, a weight
   gradient with m = 1 or n = 1 backward) took 2-3x PyTorch's time; here they are one pass
   over the output (k = 1), or a dot product per output / a sum of scaled columns (m or n = 1).

   Returns 1 when it computed C, 0 (nothing written) for shapes it leaves to BLAS: none of
   m, n, k is 1, the product is above SKINNY_MAX_MACS (there BLAS's threads and blocking
   win), or a vector operand is not contiguous. beta == 0 ignores C's old values (NaN
   included), as BLAS does. */
#include <stdlib.h>

#define SKINNY_MAX_MACS (1 << 20)

#define DEFINE_SKINNY(T)                                                                    \
/* C[i, :] = alpha A[i] B[0, :] + beta C[i, :], row of B contiguous */                      \
static void skinny_outer_##T(int m, int n, T alpha, const T* a, Py_ssize_t sa, const T* b,   \
                             T beta, T* c, int ldc) {                                       \
    for (int i = 0; i < m; i++) {                                                           \
        T s = alpha * a[i * sa]; T* cr = c + (Py_ssize_t)i * ldc;                           \
        if (beta == 0) {                                                                    \
            _Pragma("omp simd")                                                             \
            for (int j = 0; j < n; j++) cr[j] = s * b[j];                                   \
        } else {                                                                            \
            _Pragma("omp simd")                                                             \
            for (int j = 0; j < n; j++) cr[j] = s * b[j] + beta * cr[j];                    \
        }                                                                                   \
    }                                                                                       \
}                                                                                           \
/* out[i * so] = alpha dot(rows[i * ld : i * ld + k], v) + beta out[i * so], v contiguous */ \
static void skinny_dots_##T(int count, int k, T alpha, const T* rows, int ld, const T* v,    \
                            T beta, T* out, Py_ssize_t so) {                                \
    for (int i = 0; i < count; i++) {                                                       \
        const T* r = rows + (Py_ssize_t)i * ld; T s = 0;                                    \
        _Pragma("omp simd reduction(+:s)")                                                  \
        for (int l = 0; l < k; l++) s += r[l] * v[l];                                       \
        out[i * so] = beta == 0 ? alpha * s : alpha * s + beta * out[i * so];               \
    }                                                                                       \
}                                                                                           \
/* out[j * so] = alpha sum_l v[l * sv] cols[l * ld + j] + beta out[j * so] */               \
static int skinny_axpys_##T(int count, int k, T alpha, const T* cols, int ld, const T* v,    \
                            Py_ssize_t sv, T beta, T* out, Py_ssize_t so) {                 \
    T* acc = (T*)calloc((size_t)count, sizeof(T));                                          \
    if (acc == NULL) return 0;                                                              \
    for (int l = 0; l < k; l++) {                                                           \
        const T* col = cols + (Py_ssize_t)l * ld; T w = v[l * sv];                          \
        _Pragma("omp simd")                                                                 \
        for (int j = 0; j < count; j++) acc[j] += w * col[j];                               \
    }                                                                                       \
    for (int j = 0; j < count; j++)                                                         \
        out[j * so] = beta == 0 ? alpha * acc[j] : alpha * acc[j] + beta * out[j * so];     \
    free(acc);                                                                              \
    return 1;                                                                               \
}                                                                                           \
static int skinny_gemm_##T(char ta, char tb, int m, int n, int k, T alpha, const T* a,      \
                           int lda, const T* b, int ldb, T beta, T* c, int ldc) {           \
    if ((double)m * n * k > SKINNY_MAX_MACS) return 0;                                      \
    if (k == 1) {                        /* B's one row must be contiguous */               \
        if (tb == 'N' || n == 1 || ldb == 1) {                                              \
            skinny_outer_##T(m, n, alpha, a, ta == 'N' ? lda : 1, b, beta, c, ldc);         \
            return 1;                                                                       \
        }                                                                                   \
        return 0;                                                                           \
    }                                                                                       \
    if (n == 1) {                        /* C's column = op(A) times op(B)'s column */      \
        Py_ssize_t sv = tb == 'N' ? ldb : 1;                                                \
        if (ta == 'N' && sv == 1) {                                                         \
            skinny_dots_##T(m, k, alpha, a, lda, b, beta, c, ldc);                          \
            return 1;                                                                       \
        }                                                                                   \
        if (ta == 'T') return skinny_axpys_##T(m, k, alpha, a, lda, b, sv, beta, c, ldc);   \
        return 0;                                                                           \
    }                                                                                       \
    if (m == 1) {                        /* C's row = op(A)'s row times op(B) */            \
        Py_ssize_t sv = ta == 'N' ? 1 : lda;                                                \
        if (tb == 'T' && sv == 1) {                                                         \
            skinny_dots_##T(n, k, alpha, b, ldb, a, beta, c, 1);                            \
            return 1;                                                                       \
        }                                                                                   \
        if (tb == 'N') return skinny_axpys_##T(n, k, alpha, b, ldb, a, sv, beta, c, 1);     \
        return 0;                                                                           \
    }                                                                                       \
    return 0;                                                                               \
}

DEFINE_SKINNY(float)
DEFINE_SKINNY(double)
