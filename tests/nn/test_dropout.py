"""Dropout family: statistics, scaling, train/eval, reproducibility with manual_seed (the mask
comes from tensorlib's counter-based generator), gradients, in-place, channel-wise variants,
alpha dropout, errors and module reprs (against PyTorch)."""
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

RNG = np.random.default_rng(3)


def t64(a, grad=False):
    return tensorlib.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_statistics_and_scaling(p):
    n = 200_000
    x = tensorlib.ones(n, dtype=tensorlib.float64)
    out = F.dropout(x, p).numpy()
    zero_frac = (out == 0).mean()
    sigma = np.sqrt(p * (1 - p) / n)
    assert abs(zero_frac - p) < 5 * sigma
    kept = out[out != 0]
    np.testing.assert_allclose(kept, 1 / (1 - p), rtol=1e-12)
    assert abs(out.mean() - 1) < 5 * np.sqrt(p / (1 - p) / n)


def test_dropout_mask_is_the_generator_stream():
    x = t64(RNG.standard_normal((4, 5)) + 3)
    tensorlib.manual_seed(123)
    out = F.dropout(x, 0.4).numpy()
    tensorlib.manual_seed(123)
    keep = (tensorlib.rand((4, 5)) >= 0.4).numpy()
    np.testing.assert_allclose(out, np.where(keep, x.numpy() / 0.6, 0), rtol=1e-12)


def test_dropout_reproducible_with_manual_seed():
    x = tensorlib.randn(64, 32)
    tensorlib.manual_seed(7)
    a = F.dropout(x, 0.5).numpy()
    b = F.dropout(x, 0.5).numpy()
    tensorlib.manual_seed(7)
    c = F.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)
    m = nn.Dropout(0.3)
    tensorlib.manual_seed(1)
    d = m(x).numpy()
    tensorlib.manual_seed(1)
    np.testing.assert_array_equal(d, m(x).numpy())


def test_dropout_train_eval_and_edge_p():
    x = tensorlib.randn(10, 10)
    assert F.dropout(x, 0.5, training=False) is x
    np.testing.assert_array_equal(F.dropout(x, 0.0).numpy(), x.numpy())
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros((10, 10)))
    m = nn.Dropout(0.9)
    m.eval()
    np.testing.assert_array_equal(m(x).numpy(), x.numpy())
    m.train()
    assert (m(x).numpy() == 0).mean() > 0.5
    for cls, shape in ((nn.Dropout1d, (2, 3, 4)), (nn.Dropout2d, (2, 3, 4, 4)),
                       (nn.Dropout3d, (2, 3, 4, 4, 2)), (nn.AlphaDropout, (2, 3)),
                       (nn.FeatureAlphaDropout, (2, 3, 4))):
        mod = cls(0.5).eval()
        y = tensorlib.randn(*shape)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            np.testing.assert_array_equal(mod(y).numpy(), y.numpy())


def test_dropout_gradient_is_mask_over_keep():
    x = t64(RNG.uniform(1, 2, (6, 7)), True)
    out = F.dropout(x, 0.25)
    out.sum().backward()
    scale = out.detach().numpy() / x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), scale, rtol=1e-12)
    assert set(np.round(np.unique(scale), 12)) <= {0.0, round(1 / 0.75, 12)}


def test_dropout_gradcheck_with_fixed_seed():
    def fn(x):
        tensorlib.manual_seed(5)
        return F.dropout(x, 0.3)

    def fn2(x):
        tensorlib.manual_seed(5)
        return F.dropout2d(x, 0.5)

    def fn3(x):
        tensorlib.manual_seed(5)
        return F.alpha_dropout(x, 0.2, training=True)

    x = t64(RNG.standard_normal((3, 4)), True)
    assert gradcheck(fn, (x,))
    assert gradcheck(fn3, (x,))
    assert gradcheck(fn2, (t64(RNG.standard_normal((2, 3, 2, 2)), True),))


def test_dropout_inplace():
    x = tensorlib.ones(100, dtype=tensorlib.float64)
    out = F.dropout(x, 0.5, inplace=True)
    assert out is x
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}
    # in place on a non-leaf under autograd
    a = t64(RNG.uniform(1, 2, 50), True)
    b = a * 1.0
    tensorlib.manual_seed(9)
    nn.Dropout(0.5, inplace=True)(b)
    b.sum().backward()
    tensorlib.manual_seed(9)
    ref = F.dropout(tensorlib.ones(50, dtype=tensorlib.float64), 0.5).numpy()
    np.testing.assert_allclose(a.grad.numpy(), ref)


@pytest.mark.parametrize("fn,shape,batched", [
    (F.dropout1d, (4, 6, 9), True), (F.dropout1d, (6, 9), False),
    (F.dropout2d, (4, 6, 3, 3), True), (F.dropout3d, (4, 6, 2, 2, 2), True),
    (F.dropout3d, (6, 2, 3, 3), False)])
def test_channel_dropout_zeroes_whole_channels(fn, shape, batched):
    x = tensorlib.ones(shape, dtype=tensorlib.float64)
    out = fn(x, 0.5).numpy()
    lead = 2 if batched else 1
    per_channel = out.reshape(int(np.prod(shape[:lead])), -1)
    for row in per_channel:
        assert np.all(row == 0) or np.all(row == 2.0)
    assert 0 < (per_channel[:, 0] == 0).sum() < per_channel.shape[0] or per_channel.shape[0] < 8


def test_channel_dropout_statistics():
    x = tensorlib.ones((400, 100, 3), dtype=tensorlib.float64)
    out = F.dropout1d(x, 0.3).numpy()
    frac = (out[:, :, 0] == 0).mean()
    assert abs(frac - 0.3) < 5 * np.sqrt(0.21 / 40000)


def test_channel_dropout_dims_and_warnings():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a "
                                           "4D input"):
        F.dropout1d(tensorlib.randn(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        out = F.dropout2d(tensorlib.ones(2, 8, 5), 0.5).numpy()
    for row in out.reshape(16, 5):           # treated as (N, C, L)
        assert np.all(row == 0) or np.all(row == 2.0)
    with pytest.warns(UserWarning, match="Received a 5-D input to dropout2d"):
        F.dropout2d(tensorlib.randn(2, 3, 2, 2, 2))
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        F.dropout3d(tensorlib.randn(2, 3, 4))


def test_alpha_dropout_keeps_mean_and_variance():
    x = tensorlib.randn(400_000, dtype=tensorlib.float64)
    out = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(out.mean()) < 0.01
    assert abs(out.std() - 1) < 0.01
    assert F.alpha_dropout(x, 0.2) is x          # training defaults to False
    feat = F.feature_alpha_dropout(tensorlib.zeros(50, 4, 3, dtype=tensorlib.float64), 0.5,
                                   training=True).numpy()
    for row in feat.reshape(200, 3):
        assert np.all(row == row[0])
    assert len(np.unique(feat.round(12))) == 2


@pytest.mark.parametrize("p", [-0.1, 1.1])
def test_p_validation(p):
    x = tensorlib.randn(3)
    for fn in (F.dropout, F.alpha_dropout, F.feature_alpha_dropout):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                                             "but got"):
            fn(x, p, True)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout2d(tensorlib.randn(2, 3, 4, 4), p)
    for cls in (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout):
        with pytest.raises(ValueError, match="dropout probability"):
            cls(p)


def test_module_repr_and_state():
    torch = pytest.importorskip("torch")
    pairs = [(nn.Dropout(), torch.nn.Dropout()), (nn.Dropout(0.2, True),
                                                  torch.nn.Dropout(0.2, True)),
             (nn.Dropout1d(0.1), torch.nn.Dropout1d(0.1)), (nn.Dropout2d(), torch.nn.Dropout2d()),
             (nn.Dropout3d(0.3), torch.nn.Dropout3d(0.3)),
             (nn.AlphaDropout(0.4), torch.nn.AlphaDropout(0.4)),
             (nn.FeatureAlphaDropout(), torch.nn.FeatureAlphaDropout())]
    for mine, ref in pairs:
        assert repr(mine) == repr(ref)
        assert list(mine.state_dict()) == []


def test_dropout_same_mask_on_every_backend(device):
    x = np.ones((6, 7), dtype=np.float32)
    outs = []
    for d in ("cpu", device):
        tensorlib.manual_seed(21)
        outs.append(F.dropout(tensorlib.tensor(x, device=d), 0.4).cpu().numpy())
        tensorlib.manual_seed(21)
        outs.append(F.dropout2d(tensorlib.tensor(x.reshape(2, 3, 7, 1), device=d), 0.4)
                    .cpu().numpy())
    np.testing.assert_array_equal(outs[0], outs[2])
    np.testing.assert_array_equal(outs[1], outs[3])
