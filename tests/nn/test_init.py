"""nn.init: gains and fans like PyTorch, and the distributions (loose statistical checks)."""
import math

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
from tensorlib.nn import init

torch = pytest.importorskip("torch")

needs_random = pytest.mark.skipif(
    not (hasattr(tensorlib.Tensor, "uniform_") and hasattr(tensorlib.Tensor, "normal_")),
    reason="tensorlib.Tensor.uniform_/normal_ (tensorlib/ops/random.py) not available yet")


def test_calculate_gain_matches_torch():
    for name in ["linear", "conv2d", "sigmoid", "tanh", "relu", "selu", "leaky_relu"]:
        assert init.calculate_gain(name) == pytest.approx(torch.nn.init.calculate_gain(name))
    assert init.calculate_gain("leaky_relu", 0.2) == \
        pytest.approx(torch.nn.init.calculate_gain("leaky_relu", 0.2))
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")


def test_fans_match_torch():
    from torch.nn.init import _calculate_fan_in_and_fan_out as torch_fans
    for shape in [(3, 4), (8, 3, 5, 5), (2, 6, 7)]:
        assert init._calculate_fan_in_and_fan_out(tensorlib.empty(shape)) == \
            torch_fans(torch.empty(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(tensorlib.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(tensorlib.empty(3, 3), mode="fan_avg")


def test_constant_ones_zeros_eye_dirac():
    t = tensorlib.empty(3, 4)
    np.testing.assert_array_equal(init.constant_(t, 2.5).numpy(), np.full((3, 4), 2.5))
    np.testing.assert_array_equal(init.ones_(t).numpy(), np.ones((3, 4)))
    np.testing.assert_array_equal(init.zeros_(t).numpy(), np.zeros((3, 4)))
    np.testing.assert_array_equal(init.eye_(t).numpy(), np.eye(3, 4))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        init.eye_(tensorlib.empty(2, 2, 2))
    w = tensorlib.empty(4, 2, 3, 3)
    init.dirac_(w, groups=2)
    tw = torch.empty(4, 2, 3, 3)
    torch.nn.init.dirac_(tw, groups=2)
    np.testing.assert_array_equal(w.numpy(), tw.numpy())


def test_init_on_parameter_is_unrecorded():
    p = nn.Parameter(tensorlib.empty(2, 2))
    init.constant_(p, 1.0)
    assert p.is_leaf and p.grad_fn is None and p.requires_grad


@needs_random
def test_uniform_and_normal_statistics():
    t = tensorlib.empty(200, 200)
    x = init.uniform_(t, -2.0, 3.0).numpy()
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.05 and abs(x.std() - 5 / math.sqrt(12)) < 0.05
    x = init.normal_(t, 1.0, 2.0).numpy()
    assert abs(x.mean() - 1.0) < 0.05 and abs(x.std() - 2.0) < 0.05


@needs_random
def test_xavier_and_kaiming_statistics():
    t = tensorlib.empty(300, 200)
    fan_in, fan_out = 200, 300
    x = init.xavier_uniform_(t, gain=2.0).numpy()
    bound = 2.0 * math.sqrt(6.0 / (fan_in + fan_out))
    assert np.abs(x).max() <= bound and np.abs(x).max() > 0.95 * bound
    x = init.xavier_normal_(t).numpy()
    assert abs(x.std() - math.sqrt(2.0 / (fan_in + fan_out))) < 0.01 * 3
    x = init.kaiming_uniform_(t, nonlinearity="relu").numpy()
    bound = math.sqrt(2.0) * math.sqrt(3.0 / fan_in)
    assert np.abs(x).max() <= bound and np.abs(x).max() > 0.95 * bound
    x = init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu").numpy()
    assert abs(x.std() / (math.sqrt(2.0) / math.sqrt(fan_out)) - 1) < 0.03
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(tensorlib.empty(0, 3))


@needs_random
def test_trunc_normal_bounds_and_moments():
    x = init.trunc_normal_(tensorlib.empty(100, 100), mean=0.5, std=1.0, a=-0.5, b=2.0).numpy()
    assert x.min() >= -0.5 and x.max() <= 2.0
    ref = torch.nn.init.trunc_normal_(torch.empty(400, 400), 0.5, 1.0, -0.5, 2.0).numpy()
    assert abs(x.mean() - ref.mean()) < 0.03 and abs(x.std() - ref.std()) < 0.03


@needs_random
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 2, 3)])
def test_orthogonal(shape):
    t = init.orthogonal_(tensorlib.empty(*shape), gain=2.0)
    m = t.numpy().reshape(shape[0], -1)
    rows, cols = m.shape
    gram = m.T @ m if rows >= cols else m @ m.T
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(rows, cols)), atol=1e-5)
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions"):
        init.orthogonal_(tensorlib.empty(3))


@needs_random
def test_sparse():
    t = init.sparse_(tensorlib.empty(10, 6), sparsity=0.3)
    zeros_per_col = (t.numpy() == 0).sum(axis=0)
    assert (zeros_per_col == 3).all()


@needs_random
def test_generator_makes_init_reproducible():
    if not hasattr(tensorlib, "Generator"):
        pytest.skip("tensorlib.Generator not available yet")
    def draw():
        gen = tensorlib.Generator().manual_seed(3)
        return init.kaiming_uniform_(tensorlib.empty(4, 4), generator=gen)
    a, b = draw(), draw()
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_every_torch_init_function_exists_with_torchs_signature():
    import inspect
    names = [n for n, f in vars(torch.nn.init).items()
             if not n.startswith("_") and inspect.isfunction(f)
             and f.__module__ == "torch.nn.init"]
    assert "trunc_normal_" in names and len(names) > 15
    for name in names:
        ours = getattr(tensorlib.nn.init, name, None)
        assert ours is not None, f"nn.init.{name} is missing"
        theirs = inspect.signature(getattr(torch.nn.init, name)).parameters
        mine = inspect.signature(ours).parameters
        assert [(p.name, p.kind, p.default) for p in mine.values()] == \
            [(p.name, p.kind, p.default) for p in theirs.values()], name
