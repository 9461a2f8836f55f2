"""Namespace functions kept as class attributes: PyTorch's builtins (torch.conv2d, torch.mul,
F.conv2d, torch.linalg.*) are called without self, its Python functions (torch.einsum,
F.relu) bind as methods; Tensor's methods still bind."""
import types

import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib._C.opdef import AliasedFunction, AliasedOp

torch = pytest.importorskip("torch")


def test_builtins_kept_on_a_class_are_called_without_self():
    class Erosion:
        conv = tl.conv2d
        functional_conv = F.conv2d
        mul = tl.mul
        norm_of = tl.linalg.vector_norm

        def run(self, x, w):
            return (self.conv(x, weight=w, padding=1), self.functional_conv(x, w),
                    self.mul(x, 2), self.norm_of(x))
    x, w = tl.ones(1, 1, 3, 3), tl.ones(1, 1, 2, 2)
    padded, valid, doubled, norm = Erosion().run(x, w)
    assert padded.shape == (1, 1, 4, 4) and valid.shape == (1, 1, 2, 2)
    assert doubled.sum().item() == 18.0 and norm.item() == 3.0
    assert Erosion.conv is tl.conv2d and Erosion().conv is tl.conv2d


def _binds(function):
    class Holder:
        f = function
    return Holder().f is not function


@pytest.mark.parametrize("namespace,theirs", [(tl, torch), (F, torch.nn.functional),
                                              (tl.linalg, torch.linalg),
                                              (tl.special, torch.special)])
def test_binding_follows_torch(namespace, theirs):
    checked = 0
    for name, ours in vars(namespace).items():
        other = getattr(theirs, name, None)
        if name.startswith("_") or not isinstance(ours, AliasedOp) or \
                not isinstance(other, (types.FunctionType, types.BuiltinFunctionType)):
            continue
        assert _binds(ours) == _binds(other), name
        checked += 1
    assert checked > 30


def test_tensor_methods_still_bind_and_ops_stay_ops():
    x = tl.tensor([1.0, -2.0])
    assert x.greater(0).tolist() == [True, False] and x.mul(2).tolist() == [2.0, -4.0]
    assert isinstance(tl.conv2d, AliasedFunction) and isinstance(tl.conv2d, AliasedOp)
    assert type(tl.Tensor.__dict__["mul"]) is AliasedOp
    assert tl.conv2d.__name__ == "conv2d" and tl.mul(x, x).tolist() == [1.0, 4.0]
