"""View arithmetic: every function returns a tensor over the same storage (never a copy).
`reshape`'s copying fallback lives in the ops layer; here only what strides allow."""
from tensorlib._C.grad_mode cimport grad_enabled
from tensorlib._C.tensor_impl cimport TensorImpl, wrap, contiguous_strides, int_tuple, numel


cpdef Py_ssize_t wrap_dim(Py_ssize_t dim, Py_ssize_t ndim) except? -1:
    """Map a possibly negative dim into range, raising IndexError as PyTorch does."""
    cdef Py_ssize_t n = ndim if ndim > 0 else 1
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


cdef TensorImpl _view(TensorImpl t, tuple sizes, tuple strides, Py_ssize_t offset):
    cdef TensorImpl out = wrap(t._storage, sizes, strides, offset, t._dtype)
    out._base = t if t._base is None else t._base
    return out


cdef void note_view(TensorImpl out, tuple args, bint recorded):
    """Mark `out`, a view returned by an op called with `args`, as PyTorch marks views: one
    made under no_grad from an input, or a view of such a view, is a no-grad view; made under
    no_grad, it requires grad when its base does. The op layer calls this where the op's grad
    mode is known (opdef's wrapper; autograd.record, `recorded`): inside an op body recording
    is off whatever the caller's mode was, so the view primitives cannot tell."""
    if out._dtype.category < 2 or out._is_inference:
        return
    cdef TensorImpl source = None, t
    for a in args:
        if isinstance(a, TensorImpl):
            t = <TensorImpl>a
            if t is out:                # the op handed an input back: nothing was made
                return
            if source is None and out._base is (t if t._base is None else t._base):
                source = t
    if source is None:                  # a view of something the op made, not of an input
        out._no_grad_view = False
        return
    if recorded or grad_enabled():
        out._no_grad_view = source._no_grad_view
    else:
        out._no_grad_view = True
        if (<TensorImpl>out._base)._requires_grad:      # the root's, as PyTorch's
            out._requires_grad = True
    if out._no_grad_view:
        out._view_version = out._storage.version


cpdef TensorImpl alias(TensorImpl t):
    """A new tensor over t's memory, with t's sizes and strides and no history (detach)."""
    return wrap(t._storage, t._sizes, t._strides, t._offset, t._dtype)


def as_strided(TensorImpl t, sizes, strides, storage_offset=None):
    cdef Py_ssize_t offset = t._offset if storage_offset is None else storage_offset
    sizes = tuple(int(s) for s in sizes)
    strides = tuple(int(s) for s in strides)
    if len(sizes) != len(strides):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(sizes)} sizes "
                           f"and {len(strides)} strides")
    if offset < 0 or any(s < 0 for s in sizes) or any(s < 0 for s in strides):
        raise RuntimeError("as_strided: negative sizes, strides or offsets are not supported")
    cdef Py_ssize_t last = offset
    for s, st in zip(sizes, strides):
        if s == 0:
            last = -1
            break
        last += (s - 1) * st
    if last >= 0 and (last + 1) * t._dtype.itemsize > t._storage._nbytes:
        raise RuntimeError(f"setStorage: sizes {list(sizes)}, strides {list(strides)}, storage "
                           f"offset {offset} need {(last + 1) * t._dtype.itemsize} bytes but "
                           f"the storage has {t._storage._nbytes}")
    return _view(t, sizes, strides, offset)


cpdef tuple infer_size(object shape, Py_ssize_t total):
    """Resolve one -1 in a view shape; RuntimeError when the sizes cannot hold `total` items."""
    cdef list out = [int(s) for s in shape]
    cdef Py_ssize_t known = 1, infer = -1, i
    for i in range(len(out)):
        if out[i] == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif out[i] < 0:
            raise RuntimeError(f"invalid shape dimension {out[i]}")
        else:
            known *= out[i]
    if infer >= 0:
        if known == 0 or total % known != 0:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {total}")
        out[infer] = total // known
    elif known != total:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {total}")
    return tuple(out)


cpdef object view_strides(tuple old_sizes, tuple old_strides, tuple new_sizes):
    """Strides that let `new_sizes` view the old layout, or None when a copy is needed
    (PyTorch's computeStride: dims are merged only inside contiguous chunks)."""
    cdef Py_ssize_t n_new = len(new_sizes), n_old = len(old_sizes)
    if n_old == 0:
        return (1,) * n_new
    if numel(old_sizes) == 0:
        return old_strides if old_sizes == new_sizes else contiguous_strides(new_sizes)
    cdef list new_strides = [0] * n_new
    cdef Py_ssize_t view_d = n_new - 1, tensor_d
    cdef Py_ssize_t chunk_base = old_strides[n_old - 1]
    cdef Py_ssize_t tensor_numel = 1, view_numel = 1
    for tensor_d in range(n_old - 1, -1, -1):
        tensor_numel *= <Py_ssize_t>old_sizes[tensor_d]
        if tensor_d == 0 or (old_sizes[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_sizes[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= <Py_ssize_t>new_sizes[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def view(TensorImpl t, shape):
    cdef tuple sizes = infer_size(shape, numel(t._sizes))
    strides = view_strides(t._sizes, t._strides, sizes)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return _view(t, sizes, strides, t._offset)


def permute(TensorImpl t, dims):
    cdef Py_ssize_t nd = len(t._sizes)
    if len(dims) != nd:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {nd} is not equal to len(dims) = {len(dims)}"
                           .replace("(sparse_coo)", ""))
    perm = [wrap_dim(d, nd) for d in dims]
    if len(set(perm)) != nd:
        raise RuntimeError(f"permute(): duplicate dims are not allowed, got {list(dims)}")
    return _view(t, tuple(t._sizes[d] for d in perm), tuple(t._strides[d] for d in perm),
                 t._offset)


def transpose(TensorImpl t, Py_ssize_t dim0, Py_ssize_t dim1):
    cdef Py_ssize_t nd = len(t._sizes)
    if nd == 0:
        wrap_dim(dim0, 0)
        wrap_dim(dim1, 0)
        return _view(t, (), (), t._offset)
    dim0 = wrap_dim(dim0, nd)
    dim1 = wrap_dim(dim1, nd)
    sizes = list(t._sizes)
    strides = list(t._strides)
    sizes[dim0], sizes[dim1] = sizes[dim1], sizes[dim0]
    strides[dim0], strides[dim1] = strides[dim1], strides[dim0]
    return _view(t, tuple(sizes), tuple(strides), t._offset)


cpdef tuple expand_strides(tuple sizes, tuple strides, tuple target):
    """Strides of `sizes`/`strides` broadcast to `target` (stride 0 on expanded dims)."""
    cdef Py_ssize_t nd = len(target), extra = nd - len(sizes), i
    if extra < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({nd}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({len(sizes)})")
    cdef list out_sizes = [0] * nd
    cdef list out = [0] * nd
    for i in range(nd):
        want = target[i]
        if i < extra:
            if want < 0:
                raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing "
                                   f"dimension {i}")
            out_sizes[i] = want
            out[i] = 0
            continue
        have = sizes[i - extra]
        if want == -1:
            want = have
        if have == want:
            out_sizes[i] = have
            out[i] = strides[i - extra]
        elif have == 1:
            out_sizes[i] = want
            out[i] = 0
        else:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the "
                               f"existing size ({have}) at non-singleton dimension {i}.  "
                               f"Target sizes: {list(target)}.  Tensor sizes: {list(sizes)}")
    return tuple(out_sizes), tuple(out)


def expand(TensorImpl t, sizes):
    cdef tuple target = int_tuple(sizes)
    if target == t._sizes:
        return _view(t, t._sizes, t._strides, t._offset)
    new_sizes, new_strides = expand_strides(t._sizes, t._strides, target)
    return _view(t, new_sizes, new_strides, t._offset)


def slice(TensorImpl t, Py_ssize_t dim, start, stop, Py_ssize_t step=1):
    """t[..., start:stop:step, ...] along `dim` (positive steps, as in PyTorch)."""
    cdef Py_ssize_t nd = len(t._sizes)
    dim = wrap_dim(dim, nd)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    cdef Py_ssize_t size = t._sizes[dim]
    cdef Py_ssize_t lo = 0 if start is None else start
    cdef Py_ssize_t hi = size if stop is None else stop
    if lo < 0:
        lo += size
    if hi < 0:
        hi += size
    lo = min(max(lo, 0), size)
    hi = min(max(hi, lo), size)
    cdef Py_ssize_t length = (hi - lo + step - 1) // step
    sizes = list(t._sizes)
    strides = list(t._strides)
    sizes[dim] = length
    strides[dim] = t._strides[dim] * step
    offset = t._offset + (lo * t._strides[dim] if length > 0 else 0)
    return _view(t, tuple(sizes), tuple(strides), offset)


def select(TensorImpl t, Py_ssize_t dim, Py_ssize_t index):
    cdef Py_ssize_t nd = len(t._sizes)
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, nd)
    cdef Py_ssize_t size = t._sizes[dim]
    if index < -size or index >= size:
        raise IndexError(f"index {index} is out of bounds for dimension {dim} with size {size}")
    if index < 0:
        index += size
    return _view(t, t._sizes[:dim] + t._sizes[dim + 1:], t._strides[:dim] + t._strides[dim + 1:],
                 t._offset + index * t._strides[dim])


def narrow(TensorImpl t, Py_ssize_t dim, Py_ssize_t start, Py_ssize_t length):
    dim = wrap_dim(dim, len(t._sizes))
    cdef Py_ssize_t size = t._sizes[dim]
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return slice(t, dim, start, start + length, 1)


def unfold(TensorImpl t, Py_ssize_t dim, Py_ssize_t size, Py_ssize_t step):
    """All windows of `size` along `dim` with `step`, as a new last dimension."""
    cdef Py_ssize_t nd = len(t._sizes)
    dim = wrap_dim(dim, nd)
    cdef Py_ssize_t dim_size = t._sizes[dim] if nd > 0 else 1
    cdef Py_ssize_t dim_stride = t._strides[dim] if nd > 0 else 1
    if size > dim_size:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {dim_size} but size "
                           f"is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    sizes = list(t._sizes)
    strides = list(t._strides)
    if nd > 0:
        sizes[dim] = (dim_size - size) // step + 1
        strides[dim] = dim_stride * step
    sizes.append(size)
    strides.append(dim_stride)
    return _view(t, tuple(sizes), tuple(strides), t._offset)


def squeeze(TensorImpl t, dims=None):
    cdef Py_ssize_t nd = len(t._sizes)
    if dims is None:
        keep = [i for i in range(nd) if t._sizes[i] != 1]
    else:
        if isinstance(dims, int):
            dims = (dims,)
        drop = {wrap_dim(d, nd) for d in dims}
        keep = [i for i in range(nd) if not (i in drop and t._sizes[i] == 1)]
    return _view(t, tuple(t._sizes[i] for i in keep), tuple(t._strides[i] for i in keep),
                 t._offset)


def unsqueeze(TensorImpl t, Py_ssize_t dim):
    cdef Py_ssize_t nd = len(t._sizes)
    dim = wrap_dim(dim, nd + 1)
    new_stride = t._strides[dim] * t._sizes[dim] if dim < nd else 1
    return _view(t, t._sizes[:dim] + (1,) + t._sizes[dim:],
                 t._strides[:dim] + (new_stride,) + t._strides[dim:], t._offset)


def diagonal(TensorImpl t, Py_ssize_t offset=0, Py_ssize_t dim1=0, Py_ssize_t dim2=1):
    cdef Py_ssize_t nd = len(t._sizes)
    dim1 = wrap_dim(dim1, nd)
    dim2 = wrap_dim(dim2, nd)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    cdef Py_ssize_t start = t._offset, length
    if offset >= 0:
        length = max(min(t._sizes[dim1], t._sizes[dim2] - offset), 0)
        if length > 0:
            start += offset * t._strides[dim2]
    else:
        length = max(min(t._sizes[dim1] + offset, t._sizes[dim2]), 0)
        if length > 0:
            start -= offset * t._strides[dim1]
    keep = [i for i in range(nd) if i != dim1 and i != dim2]
    sizes = tuple(t._sizes[i] for i in keep) + (length,)
    strides = tuple(t._strides[i] for i in keep) + (t._strides[dim1] + t._strides[dim2],)
    return _view(t, sizes, strides, start)
