"""Shape ops: views from _C.views, plus the ones that copy only when strides force it
(reshape, contiguous, flatten) and clone."""
import tensorlib._C.dtypes as dt
from tensorlib._C import views as _v
from tensorlib._C.dispatch import lookup
from tensorlib._C.factory import empty
from tensorlib._C.tensor_impl import is_contiguous, numel
from tensorlib.ops._args import dims_arg, sizes_arg, sizes_by_keyword
from tensorlib.ops import memory_format as _mf
from tensorlib.ops._opdef import differentiable

__all__ = ["view", "reshape", "flatten", "permute", "transpose", "t", "squeeze", "unsqueeze",
           "narrow", "select", "unfold", "as_strided", "clone", "diagonal", "contiguous",
           "expand", "ravel", "swapaxes", "swapdims"]


def view(x, *shape, dtype=None, size=None):
    """x.view(*sizes), or x.view(dtype): the same memory read as another dtype (both also by
    keyword, as PyTorch's parser takes them)."""
    if dtype is not None or size is not None:
        if shape or (dtype is not None and size is not None):
            raise TypeError("view() takes sizes or a dtype, positionally or by keyword, once")
        return view_dtype(x, dtype) if dtype is not None else _view_sizes(x, size)
    if len(shape) == 1 and isinstance(shape[0], dt.dtype):
        return view_dtype(x, shape[0])
    return _view_sizes(x, *shape)


@differentiable("view")
def _view_sizes(x, *shape):
    return _v.view(x, sizes_arg(shape))


def view_dtype(x, dtype):
    """The bytes of x reinterpreted as `dtype` (a bitcast, PyTorch's rules): the same shape
    when the element sizes match; otherwise the last dim (stride 1) is split or merged by
    their ratio, the other strides and the offset scaled. Not differentiable (as PyTorch's)."""
    old, new = x._dtype.itemsize, dtype.itemsize
    what = f"to view {x._dtype.scalar_name} as {dtype.scalar_name} (different element sizes)"
    if old == new:
        return _alias(x, x._sizes, x._strides, x._offset, dtype)
    if x.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if x._strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {x._strides[-1]}")
    if new < old:
        ratio = old // new
        return _alias(x, x._sizes[:-1] + (x._sizes[-1] * ratio,),
                      tuple(s * ratio for s in x._strides[:-1]) + (1,), x._offset * ratio,
                      dtype)
    ratio = new // old
    if x._sizes[-1] % ratio:
        raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                           f"{x._sizes[-1]}")
    if x._offset % ratio:
        raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but "
                           f"got {x._offset}")
    for i, s in enumerate(x._strides[:-1]):
        if s % ratio:
            raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {what}, but "
                               f"got {s}")
    return _alias(x, x._sizes[:-1] + (x._sizes[-1] // ratio,),
                  tuple(s // ratio for s in x._strides[:-1]) + (1,), x._offset // ratio, dtype)


def _alias(x, sizes, strides, offset, dtype):
    from tensorlib._C.tensor_impl import wrap
    out = wrap(x._storage, sizes, strides, offset, dtype)
    out._base = x if x._base is None else x._base
    return out


@differentiable("reshape")
def reshape(x, *shape, **keyword):
    if keyword:
        shape = sizes_by_keyword("reshape", shape, keyword, "shape")
    sizes = _v.infer_size(sizes_arg(shape), numel(x._sizes))
    strides = _v.view_strides(x._sizes, x._strides, sizes)
    if strides is not None:
        return _v.view(x, sizes)
    return _v.view(contiguous(x), sizes)


def contiguous(x, memory_format=None):
    """x itself when laid out in memory_format (default contiguous_format), else a copy."""
    if memory_format is None or memory_format is _mf.contiguous_format:
        return x if is_contiguous(x) else clone(x, memory_format=_mf.contiguous_format)
    return _mf.contiguous_in(x, memory_format)


@differentiable("clone")
def clone(x, memory_format=None):
    """A copy in memory_format (default preserve_format: see NOTE [ Which layouts are
    preserved ] in ops/memory_format.py)."""
    fmt = _mf.suggest(x) if memory_format is None else _mf.resolve(memory_format, x)
    out = _mf.empty_in(x._sizes, x._dtype, x._device, fmt)
    lookup("copy", x._device)(out, x)
    return out


def ravel(x):
    """The elements as one dim, in row-major order (a view when the strides allow)."""
    return reshape(x, (-1,))


@differentiable("flatten")
def flatten(x, start_dim=0, end_dim=-1):
    nd = x.dim()
    if nd == 0:
        _v.wrap_dim(start_dim, 1), _v.wrap_dim(end_dim, 1)      # range-checked as PyTorch's
        return reshape(x, (1,))
    start = _v.wrap_dim(start_dim, nd)
    end = _v.wrap_dim(end_dim, nd)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return x
    merged = numel(x._sizes[start:end + 1])
    return reshape(x, x._sizes[:start] + (merged,) + x._sizes[end + 1:])


@differentiable("permute")
def permute(x, *dims, **keyword):
    return _v.permute(x, sizes_arg(sizes_by_keyword("permute", dims, keyword, "dims"), "dims"))


@differentiable("transpose")
def transpose(x, dim0, dim1):
    return _v.transpose(x, dim0, dim1)


def swapaxes(x, axis0, axis1):
    """transpose under NumPy's name, with PyTorch's keywords for it."""
    return transpose(x, axis0, axis1)


def swapdims(x, dim0, dim1):
    """transpose under another name."""
    return transpose(x, dim0, dim1)


@differentiable("t")
def t(x):
    if x.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{x.dim()}D")
    if x.dim() == 2:
        return _v.transpose(x, 0, 1)
    return _v.as_strided(x, x._sizes, x._strides, x._offset)   # a view, as in torch


@differentiable("expand")
def expand(x, *sizes, **keyword):
    return _v.expand(x, sizes_arg(sizes_by_keyword("expand", sizes, keyword, "size")))


@differentiable("squeeze")
def squeeze(x, dim=None):
    if isinstance(dim, (tuple, list)):
        dims_arg(dim, x.dim())                 # a repeated dim raises
    return _v.squeeze(x, dim)


@differentiable("unsqueeze")
def unsqueeze(x, dim):
    return _v.unsqueeze(x, dim)


@differentiable("narrow")
def narrow(x, dim, start, length):
    if length < 0:                        # checked before dim, as PyTorch does
        raise RuntimeError("narrow(): length must be non-negative.")
    return _v.narrow(x, dim, int(start), length)


@differentiable("select")
def select(x, dim, index):
    return _v.select(x, dim, index)


@differentiable("unfold")
def unfold(x, dimension, size, step):
    return _v.unfold(x, dimension, size, step)


@differentiable("as_strided")
def as_strided(x, size, stride, storage_offset=None):
    return _v.as_strided(x, size, stride, storage_offset)


@differentiable("diagonal")
def diagonal(x, offset=0, dim1=0, dim2=1):
    return _v.diagonal(x, offset, dim1, dim2)


# ---- in-place views: this tensor takes the view's sizes and strides (same storage) ---------
def _inplace_view(fn, name):
    def method(self, *args, **kwargs):
        view = fn(self, *args, **kwargs)
        if view._grad_fn is not None:
            if self._grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an "
                                   "in-place operation.")
            self._grad_fn, self._output_nr = view._grad_fn, view._output_nr
        self._sizes, self._strides, self._offset = view._sizes, view._strides, view._offset
        self._cache = None
        return self
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In place {fn.__name__}: this tensor becomes the view (same storage)."
    return method


TENSOR_METHODS = {"t_": _inplace_view(t, "t_"),
                  "transpose_": _inplace_view(transpose, "transpose_"),
                  "swapdims_": _inplace_view(transpose, "swapdims_"),
                  "swapaxes_": _inplace_view(transpose, "swapaxes_"),
                  "squeeze_": _inplace_view(squeeze, "squeeze_"),
                  "unsqueeze_": _inplace_view(unsqueeze, "unsqueeze_")}
