"""tensorlib.optim.swa_utils against torch.optim.swa_utils: the averaging functions,
AveragedModel (SWA, EMA, use_buffers, state_dict), SWALR's lr sequence, update_bn, and a
whole SWA training run from the same weights and data."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import nn
from tensorlib.optim import swa_utils

torch = pytest.importorskip("torch")
tswa = torch.optim.swa_utils

RNG = np.random.default_rng(11)
DATA = [(RNG.standard_normal((8, 3)).astype(np.float32),
         RNG.standard_normal((8, 1)).astype(np.float32)) for _ in range(4)]


def _pair(device, batchnorm=True):
    """The same small network in both libraries (tensorlib's on `device`)."""
    torch.manual_seed(0)
    layers = [torch.nn.Linear(3, 6)] + ([torch.nn.BatchNorm1d(6)] if batchnorm else []) \
        + [torch.nn.ReLU(), torch.nn.Linear(6, 1)]
    theirs = torch.nn.Sequential(*layers)
    ours_layers = [nn.Linear(3, 6)] + ([nn.BatchNorm1d(6)] if batchnorm else []) \
        + [nn.ReLU(), nn.Linear(6, 1)]
    ours = nn.Sequential(*ours_layers)
    ours.load_state_dict({k: tl.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours.to(device), theirs


def _assert_state_close(ours, theirs, rtol=1e-5, atol=1e-6):
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert list(ours_state) == list(theirs_state)
    for key, value in theirs_state.items():
        np.testing.assert_allclose(ours_state[key].cpu().numpy(), value.numpy(), rtol=rtol,
                                   atol=atol, err_msg=key)


def _perturb(ours, theirs, scale):
    with tl.no_grad(), torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            step = np.random.default_rng(int(scale * 100)).standard_normal(tuple(q.shape))
            step = (scale * step).astype(np.float32)
            q.add_(torch.tensor(step))
            p.add_(tl.tensor(step, device=p.device))


def test_avg_fns():
    a, b = np.float32([1.0, -2.0, 3.0]), np.float32([0.5, 4.0, -1.0])
    for ours_fn, theirs_fn in [(swa_utils.get_swa_avg_fn(), tswa.get_swa_avg_fn()),
                               (swa_utils.get_ema_avg_fn(0.9), tswa.get_ema_avg_fn(0.9))]:
        got = ours_fn(tl.tensor(a), tl.tensor(b), tl.tensor(3))
        want = theirs_fn(torch.tensor(a), torch.tensor(b), torch.tensor(3))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    for ours_fn, theirs_fn in [(swa_utils.get_swa_multi_avg_fn(), tswa.get_swa_multi_avg_fn()),
                               (swa_utils.get_ema_multi_avg_fn(0.8),
                                tswa.get_ema_multi_avg_fn(0.8))]:
        ours, theirs = [tl.tensor(a)], [torch.tensor(a)]
        ours_fn(ours, [tl.tensor(b)], tl.tensor(2))
        theirs_fn(theirs, [torch.tensor(b)], torch.tensor(2))
        np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), rtol=1e-6, atol=1e-6)
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError):
            swa_utils.get_ema_avg_fn(bad)
        with pytest.raises(ValueError):
            swa_utils.get_ema_multi_avg_fn(bad)


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema", "use_buffers"])
def test_averaged_model(device, kind):
    ours_net, theirs_net = _pair(device)
    options = {"swa": ({}, {}),
               "ema_multi": ({"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.7)},
                             {"multi_avg_fn": tswa.get_ema_multi_avg_fn(0.7)}),
               "ema": ({"avg_fn": swa_utils.get_ema_avg_fn(0.6)},
                       {"avg_fn": tswa.get_ema_avg_fn(0.6)}),
               "use_buffers": ({"use_buffers": True}, {"use_buffers": True})}[kind]
    ours = swa_utils.AveragedModel(ours_net, **options[0])
    theirs = tswa.AveragedModel(theirs_net, **options[1])
    for step in range(4):
        _perturb(ours_net, theirs_net, 0.1 * (step + 1))
        # the buffers change too: a training forward moves BatchNorm's running stats
        ours_net(tl.tensor(DATA[step][0], device=device))
        theirs_net(torch.tensor(DATA[step][0]))
        ours.update_parameters(ours_net)
        theirs.update_parameters(theirs_net)
        _assert_state_close(ours, theirs)
    assert int(ours.n_averaged.item()) == 4
    assert "module.0.weight" in ours.state_dict() and "n_averaged" in ours.state_dict()
    ours.eval()
    theirs.eval()
    x = DATA[0][0]
    np.testing.assert_allclose(ours(tl.tensor(x, device=device)).detach().cpu().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_averaged_model_copies_and_refuses_two_fns():
    net = nn.Linear(2, 2)
    averaged = swa_utils.AveragedModel(net)
    assert averaged.module is not net
    assert averaged.module.weight is not net.weight
    with pytest.raises(AssertionError):
        swa_utils.AveragedModel(net, avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())


def _lrs(sched_cls, lib, n, groups, **kw):
    params = [{"params": [lib.zeros(2, requires_grad=True)], "lr": 0.1 * (i + 1)}
              for i in range(groups)]
    opt = lib.optim.SGD(params, lr=0.1)
    sched = sched_cls(opt, **kw)
    out = [sched.get_last_lr()]
    for _ in range(n):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
    return out


@pytest.mark.parametrize("kw", [
    {"swa_lr": 0.05}, {"swa_lr": 0.05, "anneal_strategy": "linear", "anneal_epochs": 3},
    {"swa_lr": [0.01, 0.5], "anneal_epochs": 4}, {"swa_lr": 0.02, "anneal_epochs": 0},
    {"swa_lr": 0.3, "anneal_epochs": 1, "anneal_strategy": "linear"}])
def test_swalr_sequence(kw):
    ours = _lrs(swa_utils.SWALR, tl, 14, 2, **kw)
    theirs = _lrs(tswa.SWALR, torch, 14, 2, **kw)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-12)


def test_swalr_errors_and_state_dict():
    opt = tl.optim.SGD([tl.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError):
        swa_utils.SWALR(opt, swa_lr=0.05, anneal_strategy="exp")
    with pytest.raises(ValueError):
        swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=-1)
    with pytest.raises(ValueError):
        swa_utils.SWALR(opt, swa_lr=[0.05, 0.1])
    sched = swa_utils.SWALR(opt, swa_lr=0.05, anneal_strategy="linear", anneal_epochs=5)
    state = sched.state_dict()
    assert "anneal_func" not in state and "optimizer" not in state
    other = swa_utils.SWALR(tl.optim.SGD([tl.zeros(2, requires_grad=True)], lr=0.1),
                            swa_lr=0.05)
    other.load_state_dict(state)
    assert other.anneal_func(0.25) == 0.25     # linear again after loading


def test_update_bn(device):
    ours_net, theirs_net = _pair(device)
    ours_net[1].momentum = 0.3
    theirs_net[1].momentum = 0.3
    ours_net.eval()
    theirs_net.eval()
    # batches as tuples (the first item is the input) and as bare tensors
    swa_utils.update_bn([(tl.tensor(x), tl.tensor(y)) for x, y in DATA[:2]]
                        + [tl.tensor(x) for x, _ in DATA[2:]], ours_net, device=device)
    tswa.update_bn([(torch.tensor(x), torch.tensor(y)) for x, y in DATA[:2]]
                   + [torch.tensor(x) for x, _ in DATA[2:]], theirs_net)
    _assert_state_close(ours_net, theirs_net)
    assert ours_net[1].momentum == 0.3 and not ours_net.training
    # a model without BatchNorm is left alone
    plain, _ = _pair(device, batchnorm=False)
    swa_utils.update_bn([tl.tensor(DATA[0][0], device=device)], plain)
    assert plain.training


def _swa_run(lib, net, device, epochs=6, swa_start=2):
    opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    mod = swa_utils if lib is tl else tswa
    averaged = mod.AveragedModel(net)
    sched = mod.SWALR(opt, swa_lr=0.05, anneal_epochs=2)
    loss_fn = lib.nn.MSELoss()
    kwargs = {"device": device} if lib is tl else {}
    for epoch in range(epochs):
        for x, y in DATA:
            opt.zero_grad()
            loss_fn(net(lib.tensor(x, **kwargs)), lib.tensor(y, **kwargs)).backward()
            opt.step()
        if epoch >= swa_start:
            averaged.update_parameters(net)
            sched.step()
    mod.update_bn([lib.tensor(x, **kwargs) for x, _ in DATA], averaged)
    return averaged


def test_swa_training_run_matches_torch(device):
    ours_net, theirs_net = _pair(device)
    ours = _swa_run(tl, ours_net, device)
    theirs = _swa_run(torch, theirs_net, None)
    _assert_state_close(ours, theirs, rtol=1e-4, atol=1e-5)
    assert int(ours.n_averaged.item()) == 4
