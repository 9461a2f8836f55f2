"""select_scatter, slice_scatter, diagonal_scatter, as_strided_scatter: a copy of `input`
with `src` written into one view of it. Each clones and copies into the view, so autograd
is the view's in-place rule (input's gradient is zero under the view, src's is the view of
the gradient) and every backend runs them."""
__all__ = ["as_strided_scatter", "diagonal_scatter", "select_scatter", "slice_scatter"]


def _scatter_into(input, src, view, out=None):  # noqa: A002 - PyTorch's name
    """`out` (default: a clone of input) with src copied into view(out)."""
    from tensorlib._C.tensor_impl import TensorImpl
    if not isinstance(src, TensorImpl):
        raise TypeError(f"argument 'src' must be Tensor, not {type(src).__name__}")
    out = input.clone() if out is None else out
    target = view(out)
    if tuple(src.shape) != tuple(target.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(target.shape)}")
    target.copy_(src)
    return out


def select_scatter(input, src, dim, index):  # noqa: A002
    return _scatter_into(input, src, lambda out: out.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):  # noqa: A002
    def view(out):
        d = dim + out.dim() if dim < 0 else dim
        key = (slice(None),) * d + (slice(start, end, step),)
        return out[key]
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return _scatter_into(input, src, view)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):  # noqa: A002
    return _scatter_into(input, src, lambda out: out.diagonal(offset, dim1, dim2))


def as_strided_scatter(input, src, size, stride, storage_offset=None):  # noqa: A002
    """The strides address a copy of input's whole storage (as in PyTorch), and the result
    views that copy with input's sizes, strides and offset. The result view is taken after
    the write, so its autograd history includes it."""
    offset = input.storage_offset() if storage_offset is None else storage_offset
    numel = input.untyped_storage().nbytes() // input.element_size()
    whole = input.as_strided((numel,), (1,), 0).clone()
    _scatter_into(whole, src, lambda out: out.as_strided(size, stride, offset), whole)
    return whole.as_strided(input.shape, input.stride(), input.storage_offset())


TENSOR_METHODS = {name: globals()[name] for name in __all__}
