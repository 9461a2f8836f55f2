// The torch:: / at:: names PyTorch extension sources use, mapped onto tensorlib's C++ API.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include "tensorlib/tensor.h"
#include "tensorlib/checks.h"

namespace at {
using namespace ::tensorlib_ext;
using ::tensorlib_ext::Tensor;
using ::tensorlib_ext::ScalarType;
using ::tensorlib_ext::TensorOptions;
using ::tensorlib_ext::Device;
constexpr ScalarType kFloat = ScalarType::Float, kFloat32 = ScalarType::Float,
                     kDouble = ScalarType::Double, kFloat64 = ScalarType::Double,
                     kHalf = ScalarType::Half, kFloat16 = ScalarType::Half,
                     kBFloat16 = ScalarType::BFloat16, kLong = ScalarType::Long,
                     kInt64 = ScalarType::Long, kInt = ScalarType::Int,
                     kInt32 = ScalarType::Int, kShort = ScalarType::Short,
                     kChar = ScalarType::Char, kByte = ScalarType::Byte,
                     kBool = ScalarType::Bool;
inline const Device kCPU{"cpu"};
inline const Device kCUDA{"cuda"};
}  // namespace at
namespace torch {
using namespace ::at;
}  // namespace torch
namespace c10 {
using ::tensorlib_ext::ScalarType;
}  // namespace c10
