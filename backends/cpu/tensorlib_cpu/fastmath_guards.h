/* NaN and overflow guards shared by the kernels built with -ffast-math (for libmvec's
   vector exp/expm1/tanh): fast-math folds x != x to false and does not promise inf, so NaN
   is tested on the bits and passed through, and exp never sees an argument past its
   overflow. Beyond it sigmoid is 0 (the exact value is below the smallest normal number),
   so sigmoid(NaN) is NaN and sigmoid(-inf) is 0, as in PyTorch. */
#ifndef TENSORLIB_FASTMATH_GUARDS_H
#define TENSORLIB_FASTMATH_GUARDS_H
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline int nan_float(float x) {
    uint32_t u; memcpy(&u, &x, 4); return (u & 0x7fffffffu) > 0x7f800000u; }
static inline int nan_double(double x) {
    uint64_t u; memcpy(&u, &x, 8);
    return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }
static const float EXP_MAX_float = 88.7f;
static const double EXP_MAX_double = 709.0;

static inline float safe_sigmoid_float(float x) {
    float v = -x; int under = v > EXP_MAX_float;
    float r = 1.0f / (1.0f + expf(under ? EXP_MAX_float : v));
    return nan_float(x) ? x : (under ? 0.0f : r); }
static inline double safe_sigmoid_double(double x) {
    double v = -x; int under = v > EXP_MAX_double;
    double r = 1.0 / (1.0 + exp(under ? EXP_MAX_double : v));
    return nan_double(x) ? x : (under ? 0.0 : r); }
/* 1 - sigmoid(x) as e / (1 + e), e = exp(-x), without the cancellation of 1 - s (the
   reciprocal is written as safe_sigmoid's, so the two share it); 1 past the underflow */
static inline float sigmoid_complement_float(float x) {
    float v = -x; int under = v > EXP_MAX_float;
    float e = expf(under ? EXP_MAX_float : v);
    return under ? 1.0f : e * (1.0f / (1.0f + e)); }
static inline double sigmoid_complement_double(double x) {
    double v = -x; int under = v > EXP_MAX_double;
    double e = exp(under ? EXP_MAX_double : v);
    return under ? 1.0 : e * (1.0 / (1.0 + e)); }
#endif
