"""TENSORLIB_LOGS (PyTorch's TORCH_LOGS): a comma list of what to print to stderr --
`graph_breaks`, `recompiles`, `graph` (each new segment's recorded kernels), `output_code`
(each generated kernel's source), or `all`."""
import os
import sys


def enabled(what):
    names = {s.strip().lstrip("+") for s in os.environ.get("TENSORLIB_LOGS", "").split(",")}
    return what in names or "all" in names


def log(what, message):
    if enabled(what):
        print(f"[tensorlib.compile:{what}] {message}", file=sys.stderr)


def describe_segment(nodes):
    lines = []
    for i, n in enumerate(nodes):
        args = ", ".join(f"T{tuple(a._sizes)}:{a._dtype.name}" if hasattr(a, "_sizes")
                         else f"host{tuple(a.shape)}:{a.dtype}" if hasattr(a, "dtype")
                         else repr(a) for a in n.args)
        lines.append(f"  {i:3d} {n.device}.{n.op}({args})")
    return "\n".join(lines)
