"""The optional composite kernels of tensorlib.backends.interface: every one a first-party
backend registers is declared, an undeclared name is refused, and each declared one has a
reference path that gives the kernel's answer when the backend lacks it."""
import pytest

import tensorlib
from tensorlib.backends.interface import COMPOSITES, PRIMITIVES
from tensorlib.codegen import composites as codegen_composites
from tensorlib.ops._composites import optional_kernel
from tensorlib.testing.composites import BY_NAME, NO_REFERENCE, compare_with_reference


def _table(device):
    return tensorlib.empty(1, device=device)._device._kernels


def test_first_party_composites_are_declared(device):
    extra = {n for n in _table(device) if "::" not in n} - set(PRIMITIVES) - set(COMPOSITES)
    assert extra == set()


def test_generated_gpu_composites_are_declared():
    assert set(codegen_composites.KERNELS) - set(COMPOSITES) == set()


def test_undeclared_name_is_refused():
    with pytest.raises(KeyError, match="not a composite kernel declared"):
        optional_kernel(tensorlib.empty(1)._device, "frobnicate")


def test_every_declared_composite_has_a_driver():
    assert set(BY_NAME) == set(COMPOSITES) - set(NO_REFERENCE)
    assert all(COMPOSITES[name][1].startswith("none:") for name in NO_REFERENCE)


@pytest.mark.parametrize("name", sorted(set(COMPOSITES) - set(NO_REFERENCE)))
def test_reference_path_matches_the_kernel(name, device):
    compare_with_reference(name, device)


def test_compare_puts_the_kernel_back(device):
    table = tensorlib.empty(1, device=device)._device._kernels
    before = table.get("relu")
    compare_with_reference("relu", device)
    assert table.get("relu") is before


def test_plugin_guide_lists_every_composite():
    import pathlib
    guide = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "backends.md").read_text()
    assert [n for n in COMPOSITES if f"| `{n}` |" not in guide] == []
