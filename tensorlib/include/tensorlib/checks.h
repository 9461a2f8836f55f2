// TORCH_CHECK and the AT_DISPATCH macros for tensorlib extensions.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include "tensorlib/tensor.h"

namespace tensorlib_ext {
inline void check_message(std::ostringstream&) {}
template <typename A, typename... R>
void check_message(std::ostringstream& os, const A& a, const R&... r) {
  os << a;
  check_message(os, r...);
}
template <typename... A>
[[noreturn]] void check_fail(const char* cond, const A&... args) {
  std::ostringstream os;
  check_message(os, args...);
  std::string msg = os.str();
  // pybind11 turns std::runtime_error into Python's RuntimeError
  throw std::runtime_error(msg.empty() ? std::string("Expected ") + cond + " to be true" : msg);
}
}  // namespace tensorlib_ext

#define TORCH_CHECK(cond, ...) \
  do { if (!(cond)) ::tensorlib_ext::check_fail(#cond, ##__VA_ARGS__); } while (0)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define AT_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)

#define TENSORLIB_DISPATCH_CASE(ENUM, CTYPE, ...) \
  case ::tensorlib_ext::ScalarType::ENUM: { using scalar_t = CTYPE; return __VA_ARGS__(); }
#define TENSORLIB_DISPATCH_FAIL(TYPE, NAME)                                          \
  default:                                                                          \
    ::tensorlib_ext::check_fail("", '"', NAME, "\" not implemented for '",           \
                                ::tensorlib_ext::scalar_type_name(TYPE), "'");
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...)                 \
  [&] {                                                             \
    const auto _st = (TYPE);                                        \
    switch (_st) {                                                  \
      TENSORLIB_DISPATCH_CASE(Double, double, __VA_ARGS__)          \
      TENSORLIB_DISPATCH_CASE(Float, float, __VA_ARGS__)            \
      TENSORLIB_DISPATCH_FAIL(_st, NAME)                            \
    }                                                               \
  }()
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...)        \
  [&] {                                                             \
    const auto _st = (TYPE);                                        \
    switch (_st) {                                                  \
      TENSORLIB_DISPATCH_CASE(Double, double, __VA_ARGS__)          \
      TENSORLIB_DISPATCH_CASE(Float, float, __VA_ARGS__)            \
      TENSORLIB_DISPATCH_CASE(Half, _Float16, __VA_ARGS__)          \
      TENSORLIB_DISPATCH_FAIL(_st, NAME)                            \
    }                                                               \
  }()
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...)                      \
  [&] {                                                             \
    const auto _st = (TYPE);                                        \
    switch (_st) {                                                  \
      TENSORLIB_DISPATCH_CASE(Double, double, __VA_ARGS__)          \
      TENSORLIB_DISPATCH_CASE(Float, float, __VA_ARGS__)            \
      TENSORLIB_DISPATCH_CASE(Byte, uint8_t, __VA_ARGS__)           \
      TENSORLIB_DISPATCH_CASE(Char, int8_t, __VA_ARGS__)            \
      TENSORLIB_DISPATCH_CASE(Short, int16_t, __VA_ARGS__)          \
      TENSORLIB_DISPATCH_CASE(Int, int32_t, __VA_ARGS__)            \
      TENSORLIB_DISPATCH_CASE(Long, int64_t, __VA_ARGS__)           \
      TENSORLIB_DISPATCH_FAIL(_st, NAME)                            \
    }                                                               \
  }()
