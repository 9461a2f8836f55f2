"""ZeroRedundancyOptimizer in a world of one process (the multi-rank sharding is checked by
tests/distributed/rank_checks.py): it must train, save and load exactly as the optimizer it
wraps, keep parameters as views of one bucket when asked, follow a scheduler's lr, and
refuse what PyTorch refuses."""
import sys

import numpy as np
import pytest

import tensorlib as torch
import tensorlib.distributed as dist
from tensorlib.distributed.optim import ZeroRedundancyOptimizer


@pytest.fixture
def world(monkeypatch):
    for var in ("WORLD_SIZE", "RANK", "PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    dist.init_process_group()
    yield
    dist.destroy_process_group()


def _model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))


def _train(model, opt, steps=4):
    rng = np.random.default_rng(7)
    for _ in range(steps):
        x = torch.tensor(rng.standard_normal((6, 5)).astype(np.float32))
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()


@pytest.mark.parametrize("as_bucket", [False, True])
@pytest.mark.parametrize("optimizer_class,options", [
    (torch.optim.Adam, {"lr": 0.01}), (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9})])
def test_trains_and_saves_as_the_wrapped_optimizer(world, as_bucket, optimizer_class, options):
    model, reference = _model(), _model()
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class,
                                  parameters_as_bucket_view=as_bucket, **options)
    plain = optimizer_class(reference.parameters(), **options)
    _train(model, opt)
    _train(reference, plain)
    for p, q in zip(model.parameters(), reference.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())
    with pytest.raises(RuntimeError, match=r"consolidate_state_dict\(to=0\)"):
        opt.state_dict()
    opt.consolidate_state_dict()
    saved, expected = opt.state_dict(), plain.state_dict()
    assert saved["param_groups"] == expected["param_groups"]
    assert sorted(saved["state"]) == sorted(expected["state"])
    for i, state in expected["state"].items():
        for key, value in state.items():
            assert np.array_equal(saved["state"][i][key].numpy(), value.numpy()), (i, key)

    # a fresh one loads it (or the plain optimizer's) and goes on as the plain one does
    model2 = _model(1)
    model2.load_state_dict(model.state_dict())
    opt2 = ZeroRedundancyOptimizer(model2.parameters(), optimizer_class, lr=0.5)
    opt2.load_state_dict(saved)
    assert opt2.optim.param_groups[0]["lr"] == options["lr"]
    _train(model2, opt2, 2)
    _train(reference, plain, 2)
    for p, q in zip(model2.parameters(), reference.parameters()):
        assert np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_bucket_view_holds_the_trainable_parameters(world):
    model = _model()
    model[2].bias.requires_grad_(False)
    frozen_before = model[2].bias.detach().numpy().copy()
    opt = ZeroRedundancyOptimizer(model.parameters(), torch.optim.SGD, lr=0.1,
                                  parameters_as_bucket_view=True)
    (bucket,) = opt._buckets.values()
    trainable = [p for p in model.parameters() if p.requires_grad]
    assert bucket.numel() == sum(p.numel() for p in trainable)
    for p in trainable:
        assert p.untyped_storage().data_ptr() == bucket.untyped_storage().data_ptr()
    _train(model, opt, 2)
    assert np.array_equal(model[2].bias.detach().numpy(), frozen_before)
    # the bucket lays the shard out in its order (largest parameter first)
    in_shard = [p for g in opt.optim.param_groups for p in g["params"] if p.requires_grad]
    assert sorted(map(id, in_shard)) == sorted(map(id, trainable))
    flat = np.concatenate([p.detach().numpy().ravel() for p in in_shard])
    assert np.array_equal(bucket.numpy(), flat)


def test_scheduler_and_new_groups_reach_the_local_optimizer(world):
    model = _model()
    opt = ZeroRedundancyOptimizer(model[0].parameters(), torch.optim.SGD, lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    _train(model, opt, 1)
    sched.step()
    _train(model, opt, 1)
    assert opt.param_groups[0]["lr"] == 0.5 == opt.optim.param_groups[0]["lr"]
    opt.add_param_group({"params": model[2].parameters(), "lr": 0.25})
    assert len(opt.optim.param_groups) == 2 and opt.optim.param_groups[1]["lr"] == 0.25
    before = model[2].weight.detach().numpy().copy()
    _train(model, opt, 1)
    assert not np.array_equal(before, model[2].weight.detach().numpy())


def test_refuses_what_pytorch_refuses(world):
    model = _model()
    with pytest.raises(ValueError, match="empty parameter list"):
        ZeroRedundancyOptimizer([], torch.optim.SGD, lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        ZeroRedundancyOptimizer(model[0].weight, torch.optim.SGD, lr=0.1)
    with pytest.raises(TypeError, match="Tensors or dicts"):
        ZeroRedundancyOptimizer([model[0].weight, {"params": []}], torch.optim.SGD, lr=0.1)
    with pytest.raises(ValueError, match="'params' key"):
        ZeroRedundancyOptimizer([{"lr": 1.0}], torch.optim.SGD, lr=0.1)
    mixed = [model[0].weight, torch.nn.Parameter(torch.ones(2, dtype=torch.float64))]
    with pytest.raises(ValueError, match="same dense type.*float32.*float64|same dense type"):
        ZeroRedundancyOptimizer(mixed, torch.optim.SGD, lr=0.1)
    with pytest.raises(NotImplementedError, match="overlap_with_ddp"):
        ZeroRedundancyOptimizer(model.parameters(), torch.optim.SGD, overlap_with_ddp=True,
                                lr=0.1)
    opt = ZeroRedundancyOptimizer(model.parameters(), torch.optim.SGD, lr=0.1)
    other = torch.optim.SGD(model[0].parameters(), lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict(other.state_dict())
    _train(model, opt, 1)                                 # still usable


def test_needs_a_process_group():
    if dist.is_initialized():
        pytest.skip("a process group is already initialized")
    with pytest.raises(ValueError, match="init_process_group"):
        ZeroRedundancyOptimizer(_model().parameters(), torch.optim.SGD, lr=0.1)
