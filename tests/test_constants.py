"""torch's top-level constants (torch.pi, torch.e, torch.inf, torch.nan, torch.newaxis) and
older names programs import: `from torch import pi` (x-transformers) must work."""
import math

import pytest

import tensorlib


def test_math_constants_and_newaxis():
    assert tensorlib.pi == math.pi and tensorlib.e == math.e
    assert tensorlib.inf == math.inf and math.isnan(tensorlib.nan)
    assert tensorlib.newaxis is None
    assert tensorlib.ones(3)[:, tensorlib.newaxis].shape == (3, 1)
    assert tensorlib.legacy_contiguous_format is tensorlib.contiguous_format


def test_the_same_values_as_torch():
    torch = pytest.importorskip("torch")
    for name in ("pi", "e", "inf"):
        assert getattr(tensorlib, name) == getattr(torch, name)
    assert math.isnan(torch.nan) and torch.newaxis is tensorlib.newaxis
