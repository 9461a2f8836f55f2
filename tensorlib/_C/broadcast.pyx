"""Broadcasting of shapes, and collapsing dims so kernels see the fewest dimensions."""
from tensorlib._C.tensor_impl cimport int_tuple


cpdef tuple broadcast_shapes2(tuple a, tuple b):
    """PyTorch/numpy broadcasting of two shapes; RuntimeError naming the clashing sizes."""
    if a == b:
        return a
    cdef Py_ssize_t na = len(a), nb = len(b), n = max(na, nb), i
    cdef list out = [0] * n
    for i in range(n):
        sa = a[na - n + i] if na - n + i >= 0 else 1
        sb = b[nb - n + i] if nb - n + i >= 0 else 1
        if sa == sb or sb == 1:
            out[i] = sa
        elif sa == 1:
            out[i] = sb
        else:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b "
                               f"({sb}) at non-singleton dimension {i}")
    return tuple(out)


def broadcast_shapes(*shapes):
    cdef tuple out = ()
    for s in shapes:
        if isinstance(s, int):
            s = (s,)
        out = broadcast_shapes2(out, int_tuple(s))
    return out


def collapse_dims(tuple sizes, list strides_per_operand):
    """Merge adjacent dims that are contiguous with each other in every operand, and drop
    size-1 dims (CuPy's _reduce_dims): returns (sizes, [strides...]) of fewest dims."""
    cdef Py_ssize_t n = len(sizes), i, k
    keep = [i for i in range(n) if sizes[i] != 1]
    if not keep:
        return (), [() for _ in strides_per_operand]
    new_sizes = [sizes[keep[0]]]
    new_strides = [[st[keep[0]]] for st in strides_per_operand]
    for i in keep[1:]:
        mergeable = True
        for k, st in enumerate(strides_per_operand):
            if new_strides[k][-1] != st[i] * sizes[i]:
                mergeable = False
                break
        if mergeable:
            new_sizes[-1] *= sizes[i]
            for k, st in enumerate(strides_per_operand):
                new_strides[k][-1] = st[i]
        else:
            new_sizes.append(sizes[i])
            for k, st in enumerate(strides_per_operand):
                new_strides[k].append(st[i])
    return tuple(new_sizes), [tuple(s) for s in new_strides]
