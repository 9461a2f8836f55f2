"""tensorlib.testing.assert_close: PyTorch's comparison, tolerances and messages.

Pairs are formed as PyTorch's: tensors (and numpy arrays) with tensors, Python numbers with
numbers, sequences item by item, mappings key by key. Tensors are compared with isclose in
their own (common) dtype, so a float16 mismatch reports the numbers float16 gives."""
import collections.abc
import numbers
import warnings

import numpy as np

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["assert_close"]

# dtype -> (rtol, atol), as torch.testing's default_tolerances
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


class _Mismatch(Exception):
    """A failed pair: the exception class to raise and its message."""

    def __init__(self, kind, msg):
        super().__init__(msg)
        self.kind, self.msg = kind, msg


def _dtype_tolerances(*dtypes):
    rtols, atols = zip(*(_TOLERANCES.get(str(d).split(".")[-1], (0.0, 0.0)) for d in dtypes))
    return max(rtols), max(atols)


def _diff_line(kind, diff, idx, tol, equality):
    line = (f"{kind.title()} difference: {diff}" if idx is None
            else f"Greatest {kind} difference: {diff} at index {idx}")
    return line + ("" if equality else f" (up to {tol} allowed)") + "\n"


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += _diff_line("absolute", abs_diff, abs_idx, atol, equality)
    msg += _diff_line("relative", rel_diff, rel_idx, rtol, equality)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol, identifier="Scalars"):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier, f"Expected {expected} but got {actual}.", abs_diff, None,
                         atol, rel_diff, None, rtol)


def _unravel(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _tensor_msg(actual, expected, matches, rtol, atol):
    n = matches.numel()
    bad = n - int(matches.sum().item())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not a.dtype.is_floating_point:
        a, e = a.to(tensorlib.int64), e.to(tensorlib.int64)
    abs_diff = (a - e).abs().masked_fill(m, 0)
    max_abs, abs_idx = abs_diff.max(0)
    rel_diff = (abs_diff / e.abs()).masked_fill(m, 0)
    max_rel, rel_idx = rel_diff.max(0)
    shape = tuple(matches.shape)
    return _mismatch_msg("Tensor-likes", extra, max_abs.item(), _unravel(int(abs_idx), shape),
                         atol, max_rel.item(), _unravel(int(rel_idx), shape), rtol)


def _attribute(name, actual, expected):
    if actual != expected:
        raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: "
                                        f"{actual} != {expected}.")


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype,
                     check_stride):
    _attribute("shape", actual.shape, expected.shape)
    if check_device:
        _attribute("device", actual.device, expected.device)
    if check_dtype:
        _attribute("dtype", actual.dtype, expected.dtype)
    if check_stride:
        _attribute("stride()", actual.stride(), expected.stride())
    if rtol is None:
        rtol, atol = _dtype_tolerances(actual.dtype, expected.dtype)
    actual, expected = actual.detach(), expected.detach()
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        common = tensorlib.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    if actual.dtype is tensorlib.bool:
        matches = actual == expected
    else:
        matches = tensorlib.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        msg = _scalar_msg(actual.item(), expected.item(), rtol, atol)
    else:
        msg = _tensor_msg(actual, expected, matches, rtol, atol)
    raise _Mismatch(AssertionError, msg)


def _number_tolerances(value):
    if isinstance(value, bool) or isinstance(value, numbers.Integral):
        return 0.0, 0.0
    return _TOLERANCES["float64"]


def _compare_numbers(actual, expected, rtol, atol, equal_nan, check_dtype):
    # NumPy scalars compare as the Python numbers they hold (np.float64 beside float passes)
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    if check_dtype and type(actual) is not type(expected) and not (
            isinstance(actual, numbers.Integral) and isinstance(expected, numbers.Integral)
            and not isinstance(actual, bool) and not isinstance(expected, bool)):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                        f"{type(expected)}.")
    if rtol is None:
        rtol = max(_number_tolerances(actual)[0], _number_tolerances(expected)[0])
        atol = max(_number_tolerances(actual)[1], _number_tolerances(expected)[1])
    if actual == expected:
        return
    if equal_nan and actual != actual and expected != expected:
        return
    if abs(actual - expected) <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_msg(actual, expected, rtol, atol))


def _is_tensor_like(x):
    return isinstance(x, (TensorImpl, np.ndarray))


def _compare(actual, expected, path, options):
    try:
        if _is_tensor_like(actual) and _is_tensor_like(expected):
            actual, expected = (tensorlib.as_tensor(x) if isinstance(x, np.ndarray) else x
                                for x in (actual, expected))
            _compare_tensors(actual, expected, **options)
            return
        if isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number) and \
                not _is_tensor_like(actual) and not _is_tensor_like(expected):
            _compare_numbers(actual, expected, options["rtol"], options["atol"],
                             options["equal_nan"], options["check_dtype"])
            return
    except _Mismatch as failure:
        if path:
            failure.msg += "\n\nThe failure occurred for item " + \
                "".join(f"[{p!r}]" for p in path)
        raise
    if isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str) and \
            isinstance(expected, collections.abc.Sequence) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        missing = sorted(set(expected) - set(actual), key=repr)
        extra = sorted(set(actual) - set(expected), key=repr)
        if missing or extra:
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match:\n"
                                            f"Missing keys in the actual mapping: {missing}\n"
                                            f"Additional keys in the actual mapping: {extra}")
        for key in expected:
            _compare(actual[key], expected[key], path + (key,), options)
        return
    if actual is None and expected is None:
        return
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError unless actual and expected are close (torch.testing.assert_close):
    |actual - expected| <= atol + rtol * |expected| elementwise, with per-dtype defaults."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                   check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as failure:
        text = failure.msg
        if callable(msg):
            text = msg(text)
        elif msg is not None:
            text = msg
        raise failure.kind(text) from None


# torch.testing.assert_allclose's own defaults (looser than assert_close's for float32)
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5),
                        "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated alias of assert_close (PyTorch's FutureWarning): numbers and sequences
    become tensors, expected in actual's dtype, dtypes are not compared."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, TensorImpl):
        actual = tensorlib.tensor(actual)
    if not isinstance(expected, TensorImpl):
        expected = tensorlib.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtols, atols = zip(*(_ALLCLOSE_PRECISIONS.get(t.dtype.name, (0.0, 0.0))
                             for t in (actual, expected)))
        rtol, atol = max(rtols), max(atols)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
