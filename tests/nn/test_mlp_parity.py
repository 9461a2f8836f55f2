"""The benchmark's MLP training step (Linear 784-512-256-10 with ReLUs, cross entropy, SGD
with momentum) against torch: the same start gives the same parameters after 20 steps. It
runs the fast paths of the CPU backend (the fused bias GEMM, the paired gradient products,
the fused loss, the multi-tensor SGD update) end to end, on 1 and 2 threads."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn

torch = pytest.importorskip("torch")

SIZES = (784, 512, 256, 10)


def _layers(lib, weights):
    mods = []
    for i, (w, b) in enumerate(weights):
        lin = lib.nn.Linear(w.shape[1], w.shape[0], dtype=getattr(lib, str(w.dtype)))
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(w))
            lin.bias.copy_(lib.tensor(b))
        mods += [lin] + ([lib.nn.ReLU()] if i < len(weights) - 1 else [])
    return lib.nn.Sequential(*mods)


def _train(lib, weights, x, y, steps):
    model = _layers(lib, weights)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.tensor(x), lib.tensor(y)
    for _ in range(steps):
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return [p.detach().numpy() for p in model.parameters()]


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-4)])
@pytest.mark.parametrize("threads", [1, 2])
def test_mlp_parameters_after_20_steps_match_torch(dtype, tol, threads):
    rng = np.random.default_rng(0)
    weights = [((rng.standard_normal((o, i)) / i ** 0.5).astype(dtype),
                (rng.standard_normal(o) * 0.1).astype(dtype))
               for i, o in zip(SIZES[:-1], SIZES[1:])]
    x = rng.standard_normal((128, SIZES[0])).astype(dtype)
    y = rng.integers(0, SIZES[-1], 128)
    before = tl.get_num_threads()
    tl.set_num_threads(threads)
    try:
        mine = _train(tl, weights, x, y, 20)
    finally:
        tl.set_num_threads(before)
    theirs = _train(torch, weights, x, y, 20)
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol)
