r"""tensorlib.nn.init: fill a tensor in place with values from a distribution (PyTorch's
names, defaults and errors). Every function runs under no_grad and draws through the tensor's
own generator methods (`Tensor.uniform_`, `Tensor.normal_`, `tensorlib.randperm`), so one
seed gives the same initialization on every device -- and, in pytorch stream mode
(`TENSORLIB_RNG=pytorch`), PyTorch's own on the CPU (trunc_normal_ then makes PyTorch's calls:
`_pytorch_trunc_normal_`)."""
import contextlib
import functools
import math
import warnings

import tensorlib
from tensorlib.ops.random import follows_pytorch_stream

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_"]


def _gen(generator):
    return {} if generator is None else {"generator": generator}


def _no_grad_uniform_(tensor, a, b, generator=None):
    with tensorlib.no_grad():
        return tensor.uniform_(a, b, **_gen(generator))


def _no_grad_normal_(tensor, mean, std, generator=None):
    with tensorlib.no_grad():
        return tensor.normal_(mean, std, **_gen(generator))


def _no_grad_fill_(tensor, val):
    with tensorlib.no_grad():
        return tensor.fill_(val)


def calculate_gain(nonlinearity, param=None):
    r"""The recommended gain for a nonlinearity.

    ================= ====================================================
    nonlinearity      gain
    ================= ====================================================
    Linear / Identity :math:`1`
    Conv{1,2,3}D      :math:`1`
    Sigmoid           :math:`1`
    Tanh              :math:`\frac{5}{3}`
    ReLU              :math:`\sqrt{2}`
    Leaky Relu        :math:`\sqrt{\frac{2}{1 + \text{negative\_slope}^2}}`
    SELU              :math:`\frac{3}{4}`
    ================= ====================================================
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    elif nonlinearity == "tanh":
        return 5.0 / 3
    elif nonlinearity == "relu":
        return math.sqrt(2.0)
    elif nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or \
                isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    elif nonlinearity == "selu":
        return 3.0 / 4
    else:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    r"""Fill with values from U(a, b)."""
    return _no_grad_uniform_(tensor, a, b, generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    r"""Fill with values from N(mean, std^2)."""
    return _no_grad_normal_(tensor, mean, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    r"""Fill with values from N(mean, std^2) truncated to [a, b] (absolute bounds).

    Drawn by rejection: values outside [a, b] are redrawn until none is left (the
    acceptance rate is high for the usual bounds); the result is clamped as a last guard."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    if follows_pytorch_stream(tensor.device, generator):
        return _pytorch_trunc_normal_(tensor, mean, std, a, b, generator)
    with tensorlib.no_grad():
        values = tensorlib.empty(tuple(tensor.shape), dtype=tensor.dtype,
                                 device=tensor.device)
        values.normal_(mean, std, **_gen(generator))
        for _ in range(64):
            outside = (values < a) | (values > b)
            if not bool(outside.any()):
                break
            fresh = tensorlib.empty_like(values).normal_(mean, std, **_gen(generator))
            values = tensorlib.where(outside, fresh, values)
        values = tensorlib.minimum(tensorlib.maximum(values, a), b)
        tensor.copy_(values)
    return tensor


def _pytorch_trunc_normal_(tensor, mean, std, a, b, generator):
    """PyTorch 2.13's trunc_normal_, call for call (pytorch stream mode draws its numbers):
    when [a, b] holds over 30% of the mass, normals redrawn where outside the bounds (cast
    to the tensor's dtype); otherwise uniform proposals on [a, b] accepted where
    log(u) <= the log density relative to its peak."""
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    gen = _gen(generator)
    with tensorlib.no_grad():
        if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
            lo, hi = (tensorlib.tensor(v, dtype=tensor.dtype).item() for v in (a, b))
            result = tensor.normal_(mean, std, **gen)
            while True:
                outside = (result < lo) | (result > hi)
                if not bool(outside.any()):
                    break
                result = tensorlib.where(outside, tensorlib.empty_like(result)
                                         .normal_(mean, std, **gen), result)
            if result is not tensor:
                tensor.copy_(result)
            return tensor
        log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

        def log_density(x):
            return x.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)

        candidates, accept = tensorlib.empty_like(tensor), tensorlib.empty_like(tensor)
        tensor.uniform_(a, b, **gen)
        candidates.copy_(tensor)
        pending = accept.uniform_(**gen).log_().gt(log_density(candidates))
        result = tensor
        while bool(pending.any()):
            candidates.uniform_(a, b, **gen)
            result = tensorlib.where(pending, candidates, result)
            pending = tensorlib.where(pending, accept.uniform_(**gen).log_()
                                      .gt(log_density(candidates)), pending)
        if result is not tensor:
            tensor.copy_(result)
    return tensor


def constant_(tensor, val):
    r"""Fill with the value `val`."""
    return _no_grad_fill_(tensor, val)


def ones_(tensor):
    r"""Fill with 1."""
    return _no_grad_fill_(tensor, 1.0)


def zeros_(tensor):
    r"""Fill with 0."""
    with tensorlib.no_grad():
        return tensor.zero_()


def eye_(tensor):
    r"""Fill a 2-D tensor with the identity matrix."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with tensorlib.no_grad():
        tensor.copy_(tensorlib.eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def dirac_(tensor, groups=1):
    r"""Fill a {3, 4, 5}-D tensor with the Dirac delta (convolution weights that keep the
    input channels), in `groups` groups along dim 0."""
    dimensions = tensor.dim()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    with tensorlib.no_grad():
        tensor.zero_()
        centre = tuple(s // 2 for s in sizes[2:])
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_chans_per_grp + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    if dimensions > 2:
        for s in tensor.shape[2:]:
            receptive_field_size *= s
    fan_in = num_input_fmaps * receptive_field_size
    fan_out = num_output_fmaps * receptive_field_size
    return fan_in, fan_out


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    r"""Glorot uniform: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return _no_grad_uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    r"""Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _no_grad_normal_(tensor, 0.0, std, generator)


def _zero_element(tensor):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    r"""He uniform: U(-bound, bound), bound = gain * sqrt(3 / fan_mode).

    Args:
        a: the negative slope of the rectifier after this layer (leaky_relu only)
        mode: 'fan_in' (default) keeps the variance of the forward pass, 'fan_out' of the
            backward pass
        nonlinearity: the function's name, 'relu' or 'leaky_relu' (default)
    """
    if _zero_element(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return _no_grad_uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    r"""He normal: N(0, std^2), std = gain / sqrt(fan_mode)."""
    if _zero_element(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    std = gain / math.sqrt(fan)
    return _no_grad_normal_(tensor, 0.0, std, generator)


def _orthonormal_columns(a):
    """Q of the QR decomposition of a (n x m, n >= m) with R's diagonal positive: twice-
    repeated modified Gram-Schmidt in tensorlib ops (init runs once; no QR primitive)."""
    n, m = a.shape
    q = tensorlib.zeros((n, m), dtype=a.dtype, device=a.device)
    for j in range(m):
        v = a[:, j]
        for _ in range(2):
            if j > 0:
                basis = q[:, :j]
                v = v - tensorlib.matmul(basis, tensorlib.matmul(basis.t(), v))
        v = v / tensorlib.sqrt((v * v).sum())
        q[:, j] = v
    return q


def orthogonal_(tensor, gain=1, generator=None):
    r"""Fill with a (semi-)orthogonal matrix (Saxe et al. 2013); dims after the first are
    flattened. The matrix is the Q of a Gaussian matrix's QR with sign fix (Haar-distributed),
    computed by Gram-Schmidt in tensorlib ops when tensorlib has no linalg.qr."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with tensorlib.no_grad():
        flattened = tensorlib.empty((rows, cols), dtype=tensor.dtype, device=tensor.device)
        flattened.normal_(0.0, 1.0, **_gen(generator))
        if rows < cols:
            flattened = flattened.t()
        qr = getattr(getattr(tensorlib, "linalg", None), "qr", None)
        if qr is not None:
            q, r = qr(flattened)
            q = q * tensorlib.sign(r.diagonal())
        else:
            q = _orthonormal_columns(flattened.contiguous())
        if rows < cols:
            q = q.t()
        tensor.view_as(q).copy_(q) if tensor.is_contiguous() else \
            tensor.copy_(q.reshape(tuple(tensor.shape)))
        if gain != 1:
            tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    r"""Fill a 2-D tensor from N(0, std^2) with a fraction `sparsity` of each column zero."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with tensorlib.no_grad():
        tensor.normal_(0, std, **_gen(generator))
        for col_idx in range(cols):
            row_indices = tensorlib.randperm(rows, device=tensor.device, **_gen(generator))
            zero_indices = row_indices[:num_zeros]
            tensor[zero_indices, col_idx] = 0
    return tensor


# ---- skipping: nn.utils.skip_init builds a module with every initializer a no-op -----------
_skipping = [False]


def _skippable(fn):
    @functools.wraps(fn)
    def init(tensor, *args, **kwargs):
        return tensor if _skipping[0] else fn(tensor, *args, **kwargs)
    return init


for _name in __all__:
    if _name.endswith("_"):
        globals()[_name] = _skippable(globals()[_name])


@contextlib.contextmanager
def skipped():
    """Within: every in-place initializer returns its tensor unchanged (the values stay as
    `empty` left them)."""
    previous, _skipping[0] = _skipping[0], True
    try:
        yield
    finally:
        _skipping[0] = previous


# PyTorch's deprecated aliases without the trailing underscore
def _deprecated(fn):
    old = fn.__name__[:-1]

    def deprecated(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{fn.__name__}`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    deprecated.__name__ = old
    return deprecated


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
