"""torch.testing._internal.common_utils: the TestCase libraries' own tests build on (timm's
optimizer tests call `TestCase().assertEqual` on tensors and state_dicts).

`assertEqual` compares as PyTorch's does: tensors (and numpy arrays) with per-dtype
tolerances and NaNs equal, a tensor with a number or a list by value, numbers of any Python
type by value, strings exactly, sequences item by item and mappings key by key; anything
else by `==`. `exact_dtype` checks tensors' dtypes, `exact_device` their devices."""
import collections.abc
import numbers
import unittest

import numpy as np

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.testing._comparison import _compare, _compare_numbers, _Mismatch

__all__ = ["TestCase", "run_tests"]


def _tensor_like(x):
    return isinstance(x, (TensorImpl, np.ndarray))


def _as_tensor_beside(value, tensor):
    """A number or nested list as a tensor of the other side's dtype (PyTorch compares
    `tensor == [1.0, 2.0]` by value)."""
    like = tensor if isinstance(tensor, TensorImpl) else tensorlib.as_tensor(tensor)
    return tensorlib.as_tensor(value, dtype=like.dtype)


def _check_equal(x, y, path, options):
    if _tensor_like(x) or _tensor_like(y):
        if not _tensor_like(x):
            x = _as_tensor_beside(x, y)
        elif not _tensor_like(y):
            y = _as_tensor_beside(y, x)
        _compare(x, y, path, options)
        return
    if isinstance(x, numbers.Number) and isinstance(y, numbers.Number):
        _compare_numbers(x, y, options["rtol"], options["atol"], options["equal_nan"],
                         check_dtype=False)
        return
    if isinstance(x, str) or isinstance(y, str):
        if x != y:
            raise _Mismatch(AssertionError, f"String comparison failed: {x!r} != {y!r}")
        return
    if isinstance(x, collections.abc.Mapping) and isinstance(y, collections.abc.Mapping):
        if set(x) != set(y):
            raise _Mismatch(AssertionError, f"The keys of the mappings do not match: "
                                            f"{sorted(x, key=repr)} != {sorted(y, key=repr)}")
        for key in x:
            _check_equal(x[key], y[key], path + (key,), options)
        return
    if isinstance(x, collections.abc.Sequence) and isinstance(y, collections.abc.Sequence):
        if len(x) != len(y):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(x)} != {len(y)}")
        for i, (a, b) in enumerate(zip(x, y)):
            _check_equal(a, b, path + (i,), options)
        return
    if not x == y:
        raise _Mismatch(AssertionError, f"Object comparison failed: {x!r} != {y!r}")


class TestCase(unittest.TestCase):
    """unittest.TestCase with PyTorch's tensor-aware assertEqual."""

    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, equal_nan=True,  # noqa: N802
                    exact_dtype=True, exact_device=False):
        if (atol is None) != (rtol is None):
            raise ValueError("If one of atol or rtol is specified, then the other must be "
                             "too")
        options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=exact_device,
                       check_dtype=exact_dtype, check_stride=False)
        try:
            _check_equal(x, y, (), options)
        except _Mismatch as failure:
            text = failure.msg
            if failure.kind is AssertionError and msg is not None:
                text = f"{text}\n{msg}"
            raise failure.kind(text) from None

    def assertNotEqual(self, x, y, msg=None, *, atol=None, rtol=None, **kwargs):  # noqa: N802
        try:
            self.assertEqual(x, y, msg, atol=atol, rtol=rtol, **kwargs)
        except AssertionError:
            return
        raise AssertionError(msg or f"{x!r} == {y!r}")


def run_tests(argv=None):
    """Run the calling module's TestCases (PyTorch's test files end with it)."""
    unittest.main(module="__main__", argv=argv)
