"""tensorlib.func.functional_call against torch.func.functional_call."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import func as tf

torch = pytest.importorskip("torch")


class Tied(tl.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = tl.nn.Linear(2, 2)
        self.b = tl.nn.Linear(2, 2)
        self.b.weight = self.a.weight
        self.register_buffer("scale", tl.ones(2))

    def forward(self, x):
        return self.b(self.a(x)) * self.scale


def test_swaps_and_restores():
    m = tl.nn.Linear(2, 3)
    before = {k: v for k, v in m.named_parameters()}
    w = tl.ones(3, 2)
    out = tf.functional_call(m, {"weight": w, "bias": tl.zeros(3)}, (tl.ones(2),))
    np.testing.assert_allclose(out.numpy(), [2.0, 2.0, 2.0])
    assert all(v is before[k] for k, v in m.named_parameters())
    out = tf.functional_call(m, {"weight": w}, tl.ones(2))          # bare tensor args
    np.testing.assert_allclose(out.detach().numpy(), 2.0 + m.bias.detach().numpy())


def test_restores_after_an_error():
    m = tl.nn.Linear(2, 3)
    w = m.weight
    with pytest.raises(RuntimeError):
        tf.functional_call(m, {"weight": tl.ones(3, 2)}, (tl.ones(5),))
    assert m.weight is w


def test_tied_weights_and_buffers():
    m = Tied()
    x = tl.ones(2)
    eye = tl.eye(2)
    out = tf.functional_call(m, {"a.weight": eye, "scale": tl.full((2,), 2.0)}, (x,))
    expected = ((x + m.a.bias) + m.b.bias) * 2.0       # both linears see the identity
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-6)
    untied = tf.functional_call(m, {"a.weight": eye}, (x,), tie_weights=False)
    np.testing.assert_allclose(untied.detach().numpy(),
                               m.b(x + m.a.bias).detach().numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="which are tied"):
        tf.functional_call(m, {"a.weight": eye, "b.weight": tl.zeros(2, 2)}, (x,))


def test_strict_and_ambiguous_dicts_match_torch_errors():
    m = tl.nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'foo'.\n\tMissing key\\(s\\): "
                                           "'bias'."):
        tf.functional_call(m, {"weight": tl.zeros(2, 2), "foo": tl.zeros(1)}, (tl.zeros(2),),
                           strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        tf.functional_call(m, ({"weight": tl.zeros(2, 2)}, {"weight": tl.zeros(2, 2)}),
                           (tl.zeros(2),))


def test_gradient_with_respect_to_the_dict_matches_torch():
    tm = torch.nn.Linear(3, 2).double()
    m = tl.nn.Linear(3, 2).double()
    params = {k: tl.tensor(v.detach().numpy()) for k, v in tm.named_parameters()}
    tparams = {k: v.detach() for k, v in tm.named_parameters()}
    x = np.random.default_rng(3).standard_normal((4, 3))
    g = tf.grad(lambda p: tf.functional_call(m, p, (tl.tensor(x),)).pow(2).sum())(params)
    tg = torch.func.grad(lambda p: torch.func.functional_call(tm, p, (torch.tensor(x),))
                         .pow(2).sum())(tparams)
    for k in tg:
        np.testing.assert_allclose(g[k].numpy(), tg[k].numpy(), rtol=1e-10)


def test_reparametrize_module_context_matches_torch():
    """nn.utils.stateless._reparametrize_module: swapped inside the block, restored after,
    untied by default (tie_weights=False), strict key checks and the write-back of values the
    module replaced in its own tables."""
    for lib in (tl, torch):
        lib.manual_seed(0)
        m = Tied() if lib is tl else _torch_tied()
        w_a, w_b = m.a.weight, m.b.weight
        new_w = lib.zeros(2, 2)
        with lib.nn.utils.stateless._reparametrize_module(m, {"a.weight": new_w}):
            assert m.a.weight is new_w and m.b.weight is w_b        # not tied by default
        assert m.a.weight is w_a
        with lib.nn.utils.stateless._reparametrize_module(m, {"a.weight": new_w},
                                                          tie_weights=True):
            assert m.b.weight is new_w
        with pytest.raises(RuntimeError, match="Unexpected key"):
            with lib.nn.utils.stateless._reparametrize_module(m, {"nope": new_w},
                                                              strict=True):
                pass
        values = {"scale": lib.ones(2)}
        replaced = lib.full((2,), 3.0)
        with lib.nn.utils.stateless._reparametrize_module(m, values):
            m._buffers["scale"] = replaced
        assert values["scale"] is replaced and m.scale is not replaced


def _torch_tied():
    class TorchTied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(2, 2)
            self.b = torch.nn.Linear(2, 2)
            self.b.weight = self.a.weight
            self.register_buffer("scale", torch.ones(2))
    return TorchTied()
