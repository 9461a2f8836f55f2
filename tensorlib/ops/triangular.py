"""Triangles and diagonals of the last two dims: tril/triu (and in place), diag, diag_embed,
trace. Masks come from arange comparisons and diagonals are strided views (`_C.views`), so
every backend runs them with where/copy/sum (tril/triu by a backend's `tri` kernel where it
has one); formulas in autograd/formulas/joining.py."""
import tensorlib._C.dtypes as dt
from tensorlib._C import views as _v
from tensorlib._C.factory import empty
from tensorlib.ops._composites import optional_kernel
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._unsigned import refuse_unsigned
from tensorlib.ops.joining import _copy, _where, _zeros
from tensorlib.ops.shape import clone, reshape

__all__ = ["tril", "triu", "diag", "diag_embed", "trace"]


def _tri_mask(x, diagonal, lower):
    """True where col - row <= diagonal (lower) or >= diagonal (upper), shape (rows, cols)."""
    from tensorlib.ops.creation import arange
    rows, cols = x._sizes[-2:]
    offset = arange(cols, device=x._device) - reshape(arange(rows, device=x._device),
                                                      (rows, 1))
    return offset.le(diagonal) if lower else offset.ge(diagonal)


def _check_tri(name, x):
    if x.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(input, diagonal=0):  # noqa: A002
    """Zero above the diagonal-th diagonal of the last two dims (batched)."""
    refuse_unsigned("tril", input._dtype)
    _check_tri("tril", input)
    return _tril(input, int(diagonal))


def triu(input, diagonal=0):  # noqa: A002
    """Zero below the diagonal-th diagonal of the last two dims (batched)."""
    refuse_unsigned("triu", input._dtype)
    _check_tri("triu", input)
    return _triu(input, int(diagonal))


def _by_kernel(x, diagonal, lower):
    """The backend's `tri` kernel (a row copy and a zero fill, one pass), or None."""
    kernel = optional_kernel(x._device, "tri")
    if kernel is None:
        return None
    out = empty(x._sizes, x._dtype, x._device)
    return out if kernel(out, x, diagonal, lower) else None


@differentiable("tril")
def _tril(x, diagonal):
    out = _by_kernel(x, diagonal, True)
    if out is not None:
        return out
    return _where(_tri_mask(x, diagonal, True), x, _zeros((), x._dtype, x._device))


@differentiable("triu")
def _triu(x, diagonal):
    out = _by_kernel(x, diagonal, False)
    if out is not None:
        return out
    return _where(_tri_mask(x, diagonal, False), x, _zeros((), x._dtype, x._device))


def tril_(self, diagonal=0):
    """In place through copy_ (which records the overwrite for autograd)."""
    return self.copy_(tril(self, diagonal))


def triu_(self, diagonal=0):
    return self.copy_(triu(self, diagonal))


def diag(input, diagonal=0):  # noqa: A002
    """1-D: a square matrix with input on the diagonal-th diagonal; 2-D: that diagonal."""
    if input.dim() not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.dim()}D")
    return _diag(input, int(diagonal))


@differentiable("diag")
def _diag(x, k):
    if x.dim() == 2:
        return clone(_v.diagonal(x, k, 0, 1))
    n = x._sizes[0] + abs(k)
    out = _zeros((n, n), x._dtype, x._device)
    _copy(_v.diagonal(out, k, 0, 1), x)
    return out


def diag_embed(input, offset=0, dim1=-2, dim2=-1):  # noqa: A002
    """Last dim of input laid on the offset diagonal of (dim1, dim2) of a new zero tensor."""
    nd = input.dim() + 1
    d1, d2 = _v.wrap_dim(dim1, nd), _v.wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if input.dim() == 0:
        input = reshape(input, (1,))
    return _diag_embed(input, int(offset), d1, d2)


@differentiable("diag_embed")
def _diag_embed(x, offset, d1, d2):
    n = x._sizes[-1] + abs(offset)
    rest = iter(x._sizes[:-1])
    shape = tuple(n if i in (d1, d2) else next(rest) for i in range(x.dim() + 1))
    out = _zeros(shape, x._dtype, x._device)
    _copy(_v.diagonal(out, offset, d1, d2), x)
    return out


def trace(input):  # noqa: A002
    """Sum of the main diagonal of a matrix (int64 for integer inputs, like sum)."""
    refuse_unsigned("trace", input._dtype)
    if input._dtype is dt.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return _trace(input)


@differentiable("trace")
def _trace(x):
    from tensorlib.ops.reduction import sum as _sum
    return _sum(_v.diagonal(x, 0, 0, 1))


TENSOR_METHODS = {"tril": tril, "triu": triu, "tril_": tril_, "triu_": triu_, "diag": diag,
                  "diag_embed": diag_embed, "trace": trace}
