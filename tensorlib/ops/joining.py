"""Joining and rearranging: cat/stack and friends, splits, flips and rolls, repeats, pad,
meshgrid, broadcasting helpers (triangles and diagonals: ops/triangular.py).

Copies are written by the `copy` / `index_select` primitives into outputs from
`_C.factory.empty`. Splits return narrow/select views and the composites (hstack, movedim,
rot90, ...) are built from differentiable ops, so only the ops that allocate carry formulas
(autograd/formulas/joining.py). Differentiable cores take normalised positional arguments so
their formulas can read them back from ctx.args.
"""
import numbers

import tensorlib._C.dtypes as dt
from tensorlib._C import joining as _j
from tensorlib._C import views as _v
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.dispatch import lookup
from tensorlib.ops._composites import optional_kernel
from tensorlib._C.factory import empty
from tensorlib._C.joining import tensor_list as _tensor_list
from tensorlib._C.tensor_impl import TensorImpl, numel
from tensorlib.ops._args import sizes_arg, sizes_by_keyword
from tensorlib.ops._opdef import differentiable
from tensorlib.ops._unsigned import refuse_unsigned
from tensorlib.ops.shape import clone, expand, narrow, permute, reshape, select, transpose

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack",
           "column_stack", "split", "split_with_sizes", "chunk", "tensor_split", "hsplit",
           "vsplit", "dsplit", "unbind",
           "movedim", "moveaxis", "unflatten", "flip", "fliplr", "flipud", "roll",
           "repeat_interleave", "tile",
           "constant_pad_nd", "meshgrid", "broadcast_to", "broadcast_tensors", "atleast_1d",
           "atleast_2d", "atleast_3d", "rot90"]


# ---------------------------------------------------------------------------------- helpers

def _copy(out, src):
    """out = src through the primitive (skipped when empty: nothing to move)."""
    if numel(out._sizes):
        lookup("copy", out._device)(out, src)
    return out


def _index(values, device):
    """A 1-D int64 index on `device` from a short host list of positions, or a range (by
    arange: flip's reversed range through tensor(list) cost 90 us for 256 positions)."""
    from tensorlib.ops.creation import arange, tensor
    if isinstance(values, range):
        return arange(values.start, values.stop, values.step, dtype=dt.int64, device=device)
    return tensor(list(values), dtype=dt.int64, device=device)


def _take(x, dim, index):
    """Copy of x indexed along `dim` by a 1-D int64 index (the index_select primitive)."""
    out = empty(x._sizes[:dim] + (index._sizes[0],) + x._sizes[dim + 1:], x._dtype, x._device)
    if numel(out._sizes):
        lookup("index_select", x._device)(out, x, dim, index)
    return out


def _zeros(sizes, dtype, device):
    from tensorlib.ops.creation import zeros
    return zeros(sizes, dtype=dtype, device=device)


def _where(cond, a, b):
    from tensorlib.ops._where import where
    return where(cond, a, b)


def _int_list(value, name):
    """An int or a sequence of ints as a list (PyTorch's IntArrayRef arguments)."""
    if isinstance(value, numbers.Integral):
        return [int(value)]
    try:
        return [int(v) for v in value]
    except TypeError:
        raise TypeError(f"{name} must be an int or a sequence of ints, got {value!r}") from None


def _varargs(args, name):
    """f(x, 1, 2), f(x, (1, 2)) and f(x, [1, 2]) all mean [1, 2]."""
    if len(args) == 1:
        return _int_list(args[0], name)
    return _int_list(args, name)


def _distinct_dims(dims, nd):
    out = [_v.wrap_dim(d, nd) for d in dims]
    for d in out:
        if out.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


# ------------------------------------------------------------------------------ cat / stack

def cat(tensors, dim=0):
    """Concatenate along an existing dim, promoting dtypes as torch.cat does."""
    tensors = _tensor_list("cat", tensors)
    return _cat(_j.cat_dim(tensors, dim), *tensors)


@differentiable("cat")
def _cat(dim, *tensors):
    """Each input copied into its narrowed slice of one output (tensors as varargs, so the
    formula returns one gradient per input)."""
    out, kept = _j.cat_output(dim, tensors)
    if not kept:
        return out
    kernel = optional_kernel(out._device, "cat")      # a backend's one-call cat
    if kernel is not None:
        kernel(out, kept, dim)
        return out
    start = 0
    for t in kept:
        _copy(_v.narrow(out, dim, start, t._sizes[dim]), t)
        start += t._sizes[dim]
    return out


def concat(tensors, dim=0):
    return cat(tensors, dim)


def concatenate(tensors, axis=0):
    return cat(tensors, axis)


def stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dim."""
    tensors = _tensor_list("stack", tensors)
    return _stack(_j.stack_dim(tensors, dim), *tensors)


@differentiable("stack")
def _stack(dim, *tensors):
    """One output written by the backend's stack kernel, else a cat of unsqueezed views."""
    kernel = optional_kernel(tensors[0]._device, "stack")
    if kernel is not None:
        out = _j.stack_output(dim, tensors)
        kernel(out, list(tensors), dim)
        return out
    return _cat(dim, *[_v.unsqueeze(t, dim) for t in tensors])


def hstack(tensors):
    tensors = atleast_1d(_tensor_list("hstack", tensors))
    return cat(tensors, 0 if tensors and tensors[0].dim() == 1 else 1)


def vstack(tensors):
    return cat(atleast_2d(_tensor_list("vstack", tensors)), 0)


row_stack = vstack


def dstack(tensors):
    return cat(atleast_3d(_tensor_list("dstack", tensors)), 2)


def column_stack(tensors):
    """0-D and 1-D inputs become columns; the rest are joined along dim 1."""
    tensors = _tensor_list("column_stack", tensors)
    cols = [reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in tensors]
    return cat(cols, 1)


def _atleast(fn, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(fn(t) for t in tensors[0])
    if len(tensors) == 1:
        return fn(tensors[0])
    return tuple(fn(t) for t in tensors)


def atleast_1d(*tensors):
    return _atleast(lambda t: reshape(t, (1,)) if t.dim() == 0 else t, tensors)


def atleast_2d(*tensors):
    def fn(t):
        return reshape(t, (1, t.numel())) if t.dim() < 2 else t
    return _atleast(fn, tensors)


def atleast_3d(*tensors):
    def fn(t):
        if t.dim() == 0:
            return reshape(t, (1, 1, 1))
        if t.dim() == 1:
            return reshape(t, (1, t._sizes[0], 1))
        return reshape(t, t._sizes + (1,)) if t.dim() == 2 else t
    return _atleast(fn, tensors)


# --------------------------------------------------------------------- splits (views only)

def _need_dims(name, x, what="at least a 1-dimensional tensor"):
    if x.dim() == 0:
        raise RuntimeError(f"{name} expects {what}")


@differentiable("split_with_sizes")
def _pieces(x, dim, sizes):
    """Consecutive narrow views of the given sizes along dim, recorded as ONE node whose
    backward is a single cat of the pieces' gradients (PyTorch's SplitWithSizesBackward),
    instead of one zero-filled scatter per piece summed together."""
    out, start = [], 0
    for n in sizes:
        out.append(_v.narrow(x, dim, start, n))
        start += n
    return tuple(out)


def split(tensor, split_size_or_sections, dim=0):
    """Views of split_size each (the last may be smaller), or of the listed sizes."""
    _need_dims("split", tensor)
    dim = _v.wrap_dim(dim, tensor.dim())
    if not isinstance(split_size_or_sections, numbers.Integral):
        return split_with_sizes(tensor, split_size_or_sections, dim)
    step, size = int(split_size_or_sections), tensor._sizes[dim]
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got "
                           f"split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                           f"dimension size of {size}")
    sizes = [step] * (size // step) + ([size % step] if size % step else []) if step else []
    return _pieces(tensor, dim, sizes or [0])


def _split_method(self, split_size, dim=0):
    """Tensor.split: the size argument is named split_size there (torch.split's is
    split_size_or_sections), so `x.split(split_size=(2, 1), dim=1)` works as in PyTorch."""
    return split(self, split_size, dim)


# Tensor.split is `split` to __torch_function__ overrides and to vmap's rules, as in PyTorch
_split_method.__name__ = _split_method.__qualname__ = "split"


def split_with_sizes(tensor, split_sizes, dim=0):
    _need_dims("split_with_sizes", tensor)
    dim = _v.wrap_dim(dim, tensor.dim())
    sizes, size = _int_list(split_sizes, "split_sizes"), tensor._sizes[dim]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative "
                           f"entries, but got split_sizes={sizes}")
    if sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                           f"(input tensor's size at dimension {dim}), but got "
                           f"split_sizes={sizes}")
    return _pieces(tensor, dim, sizes)


def chunk(input, chunks, dim=0):  # noqa: A002 - torch's names
    """`chunks` views of ceil(size / chunks) each (fewer when they run out)."""
    _need_dims("chunk", input)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = _v.wrap_dim(dim, input.dim())
    size = input._sizes[dim]
    if size == 0:
        return _pieces(input, dim, [0] * chunks)
    return split(input, (size + chunks - 1) // chunks, dim)


def tensor_split(input, indices_or_sections, dim=0):  # noqa: A002
    """Views: n near-equal sections (the first size % n one longer), or cuts at indices."""
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    dim = _v.wrap_dim(dim, input.dim())
    spec = _sections_arg(indices_or_sections)
    size = input._sizes[dim]
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        q, r = divmod(size, spec)
        return _pieces(input, dim, [q + 1] * r + [q] * (spec - r))
    bounds = [0] + [_clamp_index(i, size) for i in spec] + [size]
    return tuple(narrow(input, dim, lo, max(hi - lo, 0)) for lo, hi in zip(bounds, bounds[1:]))


def _split_along(name, input, sections, dim, min_dims):  # noqa: A002
    """hsplit / vsplit / dsplit: tensor_split along a fixed dim; a number of sections must
    divide the dim (torch's rule)."""
    if input.dim() < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if isinstance(sections, int) and (sections == 0 or input._sizes[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {input._sizes[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):  # noqa: A002
    """Split along dim 1 (dim 0 of a 1-D tensor)."""
    dim = 1 if input.dim() > 1 else 0
    return _split_along("hsplit", input, indices_or_sections, dim, 1)


def vsplit(input, indices_or_sections):  # noqa: A002
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):  # noqa: A002
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


def _sections_arg(spec):
    """An int (sections) or a list of cut indices, from ints, sequences or int tensors."""
    if isinstance(spec, TensorImpl):
        if spec._dtype.is_floating_point or spec._dtype is dt.bool_:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have "
                               f"integral dtype, but got {spec._dtype.scalar_name}")
        if spec.dim() > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {spec.dim()} dims")
        return int(spec.item()) if spec.dim() == 0 else [int(i) for i in spec.tolist()]
    if isinstance(spec, numbers.Integral):
        return int(spec)
    return _int_list(spec, "indices")


def _clamp_index(i, size):
    """Python slicing's treatment of a bound: negative counts from the end, then clamped."""
    if i < 0:
        i += size
    return min(max(i, 0), size)


def unbind(input, dim=0):  # noqa: A002
    """select views along dim, one per index."""
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = _v.wrap_dim(dim, input.dim())
    return tuple(select(input, dim, i) for i in range(input._sizes[dim]))


# ------------------------------------------------------------------ dims and rearrangement

def movedim(input, source, destination):  # noqa: A002
    """A permute view placing `source` dims at `destination`, others keeping their order."""
    src, dst = _int_list(source, "source"), _int_list(destination, "destination")
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination "
                           f"({dst} dims)")
    nd = input.dim()
    src_w = [_v.wrap_dim(d, nd) for d in src]
    dst_w = [_v.wrap_dim(d, nd) for d in dst]
    for name, orig, dims in (("source", src, src_w), ("destination", dst, dst_w)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({orig})")
    if nd == 0:
        return permute(input, ())
    order = [None] * nd
    for s, d in zip(src_w, dst_w):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src_w)
    return permute(input, tuple(o if o is not None else next(rest) for o in order))


moveaxis = movedim


def unflatten(input, dim, sizes):  # noqa: A002
    """dim split into `sizes` (one may be -1), as a view when strides allow."""
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = _v.wrap_dim(dim, input.dim())
    sizes = tuple(_int_list(sizes, "sizes"))
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input._sizes[dim]
    try:
        sizes = _v.infer_size(sizes, n)
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({n}) in the input tensor") from None
    return reshape(input, input._sizes[:dim] + sizes + input._sizes[dim + 1:])


def flip(input, *args, dims=None):  # noqa: A002
    """Reverse the order along dims (a copy, as in PyTorch)."""
    refuse_unsigned("flip_cpu", input._dtype)
    dims = _int_list(dims, "dims") if dims is not None else _varargs(args, "dims")
    nd = input.dim()
    dims = _distinct_dims(dims, max(nd, 1))          # (a 0-d tensor takes -1 and 0)
    return _flip(input, tuple(sorted(dims)) if nd else ())


@differentiable("flip")
def _flip(x, dims):
    kernel = optional_kernel(x._device, "flip")
    if kernel is not None and x._sizes:
        out = empty(x._sizes, x._dtype, x._device)
        if kernel(out, x, dims):
            return out
    out = x
    for d in dims:
        n = out._sizes[d]
        out = _take(out, d, _index(range(n - 1, -1, -1), x._device))
    return clone(x) if out is x else out


def fliplr(input):  # noqa: A002
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, [1])


def flipud(input):  # noqa: A002
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, [0])


def rot90(input, k=1, dims=(0, 1)):  # noqa: A002
    """Rotate by k quarter turns from dims[0] towards dims[1]: flips and a transpose."""
    dims = _int_list(dims, "dims")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    nd = input.dim()
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = _v.wrap_dim(dims[0], nd), _v.wrap_dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(input, [d1]), d0, d1)
    if k == 2:
        return flip(input, [d0, d1])
    if k == 3:
        return transpose(flip(input, [d0]), d0, d1)
    return clone(input)


def roll(input, shifts, dims=None):  # noqa: A002
    """Shift elements cyclically along dims; with no dims, over the flattened tensor."""
    shifts = _int_list(shifts, "shifts")
    dims = [] if dims is None else _int_list(dims, "dims")
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return reshape(roll(reshape(input, (-1,)), shifts, [0]), input._sizes)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    nd = input.dim()
    return _roll(input, tuple(shifts), tuple(_v.wrap_dim(d, nd) for d in dims))


@differentiable("roll")
def _roll(x, shifts, dims):
    """Per dim, two copies: the tail to the front and the head behind it."""
    out = x
    for s, d in zip(shifts, dims):
        n = out._sizes[d]
        s = s % n if n else 0
        if s == 0:
            continue
        dst = empty(out._sizes, out._dtype, out._device)
        _copy(_v.narrow(dst, d, 0, s), _v.narrow(out, d, n - s, s))
        _copy(_v.narrow(dst, d, s, n - s), _v.narrow(out, d, 0, n - s))
        out = dst
    return clone(x) if out is x else out


# ---------------------------------------------------------------------------------- repeats

def repeat(input, *sizes, **keyword):  # noqa: A002
    """Tensor.repeat: tile the tensor `sizes` times (sizes may add leading dims)."""
    reps = sizes_arg(sizes_by_keyword("repeat", sizes, keyword, "repeats"), "repeats")
    if len(reps) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(r < 0 for r in reps):
        shape = (1,) * (len(reps) - input.dim()) + input._sizes
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(reps)}: {[r * s for r, s in zip(reps, shape)]}")
    return _repeat(input, reps)


def _interleave(a, b):
    return tuple(v for pair in zip(a, b) for v in pair)


@differentiable("repeat")
def _repeat(x, reps):
    """x viewed as (1, s0, 1, s1, ...), expanded to (r0, s0, r1, s1, ...), copied, merged."""
    shape = (1,) * (len(reps) - x.dim()) + x._sizes
    src = _v.expand(reshape(x, _interleave((1,) * len(reps), shape)), _interleave(reps, shape))
    out = _copy(empty(src._sizes, x._dtype, x._device), src)
    return _v.view(out, tuple(r * s for r, s in zip(reps, shape)))


def tile(input, *dims, **keyword):  # noqa: A002
    """repeat, with missing leading repeat counts taken as 1."""
    dims = sizes_arg(sizes_by_keyword("tile", dims, keyword, "dims"), "dims")
    return repeat(input, (1,) * (input.dim() - len(dims)) + dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):  # noqa: A002
    """Each element (slice along dim) repeated `repeats` times in place; with no dim, over
    the flattened tensor. repeat_interleave(r) alone gives the index pattern."""
    if repeats is None:
        return _interleave_index(_repeats_tensor(input, None))
    if dim is None:
        input, dim = reshape(input, (-1,)), 0
    elif input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _v.wrap_dim(dim, input.dim())
    n = input._sizes[dim] if input.dim() else 1
    if input.dim() == 0:
        input = reshape(input, (1,))
    index = _interleave_index(_repeats_tensor(repeats, n, dim, input._device))
    if output_size is not None and index._sizes[0] != output_size:
        raise RuntimeError(f"allocated size does not match required size {index._sizes[0]}")
    return _gather_dim(input, dim, index)


def _repeats_tensor(repeats, n, dim=0, device=None):
    """repeats as a 1-D int64 tensor of length n (an int or one-element tensor broadcasts)."""
    from tensorlib.ops.creation import full
    if not isinstance(repeats, TensorImpl):
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        return full((n,), int(repeats), dtype=dt.int64, device=device)
    if repeats._dtype.is_floating_point or repeats._dtype is dt.bool_:
        raise RuntimeError("repeats has to be Long or Int tensor")
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if n is not None and repeats.numel() == 1:
        repeats = expand(reshape(repeats, (1,)), (n,))
    elif n is not None and repeats.numel() != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats.numel()} and input.size({dim}) = {n}")
    if device is not None and repeats._device is not device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {device} and {repeats._device}!")
    return reshape(repeats, (-1,)).to(dt.int64)


def _interleave_index(reps):
    """[0]*r0 + [1]*r1 + ...: ones scattered at the cumulative counts, then scanned (the
    total is read back with .item(), a data-dependent size)."""
    from tensorlib.ops.creation import ones
    if numel(reps._sizes) == 0:
        return empty((0,), dt.int64, reps._device)
    if reps.lt(0).any().item():
        raise RuntimeError("repeats can not be negative")
    n = reps._sizes[0]
    ends = empty((n,), dt.int64, reps._device)
    lookup("cumsum", reps._device)(ends, reps, 0)
    total = int(select(ends, 0, n - 1).item())
    marks = _zeros((total + 1,), dt.int64, reps._device)
    lookup("scatter_add", reps._device)(marks, 0, ends, ones(n, dtype=dt.int64,
                                                             device=reps._device))
    index = empty((total + 1,), dt.int64, reps._device)
    lookup("cumsum", reps._device)(index, marks, 0)
    return _v.narrow(index, 0, 0, total)


@differentiable("repeat_interleave")
def _gather_dim(x, dim, index):
    """x indexed along dim (the gradient scatters back through the same index)."""
    return _take(x, dim, index)


# -------------------------------------------------------------------------------------- pad

PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):  # noqa: A002
    """nn.functional.pad: `pad` lists (left, right) pairs starting from the last dim.

    Every mode pads any number of trailing dims (PyTorch limits reflect/replicate/circular
    to the last 1-3 dims of a batched input; each dim here is one index_select, so there is
    no reason to)."""
    pads = tuple(_int_list(pad, "pad"))
    if mode not in PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pads)} and input of "
                           f"dimension {input.dim()}")
    if mode == "constant":
        return constant_pad_nd(input, pads, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if input._dtype is dt.bool_ and mode in ("reflect", "replicate"):
        kind = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f"\"{kind}_pad{min(len(pads) // 2, 3)}d\" not implemented "
                                  f"for 'Bool'")
    _check_index_pad(input, pads, mode)
    return _index_pad(input, pads, mode)


def _pad_dims(x, pads):
    """(dim, left, right) for each padded dim, the last dim first."""
    return [(x.dim() - 1 - i, pads[2 * i], pads[2 * i + 1]) for i in range(len(pads) // 2)]


def constant_pad_nd(input, pad, value=0):  # noqa: A002
    """Pad with `value`; negative pads crop."""
    pads = tuple(_int_list(pad, "pad"))
    for d, left, right in _pad_dims(input, pads):
        n = input._sizes[d]
        if n + left + right < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {left} and {right} "
                               f"resulted in a negative output size, which is invalid. Check "
                               f"dimension {d} of your input.")
    return _constant_pad(input, pads, value)


@differentiable("constant_pad_nd")
def _constant_pad(x, pads, value):
    """A filled output, then the kept part of x copied into its place."""
    from tensorlib.ops.creation import full
    sizes = list(x._sizes)
    for d, left, right in _pad_dims(x, pads):
        sizes[d] += left + right
    kernel = optional_kernel(x._device, "pad")
    if kernel is not None:
        out = empty(tuple(sizes), x._dtype, x._device)
        if kernel(out, x, pads, "constant", value):
            return out
    out = full(tuple(sizes), value, dtype=x._dtype, device=x._device)
    src, dst = x, out
    for d, left, right in _pad_dims(x, pads):
        n = x._sizes[d]
        lo = min(max(-left, 0), n)
        length = max(min(n, n + right) - lo, 0)
        src = _v.narrow(src, d, lo, length)
        dst = _v.narrow(dst, d, max(left, 0), length)
    _copy(dst, src)
    return out


def _check_index_pad(x, pads, mode):
    for d, left, right in _pad_dims(x, pads):
        n = x._sizes[d]
        if mode == "reflect" and (left >= n or right >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({left}, "
                               f"{right}) at dimension {d} of input {list(x._sizes)}")
        if mode == "circular" and (left > n or right > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "circular" and n + min(left, 0) + min(right, 0) <= 0 < max(left, right):
            raise RuntimeError(f"Negative padding leaves nothing of dimension {d} to wrap "
                               f"around: padding ({left}, {right}), input {list(x._sizes)}")
        if mode == "replicate" and n == 0 and (left or right):
            raise RuntimeError(f"padding: input tensor has a zero-size dimension {d}, which "
                               f"cannot be replicated")
        if n + left + right < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {left} and {right} "
                               f"resulted in a negative output size, which is invalid. Check "
                               f"dimension {d} of your input.")


def _pad_source(j, n, left, right, mode):
    """Which input position output position j (counted from the input's start) reads.
    Circular padding wraps around what is left after negative pads crop, as PyTorch's."""
    if mode == "reflect":
        return (n - 1) - abs((n - 1) - abs(j))
    if mode == "replicate":
        return min(max(j, 0), n - 1)
    lo = max(-left, 0)
    return lo + (j - lo) % (n - lo - max(-right, 0))


@differentiable("pad")
def _index_pad(x, pads, mode):
    """reflect/replicate/circular: per dim, index_select with the positions each output
    element reads (the gradient scatters back through the same map)."""
    kernel = optional_kernel(x._device, "pad")
    if kernel is not None and x._sizes:
        sizes = list(x._sizes)
        for d, left, right in _pad_dims(x, pads):
            sizes[d] += left + right
        out = empty(tuple(sizes), x._dtype, x._device)
        if kernel(out, x, pads, mode, None):
            return out
    out = x
    for d, left, right in _pad_dims(x, pads):
        n = x._sizes[d]
        idx = [_pad_source(j, n, left, right, mode) for j in range(-left, n + right)]
        out = _take(out, d, _index(idx, x._device))
    return clone(x) if out is x else out


# ------------------------------------------------------------------ meshgrid, broadcasting

def meshgrid(*tensors, indexing=None):
    """Expanded views: the i-th grid varies along dim i ('ij') or with the first two
    dims swapped ('xy', numpy's default)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
        if t._dtype is not tensors[0]._dtype or t._device is not tensors[0]._device:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to "
                               "have the same dtype and device.")
    flat = [reshape(t, (-1,)) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t._sizes[0] for t in flat)
    grids = [expand(reshape(t, tuple(-1 if j == i else 1 for j in range(len(shape)))), shape)
             for i, t in enumerate(flat)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def broadcast_to(input, size):  # noqa: A002
    return expand(input, sizes_arg((size,)))


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = broadcast_shapes(*(t._sizes for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


TENSOR_METHODS = {
    "split": _split_method, "split_with_sizes": split_with_sizes, "chunk": chunk,
    "tensor_split": tensor_split, "hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit,
    "unbind": unbind, "movedim": movedim, "moveaxis": moveaxis,
    "unflatten": unflatten, "flip": flip, "fliplr": fliplr, "flipud": flipud, "roll": roll,
    "rot90": rot90, "repeat": repeat, "tile": tile, "repeat_interleave": repeat_interleave,
    "broadcast_to": broadcast_to,
}
