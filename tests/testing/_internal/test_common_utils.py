"""torch.testing._internal.common_utils.TestCase.assertEqual as PyTorch's: what passes and
what fails (and how) for tensors, numbers, strings and containers, against the outcomes
torch 2.13 gives, and against torch itself where it and its test framework (expecttest)
are installed."""
import math

import numpy as np
import pytest

import tensorlib
from tensorlib.testing._internal.common_utils import TestCase

OK = "ok"
DTYPE_INT_FLOAT = ("AssertionError: The values for attribute 'dtype' do not match: "
                   "tensorlib.int64 != tensorlib.float32.")
DTYPE_32_64 = ("AssertionError: The values for attribute 'dtype' do not match: "
               "tensorlib.float32 != tensorlib.float64.")
# (name, inputs from a library, options, the outcome torch 2.13 gives: "ok" or the first line
# of its message, torch's names read as tensorlib's)
CASES = [
    ("tensor vs list", lambda t: (t.tensor([1.0, 2.0]), [1.0, 2.0]), {}, OK),
    ("tensor vs number", lambda t: (t.tensor(3.0), 3), {}, OK),
    ("int vs float tensors", lambda t: (t.tensor([1, 2]), t.tensor([1.0, 2.0])), {},
     DTYPE_INT_FLOAT),
    ("int vs float, dtype relaxed", lambda t: (t.tensor([1, 2]), t.tensor([1.0, 2.0])),
     {"exact_dtype": False}, OK),
    ("mapping of mixed", lambda t: ({"a": [1, "x", None]}, {"a": (1, "x", None)}), {}, OK),
    ("strings", lambda t: ("abc", "abd"), {},
     "AssertionError: String comparison failed: 'abc' != 'abd'"),
    ("floats within tolerance", lambda t: (1.0, 1.0000001), {}, OK),
    ("int vs float numbers", lambda t: (1, 1.0), {}, OK),
    ("bool vs int", lambda t: (True, 1), {}, OK),
    ("nan numbers", lambda t: (math.nan, math.nan), {}, OK),
    ("sequence lengths", lambda t: ([1, 2], [1, 2, 3]), {},
     "AssertionError: The length of the sequences mismatch: 2 != 3"),
    ("float32 vs float64", lambda t: (t.tensor([1.0]), t.tensor([1.0], dtype=t.float64)), {},
     DTYPE_32_64),
    ("nan tensors", lambda t: (t.tensor([1.0, math.nan]), t.tensor([1.0, math.nan])), {}, OK),
    ("not close", lambda t: (t.tensor([1.0]), t.tensor([1.1])), {},
     "AssertionError: Tensor-likes are not close!"),
    ("explicit tolerance", lambda t: (t.tensor([1.0]), t.tensor([1.1])),
     {"atol": 0.2, "rtol": 0}, OK),
    ("dtypes", lambda t: (t.float32, t.float32), {}, OK),
]


def _outcome(test_case, lib, make, options):
    try:
        test_case().assertEqual(*make(lib), **options)
        return OK
    except AssertionError as e:
        return "AssertionError: " + str(e).splitlines()[0].replace("torch.", "tensorlib.")


def _torch_test_case():
    """torch's own TestCase, where torch and its test framework (expecttest) import."""
    try:
        import torch
        from torch.testing._internal.common_utils import TestCase as TorchTestCase
    except ImportError:
        return None, None
    return torch, TorchTestCase


@pytest.mark.parametrize("name,make,options,expected", CASES, ids=[c[0] for c in CASES])
def test_assert_equal_as_torch_does(name, make, options, expected):
    assert _outcome(TestCase, tensorlib, make, options) == expected
    torch, torch_test_case = _torch_test_case()
    if torch is not None:
        assert _outcome(torch_test_case, torch, make, options) == expected


def test_assert_equal_on_state_dicts_and_not_equal():
    """What timm's optimizer tests do: two optimizers' state_dicts, tensors inside."""
    a = tensorlib.nn.Linear(3, 2)
    opt = tensorlib.optim.Adam(a.parameters(), lr=0.1)
    a(tensorlib.ones(1, 3)).sum().backward()
    opt.step()
    case = TestCase()
    case.assertEqual(opt.state_dict(), opt.state_dict())
    case.assertNotEqual(tensorlib.tensor([1.0]), tensorlib.tensor([2.0]))
    with pytest.raises(AssertionError, match="not close.*\n(.*\n)*.*my note"):
        case.assertEqual(tensorlib.tensor([1.0, 2.0]), np.array([1.0, 2.5], np.float32),
                         msg="my note")
    with pytest.raises(AssertionError):
        case.assertNotEqual(1.0, 1.0)
    with pytest.raises(ValueError, match="atol or rtol"):
        case.assertEqual(1.0, 1.0, atol=0.1)
