"""Derivatives of views and shape ops. Reshapes and permutations invert directly; views that
pick elements (select, slicing, unfold, diagonal, indexing) scatter the gradient back through
an index map: the same view applied to arange(numel) says where each element came from."""
import tensorlib
from tensorlib.autograd.recording import formula


@formula("view", "reshape", "flatten", "squeeze", "unsqueeze", "view_as", "reshape_as")
def reshape(ctx, g):
    return (g.reshape(ctx.args[0].shape),)


@formula("permute")
def permute(ctx, g):
    dims = ctx.args[1:] or (ctx.kwargs["dims"],)
    if len(dims) == 1 and not isinstance(dims[0], int):
        dims = tuple(dims[0])
    nd = len(dims)
    order = sorted(range(nd), key=lambda i: dims[i] % nd)
    return (g.permute(*order),)


@formula("transpose")
def transpose(ctx, g):
    return (g.transpose(*ctx.args[1:], **ctx.kwargs),)      # its own inverse


@formula("t")
def t(ctx, g):
    return (g.t(),)


@formula("expand", "expand_as", "contiguous", "clone", "alias")
def identity(ctx, g):
    """The node sums an expanded gradient back to the input's shape."""
    return (g,)


@formula("to_copy")
def to_copy(ctx, g):
    return (g.to(ctx.args[0].device),)


def index_map(meta, view):
    """Flat input position of every element of `view` applied to the input."""
    with tensorlib.no_grad():
        positions = tensorlib.arange(meta.numel(), device=meta.device).view(meta.shape)
        return view(positions)


def _scatter_back(ctx, g, view):
    """For views whose windows may overlap (unfold, as_strided): gradients add up."""
    meta = ctx.args[0]
    return (tensorlib.ops.indexing.index_add_flat(g, index_map(meta, view), meta.shape),)


def write_back(meta, g, view):
    """For views that pick each input element at most once (select, slicing, diagonal): g
    copied into that view of zeros. Under create_graph the copy is itself recorded (an
    in-place write through a view), so this stays differentiable."""
    grad_input = tensorlib.zeros(meta.shape, dtype=g.dtype, device=g.device)
    view(grad_input).copy_(g)
    return grad_input


@formula("select")
def select(ctx, g):
    return (write_back(ctx.args[0], g, lambda p: p.select(*ctx.args[1:], **ctx.kwargs)),)


@formula("narrow")
def narrow(ctx, g):
    return (write_back(ctx.args[0], g, lambda p: p.narrow(*ctx.args[1:], **ctx.kwargs)),)


@formula("split_with_sizes")
def split_with_sizes(ctx, *grads):
    """One cat of the pieces' gradients; zeros only for pieces that got none (trailing ones
    may be missing from grads altogether)."""
    x, dim, sizes = ctx.args
    shape = list(x.shape)
    pieces = []
    for i, n in enumerate(sizes):
        g = grads[i] if i < len(grads) else None
        if g is None:
            shape[dim] = n
            g = tensorlib.zeros(shape, dtype=x.dtype, device=x.device)
        pieces.append(g)
    return (pieces[0] if len(pieces) == 1 else tensorlib.cat(pieces, dim),)


@formula("unfold")
def unfold(ctx, g):
    return _scatter_back(ctx, g, lambda p: p.unfold(*ctx.args[1:], **ctx.kwargs))


@formula("diagonal")
def diagonal(ctx, g):
    return (write_back(ctx.args[0], g, lambda p: p.diagonal(*ctx.args[1:], **ctx.kwargs)),)


@formula("as_strided")
def as_strided(ctx, g):
    meta = ctx.args[0]
    from tensorlib._C.tensor_impl import contiguous_strides
    if meta.offset != 0 or meta.strides != contiguous_strides(meta.shape):
        raise NotImplementedError("the gradient of as_strided is only implemented for "
                                  "contiguous inputs")
    return _scatter_back(ctx, g, lambda p: p.as_strided(*ctx.args[1:], **ctx.kwargs))


@formula("copy_")
def copy_(ctx, g):
    return (g,)


@formula("fill_")
def fill_(ctx, g):
    return ()


@formula("copy_slices", save=(2,))
def copy_slices(ctx, g):
    """An in-place write through a view: the view's region of g goes to the written values,
    the rest to the base's previous history."""
    base, _, positions = ctx.args
    written = tensorlib.ops.indexing.index_add_flat(
        tensorlib.ones(positions.shape, dtype=g.dtype, device=g.device), positions, base.shape)
    untouched = tensorlib.where(tensorlib.eq(written, 0), g, tensorlib.zeros((), dtype=g.dtype,
                                                                          device=g.device))
    return untouched, tensorlib.ops.indexing.take_flat(g, positions), None


@formula("copy_slices_real", save=(2,))
def copy_slices_real(ctx, g):
    """copy_slices through a real view of a complex base (`x.real += y`): the positions
    count the base's (re, im) floats, so g is read as floats."""
    _, _, positions = ctx.args
    floats = tensorlib.view_as_real(g)
    written = tensorlib.ops.indexing.index_add_flat(
        tensorlib.ones(positions.shape, dtype=floats.dtype, device=g.device), positions,
        floats.shape)
    untouched = tensorlib.where(tensorlib.eq(written, 0), floats,
                                tensorlib.zeros((), dtype=floats.dtype, device=g.device))
    return (tensorlib.view_as_complex(untouched),
            tensorlib.ops.indexing.take_flat(floats, positions), None)


@formula("real_view_of_complex", save=(1,))
def real_view_of_complex(ctx, g):
    """A real view (x.real, view_as_real(x)) remade after a write: its floats' gradient
    goes back to their places in the complex base."""
    base, positions = ctx.args
    floats = tensorlib.ops.indexing.index_add_flat(g, positions, tuple(base.shape) + (2,))
    return tensorlib.view_as_complex(floats), None
