"""The transforms against torch.distributions.transforms: forward, inverse and
log|det J| for the same inputs."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.distributions.transforms as T

torch = pytest.importorskip("torch")
TT = torch.distributions.transforms

R = np.random.default_rng(3)
X = R.normal(size=(4, 3))

CASES = [
    ("Exp", lambda m: m.ExpTransform(), X),
    ("Affine", lambda m: m.AffineTransform(0.5, -2.0), X),
    ("Affine-event", lambda m: m.AffineTransform(0.5, 3.0, event_dim=1), X),
    ("Sigmoid", lambda m: m.SigmoidTransform(), X),
    ("Tanh", lambda m: m.TanhTransform(), X * 0.5),
    ("Softplus", lambda m: m.SoftplusTransform(), X),
    ("Power", lambda m: m.PowerTransform(2.5), np.abs(X) + 0.1),
    ("StickBreaking", lambda m: m.StickBreakingTransform(), X),
    ("Compose", lambda m: m.ComposeTransform([m.AffineTransform(1.0, 2.0), m.ExpTransform()]),
     X),
    ("Inverse", lambda m: m.ExpTransform().inv, np.abs(X) + 0.1),
    ("Independent", lambda m: m.IndependentTransform(m.ExpTransform(), 1), X),
]


@pytest.mark.parametrize("name, make, x", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, make, x):
    ours, theirs = make(T), make(TT)
    tx, px = tl.tensor(x, dtype=tl.float64), torch.tensor(x, dtype=torch.float64)
    ty, py = ours(tx), theirs(px)
    np.testing.assert_allclose(ty.numpy(), py.numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours.inv(ty).numpy(), theirs.inv(py).numpy(), rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_allclose(ours.log_abs_det_jacobian(tx, ty).numpy(),
                               theirs.log_abs_det_jacobian(px, py).numpy(), rtol=1e-8,
                               atol=1e-10)
    assert ours.event_dim == theirs.event_dim if name != "Compose" else True
    assert ours.bijective == theirs.bijective


def test_softmax_and_abs():
    x = tl.tensor(X)
    np.testing.assert_allclose(T.SoftmaxTransform()(x).numpy(),
                               TT.SoftmaxTransform()(torch.tensor(X)).numpy(), rtol=1e-10)
    np.testing.assert_allclose(T.AbsTransform()(x).numpy(), np.abs(X))


def test_cache_returns_the_input_of_the_last_call():
    t = T.ExpTransform(cache_size=1)
    x = tl.tensor(X)
    y = t(x)
    assert t.inv(y) is x


class _Clip(T.Transform):
    """A transform that, like zuko's, sets its domain and codomain in __init__."""
    bijective = True

    def __init__(self, bound):
        super().__init__()
        self.domain = T.constraints.real
        self.codomain = T.constraints.interval(-bound, bound)

    def _call(self, x):
        return x / (1 + abs(x))


def test_domain_and_codomain_are_set_by_the_subclass():
    for m in (T, TT):
        with pytest.raises(AttributeError):
            m.Transform().domain
        with pytest.raises(AttributeError):
            m.Transform().codomain
    t = _Clip(2.0)
    assert t.codomain.upper_bound == 2.0
    assert t.event_dim == 0 and t.inv.domain is t.codomain


def test_copies_and_pickles_drop_the_cached_inverse():
    import copy
    import pickle
    for m in (T, TT):
        t = m.ExpTransform()
        assert t.inv.inv is t
        assert copy.deepcopy(t)._inv is None
        assert pickle.loads(pickle.dumps(t))._inv is None
