"""torch's top-level nn names (torch.conv2d, torch.max_pool2d, torch.dropout, ...) against
torch, called with torch's top-level signatures."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return tl.tensor(a), torch.tensor(a)


def _close(got, want):
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)


def test_top_level_nn_functions_match_torch():
    x, tx = _pair((2, 4, 6, 6))
    w, tw = _pair((3, 4, 3, 3), 1)
    wt, twt = _pair((4, 3, 3, 3), 2)
    _close(tl.conv2d(x, w, None, 1, 1), torch.conv2d(tx, tw, None, 1, 1))
    _close(tl.conv_transpose2d(x, wt, None, 2), torch.conv_transpose2d(tx, twt, None, 2))
    _close(tl.max_pool2d(x, 3, 2, 1), torch.max_pool2d(tx, 3, 2, 1))
    _close(tl.max_pool1d(x[0], 2), torch.max_pool1d(tx[0], 2))
    _close(tl.avg_pool1d(x[0], 3, 1, 1), torch.avg_pool1d(tx[0], 3, 1, 1))
    _close(tl.layer_norm(x, (6,)), torch.layer_norm(tx, (6,)))
    _close(tl.group_norm(x, 2), torch.group_norm(tx, 2))
    _close(tl.rms_norm(x, (6,), None, 1e-5), torch.rms_norm(tx, (6,), None, 1e-5))
    _close(tl.pixel_shuffle(x, 2), torch.pixel_shuffle(tx, 2))
    _close(tl.cosine_similarity(x, x * 2 + 1), torch.cosine_similarity(tx, tx * 2 + 1))
    _close(tl.pdist(x[0, 0]), torch.pdist(tx[0, 0]))
    _close(tl.selu(x), torch.selu(tx))
    _close(tl.threshold(x, 0.1, -1.0), torch.threshold(tx, 0.1, -1.0))
    _close(tl.hardshrink(x, 0.3), torch.hardshrink(tx, 0.3))
    _close(tl.dropout(x, 0.5, False), torch.dropout(tx, 0.5, False))
    _close(tl.alpha_dropout(x, 0.5, False), torch.alpha_dropout(tx, 0.5, False))


def test_dropout_trains_and_writes_in_place():
    x = tl.ones(1000)
    y = tl.dropout(x, 0.5, True)
    kept = y.numpy() != 0
    assert 0.3 < kept.mean() < 0.7 and np.allclose(y.numpy()[kept], 2.0)
    assert tl.dropout_(x, 0.5, True) is x and (x.numpy() == 0).any()


def test_method_aliases_are_the_methods():
    from tensorlib._method_aliases import NAMES
    for name in NAMES:
        # the same op; the namespace's is an AliasedFunction (torch's are builtins: unbound)
        assert getattr(tl, name).__wrapped__ is getattr(tl.Tensor, name).__wrapped__, name
        assert hasattr(torch, name), name
    x, tx = _pair((3, 4))
    _close(tl.greater(x, 0.1), torch.greater(tx, 0.1))
    _close(tl.arctan2(x, x + 2), torch.arctan2(tx, tx + 2))
    y = x.clone()
    assert tl.exp_(y) is y
    _close(y, tx.exp())
