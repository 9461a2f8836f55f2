"""nn.utils: clip_grad_norm_/clip_grad_value_ against numpy, parameters <-> vector,
pad_sequence against PyTorch."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
from tensorlib.nn.utils import (clip_grad_norm_, clip_grad_value_, parameters_to_vector,
                                vector_to_parameters)
from tensorlib.nn.utils.rnn import pad_sequence

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(7)


def _params_with_grads(scale=1.0):
    arrays = [RNG.standard_normal((3, 4)), RNG.standard_normal(5), RNG.standard_normal((2, 2, 2))]
    params = []
    for a in arrays:
        p = nn.Parameter(tensorlib.tensor(a))
        p.grad = tensorlib.tensor(a * scale)
        params.append(p)
    return params, [a * scale for a in arrays]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf"), "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_numpy(norm_type, max_norm):
    params, grads = _params_with_grads()
    flat = np.concatenate([g.ravel() for g in grads])
    p = float(norm_type)
    if p == float("inf"):
        expected_norm = np.abs(flat).max()
    else:
        expected_norm = (np.abs(flat) ** p).sum() ** (1 / p)
    total = clip_grad_norm_(params, max_norm, norm_type=norm_type)
    assert isinstance(total, tensorlib.Tensor) and total.dim() == 0
    np.testing.assert_allclose(total.item(), expected_norm, rtol=1e-10)
    coef = min(1.0, max_norm / (expected_norm + 1e-6))
    for param, g in zip(params, grads):
        np.testing.assert_allclose(param.grad.numpy(), g * coef, rtol=1e-10)


def test_clip_grad_norm_single_tensor_no_grads_and_nonfinite():
    params, grads = _params_with_grads()
    total = clip_grad_norm_(params[0], 1.0, foreach=True)
    np.testing.assert_allclose(total.item(), np.linalg.norm(grads[0]), rtol=1e-10)
    empty = clip_grad_norm_([nn.Parameter(tensorlib.zeros(2))], 1.0)
    assert empty.item() == 0.0
    bad, _ = _params_with_grads()
    bad[0].grad[0, 0] = float("nan")
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(bad, 1.0, error_if_nonfinite=True)
    clip_grad_norm_(bad, 1.0)                       # no error by default


def test_clip_grad_value():
    params, grads = _params_with_grads(scale=3.0)
    clip_grad_value_(params, 0.5)
    for p, g in zip(params, grads):
        np.testing.assert_array_equal(p.grad.numpy(), np.clip(g, -0.5, 0.5))


def test_parameters_to_vector_and_back():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = parameters_to_vector(m.parameters())
    expected = np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])
    np.testing.assert_array_equal(vec.detach().numpy(), expected)
    assert vec.requires_grad                        # differentiable, as torch
    new = tensorlib.arange(vec.numel(), dtype=tensorlib.float32)
    vector_to_parameters(new, m.parameters())
    np.testing.assert_array_equal(m[0].weight.detach().numpy(),
                                  np.arange(6, dtype=np.float32).reshape(2, 3))
    assert isinstance(m[0].weight, nn.Parameter)
    with pytest.raises(TypeError, match="expected tensorlib.Tensor"):
        vector_to_parameters([1.0], m.parameters())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    seqs = [RNG.standard_normal((n, 2)) for n in (3, 1, 4)]
    ours = pad_sequence([tensorlib.tensor(s) for s in seqs], batch_first=batch_first,
                        padding_value=-1.0, padding_side=padding_side)
    theirs = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs],
                                             batch_first=batch_first, padding_value=-1.0,
                                             padding_side=padding_side)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_pad_sequence_grad_and_errors():
    a = tensorlib.ones(2, dtype=tensorlib.float64, requires_grad=True)
    b = tensorlib.ones(3, dtype=tensorlib.float64, requires_grad=True)
    (pad_sequence([a, b]) * 2).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 2.0])
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right"):
        pad_sequence([a], padding_side="mid")
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        pad_sequence([])


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf"), 0.0])
def test_clip_grad_norm_composed_fallback(monkeypatch, norm_type):
    """The norm composed from abs/sum/amax when tensorlib lacks linalg.vector_norm/stack."""
    monkeypatch.delattr(tensorlib.linalg, "vector_norm", raising=False)
    monkeypatch.delattr(tensorlib, "stack", raising=False)
    params, grads = _params_with_grads()
    flat = np.concatenate([g.ravel() for g in grads])
    expected = np.linalg.norm(flat, ord=norm_type)
    total = clip_grad_norm_(params, 1e9, norm_type=norm_type)
    np.testing.assert_allclose(total.item(), expected, rtol=1e-10)
