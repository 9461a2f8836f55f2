"""Activation checkpointing: same values and gradients as without (dropout included), and a
lower peak of host memory for a deep MLP."""
import tracemalloc

import numpy as np
import pytest

import tensorlib
from tensorlib import nn
from tensorlib.utils.checkpoint import checkpoint, checkpoint_sequential


def _grads(model, x):
    return [t.grad.cpu().numpy().copy() for t in list(model.parameters()) + [x]]


def _model(device):
    tensorlib.manual_seed(3)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Dropout(0.3), nn.Linear(16, 16),
                         nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2)).to(device)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpoint_matches_plain_with_dropout(device, use_reentrant):
    model = _model(device)
    x = tensorlib.randn(5, 6, device=device, requires_grad=True)
    results = []
    for wrap in (lambda m, v: m(v), lambda m, v: checkpoint(m, v, use_reentrant=use_reentrant)):
        model.zero_grad()
        x.grad = None
        tensorlib.manual_seed(11)
        y = wrap(model, x)
        (y * y).sum().backward()
        results.append((y.detach().cpu().numpy(), _grads(model, x)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_rng_stream_continues_as_without_checkpoint():
    model = _model("cpu")
    x = tensorlib.randn(5, 6, requires_grad=True)
    tensorlib.manual_seed(5)
    checkpoint(model, x, use_reentrant=False).sum().backward()
    after_ckpt = tensorlib.rand(3)
    tensorlib.manual_seed(5)
    model(x).sum().backward()
    assert tensorlib.equal(after_ckpt, tensorlib.rand(3))


def test_no_input_requires_grad_still_trains_parameters():
    model = _model("cpu").eval()
    x = tensorlib.randn(5, 6)
    checkpoint(model, x, use_reentrant=False).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for a, p in zip(grads, model.parameters()):
        assert tensorlib.allclose(a, p.grad)


def test_checkpoint_sequential_and_kwargs():
    model = _model("cpu").eval()
    x = tensorlib.randn(4, 6, requires_grad=True)
    y = checkpoint_sequential(model, 3, x, use_reentrant=False)
    y.sum().backward()
    g = _grads(model, x)
    model.zero_grad()
    x.grad = None
    model(x).sum().backward()
    for a, b in zip(g, _grads(model, x)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    out = checkpoint(lambda a, scale=1.0: a * scale, x, scale=3.0, use_reentrant=False)
    assert tensorlib.allclose(out, x * 3)
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(model, x)


def _peak_bytes(step):
    from tensorlib.backends import get
    allocator = get("cpu").allocator
    keep, allocator.max_cached_bytes = allocator.max_cached_bytes, 0
    allocator.empty_cache()
    tracemalloc.start()
    try:
        step()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        allocator.max_cached_bytes = keep


def deep_mlp_peaks(depth=16, width=512, batch=256, segments=4):
    """(plain peak, checkpointed peak) in bytes of one forward+backward of a deep MLP."""
    tensorlib.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*layers)
    x = tensorlib.randn(batch, width, requires_grad=True)
    model(x).sum().backward()                  # .grad buffers exist before measuring
    plain = _peak_bytes(lambda: model(x).sum().backward())
    ckpt = _peak_bytes(lambda: checkpoint_sequential(model, segments, x,
                                                     use_reentrant=False).sum().backward())
    return plain, ckpt


def test_checkpointing_lowers_peak_memory():
    plain, ckpt = deep_mlp_peaks(depth=16, width=512, batch=256, segments=8)
    assert ckpt < 0.75 * plain, (plain, ckpt)
