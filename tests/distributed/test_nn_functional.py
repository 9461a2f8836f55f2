"""tensorlib.distributed.nn.functional (torch.distributed.nn): collectives that autograd
differentiates. A world of one process here (each collective an identity with an identity
gradient) and the errors; 2 and 3 ranks through the launcher run functional_ranks.py, which
checks values and gradients across ranks against numpy."""
import sys

import numpy as np
import pytest

import tensorlib as torch
import tensorlib.distributed as dist
from tensorlib.distributed import nn as dist_nn
from tensorlib.distributed.run import find_mpiexec

from tests.distributed.launching import launch
from tests.distributed.test_single_process import _LAUNCH_VARS


@pytest.fixture
def world(monkeypatch):
    for var in _LAUNCH_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    monkeypatch.setitem(sys.modules, "mpi4py.MPI", None)
    dist.init_process_group()
    yield
    dist.destroy_process_group()


def test_the_package_names_the_functional_collectives():
    assert dist_nn.all_reduce is dist_nn.functional.all_reduce
    assert {"all_reduce", "all_gather", "broadcast", "reduce_scatter",
            "all_to_all_single"} <= set(dist_nn.functional.__all__)


def test_a_world_of_one_passes_values_and_gradients_through(world):
    x = torch.randn(3, 2, requires_grad=True)
    w = torch.randn(3, 2)
    results = [dist_nn.all_reduce(x), dist_nn.broadcast(x, 0), dist_nn.reduce(x, 0),
               dist_nn.all_gather(x)[0], dist_nn.gather(x)[0], dist_nn.scatter([x]),
               dist_nn.reduce_scatter(torch.empty(3, 2), [x]),
               dist_nn.all_to_all([torch.empty(3, 2)], [x])[0],
               dist_nn.all_to_all_single(torch.empty(3, 2), x)]
    for y in results:
        x.grad = None
        assert y is not x
        np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
        (y * w).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), w.numpy())


def test_all_reduce_leaves_its_input_and_refuses_a_product_gradient(world):
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    y = dist_nn.all_reduce(x * 1, op=dist.ReduceOp.PRODUCT)
    assert x.tolist() == [1.0, -2.0]
    with pytest.raises(RuntimeError, match="no gradient for ReduceOp.PRODUCT"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="only ReduceOp.SUM is differentiable"):
        dist_nn.reduce(x, 0, op=dist.ReduceOp.MAX)


@pytest.mark.parametrize("nproc", [2, 3])
def test_gradients_across_ranks(nproc):
    pytest.importorskip("mpi4py", reason="multi-process tests need mpi4py: "
                                         "pip install \"tensorlib[distributed]\"")
    if find_mpiexec("mpiexec")[0] is None:
        pytest.skip("multi-process tests need mpiexec beside this Python or on PATH")
    done = launch(nproc, "functional_ranks.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    for rank in range(nproc):
        assert f"RANK {rank} DONE;" in done.stdout
