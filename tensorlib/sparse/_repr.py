"""Printing a sparse tensor as PyTorch does: its component tensors' bodies, then size, nnz,
dtype, layout and autograd, wrapped at 80 columns (a COO tensor's always on a new line)."""
import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._tensor_str import PRINT_OPTS, _default_complex, _edges, _format, _formatter

__all__ = ["sparse_repr"]

LINEWIDTH = 80


def _body(t, indent):
    """A dense component's bracketed values at `indent`, ", size=..." when it is empty."""
    array = t.detach().cpu().numpy()
    if t._dtype in (dt.bfloat16, dt.float16):
        array = array.astype(np.float32)
    if array.size == 0:
        return f"[], size={tuple(array.shape)}"
    summarize = array.size > PRINT_OPTS.threshold
    return _format(array, _formatter(_edges(array) if summarize else array), indent,
                   summarize)


def _add_suffixes(text, suffixes, indent, force_newline):
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def sparse_repr(t, prefix="tensor("):
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    suffixes += [f"size={tuple(t._sizes)}", f"nnz={t._nnz()}"]
    default = (t._dtype is dt.get_default_dtype() or t._dtype is dt.int64
               or t._dtype is dt.bool_ or t._dtype is _default_complex())
    if not default:
        suffixes.append(f"dtype={t._dtype!r}")
    if t.is_sparse:
        names = (("indices", t._indices_t), ("values", t._values_t))
    elif t._layout._name == "sparse_csc":
        names = (("ccol_indices", t._ccol_t), ("row_indices", t._row_t),
                 ("values", t._values_t))
    else:
        names = (("crow_indices", t._crow_t), ("col_indices", t._col_t), ("values", t._values_t))
    lines = [f"{name}=tensor({_body(part, indent + len(name) + 8)})" for name, part in names]
    body = (",\n" + " " * indent).join(lines)
    suffixes.append(f"layout={t._layout}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent, t.is_sparse)
