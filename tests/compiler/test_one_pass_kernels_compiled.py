"""Compiled functions that call the ops with one-pass CPU kernels (clamp, lerp_, addcmul_,
the regression losses) replay to eager's values: the kernels that answer whether they took
a call decline while a graph is captured (the composite fuses), and the loss kernels are
recorded and run at replay."""
import numpy as np

import tensorlib as tl
import tensorlib.nn.functional as F


def _eager_and_compiled(fn, *args):
    twins = [[a.clone() for a in args] for _ in range(2)]
    compiled = tl.compile(fn)
    for _ in range(3):                      # warm-up, capture, replays
        want = fn(*twins[0])
        got = compiled(*twins[1])
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    for a, b in zip(*twins):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


def test_in_place_blends_and_clamps_replay_once_per_call():
    def update(ema, param, grad):
        with tl.no_grad():
            ema.lerp_(param, 0.1)
            ema.addcmul_(grad, grad, value=0.5)
            grad.clamp_(-0.5, 0.5)
            return ema.clamp(-1.0, 1.0) + tl.nan_to_num(grad) + tl.sign(param)
    rng = np.random.default_rng(0)
    args = [tl.from_numpy(rng.standard_normal((64, 32)).astype(np.float32)) for _ in range(3)]
    _eager_and_compiled(update, *args)


def test_losses_replay():
    def step(x, y):
        causal = tl.ones(16, 16).tril()
        return F.mse_loss(x @ causal, y) + F.smooth_l1_loss(x, y) + F.huber_loss(x, y)
    rng = np.random.default_rng(1)
    x, y = (tl.from_numpy(rng.standard_normal((16, 16)).astype(np.float32)) for _ in range(2))
    _eager_and_compiled(step, x, y)
