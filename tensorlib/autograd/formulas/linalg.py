"""Derivatives of matmul: g @ b^T and a^T @ g, with 1-D operands promoted as in forward;
broadcast batch dims are summed back by the node."""
from tensorlib.autograd.recording import formula


@formula("matmul", "mm", save=(0, 1))
def matmul(ctx, g):
    a, b = ctx.args
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    g2 = g
    if a.dim() == 1:
        g2 = g2.unsqueeze(-2)
    if b.dim() == 1:
        g2 = g2.unsqueeze(-1)
    ga = gb = None
    if ctx.needs_input_grad[0]:
        ga = g2 @ b2.mT
        if a.dim() == 1:
            ga = ga.squeeze(-2)
    if ctx.needs_input_grad[1]:
        gb = a2.mT @ g2
        if b.dim() == 1:
            gb = gb.squeeze(-1)
    return ga, gb
