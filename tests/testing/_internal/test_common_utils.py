"""torch.testing._internal.common_utils.TestCase.assertEqual as PyTorch's: what passes and
what fails (and how) for tensors, numbers, strings and containers, compared against torch
where it is installed."""
import math

import numpy as np
import pytest

import tensorlib
from tensorlib.testing._internal.common_utils import TestCase

CASES = [
    ("tensor vs list", lambda t: (t.tensor([1.0, 2.0]), [1.0, 2.0]), {}),
    ("tensor vs number", lambda t: (t.tensor(3.0), 3), {}),
    ("int vs float tensors", lambda t: (t.tensor([1, 2]), t.tensor([1.0, 2.0])), {}),
    ("int vs float, dtype relaxed", lambda t: (t.tensor([1, 2]), t.tensor([1.0, 2.0])),
     {"exact_dtype": False}),
    ("mapping of mixed", lambda t: ({"a": [1, "x", None]}, {"a": (1, "x", None)}), {}),
    ("strings", lambda t: ("abc", "abd"), {}),
    ("floats within tolerance", lambda t: (1.0, 1.0000001), {}),
    ("int vs float numbers", lambda t: (1, 1.0), {}),
    ("bool vs int", lambda t: (True, 1), {}),
    ("nan numbers", lambda t: (math.nan, math.nan), {}),
    ("sequence lengths", lambda t: ([1, 2], [1, 2, 3]), {}),
    ("float32 vs float64", lambda t: (t.tensor([1.0]), t.tensor([1.0], dtype=t.float64)), {}),
    ("nan tensors", lambda t: (t.tensor([1.0, math.nan]), t.tensor([1.0, math.nan])), {}),
    ("not close", lambda t: (t.tensor([1.0]), t.tensor([1.1])), {}),
    ("explicit tolerance", lambda t: (t.tensor([1.0]), t.tensor([1.1])),
     {"atol": 0.2, "rtol": 0}),
    ("dtypes", lambda t: (t.float32, t.float32), {}),
]


def _outcome(lib, make, options):
    try:
        TestCase().assertEqual(*make(lib), **options)
        return "ok"
    except AssertionError as e:
        return "AssertionError: " + str(e).splitlines()[0]


@pytest.mark.parametrize("name,make,options", CASES, ids=[c[0] for c in CASES])
def test_assert_equal_matches_torch(name, make, options):
    torch = pytest.importorskip("torch")
    from torch.testing._internal.common_utils import TestCase as TorchTestCase

    def theirs():
        try:
            TorchTestCase().assertEqual(*make(torch), **options)
            return "ok"
        except AssertionError as e:
            return "AssertionError: " + str(e).splitlines()[0].replace("torch.", "tensorlib.")
    assert _outcome(tensorlib, make, options) == theirs()


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
