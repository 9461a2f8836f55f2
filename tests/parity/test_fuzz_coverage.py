"""The differential fuzzer covers every public op: each public callable of tensorlib's
namespaces (top level, Tensor methods, nn.functional, linalg, special, fft) that torch has
too is either fuzzed (an entry of its own, or a spelling of one: test_fuzz_spellings) or
listed in exclusions.EXCLUDED with the reason it is not. Names only one library has are
not compared here (a name torch has and tensorlib lacks is missing, not divergent)."""
import inspect

import pytest

import tensorlib
import tensorlib.fft
import tensorlib.linalg
import tensorlib.nn.functional
import tensorlib.special
from tests.parity.exclusions import EXCLUDED

torch = pytest.importorskip("torch")

from tests.parity.test_fuzz_spellings import covered  # noqa: E402 - needs torch

NAMESPACES = {"": "", "Tensor.": "Tensor", "nn.functional.": "nn.functional",
              "linalg.": "linalg", "special.": "special", "fft.": "fft"}


def _resolve(module, path):
    for part in filter(None, path.split(".")):
        module = getattr(module, part)
    return module


def _callables(namespace):
    names = set()
    for name in dir(namespace):
        if name.startswith("_"):
            continue
        try:
            value = getattr(namespace, name)
        except Exception:  # noqa: BLE001 - a property that needs an instance
            continue
        if callable(value) and not inspect.isclass(value) and not inspect.ismodule(value):
            names.add(name)
    return names


def public_ops():
    """Every public callable path both libraries have."""
    paths = set()
    for prefix, path in NAMESPACES.items():
        ours, theirs = _resolve(tensorlib, path), _resolve(torch, path)
        paths |= {prefix + name for name in _callables(ours) & _callables(theirs)}
    return paths


def test_every_public_op_is_fuzzed_or_excluded():
    missing = sorted(public_ops() - covered() - set(EXCLUDED))
    assert not missing, f"{len(missing)} public ops neither fuzzed nor excluded: {missing}"


def test_exclusions_are_current():
    """No exclusion of a name that is fuzzed after all, or that is not public in both."""
    public, fuzzed = public_ops(), covered()
    assert not sorted(set(EXCLUDED) & fuzzed), "fuzzed, so not excluded"
    assert not sorted(set(EXCLUDED) - public), "not a public op of both libraries"
    assert all(reason.strip() for reason in EXCLUDED.values())


def test_coverage_size():
    """What the report quotes: public ops, fuzzed ones and exclusions."""
    public = public_ops()
    fuzzed = public & covered()
    assert len(fuzzed) + len(EXCLUDED) == len(public)
    assert len(EXCLUDED) * 5 < len(public)
