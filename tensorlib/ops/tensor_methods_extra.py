"""Tensor methods PyTorch programs call that tensorlib had no name for: the element-wise
Python callbacks apply_/map_/map2_ (host tensors only, as PyTorch), fill_diagonal_,
new_empty_strided, resize / resize_as(_), is_set_to, dim_order, const_data_ptr, the
hardshrink/prelu/stft/istft methods, the is_<device> queries that are False here, and
the removed `volatile` (always False) and `name` (None)."""
import warnings

__all__ = []


def _host_only(self, name):
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _map_values(self, fn, *others):
    """self[i] = fn(self[i], others[0][i], ...) with the others broadcast to self's shape."""
    from tensorlib.ops.creation import tensor
    columns = [self.reshape(-1).tolist()] + \
        [o.expand(self.shape).reshape(-1).tolist() for o in others]
    values = [fn(*row) for row in zip(*columns)]
    self.copy_(tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


def apply_(self, callable):  # noqa: A002 - PyTorch's name
    _host_only(self, "apply_")
    return _map_values(self, callable)


def map_(self, tensor, callable):  # noqa: A002
    _host_only(self, "map_")
    return _map_values(self, callable, tensor)


def map2_(self, x, y, callable):  # noqa: A002
    _host_only(self, "map2_")
    return _map_values(self, callable, x, y)


def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (all dims equal, or a matrix); `wrap` restarts it every
    cols + 1 rows of a tall matrix, as in NumPy's fill_diagonal."""
    from tensorlib.ops.creation import arange, tensor
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    rows, cols = self.shape[0], self.shape[1]
    if self.dim() == 2:
        limit = rows * cols if wrap else min(rows, cols) * cols
        flat = arange(0, limit, cols + 1, device=self.device) if limit else \
            arange(0, device=self.device)
        index = (flat // cols, flat % cols)
    else:
        index = (arange(rows, device=self.device),) * self.dim()
    value = tensor(fill_value, dtype=self.dtype, device=self.device)
    return self.index_put_(index, value)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    from tensorlib.ops.creation import empty_strided
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device,
                         requires_grad=requires_grad)


def resize(self, *sizes):
    """A view of self with `sizes` (same number of elements); deprecated in PyTorch."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    from tensorlib.ops._args import sizes_arg
    return self.reshape(sizes_arg(sizes))


def resize_as(self, tensor):  # noqa: A002
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return self.reshape(tensor.shape)


def resize_as_(self, the_template, *, memory_format=None):
    return self.resize_(the_template.shape)


def is_set_to(self, tensor):  # noqa: A002
    """Whether both are the same view of the same storage."""
    return (self.untyped_storage() is tensor.untyped_storage() and
            self.storage_offset() == tensor.storage_offset() and
            tuple(self.shape) == tuple(tensor.shape) and self.stride() == tensor.stride())


def dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (by stride, ties in dim order)."""
    strides = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: -strides[d]))


def const_data_ptr(self):
    return self.data_ptr()


def hardshrink(self, lambd=0.5):
    from tensorlib.nn import functional as F
    return F.hardshrink(self, lambd)


def prelu(self, weight):
    from tensorlib.nn import functional as F
    return F.prelu(self, weight)


def stft(self, *args, **kwargs):
    from tensorlib.fft._stft import stft as _stft
    return _stft(self, *args, **kwargs)


def istft(self, *args, **kwargs):
    from tensorlib.fft._stft import istft as _istft
    return _istft(self, *args, **kwargs)


def _false(self):
    return False


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


_NOT_THIS_DEVICE = ("is_xpu", "is_mps", "is_ipu", "is_xla", "is_mtia", "is_maia",
                    "is_vulkan", "is_mkldnn", "is_nested")
TENSOR_METHODS = {"apply_": apply_, "map_": map_, "map2_": map2_,
                  "fill_diagonal_": fill_diagonal_, "new_empty_strided": new_empty_strided,
                  "resize": resize, "resize_as": resize_as, "resize_as_": resize_as_,
                  "is_set_to": is_set_to, "dim_order": dim_order,
                  "const_data_ptr": const_data_ptr, "hardshrink": hardshrink, "prelu": prelu,
                  "stft": stft, "istft": istft,
                  "volatile": property(_volatile),
                  "name": None,        # a plain value: code may set its own name on a tensor
                  **{name: property(_false) for name in _NOT_THIS_DEVICE}}
