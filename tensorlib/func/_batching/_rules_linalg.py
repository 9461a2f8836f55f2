"""Batch rules of the products: matmul and its fixed-rank forms (mm, mv, bmm, dot), outer,
F.linear and einsum. A batched input against an unbatched weight stays one GEMM over the
whole batch, as in PyTorch, so vmap's products round as the unbatched program's."""
import tensorlib
from tensorlib.func._batching._batched import BatchedTensor, front, make, pad_to
from tensorlib.func._batching._dispatch import register

_RANKS = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1), "dot": (1, 1), "vdot": None,
          "matmul": None, "__matmul__": None, "inner": (1, 1)}


@register(*_RANKS)
def matmul(func, level, args, kwargs):
    if len(args) != 2 or kwargs or func.__name__ == "vdot":
        return NotImplemented
    a, b = args
    ra, rb = a.dim(), b.dim()
    ranks = _RANKS[func.__name__]
    if ra == 0 or rb == 0 or (ranks is not None and (ra, rb) != ranks):
        return NotImplemented
    av, bv = front(a, level), front(b, level)
    if bv is None and rb <= 2:             # batched input, unbatched matrix: one product
        return make(tensorlib.matmul(av, b), 0, level)
    left = av.unsqueeze(1) if av is not None and ra == 1 else \
        (a.unsqueeze(0) if ra == 1 else (av if av is not None else a))
    right = bv.unsqueeze(-1) if bv is not None and rb == 1 else \
        (b.unsqueeze(-1) if rb == 1 else (bv if bv is not None else b))
    rank = max(ra, rb, 2) + 1
    if av is not None:
        left = pad_to(left, rank)
    if bv is not None:
        right = pad_to(right, rank)
    out = tensorlib.matmul(left, right)
    if rb == 1:
        out = out.squeeze(-1)
    if ra == 1:
        out = out.squeeze(-1 if rb == 1 else -2)
    return make(out, 0, level)


@register("outer", "ger")
def outer(func, level, args, kwargs):
    if len(args) != 2 or kwargs or args[0].dim() != 1 or args[1].dim() != 1:
        return NotImplemented
    return args[0].unsqueeze(-1) * args[1].unsqueeze(-2)


@register("linear")
def linear(func, level, args, kwargs):
    names = ("input", "weight", "bias")
    given = dict(zip(names, args), **kwargs)
    x, weight, bias = given.get("input"), given.get("weight"), given.get("bias")
    if set(given) - set(names) or x is None or weight is None:
        return NotImplemented
    value = front(x, level) if type(x) is BatchedTensor else None
    if value is not None and front(weight, level) is None and \
            (bias is None or type(bias) is not BatchedTensor or front(bias, level) is None):
        return make(func(value, weight, bias), 0, level)
    out = tensorlib.matmul(x, weight.transpose(-1, -2)) if weight.dim() == 2 else \
        tensorlib.matmul(x, weight)
    return out if bias is None else out + bias


@register("einsum")
def einsum(func, level, args, kwargs):
    if kwargs or not args or not isinstance(args[0], str):
        return NotImplemented
    equation = args[0].replace(" ", "")
    operands = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) \
        else list(args[1:])
    if "->" not in equation:
        return NotImplemented
    inputs, output = equation.split("->")
    specs = inputs.split(",")
    if len(specs) != len(operands):
        return NotImplemented
    letter = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA"
                  if c not in equation)
    physical = []
    for i, op in enumerate(operands):
        value = front(op, level) if type(op) is BatchedTensor else None
        if value is not None:
            specs[i] = letter + specs[i]
            op = value
        physical.append(op)
    return make(func(",".join(specs) + "->" + letter + output, *physical), 0, level)
