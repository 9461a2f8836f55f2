"""torch.optim.Muon: 2-D parameters only, PyTorch's defaults, and its steps (Newton-Schulz in
bfloat16, nesterov momentum, decoupled weight decay, shape-scaled lr) compared with torch."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")


def _steps(lib, shape, n_steps=3, **options):
    rng = np.random.default_rng(7)
    start = rng.standard_normal(shape).astype(np.float32)
    targets = [rng.standard_normal(shape).astype(np.float32) for _ in range(n_steps)]
    p = lib.nn.Parameter(lib.tensor(start))
    opt = lib.optim.Muon([p], **options)
    for target in targets:
        opt.zero_grad()
        ((p - lib.tensor(target)) ** 2).sum().backward()
        opt.step()
    return p.detach().numpy()


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
@pytest.mark.parametrize("options", [{}, {"lr": 0.02, "nesterov": False},
                                     {"lr": 0.01, "adjust_lr_fn": "match_rms_adamw",
                                      "weight_decay": 0.0, "momentum": 0.9}])
def test_steps_match_torch(shape, options):
    got, want = _steps(tl, shape, **options), _steps(torch, shape, **options)
    # bfloat16 Newton-Schulz: a rounding may differ; the updates agree to bfloat16's precision
    np.testing.assert_allclose(got, want, rtol=0, atol=0.1 * options.get("lr", 1e-3))


def test_defaults_as_torch():
    p = tl.nn.Parameter(tl.ones(2, 3))
    got = tl.optim.Muon([p]).defaults
    want = torch.optim.Muon([torch.nn.Parameter(torch.ones(2, 3))]).defaults
    assert got == want


@pytest.mark.parametrize("bad, error", [
    ({"params": "1d"}, "Muon only supports 2D parameters"),
    ({"lr": -1.0}, "Learning rate should be >= 0"),
    ({"adjust_lr_fn": "other"}, "is not supported"),
])
def test_refusals(bad, error):
    params = [tl.nn.Parameter(tl.ones(3) if bad.get("params") == "1d" else tl.ones(2, 2))]
    options = {k: v for k, v in bad.items() if k != "params"}
    with pytest.raises(ValueError, match=error):
        tl.optim.Muon(params, **options)
