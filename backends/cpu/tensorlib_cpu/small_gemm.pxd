cdef int small_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double* a,
                     int lda, const double* b, int ldb, double beta, double* c,
                     int ldc) noexcept nogil
cdef int small_dgemm_bias(char ta, char tb, int m, int n, int k, const double* a, int lda,
                          const double* b, int ldb, const double* bias, double* c,
                          int ldc) noexcept nogil
