"""Argument normalisation shared by the ops: PyTorch accepts sizes as varargs or one sequence,
dims as an int, a sequence or None."""
from tensorlib._C.device import canonical
from tensorlib._C.views import wrap_dim


def sizes_arg(sizes, name="size"):
    """(2, 3), ((2, 3),) and ([2, 3],) all mean sizes (2, 3)."""
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = sizes[0]
    try:
        out = tuple(int(s) for s in sizes)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of ints, got {sizes!r}") from None
    return out


def dims_arg(dim, ndim):
    """A sorted tuple of distinct non-negative dims; None means all of them."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    dims = sorted(wrap_dim(d, max(ndim, 1)) for d in dim)     # a 0-d tensor takes 0 and -1
    for a, b in zip(dims, dims[1:]):
        if a == b:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    return tuple(dims) if ndim else ()


def device_arg(device):
    return canonical(device)
