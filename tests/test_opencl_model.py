"""A small model trains on opencl to the same losses as on cpu (same seed, same steps)."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F

REASON = tl.backends.why_unavailable("opencl")
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"opencl unavailable: {REASON}")


def _train(device, steps=30):
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 32), nn.ReLU(),
                          nn.Linear(32, 5)).to(device)
    opt = tl.optim.Adam(model.parameters(), lr=1e-2)
    r = np.random.default_rng(0)
    x = tl.tensor(r.standard_normal((128, 20)).astype(np.float32), device=device)
    y = tl.tensor(r.integers(0, 5, 128), device=device)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


def test_mlp_trains_the_same_on_opencl_as_on_cpu():
    cpu, cpu_model = _train("cpu")
    ocl, ocl_model = _train("opencl")
    assert ocl[-1] < 0.8 * ocl[0]                          # it learns
    np.testing.assert_allclose(ocl, cpu, rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(cpu_model.named_parameters(), ocl_model.parameters()):
        assert q.device.type == "opencl", name
        np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().numpy(),
                                   rtol=1e-3, atol=1e-4, err_msg=name)
