"""Argument normalisation shared by the ops (re-exported by tensorlib/ops/_args.py): PyTorch
accepts sizes as varargs or one sequence, dims as an int, a sequence or None. In C because
nearly every op call parses one of them."""
from tensorlib._C.tensor_impl cimport int_tuple
from tensorlib._C.views cimport wrap_dim
import operator


cdef object _scalar_index(object x):
    """x as an int when it is an integer scalar that is not an int (a 0-dim integer tensor,
    a numpy integer: torch's int arguments take them), else None."""
    if getattr(x, "ndim", None) != 0 or not hasattr(type(x), "__index__"):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def sizes_arg(sizes, name="size"):
    """(2, 3), ((2, 3),) and ([2, 3],) all mean sizes (2, 3)."""
    values = sizes
    if len(sizes) == 1 and not isinstance(sizes[0], int) and _scalar_index(sizes[0]) is None:
        values = sizes[0]
    try:
        return int_tuple(values)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of ints, got {values!r}") from None


cpdef tuple dims_arg(object dim, Py_ssize_t ndim):
    """A sorted tuple of distinct non-negative dims; None means all of them."""
    cdef Py_ssize_t i, n = ndim if ndim > 0 else 1          # a 0-d tensor takes 0 and -1
    if dim is None:
        return tuple(range(ndim))
    if not isinstance(dim, int):
        index = _scalar_index(dim)
        if index is not None:
            dim = index
    if isinstance(dim, int):
        i = wrap_dim(dim, n)                # checked even on a 0-d tensor
        return (i,) if ndim else ()
    cdef list dims = sorted([wrap_dim(d, n) for d in dim])
    for i in range(1, len(dims)):
        if dims[i - 1] == dims[i]:
            raise RuntimeError(f"dim {dims[i]} appears multiple times in the list of dims")
    return tuple(dims) if ndim else ()
