"""A whole training step in one compiled function -- zero_grad, forward, loss, backward,
optimizer step -- gives eager's losses, gradients and parameters step for step, and replays
once its optimizer state has settled (the backward inside the call has already consumed the
returned loss's graph: the replay must neither trace that graph again nor leave the
parameters' `.grad` pointing at the recorded call's buffers)."""
import copy

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn as nn
import tensorlib.nn.functional as F

from tests.compiler.models import make

STEPS = 6

OPTIMIZERS = {
    "sgd": lambda ps: tl.optim.SGD(ps, lr=0.05),
    "sgd_momentum": lambda ps: tl.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=1e-4),
    "adam": lambda ps: tl.optim.Adam(ps, lr=1e-2),
    "adamw": lambda ps: tl.optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
}


def _np(t):
    return t.detach().cpu().numpy()


def _close(a, b, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _batches(x, y, n):
    """n different batches of x's and y's shapes (a new input every step, as in training)."""
    g = tl.Generator().manual_seed(7)
    return [(tl.randn(*x.shape, generator=g).to(x.device),
             tl.randint(0, 5, tuple(y.shape), generator=g).to(y.device)) for _ in range(n)]


def _step_fn(model, opt, loss_fn):
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _train_both(name, opt_name, device, loss_fn=F.cross_entropy):
    """(losses, parameters, grads) of the compiled step and of eager, and the compiled
    step."""
    model, x, y = make(name, device)
    twin = copy.deepcopy(model)
    compiled = tl.compile(_step_fn(model, OPTIMIZERS[opt_name](model.parameters()), loss_fn))
    eager = _step_fn(twin, OPTIMIZERS[opt_name](twin.parameters()), loss_fn)
    for bx, by in _batches(x, y, STEPS):
        got, want = compiled(bx, by), eager(bx, by)
        _close(got, want)
        for p, q in zip(model.parameters(), twin.parameters()):
            _close(p.grad, q.grad)
    for p, q in zip(model.parameters(), twin.parameters()):
        _close(p, q)
    return compiled


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_a_compiled_mlp_training_step_matches_eager_and_replays(device, opt_name):
    compiled = _train_both("mlp", opt_name, device)
    # call 1 makes the .grads (and the optimizer's state), calls 2 and 3 record the same
    # program, the rest replay it. (On OpenCL cross_entropy reads its targets into Python
    # and Adam its step counts: a graph break every call, so those steps are never replayed.)
    if device == "cpu":
        assert compiled.replayed_calls == STEPS - 3


@pytest.mark.parametrize("opt_name", ["sgd_momentum", "adam"])
def test_a_compiled_cnn_training_step_matches_eager(device, opt_name):
    compiled = _train_both("lenet", opt_name, device)
    if device == "cpu":     # opencl's max-pool reads back: a graph break, never replayed
        assert compiled.replayed_calls == STEPS - 3


def test_an_mse_step_under_the_decorator_matches_eager():
    tl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    twin = copy.deepcopy(model)
    opt = tl.optim.Adam(model.parameters(), lr=1e-2)
    opt_twin = tl.optim.Adam(twin.parameters(), lr=1e-2)
    loss_fn = nn.MSELoss()

    @tl.compile
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    x, y = tl.randn(16, 4), tl.randn(16, 2)
    for _ in range(STEPS):
        opt_twin.zero_grad()
        want = loss_fn(twin(x), y)
        want.backward()
        opt_twin.step()
        _close(step(x, y), want)
    for p, q in zip(model.parameters(), twin.parameters()):
        _close(p, q)
    assert step.replayed_calls == STEPS - 3


def test_a_replayed_loss_is_spent_like_eagers():
    model, x, y = make("mlp", "cpu")
    step = tl.compile(_step_fn(model, tl.optim.SGD(model.parameters(), lr=0.1),
                               F.cross_entropy))
    for _ in range(STEPS):
        loss = step(x, y)
    assert step.replayed_calls > 0
    assert loss.requires_grad and loss.grad_fn is not None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_accumulating_into_kept_grads_and_returning_the_logits_match_eager():
    """zero_grad(set_to_none=False) zeroes the .grads in place; the logits' graph is spent
    too (the backward ran through it)."""
    def make_step(model, opt):
        def step(x, y):
            opt.zero_grad(set_to_none=False)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            loss.backward()
            opt.step()
            return loss.detach(), logits
        return step

    model, x, y = make("mlp", "cpu")
    twin = copy.deepcopy(model)
    compiled = tl.compile(make_step(model, tl.optim.SGD(model.parameters(), lr=0.1,
                                                        momentum=0.9)))
    eager = make_step(twin, tl.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9))
    for bx, by in _batches(x, y, STEPS):
        (loss, logits), (want, want_logits) = compiled(bx, by), eager(bx, by)
        _close(loss, want)
        _close(logits, want_logits)
        for p, q in zip(model.parameters(), twin.parameters()):
            _close(p.grad, q.grad)
    assert compiled.replayed_calls >= STEPS - 3
    with pytest.raises(RuntimeError, match="second time"):
        logits.sum().backward()


@pytest.mark.parametrize("opt_name", ["sgd_momentum", "adam"])
def test_a_compiled_model_in_an_eager_training_loop_matches_eager(device, opt_name):
    model, x, y = make("mlp", device)
    twin = copy.deepcopy(model)
    forward = tl.compile(model)
    opt = OPTIMIZERS[opt_name](model.parameters())
    opt_twin = OPTIMIZERS[opt_name](twin.parameters())
    for bx, by in _batches(x, y, STEPS):
        for fwd, o in ((forward, opt), (twin, opt_twin)):
            o.zero_grad()
            loss = F.mse_loss(fwd(bx), F.one_hot(by, 5).float())
            loss.backward()
            o.step()
        for p, q in zip(model.parameters(), twin.parameters()):
            _close(p.grad, q.grad)
    for p, q in zip(model.parameters(), twin.parameters()):
        _close(p, q)
    assert forward.__dict__["_compiled_call"].replayed_calls >= STEPS - 2
