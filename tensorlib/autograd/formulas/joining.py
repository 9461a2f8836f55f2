"""Derivatives of the joining ops. Joins narrow/select the gradient back per input;
permutations of elements (flip, roll) apply the inverse permutation; copies that read input
elements several times (repeat_interleave, reflect/replicate/circular pad, diag of a matrix)
scatter the gradient back through an index map, so repeats add up."""
import tensorlib
from tensorlib._C.factory import empty
from tensorlib.autograd.formulas.shape import _scatter_back
from tensorlib.autograd.recording import formula
from tensorlib.ops import joining as J
from tensorlib.ops import triangular as T
from tensorlib.ops._composites import optional_kernel


@formula("cat")
def cat(ctx, g):
    """Args are (dim, *tensors): each input gets its slice of g (legacy-skipped 1-D empties
    get an empty gradient)."""
    dim, metas = ctx.args[0], ctx.args[1:]
    grads, start = [None], 0
    for meta, needed in zip(metas, ctx.needs_input_grad[1:]):
        if meta.shape == (0,) and g.dim() != 1:
            grads.append(tensorlib.zeros((0,), dtype=g.dtype, device=g.device)
                         if needed else None)
            continue
        n = meta.shape[dim]
        grads.append(g.narrow(dim, start, n) if needed else None)
        start += n
    return tuple(grads)


@formula("stack")
def stack(ctx, g):
    dim = ctx.args[0]
    return (None,) + tuple(g.select(dim, i) if needed else None
                           for i, needed in enumerate(ctx.needs_input_grad[1:]))


@formula("flip")
def flip(ctx, g):
    return J._flip(g, ctx.args[1]), None


@formula("roll")
def roll(ctx, g):
    return J._roll(g, tuple(-s for s in ctx.args[1]), ctx.args[2]), None, None


@formula("repeat")
def repeat(ctx, g):
    """g viewed as (r0, s0, r1, s1, ...) summed over the repeat dims."""
    meta, reps = ctx.args
    shape = (1,) * (len(reps) - meta.dim()) + meta.shape
    if not reps:
        return g, None
    summed = g.reshape(J._interleave(reps, shape)).sum(tuple(range(0, 2 * len(reps), 2)))
    return summed.reshape(meta.shape), None


@formula("repeat_interleave", save=(2,))
def repeat_interleave(ctx, g):
    dim, index = ctx.args[1], ctx.args[2]
    return _scatter_back(ctx, g, lambda p: J._gather_dim(p, dim, index))[0], None, None


@formula("tril")
def tril(ctx, g):
    return T._tril(g, ctx.args[1]), None


@formula("triu")
def triu(ctx, g):
    return T._triu(g, ctx.args[1]), None


@formula("diag")
def diag(ctx, g):
    """1-D input: the same diagonal of g; 2-D input: g scattered back onto that diagonal."""
    meta, k = ctx.args
    if meta.dim() == 1:
        return g.diagonal(k, 0, 1), None
    return _scatter_back(ctx, g, lambda p: p.diagonal(k, 0, 1))[0], None


@formula("diag_embed")
def diag_embed(ctx, g):
    _, offset, d1, d2 = ctx.args
    return g.diagonal(offset, d1, d2), None, None, None


@formula("trace")
def trace(ctx, g):
    """g on the main diagonal of a zero matrix (a where over an eye mask)."""
    meta = ctx.args[0]
    rows, cols = meta.shape
    r = tensorlib.arange(rows, device=g.device).reshape(rows, 1)
    eye = tensorlib.arange(cols, device=g.device).eq(r)
    return (J._where(eye, g, tensorlib.zeros((), dtype=g.dtype, device=g.device)),)


@formula("constant_pad_nd")
def constant_pad_nd(ctx, g):
    """The adjoint of padding is cropping, i.e. padding by the negated amounts."""
    pads = tuple(-p for p in ctx.args[1])
    return J._constant_pad(g, pads, 0), None, None


@formula("pad")
def pad(ctx, g):
    """Each input element gets the gradients of the outputs that read it: the backend's
    pad_backward kernel in a plain backward, else a scatter-add through the index map."""
    meta, pads, mode = ctx.args[0], ctx.args[1], ctx.args[2]
    kernel = optional_kernel(g.device, "pad_backward")
    if kernel is not None and not tensorlib.is_grad_enabled():
        grad_x = empty(tuple(meta.shape), g._dtype, g._device)
        if kernel(grad_x, g, pads, mode):
            return grad_x, None, None
    return _scatter_back(ctx, g, lambda p: J._index_pad(p, pads, mode))[0], None, None
