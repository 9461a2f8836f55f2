"""The body of a fused elementwise kernel, in any dialect: a chain of primitives computed in
registers, one element at a time (the compile pipeline's fusion of elementwise chains).

A `FusedSpec` is plain data: the operands (pointer parameters, each with a dtype and how its
innermost index moves: `c` contiguous, `b` broadcast, `s` strided), the steps (a primitive
over earlier steps' values and operand loads) and the stores. Expressions come from the same
tables the per-primitive kernels use (`templates.unary_expr`/`binary_expr`), so a fused
chain computes what the op-by-op kernels compute. A backend's code generator wraps the body in
its loop nest (`tensorlib_cpu.codegen` for C with OpenMP).
"""
import re
from dataclasses import dataclass, field

from tensorlib.backends.interface import BINARY_OPS, UNARY_OPS
from tensorlib.codegen.cdialect import is_float
from tensorlib.codegen.templates import _helpers, binary_expr, unary_expr

FUSIBLE_OPS = frozenset(UNARY_OPS) | frozenset(BINARY_OPS) | {"copy", "where", "fill", "relu"}
FUSIBLE_DTYPES = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "float32",
                            "float64"})


@dataclass(frozen=True)
class Step:
    op: str
    args: tuple            # ("p", operand index) or ("v", step index)
    in_dt: str             # dtype of the arguments (promoted already)
    out_dt: str
    value: object = None   # fill: k, its value is the kernel's scalar `sc<k>`


@dataclass(frozen=True)
class FusedSpec:
    operands: tuple        # ((dtype, inner), ...)
    steps: tuple           # (Step, ...)
    stores: tuple          # ((operand index, step index), ...)
    helpers: tuple = field(default=())

    def key(self):
        return repr(self)


def _expr(d, step):
    if step.op == "fill":
        return f"(({d.compute(step.out_dt)})sc{step.value})", ()
    if step.op == "copy":
        return "x0", ()
    if step.op == "where":
        return "((x0 != 0) ? x1 : x2)", ()
    if step.op == "relu":
        if is_float(step.in_dt):
            return "((x0 > 0) | (x0 != x0) ? x0 : 0)", ()
        return "(x0 > 0 ? x0 : 0)", ()
    if step.op in UNARY_OPS:
        return unary_expr(d, step.op, step.in_dt, step.out_dt)
    return binary_expr(d, step.op, step.in_dt, step.out_dt)


def body(d, spec, index_of):
    """(helper source, statements) computing every step and storing the outputs for the
    element whose offset in operand k is index_of(k, inner)."""
    lines, helpers = [], []
    for j, step in enumerate(spec.steps):
        args = []
        for a, (src, n) in enumerate(step.args):
            dt = step.in_dt if not (step.op == "where" and a == 0) else "bool"
            if src == "p":
                odt, inner = spec.operands[n]
                args.append(d.convert(d.load(odt, f"p{n}", index_of(n, inner)), dt)
                            if odt != dt else d.load(odt, f"p{n}", index_of(n, inner)))
            else:
                vdt = spec.steps[n].out_dt
                args.append(f"v{n}" if vdt == dt else d.convert(f"v{n}", dt))
        expr, needs = _expr(d, step)
        helpers.extend(needs)
        for a, text in enumerate(args):
            lines.append(f"const {d.compute(step.in_dt if not (step.op == 'where' and a == 0) else 'bool')} "
                         f"x{j}_{a} = {text};")
        renamed = re.sub(r"\bx(\d)\b", lambda m: f"x{j}_{m.group(1)}", expr)
        lines.append(f"const {d.compute(step.out_dt)} v{j} = {d.convert(renamed, step.out_dt)};")
    for n, j in spec.stores:
        odt, inner = spec.operands[n]
        value = f"v{j}" if spec.steps[j].out_dt == odt else d.convert(f"v{j}", odt)
        lines.append(d.store(odt, f"p{n}", index_of(n, inner), value))
    unique = tuple(dict.fromkeys(helpers))
    return (_helpers(d, unique) if unique else ""), lines


def supported(op, dtypes):
    """Whether `op` over these dtypes can join a fused kernel."""
    return op in FUSIBLE_OPS and all(t in FUSIBLE_DTYPES for t in dtypes)
