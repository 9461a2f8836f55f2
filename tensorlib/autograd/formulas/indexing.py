"""Derivatives of indexing: x[key] scatters its gradient back to the positions it read;
index_put splits it between the untouched elements and the written values. The two flat
gather/scatter helpers are each other's adjoints."""
import tensorlib
from tensorlib.autograd.recording import formula


def _ops():
    return tensorlib.ops.indexing


@formula("getitem")
def getitem(ctx, g):
    meta, key = ctx.args
    if not any(isinstance(k, tensorlib.Tensor) for k in key.items):     # a plain view
        from tensorlib.autograd.formulas.shape import write_back
        return write_back(meta, g, lambda p: _ops().apply_basic(p, key.items)[0]), None
    pos = _ops().index_positions(meta.shape, meta.device, key)
    return _ops().index_add_flat(g, pos, meta.shape), None


@formula("index_put")
def index_put(ctx, g):
    """accumulate: g passes to x whole; otherwise the overwritten elements get none. The
    values get g at their positions (only the winning write of a repeated index)."""
    meta, key, _, accumulate = ctx.args
    grad_x = grad_v = None
    if ctx.needs_input_grad[0]:
        grad_x = g if accumulate else _ops()._index_put(
            g, key, tensorlib.zeros((), dtype=g.dtype, device=g.device), False)
    if ctx.needs_input_grad[2]:
        pos = _ops().index_positions(meta.shape, meta.device, key)
        grad_v = _ops().take_flat(g, pos)
        if not (accumulate or key.unique):
            from tensorlib.ops._index_common import last_writer
            grad_v = tensorlib.where(last_writer(pos), grad_v, 0.0)
    return grad_x, None, grad_v, None


@formula("index_add_flat", save=(1,))
def index_add_flat(ctx, g):
    return (_ops().take_flat(g, ctx.args[1]), None, None)


@formula("take_flat", save=(1,))
def take_flat(ctx, g):
    src = ctx.args[0]
    return (_ops().index_add_flat(g, ctx.args[1], src.shape), None)
