"""Derivatives of gather/scatter, index_*, masked_* and the sorts. Each is the adjoint op:
gather <-> scatter_add, index_select <-> index_add, masked_select <-> masked_scatter; sort,
topk and kthvalue send the gradient back to the indices they returned. Overwriting ops give
the gradient to the surviving (last) write only, matching their forward."""
import tensorlib
from tensorlib.autograd.recording import formula
from tensorlib.ops import _index_common as _common
from tensorlib.ops import scatter_gather as _sg
from tensorlib.ops import selection as _sel




def _zeros(meta, g):
    return tensorlib.zeros(meta.shape, dtype=g.dtype, device=g.device)


def _back_to(meta, g, dim, indices):
    """zeros of meta's shape with g added at `indices` along dim (the sorts' gradient)."""
    if len(meta.shape) == 0:
        return g
    return _sg._scatter_add(_zeros(meta, g), dim, indices, g)


@formula("gather", save=(2,))
def gather(ctx, g):
    x, dim, index = ctx.args
    return _back_to(x, g, dim, index), None, None


@formula("scatter_add", save=(2,))
def scatter_add(ctx, g):
    _, dim, index, _ = ctx.args
    return g, None, None, _sg._gather(g, dim, index)


def _winners(shape, dim, index):
    """Bool, index-shaped: the elements whose write survives an overwriting scatter."""
    targets = _common.dim_positions(_sg._as1d(index), dim, tuple(shape) or (1,))
    return _common.last_writer(targets).view(index.shape)


@formula("scatter", save=(2,))
def scatter(ctx, g):
    x, dim, index, _ = ctx.args
    grad_x = _sg._scatter_value(g, dim, index, 0) if ctx.needs_input_grad[0] else None
    grad_src = None
    if ctx.needs_input_grad[3]:
        grad_src = tensorlib.where(_winners(x.shape, dim, index), _sg._gather(g, dim, index), 0.0)
    return grad_x, None, None, grad_src


@formula("scatter_value", save=(2,))
def scatter_value(ctx, g):
    _, dim, index, _ = ctx.args
    return _sg._scatter_value(g, dim, index, 0), None, None, None


def _hit(meta, dim, index):
    hit = _common.hit_mask(meta.shape or (1,), _sg._as1d(index), dim, index.device)
    return hit.view(meta.shape)


@formula("scatter_reduce", save=(0, 2, 3), save_output=True)
def scatter_reduce(ctx, g):
    x, dim, index, src, reduce, include_self = ctx.args
    grad = {"sum": _sr_sum, "mean": _sr_mean, "amax": _sr_extreme, "amin": _sr_extreme,
            "prod": _sr_prod}[reduce]
    grad_x, grad_src = grad(ctx, g, x, dim, index, src, include_self)
    if not include_self:
        grad_x = tensorlib.where(_hit(x, dim, index), 0.0, grad_x)
    return grad_x, None, None, grad_src, None, None


def _sr_sum(ctx, g, x, dim, index, src, include_self):
    return g, _sg._gather(g, dim, index)


def _sr_mean(ctx, g, x, dim, index, src, include_self):
    ones = tensorlib.ones(index.shape, dtype=g.dtype, device=g.device)
    count = _sg._scatter_add(_zeros(x, g), dim, index, ones)
    count = count + 1 if include_self else tensorlib.where(count == 0, 1.0, count)
    gm = g / count
    return gm, _sg._gather(gm, dim, index)


def _sr_extreme(ctx, g, x, dim, index, src, include_self):
    """Split evenly among every element (self or src) equal to the result."""
    out = ctx.out
    self_is = tensorlib.eq(x, out)
    if not include_self:
        self_is = self_is & _hit(x, dim, index).logical_not()
    src_is = tensorlib.eq(src, _sg._gather(out, dim, index))
    count = _sg._scatter_add(self_is.to(g.dtype), dim, index, src_is.to(g.dtype))
    share = g / tensorlib.where(count == 0, 1.0, count)
    return (tensorlib.where(self_is, share, 0.0),
            tensorlib.where(src_is, _sg._gather(share, dim, index), 0.0))


def _sr_prod(ctx, g, x, dim, index, src, include_self):
    """PyTorch's formula: exact with one zero among the factors of an output."""
    out = ctx.out
    masked_self = tensorlib.where(x == 0, 1.0, x)
    grad_x = g * _sg._scatter_reduce(masked_self, dim, index, src, "prod",
                                     include_self) / masked_self
    src_zero = src == 0
    zeros_per_out = _sg._scatter_add(_zeros(x, g), dim, index, src_zero.to(g.dtype))
    single_zero = src_zero & (_sg._gather(zeros_per_out, dim, index) == 1)
    masked_src = tensorlib.where(single_zero, 1.0, src)
    without = _sg._scatter_reduce(x, dim, index, masked_src, "prod", include_self)
    unmasked = _sg._gather(g * out, dim, index) / tensorlib.where(src_zero, 1.0, src)
    grad_src = tensorlib.where(single_zero, _sg._gather(g * without, dim, index), unmasked)
    return grad_x, grad_src


@formula("index_select", save=(2,))
def index_select(ctx, g):
    x, dim, index = ctx.args
    if len(x.shape) == 0:
        return g, None, None
    if tensorlib.is_grad_enabled():                 # a graph of the backward: the op records
        return _sel._index_add(_zeros(x, g), dim, index, g, 1), None, None
    # added in place into fresh zeros (index_add would copy them first)
    grad = _zeros(x, g)
    src = _sg._as1d(g)
    shaped = _sel._slice_view(index, dim, src.dim()).expand(src.shape)
    _common._scatter_add_into(_sg._as1d(grad), dim, shaped, src)
    return grad, None, None


@formula("index_add", save=(2,))
def index_add(ctx, g):
    x, dim, index, _, alpha = ctx.args
    grad_src = None
    if ctx.needs_input_grad[3]:
        grad_src = g if len(x.shape) == 0 else _sel._index_select(g, dim, index)
        grad_src = grad_src * alpha if alpha != 1 else grad_src
    return g, None, None, grad_src, None


@formula("index_copy", save=(2,))
def index_copy(ctx, g):
    x, dim, index, source = ctx.args
    grad_x = _sel._index_fill(g, dim, index, 0)
    grad_src = None
    if ctx.needs_input_grad[3]:
        src_shape = source.shape or (1,)
        keep = _common.last_writer(_sel.index_targets(x.shape, dim, index, src_shape))
        picked = g.reshape(1) if len(x.shape) == 0 else _sel._index_select(g, dim, index)
        grad_src = tensorlib.where(keep, picked, 0.0).reshape(source.shape)
    return grad_x, None, None, grad_src


def _masked_split(mask, g, value_needs_grad):
    """(g where mask is False, sum of g where it is True) -- the fill ops' two gradients."""
    grad_x = tensorlib.where(mask, 0.0, g)
    grad_value = tensorlib.where(mask, g, 0.0).sum() if value_needs_grad else None
    return grad_x, grad_value


@formula("index_fill", save=(2,))
def index_fill(ctx, g):
    x, dim, index, _ = ctx.args
    mask = _sel.dim_mask(x.shape, g.device, dim, index)
    grad_x, grad_value = _masked_split(mask, g, ctx.needs_input_grad[3])
    return grad_x, None, None, grad_value


@formula("masked_fill", save=(1,))
def masked_fill(ctx, g):
    grad_x, grad_value = _masked_split(ctx.args[1], g, ctx.needs_input_grad[2])
    return grad_x, None, grad_value


@formula("masked_select", save=(1,))
def masked_select(ctx, g):
    x, mask = ctx.args
    shape = tensorlib.broadcast_shapes(x.shape, mask.shape)
    pos = _common.mask_positions(mask.expand(shape))
    return tensorlib.ops.indexing.index_add_flat(g, pos, shape), None


@formula("masked_scatter", save=(1,))
def masked_scatter(ctx, g):
    _, mask, source = ctx.args
    grad_x = tensorlib.where(mask, 0.0, g)
    grad_src = None
    if ctx.needs_input_grad[2]:
        picked = _sel._masked_select(g, mask)
        positions = tensorlib.arange(picked.numel(), device=g.device)
        grad_src = tensorlib.ops.indexing.index_add_flat(picked, positions, source.shape)
    return grad_x, None, grad_src


@formula("sort", save_output=True)
def sort(ctx, g, g_indices=None):
    x, dim = ctx.args[0], ctx.args[1]
    return _back_to(x, g, dim, ctx.out[1]), None, None, None


@formula("topk", save_output=True)
def topk(ctx, g, g_indices=None):
    x, _, dim = ctx.args[:3]
    return (_back_to(x, g, dim, ctx.out[1]),) + (None,) * 4


@formula("kthvalue", save_output=True)
def kthvalue(ctx, g, g_indices=None):
    x, _, dim, keepdim = ctx.args
    indices = ctx.out[1]
    if not keepdim and len(x.shape):
        indices, g = indices.unsqueeze(dim), g.unsqueeze(dim)
    return _back_to(x, g, dim, indices), None, None, None
