"""Derivatives of indexing: x[key] scatters its gradient back through an index map; the two
flat gather/scatter helpers are each other's adjoints."""
import tensorlib
from tensorlib.autograd.formulas.shape import _scatter_back
from tensorlib.autograd.recording import formula


@formula("getitem")
def getitem(ctx, g):
    return _scatter_back(ctx, g, lambda p: tensorlib.ops.indexing.getitem(p, ctx.args[1])), None


@formula("index_add_flat", save=(1,))
def index_add_flat(ctx, g):
    return (tensorlib.ops.indexing.take_flat(g, ctx.args[1]), None, None)


@formula("take_flat", save=(1,))
def take_flat(ctx, g):
    src = ctx.args[0]
    return (tensorlib.ops.indexing.index_add_flat(g, ctx.args[1], src.shape), None)
