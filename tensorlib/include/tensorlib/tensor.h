// tensorlib's C++ extension API: a Tensor handle over a Python tensorlib tensor.
// Header-only: the handle holds the Python object and calls its methods, so every op runs
// tensorlib's own kernels (and autograd); data_ptr<T>() reads the tensor's storage in place:
// host memory for cpu tensors, the device pointer (for a kernel launch) for cuda tensors.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tensorlib_ext {
namespace py = pybind11;
using namespace pybind11::literals;

inline py::module_ lib() { return py::module_::import("tensorlib"); }

enum class ScalarType : int8_t { Byte, Char, Short, Int, Long, Half, Float, Double, Bool, BFloat16 };

inline const char* scalar_type_name(ScalarType t) {
  static const char* names[] = {"uint8", "int8", "int16", "int32", "int64",
                                "float16", "float32", "float64", "bool", "bfloat16"};
  return names[static_cast<int>(t)];
}
inline ScalarType scalar_type_from_name(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(ScalarType::BFloat16); ++i)
    if (name == scalar_type_name(static_cast<ScalarType>(i))) return static_cast<ScalarType>(i);
  throw std::invalid_argument("tensorlib extension: unsupported dtype " + name);
}
inline py::object dtype_object(ScalarType t) { return lib().attr(scalar_type_name(t)); }
inline ScalarType scalar_type_of(const py::handle& dtype) {
  std::string s = py::str(dtype);  // "tensorlib.float32"
  return scalar_type_from_name(s.substr(s.rfind('.') + 1));
}
inline bool isFloatingType(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::Float || t == ScalarType::Double ||
         t == ScalarType::BFloat16;
}

struct Device {
  std::string name;
  Device(std::string n = "cpu") : name(std::move(n)) {}
  std::string str() const { return name; }
  bool is_cpu() const { return name.rfind("cpu", 0) == 0; }
  bool is_cuda() const { return name.rfind("cuda", 0) == 0; }
};
namespace DeviceType { inline const Device CPU{"cpu"}; inline const Device CUDA{"cuda"}; }

struct TensorOptions {
  ScalarType dtype_ = ScalarType::Float;
  Device device_{"cpu"};
  bool requires_grad_ = false;
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}
  TensorOptions(Device d) : device_(std::move(d)) {}
  TensorOptions dtype(ScalarType t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = std::move(d); return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }
  ScalarType dtype() const { return dtype_; }
  py::dict kwargs() const {
    py::dict kw;
    kw["dtype"] = dtype_object(dtype_);
    kw["device"] = device_.name;
    kw["requires_grad"] = requires_grad_;
    return kw;
  }
};
inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions(std::move(d)); }

class Tensor;
template <typename T, size_t N> class TensorAccessor;

// A number read out of a tensor (item()), converted on request as ATen's Scalar is.
class Scalar {
 public:
  explicit Scalar(py::object v) : value_(std::move(v)) {}
  template <typename T> T to() const { return value_.cast<T>(); }
  double toDouble() const { return to<double>(); }
  float toFloat() const { return to<float>(); }
  int64_t toLong() const { return to<int64_t>(); }
  int toInt() const { return to<int>(); }
  bool toBool() const { return to<bool>(); }

 private:
  py::object value_;
};

// Recording off for its lifetime (torch::NoGradGuard), the previous mode back after.
struct NoGradGuard {
  NoGradGuard() : previous_(lib().attr("is_grad_enabled")()) {
    lib().attr("set_grad_enabled")(false);
  }
  ~NoGradGuard() { lib().attr("set_grad_enabled")(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  py::object previous_;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(py::object obj) : obj_(std::move(obj)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) = default;
  // ATen's assignment semantics: a named tensor is rebound; a temporary (an indexed view,
  // `t[i][j] = v`, `rows[i] = other[j]`) has the values written into it
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & = default;
  Tensor& operator=(const Tensor& src) && { call("copy_", src.obj_); return *this; }
  Tensor& operator=(Tensor&& src) && { call("copy_", src.obj_); return *this; }
  template <typename S, typename = std::enable_if_t<std::is_arithmetic<S>::value>>
  Tensor& operator=(S value) && { call("fill_", value); return *this; }
  const py::object& object() const { return obj_; }
  bool defined() const { return obj_ && !obj_.is_none(); }

  int64_t dim() const { return call("dim").cast<int64_t>(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return call("numel").cast<int64_t>(); }
  std::vector<int64_t> sizes() const { return py::cast<std::vector<int64_t>>(obj_.attr("shape")); }
  int64_t size(int64_t i) const { return call("size", i).cast<int64_t>(); }
  std::vector<int64_t> strides() const { return call("stride").cast<std::vector<int64_t>>(); }
  int64_t stride(int64_t i) const { return call("stride", i).cast<int64_t>(); }
  ScalarType scalar_type() const { return scalar_type_of(obj_.attr("dtype")); }
  ScalarType dtype() const { return scalar_type(); }
  Device device() const { return Device(py::str(obj_.attr("device"))); }
  bool is_cuda() const { return obj_.attr("is_cuda").cast<bool>(); }
  bool is_contiguous() const { return call("is_contiguous").cast<bool>(); }
  bool requires_grad() const { return obj_.attr("requires_grad").cast<bool>(); }
  TensorOptions options() const {
    return TensorOptions().dtype(scalar_type()).device(device());
  }
  int64_t element_size() const { return call("element_size").cast<int64_t>(); }

  template <typename T> T* data_ptr() const {
    Device d = device();
    if (d.is_cpu()) return reinterpret_cast<T*>(call("data_ptr").cast<uintptr_t>());
    if (d.is_cuda()) {   // the CUDA backend's allocation (PyCUDA) plus the view's offset
      auto base = py::int_(obj_.attr("_storage").attr("handle")).cast<uintptr_t>();
      auto offset = obj_.attr("_offset").cast<int64_t>() * element_size();
      return reinterpret_cast<T*>(base + offset);
    }
    throw std::runtime_error("data_ptr() of a " + d.str() +
                             " tensor: C++ extensions read cpu and cuda memory only");
  }
  void* data_ptr() const { return data_ptr<void>(); }
  template <typename T> T* mutable_data_ptr() const { return data_ptr<T>(); }
  template <typename T> const T* const_data_ptr() const { return data_ptr<T>(); }
  template <typename T> T item() const { return call("item").cast<T>(); }
  Scalar item() const { return Scalar(call("item")); }

  template <typename T, size_t N> TensorAccessor<T, N> accessor() const&;
  template <typename T, size_t N> TensorAccessor<T, N> accessor() && = delete;

  // methods running tensorlib's ops
  template <typename... A> Tensor op(const char* name, A&&... args) const {
    return Tensor(call(name, std::forward<A>(args)...));
  }
  Tensor contiguous() const { return op("contiguous"); }
  Tensor clone() const { return op("clone"); }
  Tensor detach() const { return op("detach"); }
  Tensor sum() const { return op("sum"); }
  Tensor sum(int64_t d, bool keepdim = false) const { return op("sum", d, keepdim); }
  Tensor mean() const { return op("mean"); }
  Tensor mean(int64_t d, bool keepdim = false) const { return op("mean", d, keepdim); }
  Tensor exp() const { return op("exp"); }
  Tensor log() const { return op("log"); }
  Tensor sqrt() const { return op("sqrt"); }
  Tensor abs() const { return op("abs"); }
  Tensor neg() const { return op("neg"); }
  Tensor tanh() const { return op("tanh"); }
  Tensor sigmoid() const { return op("sigmoid"); }
  Tensor relu() const { return op("relu"); }
  Tensor pow(double e) const { return op("pow", e); }
  Tensor t() const { return op("t"); }
  Tensor matmul(const Tensor& o) const { return op("matmul", o.obj_); }
  Tensor mm(const Tensor& o) const { return op("mm", o.obj_); }
  Tensor view(const std::vector<int64_t>& s) const { return op("view", py::tuple(py::cast(s))); }
  Tensor view(int64_t s) const { return op("view", s); }
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const {
    py::object slice = py::module_::import("builtins").attr("slice");
    py::list key;
    for (int64_t d = 0, n = dim < 0 ? dim + this->dim() : dim; d < n; ++d)
      key.append(slice(py::none()));
    key.append(slice(start, end, step));
    return Tensor(obj_[py::tuple(key)]);
  }
  Tensor index_select(int64_t d, const Tensor& i) const { return op("index_select", d, i.obj_); }
  Tensor masked_select(const Tensor& m) const { return op("masked_select", m.obj_); }
  Tensor nonzero() const { return op("nonzero"); }
  Tensor max() const { return op("max"); }
  Tensor min() const { return op("min"); }
  Tensor argmax(int64_t d, bool keepdim = false) const { return op("argmax", d, keepdim); }
  Tensor multinomial(int64_t n, bool replacement = false) const {
    return op("multinomial", n, replacement);
  }
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false) const {
    py::tuple r = call("sort", dim, descending);
    return {Tensor(r[0]), Tensor(r[1])};
  }
  Tensor __xor__(const Tensor& o) const { return op("__xor__", o.obj_); }
  Tensor reshape(const std::vector<int64_t>& s) const {
    return op("reshape", py::tuple(py::cast(s)));
  }
  Tensor transpose(int64_t a, int64_t b) const { return op("transpose", a, b); }
  Tensor unsqueeze(int64_t d) const { return op("unsqueeze", d); }
  Tensor squeeze(int64_t d) const { return op("squeeze", d); }
  Tensor to(ScalarType t) const { return op("to", dtype_object(t)); }
  Tensor to(const Device& d) const { return op("to", d.name); }
  Tensor to(const TensorOptions& o) const {
    return Tensor(obj_.attr("to")(**py::dict("device"_a = o.device_.name,
                                             "dtype"_a = dtype_object(o.dtype_))));
  }
  Tensor cpu() const { return op("cpu"); }
  Tensor& zero_() { call("zero_"); return *this; }
  Tensor& fill_(double v) { call("fill_", v); return *this; }
  Tensor& copy_(const Tensor& s) { call("copy_", s.obj_); return *this; }
  Tensor& add_(const Tensor& o, double alpha = 1) { call("add_", o.obj_, "alpha"_a = alpha); return *this; }
  Tensor& mul_(double v) { call("mul_", v); return *this; }
  Tensor operator-() const { return neg(); }
  Tensor operator[](int64_t i) const { return Tensor(obj_[py::int_(i)]); }
  Tensor operator[](const Tensor& i) const { return Tensor(obj_[i.obj_]); }
  std::string toString() const { return py::str(obj_); }

  template <typename... A> py::object call(const char* name, A&&... args) const {
    return obj_.attr(name)(std::forward<A>(args)...);
  }

 private:
  py::object obj_;
};

// Python operators do the type promotion and broadcasting, as in tensorlib itself;
// comparisons give bool tensors, as ATen's do.
#define TENSORLIB_EXT_OPERATOR(OP, DUNDER, RDUNDER)                                         \
  inline Tensor operator OP(const Tensor& a, const Tensor& b) {                             \
    return Tensor(a.object().attr(DUNDER)(b.object()));                                     \
  }                                                                                         \
  inline Tensor operator OP(const Tensor& a, double s) {                                    \
    return Tensor(a.object().attr(DUNDER)(s));                                              \
  }                                                                                         \
  inline Tensor operator OP(double s, const Tensor& a) {                                    \
    return Tensor(a.object().attr(RDUNDER)(s));                                             \
  }
#define TENSORLIB_EXT_BINOP(OP, DUNDER, RDUNDER)                                            \
  TENSORLIB_EXT_OPERATOR(OP, DUNDER, RDUNDER)                                               \
  inline Tensor& operator OP##=(Tensor& a, const Tensor& b) { return a = a OP b; }          \
  inline Tensor& operator OP##=(Tensor& a, double s) { return a = a OP s; }
TENSORLIB_EXT_BINOP(+, "__add__", "__radd__")
TENSORLIB_EXT_BINOP(-, "__sub__", "__rsub__")
TENSORLIB_EXT_BINOP(*, "__mul__", "__rmul__")
TENSORLIB_EXT_BINOP(/, "__truediv__", "__rtruediv__")
TENSORLIB_EXT_OPERATOR(==, "__eq__", "__eq__")
TENSORLIB_EXT_OPERATOR(!=, "__ne__", "__ne__")
TENSORLIB_EXT_OPERATOR(<, "__lt__", "__gt__")
TENSORLIB_EXT_OPERATOR(<=, "__le__", "__ge__")
TENSORLIB_EXT_OPERATOR(>, "__gt__", "__lt__")
TENSORLIB_EXT_OPERATOR(>=, "__ge__", "__le__")
#undef TENSORLIB_EXT_BINOP
#undef TENSORLIB_EXT_OPERATOR

inline std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.toString(); }

// Element access through raw strides (no bounds checks, as in ATen). Each accessor keeps its
// sizes and strides by value, so it never dangles whatever the lifetime of its parent.
template <typename T, size_t N>
class TensorAccessor {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides) : data_(data) {
    for (size_t d = 0; d < N; ++d) { sizes_[d] = sizes[d]; strides_[d] = strides[d]; }
  }
  TensorAccessor<T, N - 1> operator[](int64_t i) const {
    return TensorAccessor<T, N - 1>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
  int64_t size(int64_t i) const { return sizes_[i]; }
  int64_t stride(int64_t i) const { return strides_[i]; }
  T* data() const { return data_; }
 private:
  T* data_;
  int64_t sizes_[N];
  int64_t strides_[N];
};
template <typename T>
class TensorAccessor<T, 1> {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), size_(sizes[0]), stride_(strides[0]) {}
  T& operator[](int64_t i) const { return data_[stride_ * i]; }
  int64_t size(int64_t) const { return size_; }
  int64_t stride(int64_t) const { return stride_; }
  T* data() const { return data_; }
 private:
  T* data_;
  int64_t size_, stride_;
};

template <typename T, size_t N>
TensorAccessor<T, N> Tensor::accessor() const& {
  if (static_cast<int64_t>(N) != dim()) {
    std::ostringstream msg;
    msg << "TensorAccessor expected " << N << " dims but tensor has " << dim();
    throw std::runtime_error(msg.str());
  }
  auto sz = sizes();
  auto st = strides();
  return TensorAccessor<T, N>(data_ptr<T>(), sz.data(), st.data());
}

// factories over tensorlib's own
inline py::tuple shape_tuple(const std::vector<int64_t>& s) { return py::tuple(py::cast(s)); }
inline Tensor empty(const std::vector<int64_t>& s, const TensorOptions& o = {}) {
  return Tensor(lib().attr("empty")(shape_tuple(s), **o.kwargs()));
}
inline Tensor zeros(const std::vector<int64_t>& s, const TensorOptions& o = {}) {
  return Tensor(lib().attr("zeros")(shape_tuple(s), **o.kwargs()));
}
inline Tensor ones(const std::vector<int64_t>& s, const TensorOptions& o = {}) {
  return Tensor(lib().attr("ones")(shape_tuple(s), **o.kwargs()));
}
inline Tensor full(const std::vector<int64_t>& s, double v, const TensorOptions& o = {}) {
  return Tensor(lib().attr("full")(shape_tuple(s), v, **o.kwargs()));
}
inline Tensor randperm(int64_t n, const TensorOptions& o = TensorOptions(ScalarType::Long)) {
  return Tensor(lib().attr("randperm")(n, **o.kwargs()));
}
inline Tensor empty_like(const Tensor& t) { return empty(t.sizes(), t.options()); }
inline Tensor empty_like(const Tensor& t, const TensorOptions& o) { return empty(t.sizes(), o); }
inline Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), t.options()); }
inline Tensor zeros_like(const Tensor& t, const TensorOptions& o) { return zeros(t.sizes(), o); }
inline Tensor ones_like(const Tensor& t) { return ones(t.sizes(), t.options()); }
inline Tensor matmul(const Tensor& a, const Tensor& b) { return a.matmul(b); }
inline Tensor mm(const Tensor& a, const Tensor& b) { return a.mm(b); }
inline Tensor exp(const Tensor& a) { return a.exp(); }
inline Tensor sigmoid(const Tensor& a) { return a.sigmoid(); }
inline Tensor tanh(const Tensor& a) { return a.tanh(); }
inline Tensor relu(const Tensor& a) { return a.relu(); }

}  // namespace tensorlib_ext

// pybind11: a tensorlib tensor passes to and from C++ as the same Python object (no copy).
namespace pybind11 { namespace detail {
template <> struct type_caster<tensorlib_ext::Tensor> {
  PYBIND11_TYPE_CASTER(tensorlib_ext::Tensor, const_name("tensorlib.Tensor"));
  bool load(handle src, bool) {
    if (!isinstance(src, module_::import("tensorlib").attr("Tensor"))) return false;
    value = tensorlib_ext::Tensor(reinterpret_borrow<object>(src));
    return true;
  }
  static handle cast(const tensorlib_ext::Tensor& t, return_value_policy, handle) {
    if (!t.defined()) return none().release();
    return t.object().inc_ref();
  }
};
}}  // namespace pybind11::detail
