# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""PyTorch's CPU random stream: the mt19937 engine and the fills of its CPU generator, in C.

The generator's whole state is one 5056-byte buffer laid out as PyTorch's
``CPUGeneratorImplState`` (what ``torch.get_rng_state()`` returns): initial seed, ``left``,
``seeded``, ``next``, the 624 state words (each in a uint64 slot), the unused legacy normal
fields with the cached double normal in ``normal_y`` / ``normal_is_valid``, then the cached
float normal and its flag. Every function reads it, draws, and writes it back, so the bytes
always equal PyTorch's after the same seed and draws.

The fills are serial (as PyTorch's) and write their values in the order given: the caller
passes a contiguous buffer in PyTorch's iteration order. Where PyTorch's x86 build fuses a
multiply-add (its AVX2/AVX-512 kernels are compiled with FMA contraction) the code calls
fma() explicitly; the module is built with -ffp-contract=off so nothing else is fused.
"""
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

cdef extern from *:
    """
    #define _GNU_SOURCE
    #include <stdint.h>
    #include <string.h>
    #include <math.h>
    #define MT_N 624
    #define MT_M 397
    #define MT_STATE_BYTES 5056
    #define TL_PI 3.14159265358979323846
    /* PyTorch's CPUGeneratorImplState, field by field (x86-64 alignment) */
    typedef struct {
        uint64_t the_initial_seed;
        int32_t left;
        int32_t seeded;
        uint64_t next;
        uint64_t state[MT_N];
        double normal_x, normal_y, normal_rho;
        int32_t normal_is_valid;
        int32_t pad0;
        float next_float_normal_sample;
        uint8_t is_next_float_normal_sample_valid;
        uint8_t pad1[3];
    } mt_pod;
    typedef struct {
        uint32_t s[MT_N];
        int left;
        uint32_t next;
        int has_double_normal;
        double double_normal;
    } mt_engine;

    static void mt_load(const uint8_t* raw, mt_engine* e) {
        const mt_pod* p = (const mt_pod*)raw;
        for (int i = 0; i < MT_N; i++) e->s[i] = (uint32_t)p->state[i];
        e->left = p->left;
        e->next = (uint32_t)p->next;
        e->has_double_normal = p->normal_is_valid != 0;
        e->double_normal = p->normal_y;
    }
    static void mt_store(const mt_engine* e, uint8_t* raw) {
        mt_pod* p = (mt_pod*)raw;
        for (int i = 0; i < MT_N; i++) p->state[i] = e->s[i];
        p->left = e->left;
        p->next = e->next;
        p->normal_is_valid = e->has_double_normal;
        p->normal_y = e->has_double_normal ? e->double_normal : 0.0;
    }
    static void mt_seed(uint8_t* raw, uint64_t seed) {
        memset(raw, 0, MT_STATE_BYTES);
        mt_pod* p = (mt_pod*)raw;
        uint32_t s = (uint32_t)seed;
        p->the_initial_seed = seed;
        p->seeded = 1;
        p->left = 1;
        p->next = 0;
        p->state[0] = s;
        for (uint32_t j = 1; j < MT_N; j++) {
            s = 1812433253u * (s ^ (s >> 30)) + j;
            p->state[j] = s;
        }
    }
    static inline uint32_t mt_twist(uint32_t u, uint32_t v) {
        return (((u & 0x80000000u) | (v & 0x7fffffffu)) >> 1) ^ ((v & 1u) ? 0x9908b0dfu : 0u);
    }
    static void mt_next_state(mt_engine* e) {
        uint32_t* p = e->s;
        e->left = MT_N;
        e->next = 0;
        for (int j = MT_N - MT_M + 1; --j; p++) *p = p[MT_M] ^ mt_twist(p[0], p[1]);
        for (int j = MT_M; --j; p++) *p = p[MT_M - MT_N] ^ mt_twist(p[0], p[1]);
        *p = p[MT_M - MT_N] ^ mt_twist(p[0], e->s[0]);
    }
    static inline uint32_t mt_random(mt_engine* e) {
        if (--e->left == 0) mt_next_state(e);
        uint32_t y = e->s[e->next++];
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680u;
        y ^= (y << 15) & 0xefc60000u;
        y ^= y >> 18;
        return y;
    }
    static inline uint64_t mt_random64(mt_engine* e) {
        uint64_t hi = mt_random(e);
        return (hi << 32) | mt_random(e);
    }
    /* uniform_real_distribution<float>(0, 1) and <double>(0, 1): the low 24 / 53 bits */
    static inline float mt_unit_float(mt_engine* e) {
        return (float)(mt_random(e) & 0xffffffu) * (1.0f / 16777216.0f);
    }
    static inline double mt_unit_double(mt_engine* e) {
        return (double)(mt_random64(e) & ((1ULL << 53) - 1)) * (1.0 / 9007199254740992.0);
    }
    /* normal_distribution<double>: one value, the second of each Box-Muller pair cached */
    static inline double mt_normal_double(mt_engine* e) {
        if (e->has_double_normal) {
            e->has_double_normal = 0;
            return e->double_normal;
        }
        double u1 = mt_unit_double(e), u2 = mt_unit_double(e), s, c;
        double r = sqrt(-2.0 * log1p(-u2)), theta = 2.0 * TL_PI * u1;
        sincos(theta, &s, &c);                   /* glibc's: the values of sin and cos */
        e->double_normal = r * s;
        e->has_double_normal = 1;
        return r * c;
    }
    /* NormalFill16 on 16 uniforms, float32: Box-Muller of (data[j], data[j + 8]) in float
       arithmetic, 8 lanes at once as PyTorch's AVX2 kernel; its log/sin/cos are Cephes-style
       vector approximations, ours libmvec's (or correctly rounded scalars in a build without
       AVX2): equal to a few ulp */
    #if defined(__AVX2__) && defined(__FMA__)
    #include <immintrin.h>
    /* glibc's libmvec: 1M float normals took 17 ms with scalar libm, PyTorch's 3.6 */
    __m256 _ZGVdN8v_logf(__m256);
    __m256 _ZGVdN8v_sinf(__m256);
    __m256 _ZGVdN8v_cosf(__m256);
    static void normal16_float(float* d, float mean, float std) {
        const __m256 u1 = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_loadu_ps(d));
        const __m256 u2 = _mm256_loadu_ps(d + 8);
        const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(_mm256_set1_ps(-2.0f),
                                                           _ZGVdN8v_logf(u1)));
        const __m256 theta = _mm256_mul_ps(_mm256_set1_ps((float)(2.0 * TL_PI)), u2);
        const __m256 vstd = _mm256_set1_ps(std), vmean = _mm256_set1_ps(mean);
        _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, _ZGVdN8v_cosf(theta)),
                                            vstd, vmean));
        _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, _ZGVdN8v_sinf(theta)),
                                                vstd, vmean));
    }
    #else
    static void normal16_float(float* d, float mean, float std) {
        const float two_pi = (float)(2.0 * TL_PI);
        for (int j = 0; j < 8; j++) {
            float u1 = 1.0f - d[j], u2 = d[j + 8];
            float radius = sqrtf(-2.0f * (float)log((double)u1));
            float theta = two_pi * u2;
            float c = (float)cos((double)theta), s = (float)sin((double)theta);
            d[j] = fmaf(radius * c, std, mean);
            d[j + 8] = fmaf(radius * s, std, mean);
        }
    }
    #endif
    /* sample_poisson of PyTorch's Distributions.cpp: multiplied uniforms below rate 10,
       Hormann's transformed rejection (1993) from 10 */
    static double mt_poisson(mt_engine* e, double lambda) {
        if (lambda >= 10) {
            double slam = sqrt(lambda), loglam = log(lambda);
            double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
            double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
            for (;;) {
                double U = mt_unit_double(e) - 0.5, V = mt_unit_double(e);
                double us = 0.5 - fabs(U);
                int64_t k = (int64_t)floor((2 * a / us + b) * U + lambda + 0.43);
                if (us >= 0.07 && V <= vr) return (double)k;
                if (k < 0 || (us < 0.013 && V > us)) continue;
                if (log(V) + log(invalpha) - log(a / (us * us) + b)
                        <= -lambda + k * loglam - lgamma((double)k + 1))
                    return (double)k;
            }
        }
        if (lambda == 0) return 0;
        double enlam = exp(-lambda), prod = 1.0;
        int64_t x = 0;
        for (;;) {
            prod *= mt_unit_double(e);
            if (prod > enlam) x += 1;
            else return (double)x;
        }
    }
    /* sample_gamma (Marsaglia-Tsang) with double accumulation; a float32 alpha keeps its
       own steps in float (the boost alpha + 1, d = alpha - 1/3) as PyTorch's template does,
       and the result is rounded to float and kept >= FLT_MIN */
    static double mt_gamma(mt_engine* e, double alpha_in, int single) {
        float alpha_f = (float)alpha_in;
        double alpha = single ? (double)alpha_f : alpha_in, scale = 1.0, d;
        if (alpha < 1.0) {
            if (alpha == 0.0) return 0.0;
            double inverse = single ? (double)(1.0f / alpha_f) : 1.0 / alpha;
            scale *= pow(1 - mt_unit_double(e), inverse);
            if (single) { alpha_f += 1.0f; alpha = alpha_f; } else alpha += 1.0;
        }
        d = single ? (double)(alpha_f - 1.0f / 3.0f) : alpha - (double)(1.0f / 3.0f);
        double c = 1.0 / sqrt(9.0 * d);
        for (;;) {
            double x, y;
            do {
                x = mt_normal_double(e);
                y = 1.0 + c * x;
            } while (y <= 0);
            double v = y * y * y, u = 1 - mt_unit_double(e), xx = x * x;
            if (u < 1.0 - (double)0.0331f * xx * xx || log(u) < 0.5 * xx + d * (1.0 - v + log(v))) {
                double sample = scale * d * v;
                if (single) {
                    float f = (float)sample;
                    return f > 1.17549435e-38f ? f : 1.17549435e-38f;
                }
                return sample > 2.2250738585072014e-308 ? sample : 2.2250738585072014e-308;
            }
        }
    }
    /* sample_binomial (TensorFlow's inversion below a mean of 10, BTRS above) for a float
       and a double scalar_t: C's conversions between T and double are C++'s, and the
       float-typed std:: calls (sqrt, floor, log1p of a float) are the f-suffixed ones */
    static double stirling_tail(double k) {
        static const double tail[] = {0.0810614667953272, 0.0413406959554092,
            0.0276779256849983, 0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
            0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287};
        if (k < 10) return tail[(size_t)k];
        double kp1sq = (k + 1) * (k + 1);
        return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
    }
    #define TL_BINOMIAL(NAME, T, SQRT, FLOOR, LOG1P)                                        \
    static T NAME##_inversion(mt_engine* e, T count, T prob) {                             \
        double geom_sum = 0, logprob = LOG1P(-prob);                                       \
        T num_geom = 0;                                                                    \
        for (;;) {                                                                         \
            double geom = ceil(log(mt_unit_double(e)) / logprob);                          \
            geom_sum += geom;                                                              \
            if (geom_sum > count) break;                                                   \
            num_geom = num_geom + 1;                                                       \
        }                                                                                  \
        return num_geom;                                                                   \
    }                                                                                      \
    static T NAME##_btrs(mt_engine* e, T count, T prob) {                                  \
        T k;                                                                               \
        double U, V, us;                                                                   \
        const double stddev = SQRT(count * prob * (1 - prob));                             \
        const double b = 1.15 + 2.53 * stddev;                                             \
        const double a = -0.0873 + 0.0248 * b + 0.01 * prob;                              \
        const double c = count * prob + 0.5;                                               \
        const double v_r = 0.92 - 4.2 / b;                                                 \
        const double r = prob / (1 - prob);                                                \
        const double alpha = (2.83 + 5.1 / b) * stddev;                                    \
        const double m = FLOOR((count + 1) * prob);                                        \
        for (;;) {                                                                         \
            U = mt_unit_double(e) - 0.5;                                                   \
            V = mt_unit_double(e);                                                         \
            us = 0.5 - fabs(U);                                                            \
            k = (T)floor((2 * a / us + b) * U + c);                                        \
            if (k < 0 || k > count) continue;                                              \
            if (us >= 0.07 && V <= v_r) return k;                                          \
            V = log(V * alpha / (a / (us * us) + b));                                      \
            double upperbound =                                                            \
                ((m + 0.5) * log((m + 1) / (r * (count - m + 1))) +                        \
                 (count + 1) * log((count - m + 1) / (count - k + 1)) +                    \
                 (k + 0.5) * log(r * (count - k + 1) / (k + 1)) +                          \
                 stirling_tail(m) + stirling_tail(count - m) -                             \
                 stirling_tail(k) - stirling_tail(count - k));                             \
            if (V <= upperbound) return k;                                                 \
        }                                                                                  \
    }                                                                                      \
    static T NAME(mt_engine* e, T count, T prob) {                                         \
        if (count <= 0.0 || prob <= 0.0) return 0;                                         \
        if (prob >= 1.0) return count;                                                     \
        if (prob <= 0.5) {                                                                 \
            if (count * prob >= 10.0) return NAME##_btrs(e, count, prob);                  \
            return NAME##_inversion(e, count, prob);                                       \
        }                                                                                  \
        T qprob = 1.0 - prob;                                                              \
        if (count * qprob >= 10.0) return count - NAME##_btrs(e, count, qprob);            \
        return count - NAME##_inversion(e, count, qprob);                                  \
    }
    TL_BINOMIAL(mt_binomial_float, float, sqrtf, floorf, log1pf)
    TL_BINOMIAL(mt_binomial_double, double, sqrt, floor, log1p)
    static void normal16_double(double* d, double mean, double std) {
        for (int j = 0; j < 8; j++) {
            double u1 = 1.0 - d[j], u2 = d[j + 8];
            double radius = sqrt(-2.0 * log(u1)), theta = 2.0 * TL_PI * u2;
            d[j] = fma(radius * cos(theta), std, mean);
            d[j + 8] = fma(radius * sin(theta), std, mean);
        }
    }
    """
    int MT_STATE_BYTES
    ctypedef struct mt_engine:
        int has_double_normal
    void mt_load(const uint8_t* raw, mt_engine* e) nogil
    void mt_store(const mt_engine* e, uint8_t* raw) nogil
    void mt_seed(uint8_t* raw, uint64_t seed) nogil
    uint32_t mt_random(mt_engine* e) nogil
    uint64_t mt_random64(mt_engine* e) nogil
    float mt_unit_float(mt_engine* e) nogil
    double mt_unit_double(mt_engine* e) nogil
    double mt_normal_double(mt_engine* e) nogil
    void normal16_float(float* d, float mean, float std) nogil
    double mt_poisson(mt_engine* e, double rate) nogil
    double mt_gamma(mt_engine* e, double alpha, int single) nogil
    float mt_binomial_float(mt_engine* e, float count, float prob) nogil
    double mt_binomial_double(mt_engine* e, double count, double prob) nogil
    void normal16_double(double* d, double mean, double std) nogil
    double fma(double, double, double) nogil
    float fmaf(float, float, float) nogil
    double log(double) nogil
    double log1p(double) nogil
    double exp(double) nogil
    double tan(double) nogil
    double ceil(double) nogil

STATE_BYTES = MT_STATE_BYTES

cdef double PI = 3.14159265358979323846

ctypedef fused real_t:
    float
    double


def seed(uint8_t[::1] state, uint64_t value):
    """Reset `state` to mt19937 seeded with `value` (its low 32 bits; the full value is kept
    as the initial seed), no cached normal."""
    mt_seed(&state[0], value)


def uniform(uint8_t[::1] state, real_t[::1] out, double low, double high):
    """uniform_(low, high): float32 (also the values half/bfloat16 round) from the low 24 bits
    of one word, float64 from 53 bits of two, each scaled with one fused multiply-add in the
    dtype itself."""
    cdef mt_engine e
    cdef Py_ssize_t i
    cdef real_t lo = low, span = <real_t>high - <real_t>low
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            if real_t is float:
                out[i] = fmaf(mt_unit_float(&e), span, lo)
            else:
                out[i] = fma(mt_unit_double(&e), span, lo)
        mt_store(&e, &state[0])


def normal_fill(uint8_t[::1] state, real_t[::1] out, double mean, double std,
                bint blockwise=False):
    """PyTorch's normal_fill for a contiguous tensor of >= 16 elements: n uniforms (24-bit for
    float32, 53-bit for float64), Box-Muller in blocks of 16 (j with j + 8), and when
    n % 16 != 0 the last 16 drawn afresh and recomputed. `blockwise` (half and bfloat16, which
    round these values): 16 uniforms per whole block only, so the last 16 start at uniform
    16 * (n // 16), not at n."""
    cdef mt_engine e
    cdef Py_ssize_t i, n = out.shape[0]
    with nogil:
        mt_load(&state[0], &e)
        for i in range(16 * (n // 16) if blockwise else n):
            out[i] = _unit(&e, out[0])
        for i in range(0, n - 15, 16):
            _normal16(&out[i], mean, std)
        if n % 16:
            for i in range(n - 16, n):
                out[i] = _unit(&e, out[0])
            _normal16(&out[n - 16], mean, std)
        mt_store(&e, &state[0])


cdef inline real_t _unit(mt_engine* e, real_t like) noexcept nogil:
    """The next uniform in [0, 1) of `like`'s type (24 or 53 random bits)."""
    if real_t is float:
        return mt_unit_float(e)
    else:
        return mt_unit_double(e)


cdef inline void _normal16(real_t* d, double mean, double std) noexcept nogil:
    if real_t is float:
        normal16_float(d, <float>mean, <float>std)
    else:
        normal16_double(d, mean, std)


def normal_serial(uint8_t[::1] state, double[::1] out, double mean, double std,
                  bint log_normal=False):
    """normal_distribution<double>, one value at a time with the cached second sample (the
    path of small or non-contiguous tensors); log_normal=True gives exp of each value."""
    cdef mt_engine e
    cdef Py_ssize_t i
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            out[i] = fma(mt_normal_double(&e), std, mean)
            if log_normal:
                out[i] = exp(out[i])
        mt_store(&e, &state[0])


def ints_from_to(uint8_t[::1] state, int64_t[::1] out, uint64_t span, int64_t low):
    """random_(low, low + span): word % span + low, with a 64-bit word when span >= 2**28."""
    cdef mt_engine e
    cdef Py_ssize_t i
    cdef bint wide = span >= (<uint64_t>1 << 28)
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            if wide:
                out[i] = <int64_t>(mt_random64(&e) % span + <uint64_t>low)
            else:
                out[i] = <int64_t>(mt_random(&e) % span + <uint64_t>low)
        mt_store(&e, &state[0])


def ints_full_range(uint8_t[::1] state, int64_t[::1] out):
    """random_(-2**63, None): a 64-bit word as int64."""
    cdef mt_engine e
    cdef Py_ssize_t i
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            out[i] = <int64_t>mt_random64(&e)
        mt_store(&e, &state[0])


def ints_modulo(uint8_t[::1] state, int64_t[::1] out, uint64_t modulus, bint wide):
    """random_() without bounds: word % modulus, the word 64-bit for int64 and float64."""
    cdef mt_engine e
    cdef Py_ssize_t i
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            if wide:
                out[i] = <int64_t>(mt_random64(&e) % modulus)
            else:
                out[i] = <int64_t>(mt_random(&e) % modulus)
        mt_store(&e, &state[0])


def bernoulli_scalar(uint8_t[::1] state, uint8_t[::1] out, double p):
    """bernoulli_(p) with a number p: a 53-bit uniform < p."""
    cdef mt_engine e
    cdef Py_ssize_t i
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            out[i] = mt_unit_double(&e) < p
        mt_store(&e, &state[0])


def bernoulli_tensor(uint8_t[::1] state, uint8_t[::1] out, const real_t[::1] p):
    """bernoulli with a tensor of probabilities: a uniform of p's type (24-bit for float32,
    half and bfloat16, 53-bit for float64) < p[i]."""
    cdef mt_engine e
    cdef Py_ssize_t i
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            out[i] = _unit(&e, p[i]) < p[i]
        mt_store(&e, &state[0])


def exponential(uint8_t[::1] state, double[::1] out, double lambd):
    """exponential_(lambd): -1 / lambd * log1p(-u), u a 53-bit uniform."""
    cdef mt_engine e
    cdef Py_ssize_t i
    cdef double scale = -1.0 / lambd
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            out[i] = scale * log1p(-mt_unit_double(&e))
        mt_store(&e, &state[0])


def cauchy(uint8_t[::1] state, double[::1] out, double median, double sigma):
    """cauchy_(median, sigma): median + sigma * tan(pi * (u - 1/2)), fused."""
    cdef mt_engine e
    cdef Py_ssize_t i
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            out[i] = fma(sigma, tan(PI * (mt_unit_double(&e) - 0.5)), median)
        mt_store(&e, &state[0])


def geometric(uint8_t[::1] state, double[::1] out, double p):
    """geometric_(p): ceil(log(u) / log1p(-p))."""
    cdef mt_engine e
    cdef Py_ssize_t i
    cdef double denominator = log1p(-p)
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            out[i] = ceil(log(mt_unit_double(&e)) / denominator)
        mt_store(&e, &state[0])


def randperm(uint8_t[::1] state, int64_t[::1] out):
    """randperm(n) for n < 2**32 / 20: the identity, then for i < n - 1 swap i with
    i + word % (n - i)."""
    cdef mt_engine e
    cdef Py_ssize_t i, z, n = out.shape[0]
    cdef int64_t saved
    with nogil:
        for i in range(n):
            out[i] = i
        mt_load(&state[0], &e)
        for i in range(n - 1):
            z = <Py_ssize_t>(mt_random(&e) % <uint64_t>(n - i))
            saved = out[i]
            out[i] = out[z + i]
            out[z + i] = saved
        mt_store(&e, &state[0])


def multinomial(uint8_t[::1] state, const real_t[:, ::1] probs, int64_t[:, ::1] out,
                real_t[::1] cdf):
    """multinomial with replacement: per row the running sum in the rows' dtype (float32 also
    for half/bfloat16) divided by the total, the last entry set to 1, then per sample the
    first c with cdf[c] >= u (u a 53-bit uniform) by bisection. Rows with a sum <= 0 are the
    caller's."""
    cdef mt_engine e
    cdef Py_ssize_t row, j, c, left, right, mid, cats = probs.shape[1]
    cdef real_t total
    cdef double u
    with nogil:
        mt_load(&state[0], &e)
        for row in range(probs.shape[0]):
            total = 0
            for c in range(cats):
                total = total + probs[row, c]
                cdf[c] = total
            for c in range(cats):
                cdf[c] = cdf[c] / total
            cdf[cats - 1] = 1
            for j in range(out.shape[1]):
                u = mt_unit_double(&e)
                left, right = 0, cats
                while right > left:
                    mid = left + (right - left) // 2
                    if cdf[mid] < u:
                        left = mid + 1
                    else:
                        right = mid
                out[row, j] = left
        mt_store(&e, &state[0])


def poisson(uint8_t[::1] state, double[::1] out, const double[::1] rate):
    """torch.poisson: PyTorch's sample_poisson per element (rates in visiting order)."""
    cdef mt_engine e
    cdef Py_ssize_t i
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            out[i] = mt_poisson(&e, rate[i])
        mt_store(&e, &state[0])


def standard_gamma(uint8_t[::1] state, double[::1] out, const double[::1] alpha, bint single):
    """torch._standard_gamma: PyTorch's sample_gamma per element; `single` for float32
    alphas (float steps, a float result)."""
    cdef mt_engine e
    cdef Py_ssize_t i
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            out[i] = mt_gamma(&e, alpha[i], single)
        mt_store(&e, &state[0])


def binomial(uint8_t[::1] state, double[::1] out, const double[::1] count,
             const double[::1] prob, bint single):
    """torch.binomial: PyTorch's sample_binomial per element, in float arithmetic where it
    uses its scalar type for float32 (`single`) inputs."""
    cdef mt_engine e
    cdef Py_ssize_t i
    with nogil:
        mt_load(&state[0], &e)
        for i in range(out.shape[0]):
            if single:
                out[i] = mt_binomial_float(&e, <float>count[i], <float>prob[i])
            else:
                out[i] = mt_binomial_double(&e, count[i], prob[i])
        mt_store(&e, &state[0])
