"""tensorlib.distributed in a world of one process, with MPI unavailable: init_process_group
works after a plain install, collectives are identities, DistributedDataParallel trains as
the bare module; plus the argument errors PyTorch raises, and DataParallel."""
import copy
import sys

import numpy as np
import pytest

import tensorlib as torch
import tensorlib.distributed as dist
from tensorlib.nn.parallel import DataParallel, DistributedDataParallel

_LAUNCH_VARS = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "PMI_RANK", "PMI_SIZE", "PMIX_RANK",
                "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID", "TORCHELASTIC_RUN_ID")


@pytest.fixture
def no_mpi(monkeypatch):
    """No launcher variables, and mpi4py cannot be imported."""
    for var in _LAUNCH_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", None)
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture
def world(no_mpi):
    dist.init_process_group()
    yield


def test_init_without_mpi(no_mpi):
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(ValueError, match="has not been initialized"):
        dist.get_rank()
    dist.init_process_group(backend="nccl", init_method="env://")
    assert dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "nccl")
    assert dist.group.WORLD is not None and not dist.is_torchelastic_launched()
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group()
    dist.destroy_process_group()
    assert not dist.is_initialized()


def test_init_errors(no_mpi):
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group(backend="ucc")
    with pytest.raises(NotImplementedError, match="Store"):
        dist.init_process_group(store=object())
    with pytest.raises(ValueError, match="init_method"):
        dist.init_process_group(init_method="redis://x")
    with pytest.raises(RuntimeError, match="pip install"):
        dist.init_process_group(world_size=2, rank=0)       # needs MPI, which is missing
    with pytest.raises(TypeError, match="timedelta"):
        dist.init_process_group(timeout=5)
    assert not dist.is_initialized()
    assert dist.Backend("GLOO") == "gloo" and dist.Backend("cpu:gloo,cuda:nccl")


def test_collectives_are_identities(world):
    x = torch.arange(6.0).reshape(2, 3)
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX):
        dist.all_reduce(x, op=op)
    dist.broadcast(x, src=0)
    dist.reduce(x, dst=0)
    assert np.array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))
    outs = [torch.zeros(2, 3)]
    dist.all_gather(outs, x)
    big = torch.zeros(2, 3)
    dist.all_gather_into_tensor(big, x)
    rs = torch.zeros(2, 3)
    dist.reduce_scatter_tensor(rs, x)
    g = [torch.zeros(2, 3)]
    dist.gather(x, g, dst=0)
    s = torch.zeros(2, 3)
    dist.scatter(s, [x], src=0)
    a2a = torch.zeros(2, 3)
    dist.all_to_all_single(a2a, x)
    for t in (outs[0], big, rs, g[0], s, a2a):
        assert np.array_equal(t.numpy(), x.numpy())
    work = dist.all_reduce(x, async_op=True)
    assert work.is_completed() and work.wait() and work.result() == [x]
    dist.barrier()
    objs = [None]
    dist.all_gather_object(objs, {"a": 1})
    lst = ["x"]
    dist.broadcast_object_list(lst, src=0)
    assert objs == [{"a": 1}] and lst == ["x"]
    sub = dist.new_group([0])
    assert dist.get_rank(sub) == 0 and dist.get_world_size(sub) == 1


def test_collective_argument_errors(world):
    x = torch.ones(4)
    with pytest.raises(ValueError, match="destination rank"):
        dist.send(x, dst=0)
    with pytest.raises(ValueError, match="not part of group"):
        dist.broadcast(x, src=3)
    with pytest.raises(TypeError, match="ReduceOp.AVG needs a floating point"):
        dist.all_reduce(torch.ones(2, dtype=torch.int64), op=dist.ReduceOp.AVG)
    with pytest.raises(TypeError, match="tensorlib.Tensor"):
        dist.all_reduce(np.ones(3))
    with pytest.raises(ValueError, match="one tensor per rank"):
        dist.all_gather([torch.zeros(4), torch.zeros(4)], x)
    with pytest.raises(ValueError, match="world_size times input"):
        dist.all_gather_into_tensor(torch.zeros(3), x)
    with pytest.raises(RuntimeError, match="dtype"):
        dist.all_gather([torch.zeros(4, dtype=torch.int64)], x)
    with pytest.raises(ValueError, match="ranks .* duplicates"):
        dist.new_group([0, 0])


def test_collective_on_device_tensor(world, device):
    x = torch.arange(6.0, device=device)[::2]            # a strided view on the device
    version = x._version
    dist.all_reduce(x)
    dist.broadcast(x, src=0)
    assert x.device.type == device.split(":")[0] and x._version > version
    assert np.array_equal(x.cpu().numpy(), [0.0, 2.0, 4.0])


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def test_ddp_world_of_one_is_the_module(world):
    net = _mlp()
    reference = copy.deepcopy(net)
    ddp = DistributedDataParallel(net)
    assert ddp.module is net
    assert list(ddp.state_dict()) == ["module." + k for k in net.state_dict()]
    x = torch.randn(4, 5)
    ddp(x).sum().backward()
    reference(x).sum().backward()
    for p, q in zip(net.parameters(), reference.parameters()):
        assert np.allclose(p.grad.numpy(), q.grad.numpy())
    with ddp.no_sync():
        ddp(x).sum().backward()
    reference(x).sum().backward()
    for p, q in zip(net.parameters(), reference.parameters()):
        assert np.allclose(p.grad.numpy(), q.grad.numpy())


def test_ddp_buckets_are_tensors_on_the_parameters_device(world, device):
    """The gradients are flattened into a bucket tensor where the parameters live (no host
    buffer), and come back into .grad unchanged in a world of one."""
    net = _mlp().to(device)
    reference = copy.deepcopy(net)
    ddp = DistributedDataParallel(net, find_unused_parameters=True)
    x = torch.randn(4, 5).to(device)
    ddp(x).sum().backward()
    reference(x).sum().backward()
    for bucket in ddp.reducer.buckets:
        assert isinstance(bucket.flat, torch.Tensor) and bucket.flat.device == x.device
    for p, q in zip(net.parameters(), reference.parameters()):
        assert p.grad.device == x.device
        assert np.allclose(p.grad.cpu().numpy(), q.grad.cpu().numpy())


def test_ddp_unused_parameter_needs_find_unused(world):
    class TwoHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)

        def forward(self, x):
            return self.a(x)
    ddp = DistributedDataParallel(TwoHeads())
    ddp(torch.ones(2, 3)).sum().backward()
    with pytest.raises(RuntimeError, match="find_unused_parameters=True"):
        ddp(torch.ones(2, 3))
    ddp = DistributedDataParallel(TwoHeads(), find_unused_parameters=True)
    for _ in range(2):
        ddp(torch.ones(2, 3)).sum().backward()
    assert ddp.module.b.weight.grad is None and ddp.module.a.weight.grad is not None
    with pytest.raises(ValueError, match="single element"):
        DistributedDataParallel(TwoHeads(), device_ids=[0, 1])


def test_ddp_needs_a_process_group(no_mpi):
    with pytest.raises(ValueError, match="init_process_group"):
        DistributedDataParallel(_mlp())


def test_data_parallel_on_one_device():
    net = _mlp()
    dp = torch.nn.DataParallel(net)
    x = torch.randn(3, 5)
    assert np.array_equal(dp(x).detach().numpy(), net(x).detach().numpy())
    assert dp.module is net and list(dp.state_dict())[0].startswith("module.")
    assert torch.nn.parallel.DataParallel is DataParallel
    with pytest.raises(NotImplementedError, match="DistributedDataParallel"):
        DataParallel(net, device_ids=[0, 1])
