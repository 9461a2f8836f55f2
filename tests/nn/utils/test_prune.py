"""nn.utils.prune against PyTorch with the same weights: the deterministic methods
(l1_unstructured, ln_structured, custom_from_mask, global_unstructured with L1, identity)
give torch's masks exactly, alone and stacked in a PruningContainer; weight_orig /
weight_mask and the forward pre-hook; remove; is_pruned; the random methods prune the
requested amount; PyTorch's errors; on every device."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
from tensorlib.nn.utils import prune

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as tprune  # noqa: E402


def npy(t):
    return t.detach().cpu().numpy()


def pair(cls, *args, device="cpu"):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls)(*args)
    m = getattr(nn, cls)(*args)
    m.load_state_dict({k: tensorlib.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, m.to(device)


@pytest.mark.parametrize("first", [
    ("l1_unstructured", dict(amount=0.3)), ("l1_unstructured", dict(amount=7)),
    ("ln_structured", dict(amount=0.5, n=2, dim=0)),
    ("ln_structured", dict(amount=1, n=1, dim=-1)), ("identity", {}),
])
def test_deterministic_methods_match_torch(device, first):
    tm, m = pair("Conv2d", 3, 4, 3, device=device)
    original = m.weight
    name, kwargs = first
    getattr(tprune, name)(tm, "weight", **kwargs)
    assert getattr(prune, name)(m, "weight", **kwargs) is m
    assert m.weight_orig is original
    assert list(m.state_dict()) == list(tm.state_dict()) == ["bias", "weight_orig",
                                                             "weight_mask"]
    np.testing.assert_array_equal(npy(m.weight_mask), tm.weight_mask.numpy())
    # stack two more: the container prunes only what is left
    for lib, mod in ((tprune, tm), (prune, m)):
        lib.l1_unstructured(mod, "weight", amount=0.2)
        lib.ln_structured(mod, "weight", amount=1, n=2, dim=1)
    hooks = [h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert len(hooks[0]) == 3
    np.testing.assert_array_equal(npy(m.weight_mask), tm.weight_mask.numpy())
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(npy(m(tensorlib.tensor(x, device=device))),
                               tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert prune.is_pruned(m)
    prune.remove(m, "weight")
    tprune.remove(tm, "weight")
    assert not prune.is_pruned(m) and m.weight is original
    assert list(m.state_dict()) == list(tm.state_dict())
    np.testing.assert_array_equal(npy(m.weight), tm.weight.detach().numpy())


def test_global_and_custom_match_torch(device):
    (tm1, m1), (tm2, m2) = pair("Linear", 4, 3, device=device), pair("Linear", 3, 2,
                                                                      device=device)
    tprune.global_unstructured([(tm1, "weight"), (tm2, "weight"), (tm2, "bias")],
                               tprune.L1Unstructured, amount=0.4)
    prune.global_unstructured([(m1, "weight"), (m2, "weight"), (m2, "bias")],
                              prune.L1Unstructured, amount=0.4)
    for a, b in ((m1.weight_mask, tm1.weight_mask), (m2.weight_mask, tm2.weight_mask),
                 (m2.bias_mask, tm2.bias_mask)):
        np.testing.assert_array_equal(npy(a), b.numpy())
    mask = np.random.default_rng(1).random((3, 4)) > 0.5
    tprune.custom_from_mask(tm1, "bias", torch.tensor(mask[0, :3]))
    prune.custom_from_mask(m1, "bias", tensorlib.tensor(mask[0, :3], device=device))
    np.testing.assert_array_equal(npy(m1.bias_mask), tm1.bias_mask.numpy())
    assert m1.bias_mask.dtype == tensorlib.float32
    scores = np.arange(12.0).reshape(3, 4)[::-1].copy()
    tm, m = pair("Linear", 4, 3, device=device)
    tprune.l1_unstructured(tm, "weight", amount=5, importance_scores=torch.tensor(scores))
    prune.l1_unstructured(m, "weight", amount=5,
                          importance_scores=tensorlib.tensor(scores, device=device))
    np.testing.assert_array_equal(npy(m.weight_mask), tm.weight_mask.numpy())


def test_random_methods_prune_the_amount(device):
    m = nn.Conv2d(2, 6, 3).to(device)
    prune.random_unstructured(m, "weight", amount=0.25)
    assert int((npy(m.weight_mask) == 0).sum()) == round(0.25 * m.weight_orig.numel())
    m2 = nn.Conv2d(2, 6, 3).to(device)
    prune.random_structured(m2, "weight", amount=2, dim=0)
    channels = npy(m2.weight_mask).reshape(6, -1)
    assert sorted(channels.max(1)) == [0, 0, 1, 1, 1, 1]
    assert set(np.unique(channels.min(1))) <= {0.0, 1.0}


def test_errors_match_torch():
    for lib, mod in ((tprune, torch.nn.Linear(3, 2)), (prune, nn.Linear(3, 2))):
        with pytest.raises(ValueError, match="amount=1.5 should either be a float in the "
                                             "range"):
            lib.l1_unstructured(mod, "weight", amount=1.5)
        with pytest.raises(TypeError, match="Invalid type for amount"):
            lib.l1_unstructured(mod, "weight", amount="a")
        with pytest.raises(ValueError, match="amount=7 should be smaller than the number of "
                                             "parameters to prune=6"):
            lib.l1_unstructured(mod, "weight", amount=7)
        assert "weight" in dict(mod.named_parameters())   # restored after the failure
        with pytest.raises(ValueError, match="Structured pruning can only be applied to "
                                             "multidimensional tensors"):
            lib.ln_structured(mod, "bias", amount=1, n=2, dim=0)
        with pytest.raises(IndexError, match="Invalid index 2 for tensor of size"):
            lib.ln_structured(mod, "weight", amount=1, n=2, dim=2)
        with pytest.raises(ValueError, match="Parameter 'weight' of module .* has to be "
                                             "pruned before pruning can be removed"):
            lib.remove(mod, "weight")
        with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
            lib.global_unstructured([(mod, "weight")], lib.LnStructured, amount=1, n=2, dim=0)
