"""Derivatives of matmul: g @ b^T and a^T @ g, with 1-D operands promoted as in forward;
broadcast batch dims are summed back by the node."""
import math

import tensorlib
from tensorlib._C.factory import empty
from tensorlib.autograd.formulas.complex import conj
from tensorlib.autograd.recording import formula
from tensorlib.ops._composites import optional_kernel


@formula("matmul", "mm", save=(0, 1))
def matmul(ctx, g):
    a, b = ctx.args
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    g2 = g
    if a.dim() == 1 and b.dim() == 1:       # a dot product: g is 0-dim
        g2 = g2.reshape(1, 1)
    elif a.dim() == 1:
        g2 = g2.unsqueeze(-2)
    elif b.dim() == 1:
        g2 = g2.unsqueeze(-1)
    ga = gb = None
    if ctx.needs_input_grad[0]:
        ga = g2 @ conj(b2).mT
        if a.dim() == 1:
            ga = ga.squeeze(-2)
    if ctx.needs_input_grad[1]:
        gb = conj(a2).mT @ g2
        if b.dim() == 1:
            gb = gb.squeeze(-1)
    return ga, gb


@formula("addmm", save=(1, 2))
def addmm(ctx, g):
    """beta * input + alpha * mat1 @ mat2: the node sums g back over input's broadcast dims."""
    mat1, mat2, beta, alpha = ctx.args[1:]
    need = ctx.needs_input_grad
    gi = (g * beta if beta != 1 else g) if need[0] else None
    ga = g @ conj(mat2).mT if need[1] else None
    gb = conj(mat1).mT @ g if need[2] else None
    if alpha != 1:
        ga = ga * alpha if ga is not None else None
        gb = gb * alpha if gb is not None else None
    return gi, ga, gb


@formula("vector_norm", save=(0,), save_output=True)
def vector_norm(ctx, g):
    """d||x||_p = sign(x) |x|^(p-1) / ||x||^(p-1): 0 where the norm is 0 (torch); inf-norms
    split the gradient evenly between the tied extremes. The backend's vector_norm_backward
    kernel takes the plain backward where it can."""
    import tensorlib
    from tensorlib.autograd.formulas.reduction import unreduce
    x, ord_, dims, keepdim = ctx.args
    kernel = optional_kernel(x._device, "vector_norm_backward")
    if kernel is not None and not tensorlib.is_grad_enabled():      # one pass, torch's formula
        grad_x = empty(x._sizes, x._dtype, x._device)
        if kernel(grad_x, g, x, ctx.out, ord_, dims):
            return (grad_x,)
    g = unreduce(g, x.shape, dims, keepdim)
    out = unreduce(ctx.out, x.shape, dims, keepdim)
    if ord_ == 0:
        return (g * 0,)
    if ord_ == 1:
        return (g * tensorlib.sign(x),)
    if ord_ in (math.inf, -math.inf):
        hit = tensorlib.eq(x.abs(), out).to(g.dtype)
        return (g * tensorlib.sign(x) * hit / hit.sum(dims, keepdim=True),)
    zero = tensorlib.eq(out, 0)
    safe = tensorlib.where(zero, 1.0, out)
    if ord_ == 2:
        scale = x / safe
    else:
        scale = tensorlib.sign(x) * (x.abs() / safe) ** (ord_ - 1)
    return (tensorlib.where(zero, 0.0, g * scale),)


def _paired_products(g, x, weight):
    """g @ weight and g^T @ x in one call of the backend's `mm_pair` kernel, which runs the
    two side by side on its threads; None where it has none or declines (it takes 2-D real
    matrices), or a graph of the backward is being recorded."""
    pair = optional_kernel(g._device, "mm_pair")
    if pair is None or x.dim() != 2 or g.dim() != 2 or tensorlib.is_grad_enabled() \
            or not (g._dtype is x._dtype is weight._dtype) or g._dtype.is_complex:
        return None
    gx = empty(x._sizes, x._dtype, x._device)
    gw = empty(weight._sizes, weight._dtype, weight._device)
    return (gx, gw) if pair(gx, g, weight, gw, g.mT, x) else None


# PyTorch's graph reaches bias, input, then weight (AddmmBackward0's edges: bias, input,
# weight.t()'s TBackward0), so the bias's gradient accumulates (its hooks fire) first
@formula("linear", save=(0, 1), edge_order=(2, 0, 1))
def linear(ctx, g):
    x, weight = ctx.args[0], ctx.args[1]
    has_bias = len(ctx.args) > 2 and ctx.args[2] is not None
    sizes = g._sizes
    lead = math.prod(sizes[:-1])    # not -1: a 0-size last dim leaves -1 ambiguous
    rows = g if len(sizes) == 2 else g.reshape(lead, sizes[-1])
    both = ctx.needs_input_grad[0] and ctx.needs_input_grad[1]
    paired = _paired_products(g, x, weight) if both else None
    if paired is not None:
        gx, gw = paired
    else:
        gx = g @ conj(weight) if ctx.needs_input_grad[0] else None
        if ctx.needs_input_grad[1]:
            flat = x if len(x._sizes) == 2 else x.reshape(lead, x._sizes[-1])
            gw = tensorlib.mm(rows.mT, conj(flat))     # (2-D: mm, not matmul's dispatch)
        else:
            gw = None
    if not has_bias:
        return gx, gw
    return gx, gw, (rows.sum(0) if ctx.needs_input_grad[2] else None)
