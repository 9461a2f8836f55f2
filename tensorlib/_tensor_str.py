"""PyTorch-like printing: `tensor([[1., 2.], [3., 4.]], dtype=tensorlib.float64)`."""
import math

import numpy as np

import tensorlib._C.dtypes as dt


class _PrintOptions:
    """What `set_printoptions` changes: read by every repr (PyTorch's PRINT_OPTS)."""
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions: a profile ('default', 'short', 'full') first, then the
    options given; sci_mode None chooses scientific notation from the values."""
    if profile in _PROFILES:         # as PyTorch, another profile name changes nothing
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def _float_formatter(values):
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return lambda v: _special(v) or f"{v}"
    absval = np.abs(finite)
    nonzero = absval[absval > 0]
    precision, sci_mode = PRINT_OPTS.precision, PRINT_OPTS.sci_mode
    wide = nonzero.size > 0 and (nonzero.max() / nonzero.min() > 1000.0 or nonzero.max() > 1e8)
    if np.all(finite == np.round(finite)):
        # whole numbers print as `2.` unless their range asks for scientific notation
        if not (wide if sci_mode is None else sci_mode):
            width = max(len(f"{v:.0f}") for v in finite) + 1
            return lambda v: (_special(v) or f"{v:.0f}.").rjust(width)
    sci = sci_mode if sci_mode is not None else wide or (nonzero.size > 0
                                                         and nonzero.min() < 1e-4)
    if sci:
        width = max(len(f"{v:.{precision}e}") for v in finite)
        return lambda v: (_special(v) or f"{v:.{precision}e}").rjust(width)
    width = max(len(f"{v:.{precision}f}") for v in finite)
    return lambda v: (_special(v) or f"{v:.{precision}f}").rjust(width)


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def _formatter(array):
    if array.dtype == np.bool_:
        width = 5 if not array.all() else 4
        return lambda v: ("True" if v else "False").rjust(width)
    if array.dtype.kind in "iu":
        width = max((len(str(v)) for v in array.ravel()), default=1)
        return lambda v: str(v).rjust(width)
    if array.dtype.kind == "c":
        return _complex_formatter(array.ravel())
    return _float_formatter(array.astype(np.float64).ravel())


def _complex_formatter(values):
    """PyTorch's `1.5000+2.0000j`: the real and imaginary parts formatted separately."""
    real = _float_formatter(values.real.astype(np.float64))
    imag = _float_formatter(np.abs(values.imag).astype(np.float64))
    return lambda v: (real(v.real) + ("-" if np.signbit(v.imag) else "+")
                      + imag(abs(v.imag)).lstrip() + "j")


def _format(array, fmt, indent, summarize):
    if array.ndim == 0:
        return fmt(array.item())
    n, edge = array.shape[0], PRINT_OPTS.edgeitems
    if summarize and n > 2 * edge:
        items = [*range(edge), None, *range(n - edge, n)]
    else:
        items = range(n)
    if array.ndim == 1:
        parts = [" ..." if i is None else fmt(array[i]) for i in items]
        per_line = max(1, int((PRINT_OPTS.linewidth - indent) // (len(parts[0]) + 2)))
        lines = [", ".join(parts[i:i + per_line]) for i in range(0, len(parts), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    parts = ["..." if i is None else _format(array[i], fmt, indent + 1, summarize)
             for i in items]
    return "[" + sep.join(parts) + "]"


def _host_array(t):
    array = t.detach().cpu().numpy() if hasattr(t, "detach") else t.cpu().numpy()
    return array.astype(np.float32) if t._dtype in (dt.bfloat16, dt.float16) else array


def _body(array, indent):
    if array.size == 0:
        return "[]"
    summarize = array.size > PRINT_OPTS.threshold
    return _format(array, _formatter(_edges(array) if summarize else array), indent, summarize)


def _tensor_str(t, indent):
    """torch._tensor_str._tensor_str: the values alone, as a repr prints them with the
    continuation lines indented by `indent` (programs write tensors to text files with it)."""
    return _body(_host_array(t), indent)


def tensor_repr(t, prefix="tensor("):
    if t._device.type == "meta":
        return _meta_repr(t, prefix)
    array = _host_array(t)
    suffixes = []
    if array.size == 0 and array.ndim != 1:
        suffixes.append(f"size={tuple(array.shape)}")
    body = _body(array, len(prefix))
    default_for_kind = (t._dtype is dt.get_default_dtype() or t._dtype is dt.int64
                        or t._dtype is dt.bool_ or t._dtype is _default_complex())
    if t._device.type != "cpu":
        suffixes.insert(0, f"device='{t._device}'")
    if not default_for_kind:
        suffixes.append(f"dtype={t._dtype!r}")
    if getattr(t, "grad_fn", None) is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif getattr(t, "requires_grad", False):
        suffixes.append("requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffixes) + ")"


def _default_complex():
    return dt.complex128 if dt.get_default_dtype() is dt.float64 else dt.complex64


def _edges(array):
    """The values that a summarised print shows, so the column width fits them."""
    edge = PRINT_OPTS.edgeitems
    for axis in range(array.ndim):
        if array.shape[axis] > 2 * edge:
            idx = list(range(edge)) + list(range(array.shape[axis] - edge, array.shape[axis]))
            array = np.take(array, idx, axis=axis)
    return array


def _meta_repr(t, prefix):
    """PyTorch's form for a tensor without data: tensor(..., device='meta', size=(2, 3))."""
    parts = ["...", "device='meta'", f"size={tuple(t._sizes)}"]
    if t._dtype is not dt.get_default_dtype():
        parts.append(f"dtype={t._dtype}")
    if getattr(t, "_requires_grad", False):
        parts.append("requires_grad=True")
    return prefix + ", ".join(parts) + ")"
