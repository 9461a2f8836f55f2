"""GradScaler against torch's: the same loop with injected infs skips the same steps, backs
off and grows the scale the same way and ends with the same weights."""
import math

import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")


def _loop(lib, steps=10, inf_steps=(2, 5)):
    g = np.random.default_rng(0)
    w0 = g.standard_normal((3, 4)).astype(np.float32)
    xs = [g.standard_normal((5, 4)).astype(np.float32) for _ in range(steps)]
    w = lib.tensor(w0, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=3)
    scales, returned = [], []
    for i, x in enumerate(xs):
        opt.zero_grad()
        with lib.autocast("cpu"):
            loss = (lib.nn.functional.linear(lib.tensor(x), w).float() ** 2).mean()
        scaler.scale(loss).backward()
        if i in inf_steps:
            w.grad[0, 0] = math.inf if i == inf_steps[0] else math.nan
        returned.append(scaler.step(opt) is None)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, w.detach().numpy(), scaler.state_dict()


def test_loop_with_injected_inf_matches_torch():
    ours, theirs = _loop(tensorlib), _loop(torch)
    assert ours[0] == theirs[0]
    assert ours[2] == theirs[2]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-2, atol=1e-3)


def test_skipped_step_leaves_weights_and_backs_off():
    w = tensorlib.ones(2, requires_grad=True)
    opt = tensorlib.optim.SGD([w], lr=1.0)
    scaler = tensorlib.amp.GradScaler("cpu", init_scale=4.0)
    scaler.scale((w * 2).sum()).backward()
    assert w.grad.tolist() == [8.0, 8.0]
    w.grad[1] = math.inf
    assert scaler.step(opt) is None
    scaler.update()
    assert w.tolist() == [1.0, 1.0]
    assert scaler.get_scale() == 2.0


def test_unscale_then_step_order_errors():
    w = tensorlib.ones(2, requires_grad=True)
    opt = tensorlib.optim.SGD([w], lr=1.0)
    scaler = tensorlib.amp.GradScaler("cpu")
    with pytest.raises(RuntimeError, match="_scale is None"):
        scaler.unscale_(opt)
    scaler.scale(w.sum()).backward()
    scaler.unscale_(opt)
    assert w.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: None)


def test_state_dict_round_trip():
    a = tensorlib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=7)
    b = tensorlib.amp.GradScaler("cpu")
    b.load_state_dict(a.state_dict())
    assert b.state_dict() == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                              "growth_interval": 7, "_growth_tracker": 0}
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        b.load_state_dict(tensorlib.amp.GradScaler("cpu", enabled=False).state_dict())


def test_disabled_scaler_is_a_no_op_even_without_the_device():
    with pytest.warns(UserWarning, match="Disabling"):
        tensorlib.amp.GradScaler("cuda") if tensorlib.backends.why_unavailable("cuda") \
            else pytest.skip("cuda present")
    scaler = tensorlib.amp.GradScaler("cuda", enabled=False)
    w = tensorlib.ones(2, requires_grad=True)
    opt = tensorlib.optim.SGD([w], lr=1.0)
    loss = w.sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [0.0, 0.0]
    assert scaler.get_scale() == 1.0 and not scaler.is_enabled() and scaler.state_dict() == {}


def test_torch_gradscaler_is_amps():
    assert tensorlib.GradScaler is tensorlib.amp.GradScaler
    assert not tensorlib.GradScaler(device="cpu", enabled=False).is_enabled()
