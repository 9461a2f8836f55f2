cdef int small_dgemm(char ta, char tb, int m, int n, int k, double alpha, const double* a,
                     int lda, const double* b, int ldb, double beta, double* c,
                     int ldc) noexcept nogil
cdef int small_dgemm_bias(char ta, char tb, int m, int n, int k, const double* a, int lda,
                          const double* b, int ldb, const double* bias, double* c,
                          int ldc) noexcept nogil
cdef int small_sgemm(char ta, char tb, int m, int n, int k, float alpha, const float* a,
                     int lda, const float* b, int ldb, float beta, float* c,
                     int ldc) noexcept nogil
cdef int small_sgemm_bias(char ta, char tb, int m, int n, int k, const float* a, int lda,
                          const float* b, int ldb, const float* bias, float* c,
                          int ldc) noexcept nogil
