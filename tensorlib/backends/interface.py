"""The backend plugin contract: what a device backend gives tensorlib.

A backend is one object, named by an entry point in the group ``tensorlib.backends``::

    [project.entry-points."tensorlib.backends"]
    toy = "tensorlib_toy:backend"

Subclass :class:`Backend` and override what the defaults say is missing. Kernels take
tensors (``tensorlib.Tensor``) with arbitrary strides -- stride 0 for broadcast inputs, any
storage offset -- and write into preallocated outputs given first. The framework has already
promoted the inputs to one dtype, broadcast them to the output shape and put them on the
kernel's device, so a kernel does only the arithmetic. Index arguments (gather,
scatter_add, index_select) are int64 and already checked: 0 <= index < size -- unless the
kernel has the attribute ``checks_bounds = True``: then the op leaves the check to it (a
check in the op costs four small ops and a read back to the host), and the kernel raises
:class:`IndexOutOfBounds` for the first index outside [0, size) in row-major order of the
index, before scatter_add adds anything.
"""

API_VERSION = 1
"""The plugin API this tensorlib implements; a backend states the one it targets."""


class IndexOutOfBounds(IndexError, RuntimeError):
    """Out-of-range index in gather/scatter/index_*: PyTorch raises RuntimeError there and
    IndexError when indexing; this is both. Message: "index {i} is out of bounds for
    dimension {dim} with size {size}"."""

UNARY_OPS = ("abs", "neg", "exp", "expm1", "log", "log1p", "sqrt", "sin", "cos", "tan",
             "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "floor", "ceil", "round",
             "trunc", "sign", "isnan", "logical_not", "bitwise_not")
BINARY_OPS = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "remainder", "fmod",
              "floor_divide", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
              "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor")
REDUCTION_OPS = ("sum", "prod", "amax", "amin")
INDEX_REDUCTION_OPS = ("argmax", "argmin")
SCAN_OPS = ("cumsum", "cumprod")

PRIMITIVES = {
    "fill": "fill(out, value): every element of out = value (a Python number)",
    "copy": "copy(out, src): strided copy, same shape, converting src's dtype to out's",
    "where": "where(out, cond, a, b): out = a where cond (bool) else b",
    "matmul": "matmul(out, a, b): batched GEMM, a (B,M,K) @ b (B,K,N) -> out (B,M,N)",
    "gather": "gather(out, x, dim, index): out[..i..] = x[..index[..i..]..] along dim",
    "scatter_add": "scatter_add(out, dim, index, src): out[..index[..i..]..] += src[..i..]",
    "index_select": "index_select(out, x, dim, index): out = x indexed by 1-D int64 index",
    "sort": "sort(values, indices, x, dim, descending, stable): sort along dim",
    "random_uniform": "random_uniform(out, seed, offset): Philox4x32-10 uniforms in [0, 1) "
                      "in out's (floating) dtype; number j of the stream goes to element j of "
                      "out in row-major (C) order of its elements, whatever out's strides",
    "random_normal": "random_normal(out, seed, offset): Philox4x32-10 Box-Muller normals, "
                     "number j to element j of out in row-major (C) order (as random_uniform)",
}
PRIMITIVES.update({op: f"{op}(out, x): elementwise" for op in UNARY_OPS})
PRIMITIVES.update({op: f"{op}(out, a, b): elementwise; comparisons write bool"
                   for op in BINARY_OPS})
PRIMITIVES.update({op: f"{op}(out, x, dims): reduce over the tuple dims; out has x's shape "
                       "with size 1 at each reduced dim" for op in REDUCTION_OPS})
PRIMITIVES.update({op: f"{op}(out, x, dim): int64 index of the first extreme along dim; out "
                       "has size 1 at dim" for op in INDEX_REDUCTION_OPS})
PRIMITIVES.update({op: f"{op}(out, x, dim): inclusive scan along dim" for op in SCAN_OPS})

OUTPUT_COUNTS = {"sort": 2}
"""How many leading arguments of a primitive are outputs (1 unless listed)."""


class Backend:
    """Base class of a device backend. Every default raises, saying what is missing."""

    device_type = None
    api_version = API_VERSION
    install_hint = None          # e.g. 'pip install "tensorlib[opencl]"', shown when unavailable

    def is_available(self):
        return self.unavailable_reason() is None

    def unavailable_reason(self):
        """None when usable, else a short reason (which package is missing, no device)."""
        return None

    def device_count(self):
        raise NotImplementedError(f"{type(self).__name__} needs device_count()")

    def device_name(self, index):
        return f"{self.device_type}:{index}"

    def runs_on_host(self, index):
        """True when device `index` computes on the host CPU (an OpenCL CPU driver such as
        PoCL): tensorlib.accelerator does not count it, as PyTorch's accelerator is a device
        other than the host CPU."""
        return False

    def allocate(self, nbytes, index):
        """A handle to `nbytes` of device memory on device `index` (the Storage keeps it)."""
        raise NotImplementedError(f"{type(self).__name__} needs allocate(nbytes, index)")

    release = None
    """Optional callable(handle, nbytes), run when a storage dies (to return it to a pool)."""

    fused_kernel = None
    """Optional callable(spec, sizes, strides) -> kernel(tensors): the backend's code
    generator for `tensorlib.compile`'s fused elementwise kernels (`tensorlib.codegen.fused`
    holds the spec). Without one, compiled graphs run this backend's kernels one by one."""

    device_timers = None
    """Optional callable() -> [DeviceTimer]: one per device in use, so that a profile with
    this backend's activity gets each kernel's time on the device (the timer's methods are
    listed in `tensorlib/profiler/_device.py`). Without one, the profiler times on the host."""

    def copy_from_host(self, dst, array):
        """Write the numpy `array` (dst's dtype and shape) into the tensor dst, which may be a
        strided view."""
        raise NotImplementedError(f"{type(self).__name__} needs copy_from_host(dst, array)")

    def copy_to_host(self, src):
        """A C-contiguous numpy array holding the tensor src (any strides)."""
        raise NotImplementedError(f"{type(self).__name__} needs copy_to_host(src)")

    def copy_between_devices(self, dst, src):
        """dst = src where both are this backend's tensors on different device indices."""
        self.copy_from_host(dst, self.copy_to_host(src))

    def synchronize(self, index=None):
        """Wait for all queued work on the device."""

    def build_source_kernels(self, index, source, names):
        """{name: kernel} for the kernels `names` of `source`, a program in the backend's
        kernel language, built for device `index` (cached by the backend). Used by
        `tensorlib.library`'s source kernels (OpenCLKernel, CUDAKernel); a backend that does
        not build kernels from source keeps this default."""
        raise NotImplementedError(f"{type(self).__name__} does not build kernels from source")

    def launch1d(self, index, kernel, n, *args):
        """Launch a kernel of `build_source_kernels` over n work items in 1-D (rounded up to
        whole groups) on device `index`, its arguments `args`, as the backend's own kernels
        are launched (so the profiler times it)."""
        raise NotImplementedError(f"{type(self).__name__} does not launch source kernels")

    def vendor_library(self, name):
        """Whether the vendor library `name` (as torch.backends names it: "mkldnn", ...) is
        there for this backend's kernels (switched on or off by `set_vendor_library`). torch.backends' `is_available()` and
        `enabled` ask here, so tensorlib never imports a backend package."""
        return False

    def set_vendor_library(self, name, enabled):
        """Turn the vendor library `name` on or off for this backend's kernels in this
        process (torch.backends.<name>.enabled); returns whether it is now in use. A backend
        without that library has nothing to switch."""
        return False

    def register(self, table):
        """Fill `table` (op name -> kernel) with this backend's kernels."""
        raise NotImplementedError(f"{type(self).__name__} needs register(table)")


COMPOSITES = {
    # name: (signature, reference path taken when a backend has no such kernel)
    # -- quantized inference (CPU-first, as in PyTorch): no reference path
    "quantized_linear_dynamic": (
        "quantized_linear_dynamic(out, x, weight, weight_scale, bias, reduce_range): x float32 "
        "(rows, in) quantized per call to uint8, weight int8 (out, in), weight_scale a float "
        "or a float tensor (0-d, or one per output channel), int32 accumulation",
        "none: DynamicQuantizedLinear raises NotImplementedError on that device"),
    # -- PyTorch's CPU random stream (TENSORLIB_RNG=pytorch): CPU only
    "mt19937": (
        "mt19937(kind, state, out, *args): PyTorch's CPU generator (mt19937 and its fills) "
        "drawing into the contiguous tensor out in element order and advancing state, a "
        "numpy uint8 array in PyTorch's 5056-byte CPUGeneratorImplState layout; kind is seed, "
        "uniform, normal_fill, normal_serial, ints_from_to, ints_full_range, ints_modulo, "
        "bernoulli, bernoulli_tensor, exponential, cauchy, geometric, randperm, multinomial, "
        "poisson, standard_gamma or binomial (ops/random_torch_stream.py says what each takes)",
        "none: only CPU generators follow PyTorch's stream; other devices keep Philox"),
    # -- elementwise and their backwards
    "relu": ("relu(out, x) -> bool", "maximum(x, 0) (ops/pointwise.py)"),
    "sigmoid": ("sigmoid(out, x) -> bool", "1 / (1 + exp(-|x|)) in ops (ops/pointwise.py)"),
    "relu_backward": ("relu_backward(out, grad, y)",
                      "where(y <= 0, 0, grad) (autograd/formulas/pointwise.py)"),
    "sigmoid_backward": ("sigmoid_backward(out, grad, y) -> bool",
                         "grad * y * (1 - y) (autograd/formulas/pointwise.py)"),
    "tanh_backward": ("tanh_backward(out, grad, y) -> bool",
                      "grad * (1 - y^2) (autograd/formulas/pointwise.py)"),
    "silu": ("silu(out, x) -> bool", "x * sigmoid(x) (ops/activations.py)"),
    "silu_backward": ("silu_backward(out, grad, x) -> bool",
                      "grad * s * (1 + x * (1 - s)), s = sigmoid(x) "
                      "(autograd/formulas/pointwise.py)"),
    "hardtanh": ("hardtanh(out, x, min_val, max_val) -> bool",
                 "x clamped to [min_val, max_val] (ops/piecewise_activations.py)"),
    "hardtanh_backward": ("hardtanh_backward(out, grad, x, min_val, max_val) -> bool",
                          "grad where min_val < x < max_val, else 0 "
                          "(autograd/formulas/activations.py)"),
    "leaky_relu": ("leaky_relu(out, x, negative_slope) -> bool",
                   "x if x > 0 else negative_slope * x (ops/piecewise_activations.py)"),
    "leaky_relu_backward": ("leaky_relu_backward(out, grad, x, negative_slope) -> bool",
                            "grad if x > 0 else negative_slope * grad "
                            "(autograd/formulas/activations.py)"),
    "hardsigmoid": ("hardsigmoid(out, x) -> bool",
                    "min(max(x + 3, 0), 6) / 6 (ops/piecewise_activations.py)"),
    "hardsigmoid_backward": ("hardsigmoid_backward(out, grad, x) -> bool",
                             "grad / 6 where -3 < x < 3, else 0 "
                             "(autograd/formulas/activations.py)"),
    "hardswish": ("hardswish(out, x) -> bool",
                  "x * min(max(x + 3, 0), 6) / 6 (ops/piecewise_activations.py)"),
    "hardswish_backward": ("hardswish_backward(out, grad, x) -> bool",
                           "0 for x <= -3, grad * (x / 3 + 1/2) for x < 3, else grad "
                           "(autograd/formulas/activations.py)"),
    "elu": ("elu(out, x, alpha, scale, input_scale) -> bool",
            "scale * x if x > 0 else alpha * scale * expm1(input_scale * x) "
            "(ops/exp_activations.py)"),
    "elu_backward": ("elu_backward(out, grad, x, alpha, scale, input_scale) -> bool",
                     "grad * scale if x > 0 else grad * input_scale * alpha * scale * "
                     "exp(input_scale * x) (autograd/formulas/activations.py)"),
    "softplus": ("softplus(out, x, beta, threshold) -> bool",
                 "x if beta * x > threshold else log1p(exp(beta * x)) / beta "
                 "(ops/exp_activations.py)"),
    "softplus_backward": ("softplus_backward(out, grad, x, beta, threshold) -> bool",
                          "grad if beta * x > threshold else grad * z / (z + 1), "
                          "z = exp(beta * x) (autograd/formulas/activations.py)"),
    "log_sigmoid": ("log_sigmoid(out, x) -> bool",
                    "min(x, 0) - log1p(exp(-|x|)) (ops/exp_activations.py)"),
    "log_sigmoid_backward": ("log_sigmoid_backward(out, grad, x) -> bool",
                             "grad * ((x < 0) - sign * z / (1 + z)), z = exp(-|x|) "
                             "(autograd/formulas/activations.py)"),
    "mish": ("mish(out, x) -> bool", "x * tanh(log1p(exp(x))) (ops/exp_activations.py)"),
    "mish_backward": ("mish_backward(out, grad, x) -> bool",
                      "grad * (t + x * sigmoid(x) * (1 - t^2)), t = tanh(softplus(x)) "
                      "(autograd/formulas/activations.py)"),
    "gelu": ("gelu(out, x, approximate) -> bool",
             "x * (1 + erf(x / sqrt 2)) / 2, or the tanh form (ops/activations.py)"),
    "gelu_backward": ("gelu_backward(out, grad, x, approximate) -> bool",
                      "grad * (Phi(x) + x phi(x)), or the tanh form's derivative "
                      "(autograd/formulas/pointwise.py)"),
    # -- clamping and float checks
    "clamp": ("clamp(out, x, min, max) -> bool: min and max numbers or None",
              "maximum(x, min), then minimum(., max) (ops/clamping.py)"),
    "float_sign": ("float_sign(out, x) -> bool: -1, 0 or 1, 0 for NaN",
                   "where(isnan(x), 0, sign(x)) (ops/pointwise.py)"),
    "nan_to_num": ("nan_to_num(out, x, nan, posinf, neginf) -> bool",
                   "where(isnan(x), nan, ...) for NaN, +inf, -inf (ops/float_checks.py)"),
    "mask_positions": ("mask_positions(out, mask) -> bool: out 1-D int64 holding the True "
                       "count of the bool mask", "cumsum, then scatter_add of the ranks "
                       "(ops/_index_common.py)"),
    "nonzero": ("nonzero(out, mask) -> bool: out (count, ndim) int64 of any strides (a "
                "transposed (ndim, count) tensor for as_tuple), the True elements' "
                "coordinates in row-major order", "mask_positions, then each coordinate by "
                "integer division (ops/selection.py)"),
    "mask_count": ("mask_count(mask) -> int: the number of True elements of the bool mask",
                   "sum(mask).item() (ops/_index_common.py)"),
    "masked_select": ("masked_select(out, x, mask) -> bool: out 1-D holding x's elements where "
                      "the bool mask (x's shape) is True, in row-major order",
                      "mask_positions, then index_select (ops/selection.py)"),
    "median": ("median(values, indices, x, dim, ignore_nan) -> bool: each row's lower median "
               "along dim and its index as a stable sort (NaN last) picks them (nanmedian: "
               "ignore_nan); values and indices keep dim as 1",
               "sort, the NaN check, gather (ops/reduction.py)"),
    "tri": ("tri(out, x, diagonal, lower) -> bool: tril (lower) or triu of the last two dims",
            "where(arange comparison, x, 0) (ops/triangular.py)"),
    "linear_resample": ("linear_resample(out, x, axis, i0, i1, w0, w1) -> bool: out = "
                        "x[.., i0, ..] * w0 + x[.., i1, ..] * w1 along axis",
                        "two index_selects, two products and a sum "
                        "(nn/_functional/upsampling.py)"),
    "lerp": ("lerp(out, start, end, weight) -> bool: weight a number or a tensor; no graph",
             "start + weight * (end - start), or from end (ops/clamping.py)"),
    "addcmul": ("addcmul(out, input, tensor1, tensor2, value) -> bool: no graph",
                "input + tensor1 * tensor2 * value (ops/clamping.py)"),
    "addcdiv": ("addcdiv(out, input, tensor1, tensor2, value) -> bool: no graph",
                "input + tensor1 / tensor2 * value (ops/clamping.py)"),
    # -- softmax
    "softmax": ("softmax(out, x, dim)", "exp(x - max) / sum (ops/reduction.py)"),
    "log_softmax": ("log_softmax(out, x, dim)",
                    "x - max - log(sum(exp(x - max))) (ops/reduction.py)"),
    "softmax_backward": ("softmax_backward(grad_x, grad, y, dim)",
                         "y * (grad - sum(grad * y)) (autograd/formulas/reduction.py)"),
    "log_softmax_backward": ("log_softmax_backward(grad_x, grad, y, dim)",
                             "grad - exp(y) * sum(grad) (autograd/formulas/reduction.py)"),
    # -- matrix products
    "mm": ("mm(out, a, b): 2-D a @ b", "the matmul primitive (ops/linalg.py)"),
    "addmm": ("addmm(out, mat1, mat2, beta, alpha): out = beta*out + alpha*mat1@mat2",
              "matmul, then mul/add (ops/linalg.py)"),
    "addmm_bias": ("addmm_bias(out, mat1, mat2, bias) -> bool: out = bias + mat1 @ mat2, "
                   "bias 1-D", "copy of the bias, then addmm (ops/linalg.py)"),
    "addmm_bias_relu": ("addmm_bias_relu(out, mat1, mat2, bias) -> bool: out = relu(bias + "
                        "mat1 @ mat2), bias 1-D (inference only)",
                        "addmm_bias, then relu (nn/modules/transformer.py)"),
    "mm_pair": ("mm_pair(out1, a1, b1, out2, a2, b2) -> bool: out1 = a1@b1, out2 = a2@b2 "
                "side by side", "two matmuls (autograd/formulas/linalg.py)"),
    "sparse_coo_mm": ("sparse_coo_mm(out, rows, cols, values, dense): COO (m, k) @ dense",
                      "index_select, mul and index_add (sparse/_kernels.py)"),
    # -- scans
    "reverse_cumsum": ("reverse_cumsum(out, x, dim) -> bool: out[i] = sum of x[j], j >= i "
                       "along dim, added from the last (cumsum's gradient)",
                       "flip, cumsum, flip (autograd/formulas/reduction.py)"),
    # -- sorting
    "topk": ("topk(values, indices, x, dim, k, largest) -> bool: the k largest (smallest) "
             "along dim, best first, ties in index order, NaN largest",
             "the sort primitive, then the first k (ops/sorting.py)"),
    # -- joining
    "cat": ("cat(out, tensors, dim)", "one copy per input (ops/joining.py)"),
    "stack": ("stack(out, tensors, dim)", "cat of unsqueezed views (ops/joining.py)"),
    "pad": ("pad(out, x, pads, mode, value) -> bool: F.pad's (left, right) pairs from the last "
            "dim, mode 'constant' (value), 'reflect', 'replicate' or 'circular'; negative pads "
            "crop", "a fill and a copy, or an index_select per dim (ops/joining.py)"),
    "pad_backward": ("pad_backward(grad_x, grad, pads, mode) -> bool: the adjoint of a "
                     "'reflect', 'replicate' or 'circular' pad (grad_x: the input's sizes)",
                     "a scatter-add through the index map (autograd/formulas/joining.py)"),
    "flip": ("flip(out, x, dims) -> bool: x reversed along dims (a tuple)",
             "an index_select per dim (ops/joining.py)"),
    # -- convolution
    "conv2d": ("conv2d(out, x, w, stride, padding, dilation, groups)",
               "im2col and matmul (nn/_functional/conv.py)"),
    "conv1d": ("conv1d(out, x, w, stride, padding, dilation, groups)",
               "im2col and matmul (nn/_functional/conv.py)"),
    "conv_transpose1d": ("conv_transpose1d(out, g, w, stride, padding, dilation, groups): the "
                         "input gradient of conv1d", "matmul and col2im (nn/_functional/conv.py)"),
    "conv1d_weight_grad": ("conv1d_weight_grad(out, x, g, stride, padding, dilation, groups)",
                           "im2col and matmul (nn/_functional/conv.py)"),
    "conv3d": ("conv3d(out, x, w, stride, padding, dilation, groups)",
               "im2col and matmul (nn/_functional/conv.py)"),
    "conv_transpose3d": ("conv_transpose3d(out, g, w, stride, padding, dilation, groups): the "
                         "input gradient of conv3d", "matmul and col2im (nn/_functional/conv.py)"),
    "conv3d_weight_grad": ("conv3d_weight_grad(out, x, g, stride, padding, dilation, groups)",
                           "im2col and matmul (nn/_functional/conv.py)"),
    "conv2d_bias": ("conv2d_bias(out, x, w, b, stride, padding, dilation, groups)",
                    "conv2d then a bias add (nn/_functional/conv.py)"),
    "conv_transpose2d": ("conv_transpose2d(out, g, w, stride, padding, dilation, groups): "
                         "the input gradient of conv2d",
                         "matmul and col2im (nn/_functional/conv.py)"),
    "conv2d_weight_grad": ("conv2d_weight_grad(out, x, g, stride, padding, dilation, groups)",
                           "im2col and matmul (nn/_functional/conv.py)"),
    "conv2d_backward": ("conv2d_backward(gx, gw, gb, x, g, w, stride, padding, dilation, "
                        "groups): the unwanted ones are None",
                        "conv_transpose2d, conv2d_weight_grad and a sum "
                        "(nn/_functional/conv.py)"),
    # -- pooling, sampling
    "max_pool": ("max_pool(values, indices, x, tables) -> bool: tables, one per spatial dim, "
                 "are (O, k) int64 tensors on x's device: each window's input positions, -1 "
                 "where an element is padding", "gather and amax over the windows "
                 "(nn/_functional/pooling.py)"),
    "max_pool_backward": ("max_pool_backward(grad_x, grad, indices, tables) -> bool: tables, "
                          "one per spatial dim, are (offsets, outputs) int64 tensors on the "
                          "device, the CSR of the windows holding each input position",
                          "one flat scatter-add (nn/_functional/pooling.py)"),
    "grid_sampler_2d": ("grid_sampler_2d(out, input, grid, mode, padding_mode, align_corners)"
                        " -> bool", "gathers and weights in ops (nn/_functional/vision.py)"),
    "grid_sampler_2d_backward": ("grid_sampler_2d_backward(grad_input, grad_grid, grad, "
                                 "input, grid, mode, padding_mode, align_corners) -> bool",
                                 "the composite's derivative (nn/_functional/vision.py)"),
    # -- normalisation and losses
    "batch_norm": ("batch_norm(out, x, running_mean, running_var, weight, bias, eps): "
                   "inference", "normalisation in ops (nn/_functional/normalization.py)"),
    "rms_norm": ("rms_norm(out, x, weight, ndim, eps): inference",
                 "rsqrt of the mean square in ops (nn/_functional/normalization.py)"),
    "rms_norm_train": ("rms_norm_train(out, stats, x, weight, ndim, eps): stats (rows, 2) = "
                       "(0, rstd)", "the mean square in ops, recorded for autograd"),
    "rms_norm_backward": ("rms_norm_backward(grad_x, grad, x, weight, stats, ndim)",
                          "the derivative in ops (nn/_functional/normalization.py)"),
    "layer_norm": ("layer_norm(out, x, weight, bias, ndim, eps): inference",
                   "mean/var in ops (nn/_functional/normalization.py)"),
    "layer_norm_train": ("layer_norm_train(out, stats, x, weight, bias, ndim, eps): stats "
                         "(rows, 2) = (mean, rstd)", "mean/var in ops, recorded for autograd"),
    "layer_norm_backward": ("layer_norm_backward(grad_x, grad, x, weight, stats, ndim)",
                            "the derivative in ops (nn/_functional/normalization.py)"),
    "layer_norm_backward_affine": ("layer_norm_backward_affine(grad_w, grad_b, grad, x, "
                                   "stats, ndim): the unwanted one is None",
                                   "sums over rows in ops"),
    "vector_norm": ("vector_norm(out, x, ord, dims) -> bool: the ord-norm over the tuple dims, "
                    "out of the reduced sizes", "(x * x).sum(dims).sqrt() and the like "
                    "(ops/linalg.py)"),
    "vector_norm_backward": ("vector_norm_backward(grad_x, grad, x, norm, ord, dims) -> bool: "
                             "grad and norm of the reduced sizes",
                             "the derivative in ops (autograd/formulas/linalg.py)"),
    "group_norm": ("group_norm(out, stats, x, weight, bias, num_groups, eps): stats (N * G, 2) "
                   "= (mean, rstd), None for inference",
                   "mean/var over (N, G, -1) in ops (nn/_functional/normalization.py)"),
    "group_norm_backward": ("group_norm_backward(grad_x, grad_w, grad_b, grad, x, weight, "
                            "stats, num_groups): the unwanted ones are None",
                            "the derivative in ops (nn/_functional/normalization.py)"),
    "cross_entropy": ("cross_entropy(rows, x, target, ignore_index) -> kept rows: per-row "
                      "loss of class targets", "log_softmax and gather (nn/_functional/"
                      "loss.py)"),
    "cross_entropy_backward": ("cross_entropy_backward(grad_x, grad_rows, x, target, "
                               "ignore_index)", "softmax minus one-hot, in ops"),
    "regression_loss": ("regression_loss(out, x, y, loss, param, scale) -> bool: out 0-d = "
                        "scale * sum(loss(x - y)), loss 'l1', 'mse', 'smooth_l1' (beta = "
                        "param) or 'huber' (delta = param)",
                        "the elementwise loss, then mean or sum (nn/_functional/loss.py)"),
    "regression_loss_backward": ("regression_loss_backward(grad_x, grad, x, y, loss, param, "
                                 "scale) -> bool: grad 0-d",
                                 "autograd through the composed loss"),
    # -- attention, recurrent
    "scaled_dot_product_attention": (
        "scaled_dot_product_attention(out, lse, q, k, v, mask, is_causal, scale)",
        "matmul, softmax, matmul (nn/_functional/attention.py)"),
    "scaled_dot_product_attention_backward": (
        "scaled_dot_product_attention_backward(dq, dk, dv, grad, q, k, v, out, lse, mask, "
        "is_causal, scale)", "the derivative in ops (nn/_functional/attention_fused.py)"),
    "lstm_cell": ("lstm_cell(h_new, c_new, act, igates, hgates, c) -> bool: act (rows, "
                  "5*hidden) saved for the backward", "sigmoid/tanh of the gate chunks "
                  "(nn/_functional/lstm_cell.py)"),
    "lstm_cell_backward": ("lstm_cell_backward(grad_gates, grad_c_old, grad_h, grad_c, c, act)"
                           " -> bool", "the derivative in ops (nn/_functional/lstm_cell.py)"),
    # -- optimizers
    "sgd_update": ("sgd_update(param, grad, buf, lr, weight_decay, momentum, dampening, "
                   "nesterov, maximize, first) -> bool", "tensor ops (optim/sgd.py)"),
    "sgd_update_multi": ("sgd_update_multi(params, grads, bufs, lr, weight_decay, momentum, "
                         "dampening, nesterov, maximize, firsts) -> bool",
                         "sgd_update per parameter (optim/sgd.py)"),
    "adam_update_multi": ("adam_update_multi(params, grads, exp_avgs, exp_avg_sqs, "
                          "max_exp_avg_sqs, step_sizes, bias_correction2_sqrts, beta1, beta2, "
                          "weight_decay, lr, eps, amsgrad, maximize, decoupled) -> bool",
                          "tensor ops per parameter (optim/adam.py)"),
    "adam_update_multi_capturable": (
        "adam_update_multi_capturable(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, "
        "state_steps, beta1, beta2, weight_decay, lr, eps, amsgrad, maximize, decoupled) -> "
        "bool: the steps are tensors", "adam_update_multi, else tensor ops (optim/adam.py)"),
}
"""The optional composite kernels: one call for what the framework otherwise composes from
primitives. A backend registers any of them under its name in `register(table)`; the
framework looks them up through `tensorlib.ops._composites.optional_kernel`, and an absent
one means the reference path listed here runs instead. How a kernel declines a call it does
not cover (a layout, dtype or shape it lacks) is the same for all: it returns False before
writing anything, and the caller takes the reference path. A signature marked "-> bool"
may decline and returns True when it wrote its outputs; the others are called only after the
caller has checked what they take (float32/float64, dense inputs) and must handle the call.
A kernel never records autograd: the op records its node around the call, and a backward
kernel is skipped when a graph of the backward itself is recorded (create_graph)."""
