r"""Memory formats, PyTorch's names for the layouts a dense tensor may have:
`contiguous_format` (row-major), `channels_last` (4-D: N, H, W, C in memory),
`channels_last_3d` (5-D: N, D, H, W, C) and `preserve_format` (the layout of the tensor an
op copies or mimics).

NOTE [ Which layouts are preserved ]
The strided core holds any strides; a memory format only says which strides a new tensor
gets. `preserve_format` resolves to channels_last (or _3d) when the source tensor is laid out
that way and is not also contiguous, and to contiguous_format otherwise. PyTorch goes
further for other permutations (`x.t().clone()` keeps the transposed strides there); here
those copies come out contiguous. Elementwise ops follow the same rule for their output
(`_C/memory_format.pyx::empty_in_layout_of`): the first operand of the output's shape
decides, as in PyTorch's TensorIterator.
"""
from tensorlib._C.dtypes import package_name
from tensorlib._C.factory import empty as _empty
from tensorlib._C.memory_format import empty_channels_last, is_channels_last
from tensorlib._C.tensor_impl import is_contiguous

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d",
           "preserve_format"]


class memory_format:  # noqa: N801 - PyTorch's class name
    """One of the four formats; compared by identity."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"{package_name()}.{self.name}"

    def __reduce__(self):
        return self.name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def check(fmt, name="memory_format"):
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{name} must be tensorlib.memory_format, not {type(fmt).__name__}")
    return fmt


def suggest(t):
    """The format `preserve_format` means for a copy of t (NOTE [ Which layouts are
    preserved ])."""
    nd = len(t._sizes)
    if nd in (4, 5) and not is_contiguous(t) and is_channels_last(t):
        return channels_last if nd == 4 else channels_last_3d
    return contiguous_format


def suggest_for_output(rank, *inputs):
    """The format of a convolution's or pooling's `rank`-D output, as PyTorch's CPU and GPU
    kernels choose it (suggest_memory_format): channels-last when one of `inputs` (tensors
    or None) of that rank is, else contiguous. An NCHW call pays one stride check per
    input."""
    for t in inputs:
        if t is not None and is_channels_last(t) and not is_contiguous(t) and \
                len(t._sizes) == rank:
            return channels_last if rank == 4 else channels_last_3d
    return contiguous_format


def in_layout_of_inputs(out, *inputs):
    """`out` of a convolution or pooling in the format `suggest_for_output` gives: a layout
    copy at the end when the kernel wrote NCHW (none when it already wrote that format)."""
    fmt = suggest_for_output(len(out._sizes), *inputs)
    return out if fmt is contiguous_format else contiguous_in(out, fmt)


def _check_rank(sizes, fmt):
    rank = 4 if fmt is channels_last else 5
    if len(sizes) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")


def empty_in(sizes, dtype, device, fmt):
    """An uninitialised tensor laid out in `fmt` (not preserve_format, which needs a
    source: resolve it with `suggest` first)."""
    if fmt is contiguous_format:
        return _empty(sizes, dtype, device)
    if fmt is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    _check_rank(sizes, fmt)
    return empty_channels_last(sizes, dtype, device)


def is_in(t, fmt):
    """Tensor.is_contiguous(memory_format=fmt)."""
    fmt = check(fmt)
    if fmt is contiguous_format or fmt is preserve_format:
        return is_contiguous(t)
    rank = 4 if fmt is channels_last else 5
    return len(t._sizes) == rank and is_channels_last(t)


def resolve(fmt, t):
    """fmt, with preserve_format replaced by t's own format."""
    return suggest(t) if check(fmt) is preserve_format else fmt


def contiguous_in(x, fmt):
    """x itself when already laid out in fmt, else a copy that is (differentiable)."""
    fmt = resolve(fmt, x)
    if fmt is not contiguous_format:
        _check_rank(x._sizes, fmt)
    if is_in(x, fmt):
        return x
    from tensorlib.ops.shape import clone
    return clone(x, memory_format=fmt)
