"""torch.embedding_bag: the native signature (weight first, int mode) and its 4-tuple
(output, offset2bag, bag_size, max_indices) as PyTorch's CPU kernel returns it, with the
weight's gradient."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

WEIGHT = np.random.default_rng(3).standard_normal((10, 4)).astype(np.float32)
INDICES = [1, 2, 4, 5, 4, 3, 2, 9, 7]
OFFSETS = [0, 4, 4, 6]


def _run(lib, mode, padding_idx=None, per_sample=False, include_last_offset=False,
         device=None):
    kwargs = {} if device is None else {"device": device}
    weight = lib.tensor(WEIGHT, requires_grad=True, **kwargs)
    indices = lib.tensor(INDICES, **kwargs)
    offsets = lib.tensor(OFFSETS + ([len(INDICES)] if include_last_offset else []), **kwargs)
    psw = lib.arange(1.0, len(INDICES) + 1, **kwargs) if per_sample else None
    out = lib.embedding_bag(weight, indices, offsets, False, mode, False, psw,
                            include_last_offset, padding_idx)
    (out[0] * lib.arange(1.0, out[0].numel() + 1, **kwargs).view(out[0].shape)).sum().backward()
    return [out[0].tolist()] + [t.tolist() for t in out[1:]] + [weight.grad.tolist()]


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [None, 4])
@pytest.mark.parametrize("include_last_offset", [False, True])
def test_matches_torch(device, mode, padding_idx, include_last_offset):
    got = _run(tl, mode, padding_idx, include_last_offset=include_last_offset, device=device)
    want = _run(torch, mode, padding_idx, include_last_offset=include_last_offset)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    assert got[1:4] == want[1:4]
    np.testing.assert_allclose(got[4], want[4], rtol=1e-5, atol=1e-6)


def test_per_sample_weights(device):
    got, want = _run(tl, 0, per_sample=True, device=device), _run(torch, 0, per_sample=True)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
    assert got[1:4] == want[1:4]
    np.testing.assert_allclose(got[4], want[4], rtol=1e-5, atol=1e-5)


def test_offsets_required():
    with pytest.raises(TypeError, match="'offsets'"):
        tl.embedding_bag(tl.ones(3, 2), tl.tensor([[0, 1]]), None)
