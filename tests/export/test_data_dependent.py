"""Python control flow on tensor data is refused at export, as torch.export refuses it."""
import pytest

import tensorlib as tl
from tensorlib.export import GuardOnDataDependentSymNode, export

from tests.export.models import DataBranch, ItemUse, SizeBranch


def test_branch_on_tensor_value_is_refused():
    with pytest.raises(GuardOnDataDependentSymNode, match="data-dependent"):
        export(DataBranch(), (tl.randn(3),))


def test_item_is_refused():
    with pytest.raises(GuardOnDataDependentSymNode, match=r"Tensor.item\(\)"):
        export(ItemUse(), (tl.randn(3),))


def test_error_is_a_runtime_error_as_torch():
    assert issubclass(GuardOnDataDependentSymNode, RuntimeError)


def test_branch_on_static_size_is_specialized():
    ep = export(SizeBranch(), (tl.ones(5, 2),))
    assert tl.equal(ep.module()(tl.ones(5, 2)), tl.full((5, 2), 2.0))
    with pytest.raises(AssertionError, match=r"x.size\(\)\[0\] == 5"):
        ep.module()(tl.ones(2, 2))
