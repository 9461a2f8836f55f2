"""Run by every rank of a test job (tests/distributed/test_multiprocess.py starts it with
the launcher): each collective against its numpy definition, async work, object
collectives, sub-groups, then DistributedDataParallel against single-process training on
the concatenated batch, and ZeroRedundancyOptimizer over DDP against one process's Adam.
Prints "CHECK <name>" per passed check and "RANK <r> DONE" at the end; a failed check
raises, which aborts the job."""
import copy
import os

import numpy as np

import tensorlib as torch
import tensorlib.distributed as dist
from tensorlib.distributed.optim import ZeroRedundancyOptimizer
from tensorlib.nn.parallel import DistributedDataParallel as DDP


def report(name):
    print(f"CHECK {name} rank {dist.get_rank()};", flush=True)


def close(actual, expected, name, rtol=1e-6, atol=1e-6):
    got = actual.numpy() if isinstance(actual, torch.Tensor) else np.asarray(actual)
    if not np.allclose(got, expected, rtol=rtol, atol=atol):
        raise AssertionError(f"rank {dist.get_rank()}: {name}: got\n{got}\nexpected\n"
                             f"{expected}")


def data(r, shape, dtype=np.float64, salt=0):
    """The array rank r contributes (every rank can compute everyone's)."""
    return np.random.default_rng(1000 * salt + r).standard_normal(shape).astype(dtype)


def collectives(rank, n):
    def t(a):
        return torch.tensor(a)
    everyone = [data(r, (3, 4)) for r in range(n)]
    mine = everyone[rank]

    for op, fn in [(dist.ReduceOp.SUM, np.sum), (dist.ReduceOp.PRODUCT, np.prod),
                   (dist.ReduceOp.MIN, np.min), (dist.ReduceOp.MAX, np.max),
                   (dist.ReduceOp.AVG, np.mean)]:
        x = t(mine)
        dist.all_reduce(x, op=op)
        close(x, fn(np.stack(everyone), axis=0), f"all_reduce {op}")
    ints = torch.tensor(np.arange(6, dtype=np.int64) * (rank + 1))
    dist.all_reduce(ints, op=dist.ReduceOp.BXOR)
    expect = np.bitwise_xor.reduce([np.arange(6) * (r + 1) for r in range(n)])
    close(ints, expect, "all_reduce BXOR int64")
    half = torch.tensor(mine).to(torch.float16)
    dist.all_reduce(half)
    close(half.to(torch.float64), np.sum(np.stack(everyone), 0), "all_reduce float16",
          rtol=1e-2, atol=1e-2)
    flags = torch.tensor([rank == 0, True, False])
    dist.all_reduce(flags, op=dist.ReduceOp.MIN)
    close(flags, [n == 1, True, False], "all_reduce bool MIN")
    strided = torch.tensor(data(rank, (4, 3))).t()         # not contiguous: staged copy
    version = strided._version
    dist.all_reduce(strided)
    close(strided, np.sum([data(r, (4, 3)).T for r in range(n)], 0), "all_reduce strided")
    assert strided._version > version, "all_reduce must bump the version counter"
    report("all_reduce")

    x = t(mine)
    dist.broadcast(x, src=n - 1)
    close(x, everyone[n - 1], "broadcast")
    x = t(mine)
    dist.reduce(x, dst=1, op=dist.ReduceOp.SUM)
    close(x, np.sum(everyone, 0) if rank == 1 else mine, "reduce")
    report("broadcast_reduce")

    outs = [torch.zeros(3, 4, dtype=torch.float64) for _ in range(n)]
    dist.all_gather(outs, t(mine))
    for r in range(n):
        close(outs[r], everyone[r], "all_gather")
    big = torch.zeros(n * 3, 4, dtype=torch.float64)
    dist.all_gather_into_tensor(big, t(mine))
    close(big, np.concatenate(everyone), "all_gather_into_tensor")
    stacked = torch.zeros(n, 3, 4, dtype=torch.float64)
    dist.all_gather_into_tensor(stacked, t(mine))
    close(stacked, np.stack(everyone), "all_gather_into_tensor stacked")
    report("all_gather")

    # reduce_scatter: rank r's input piece j is data(r, salt=j); output j = sum over r
    pieces = [t(data(rank, (5,), salt=j + 1)) for j in range(n)]
    out = torch.zeros(5, dtype=torch.float64)
    dist.reduce_scatter(out, pieces)
    close(out, sum(data(r, (5,), salt=rank + 1) for r in range(n)), "reduce_scatter")
    flat = torch.cat(pieces)
    out = torch.zeros(5, dtype=torch.float64)
    dist.reduce_scatter_tensor(out, flat, op=dist.ReduceOp.MAX)
    close(out, np.max([data(r, (5,), salt=rank + 1) for r in range(n)], 0),
          "reduce_scatter_tensor MAX")
    report("reduce_scatter")

    dst = n - 1
    gathered = [torch.zeros(3, 4, dtype=torch.float64) for _ in range(n)] \
        if rank == dst else None
    dist.gather(t(mine), gathered, dst=dst)
    if rank == dst:
        for r in range(n):
            close(gathered[r], everyone[r], "gather")
    out = torch.zeros(2, dtype=torch.float64)
    chunks = [t(np.array([10.0 * j, 10.0 * j + 1])) for j in range(n)] if rank == 0 else None
    dist.scatter(out, chunks, src=0)
    close(out, [10.0 * rank, 10.0 * rank + 1], "scatter")
    report("gather_scatter")

    # all_to_all: rank r sends [100r + j] to rank j
    ins = [t(np.array([100.0 * rank + j])) for j in range(n)]
    outs = [torch.zeros(1, dtype=torch.float64) for _ in range(n)]
    dist.all_to_all(outs, ins)
    close(torch.cat(outs), [100.0 * r + rank for r in range(n)], "all_to_all")
    # uneven all_to_all_single: rank r sends j+1 rows of value 100r+j to rank j
    in_splits = [j + 1 for j in range(n)]
    rows = np.concatenate([np.full((j + 1, 2), 100.0 * rank + j) for j in range(n)])
    out_splits = [rank + 1] * n
    out = torch.zeros(sum(out_splits), 2, dtype=torch.float64)
    dist.all_to_all_single(out, t(rows), out_splits, in_splits)
    close(out, np.concatenate([np.full((rank + 1, 2), 100.0 * r + rank) for r in range(n)]),
          "all_to_all_single uneven")
    even_in = t(np.arange(2.0 * n) + 1000 * rank)
    even_out = torch.zeros(2 * n, dtype=torch.float64)
    dist.all_to_all_single(even_out, even_in)
    close(even_out, np.concatenate([np.arange(2 * rank, 2 * rank + 2) + 1000.0 * r
                                    for r in range(n)]), "all_to_all_single even")
    report("all_to_all")

    # point to point around a ring, blocking and async
    right, left = (rank + 1) % n, (rank - 1) % n
    got = torch.zeros(3, 4, dtype=torch.float64)
    if rank % 2 == 0:
        dist.send(t(mine), right)
        src = dist.recv(got, left)
    else:
        src = dist.recv(got)
        dist.send(t(mine), right)
    close(got, everyone[left], "send/recv")
    assert src == left, f"recv returned source {src}, expected {left}"
    got = torch.zeros(3, 4, dtype=torch.float64)
    works = [dist.irecv(got, left, tag=7), dist.isend(t(mine), right, tag=7)]
    for w in works:
        w.wait()
    assert all(w.is_completed() for w in works)
    close(got, everyone[left], "isend/irecv")
    report("p2p")

    # async collectives: issue several, then wait
    xs = [t(data(rank, (1000,), salt=s)) for s in range(3)]
    works = [dist.all_reduce(x, async_op=True) for x in xs]
    for w in works:
        assert w.wait() is True
        assert w.is_completed() and w.is_success()
    for s, x in enumerate(xs):
        close(x, sum(data(r, (1000,), salt=s) for r in range(n)), "async all_reduce")
    w = dist.broadcast(t(mine), src=0, async_op=True)
    w.wait()
    assert dist.barrier(async_op=True).wait()
    dist.barrier()
    report("async")

    objs = [None] * n
    dist.all_gather_object(objs, {"rank": rank, "tag": "x" * rank})
    assert objs == [{"rank": r, "tag": "x" * r} for r in range(n)], objs
    lst = [rank, "mine", None] if rank == 1 else [None, None, None]
    dist.broadcast_object_list(lst, src=1)
    assert lst == [1, "mine", None], lst
    gathered = [None] * n if rank == 0 else None
    dist.gather_object(("r", rank), gathered, dst=0)
    if rank == 0:
        assert gathered == [("r", r) for r in range(n)], gathered
    report("objects")

    # sub-groups: even ranks, and a group this rank may not belong to
    evens = [r for r in range(n) if r % 2 == 0]
    g = dist.new_group(evens)
    x = t(mine)
    result = dist.all_reduce(x, group=g)
    if rank in evens:
        close(x, np.sum([everyone[r] for r in evens], 0), "sub-group all_reduce")
        assert dist.get_rank(g) == evens.index(rank) and dist.get_world_size(g) == len(evens)
        y = t(mine)
        dist.broadcast(y, src=evens[-1], group=g)          # src is a global rank
        close(y, everyone[evens[-1]], "sub-group broadcast")
        z = t(mine)
        dist.broadcast(z, group=g, group_src=0)
        close(z, everyone[evens[0]], "sub-group broadcast group_src")
        objs = [None] * len(evens)
        dist.all_gather_object(objs, rank, group=g)
        assert objs == evens, objs
    else:
        assert result is None and dist.get_rank(g) == -1
        close(x, mine, "non-member untouched")
    assert dist.get_process_group_ranks(g) == evens
    pair = dist.new_group([n - 1, 0])
    if rank in (0, n - 1):
        x = t(mine)
        dist.all_reduce(x, op=dist.ReduceOp.MAX, group=pair)
        close(x, np.maximum(everyone[0], everyone[n - 1]), "pair all_reduce")
    dist.destroy_process_group(pair)
    report("subgroups")


class Net(torch.nn.Module):
    """An MLP with an optional branch (for find_unused_parameters)."""

    def __init__(self, with_extra=False):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 16)
        self.fc2 = torch.nn.Linear(16, 16)
        self.head = torch.nn.Linear(16, 3)
        if with_extra:
            self.extra = torch.nn.Linear(16, 3)

    def forward(self, x, use_extra=False):
        h = torch.relu(self.fc2(torch.relu(self.fc1(x))))
        out = self.head(h)
        return out + self.extra(h) if use_extra else out


def batch(step, n, per_rank=4):
    """The whole batch of a step (every rank's slice, concatenated)."""
    rng = np.random.default_rng(50 + step)
    x = rng.standard_normal((n * per_rank, 6)).astype(np.float32)
    y = rng.integers(0, 3, n * per_rank)
    return torch.tensor(x), torch.tensor(y)


def local(t, rank, per_rank=4):
    return t[rank * per_rank:(rank + 1) * per_rank]


def loss_fn(out, y):
    return torch.nn.functional.cross_entropy(out, y)


def ddp_checks(rank, n):
    torch.manual_seed(rank)                   # different on every rank: DDP broadcasts rank 0's
    net = Net()
    first, dist._DEFAULT_FIRST_BUCKET_BYTES = dist._DEFAULT_FIRST_BUCKET_BYTES, 256
    ddp = DDP(net, bucket_cap_mb=0.0005)      # several buckets
    dist._DEFAULT_FIRST_BUCKET_BYTES = first
    gathered = [None] * n
    dist.all_gather_object(gathered, [p.detach().numpy().copy() for p in net.parameters()])
    for theirs in gathered:
        for a, b in zip(theirs, gathered[0]):
            assert np.array_equal(a, b), "construction must broadcast rank 0's parameters"
    assert len(ddp.reducer.buckets) > 1, "expected several buckets"
    assert list(ddp.state_dict())[0].startswith("module."), list(ddp.state_dict())
    assert ddp.module is net
    report("ddp_broadcast")

    reference = copy.deepcopy(net)
    x, y = batch(0, n)
    loss_fn(ddp(local(x, rank)), local(y, rank)).backward()
    loss_fn(reference(x), y).backward()
    for (name, p), q in zip(net.named_parameters(), reference.parameters()):
        close(p.grad, q.grad.numpy(), f"DDP gradient of {name}", rtol=1e-5, atol=1e-6)
    report("ddp_gradients")

    # no_sync: local accumulation, then one synchronised backward averages the sum
    net.zero_grad()
    reference.zero_grad()
    xa, ya = batch(1, n)
    xb, yb = batch(2, n)
    with ddp.no_sync():
        loss_fn(ddp(local(xa, rank)), local(ya, rank)).backward()
    local_only = [None] * n
    dist.all_gather_object(local_only, net.fc1.weight.grad.numpy().copy())
    assert n == 1 or not np.allclose(local_only[0], local_only[1]), "no_sync must not reduce"
    loss_fn(ddp(local(xb, rank)), local(yb, rank)).backward()
    loss_fn(reference(xa), ya).backward()
    loss_fn(reference(xb), yb).backward()
    for (name, p), q in zip(net.named_parameters(), reference.parameters()):
        close(p.grad, q.grad.numpy(), f"no_sync gradient of {name}", rtol=1e-5, atol=1e-6)
    report("ddp_no_sync")

    # five SGD steps: identical on every rank and equal to single-process training
    torch.manual_seed(0)
    net = Net()
    reference = copy.deepcopy(net)
    ddp = DDP(net)                             # default buckets
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    for step in range(5):
        x, y = batch(10 + step, n)
        opt.zero_grad()
        loss_fn(ddp(local(x, rank)), local(y, rank)).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(reference(x), y).backward()
        ref_opt.step()
    mine = [p.detach().numpy().copy() for p in net.parameters()]
    gathered = [None] * n
    dist.all_gather_object(gathered, mine)
    for theirs in gathered:
        for a, b in zip(theirs, mine):
            assert np.array_equal(a, b), "parameters differ between ranks after 5 steps"
    for (name, p), q in zip(net.named_parameters(), reference.parameters()):
        close(p.detach(), q.detach().numpy(), f"5 steps: {name}", rtol=1e-4, atol=1e-5)
    report("ddp_training")

    # find_unused_parameters: `extra` is used on rank 0 only
    torch.manual_seed(0)
    net = Net(with_extra=True)
    reference = copy.deepcopy(net)
    ddp = DDP(net, find_unused_parameters=True)
    x, y = batch(20, n)
    loss_fn(ddp(local(x, rank), use_extra=rank == 0), local(y, rank)).backward()
    total = None
    for r in range(n):
        part = loss_fn(reference(local(x, r), use_extra=r == 0), local(y, r)) / n
        total = part if total is None else total + part
    total.backward()
    for (name, p), q in zip(net.named_parameters(), reference.parameters()):
        close(p.grad, q.grad.numpy(), f"find_unused gradient of {name}", rtol=1e-5,
              atol=1e-6)
    net.zero_grad()
    loss_fn(ddp(local(x, rank)), local(y, rank)).backward()      # extra unused everywhere
    assert net.extra.weight.grad is None, "a parameter no rank used keeps its grad"
    report("ddp_find_unused")

    sampler = torch.utils.data.DistributedSampler(list(range(10)), shuffle=False)
    assert sampler.num_replicas == n and sampler.rank == rank
    seen = [None] * n
    dist.all_gather_object(seen, list(sampler))
    assert sorted(set(i for s in seen for i in s)) == list(range(10)), seen
    report("sampler")


def zero_checks(rank, n):
    """ZeroRedundancyOptimizer over DDP against one process's Adam on the whole batch: equal
    parameters on every rank, each rank holding the state of its shard only, and the
    consolidated state_dict equal to the plain optimizer's (then loaded back)."""
    for as_bucket in (False, True):
        torch.manual_seed(0)
        net = Net()
        reference = copy.deepcopy(net)
        ddp = DDP(net)
        opt = ZeroRedundancyOptimizer(ddp.parameters(), torch.optim.Adam, lr=0.01,
                                      parameters_as_bucket_view=as_bucket)
        ref_opt = torch.optim.Adam(reference.parameters(), lr=0.01)
        for step in range(4):
            x, y = batch(30 + step, n)
            opt.zero_grad()
            loss_fn(ddp(local(x, rank)), local(y, rank)).backward()
            opt.step()
            ref_opt.zero_grad()
            loss_fn(reference(x), y).backward()
            ref_opt.step()
        params = list(net.parameters())
        owned = [p for g in opt.optim.param_groups for p in g["params"]]
        assert len(opt.optim.state) == len(owned) < len(params), "state is not sharded"
        # largest first, each to the rank with the fewest elements so far
        sizes = [0] * n
        for p in sorted(params, key=lambda t: t.numel(), reverse=True):
            r = sizes.index(min(sizes))
            sizes[r] += p.numel()
            assert (any(p is q for q in owned)) == (r == rank), "shard differs from PyTorch's"
        for (name, p), q in zip(net.named_parameters(), reference.parameters()):
            close(p.detach(), q.detach().numpy(), f"ZeRO 4 steps: {name}", rtol=1e-4,
                  atol=1e-5)
        opt.consolidate_state_dict(to=1)
        if rank == 1:
            whole, expected = opt.state_dict(), ref_opt.state_dict()
            assert sorted(whole["state"]) == sorted(expected["state"]), whole["state"].keys()
            for i, st in expected["state"].items():
                for key in ("exp_avg", "exp_avg_sq"):
                    close(whole["state"][i][key], st[key].numpy(), f"state {i} {key}",
                          rtol=1e-4, atol=1e-6)
        else:
            try:
                opt.state_dict()
            except RuntimeError:
                pass
            else:
                raise AssertionError("state_dict() answered on a rank it was not sent to")
        again = ZeroRedundancyOptimizer(net.parameters(), torch.optim.Adam, lr=0.5)
        again.load_state_dict(ref_opt.state_dict())
        assert again.param_groups[0]["lr"] == 0.01 == again.optim.param_groups[0]["lr"]
        for p in (p for g in again.optim.param_groups for p in g["params"]):
            close(again.optim.state[p]["exp_avg_sq"],
                  ref_opt.state[params_of(reference, net, p)]["exp_avg_sq"].numpy(),
                  "loaded state", rtol=1e-4, atol=1e-8)
    report("zero")


def params_of(reference, net, p):
    """reference's parameter at p's place in net."""
    index = next(i for i, q in enumerate(net.parameters()) if q is p)
    return list(reference.parameters())[index]


def main():
    dist.init_process_group(backend=os.environ.get("CHECK_BACKEND", "gloo"))
    rank, n = dist.get_rank(), dist.get_world_size()
    assert n == int(os.environ["WORLD_SIZE"]) and rank == int(os.environ["RANK"])
    assert int(os.environ["LOCAL_RANK"]) == rank and int(os.environ["LOCAL_WORLD_SIZE"]) == n
    assert os.environ["MASTER_ADDR"] and os.environ["MASTER_PORT"]
    assert dist.is_torchelastic_launched()
    collectives(rank, n)
    ddp_checks(rank, n)
    zero_checks(rank, n)
    dist.destroy_process_group()
    print(f"RANK {rank} DONE;", flush=True)


if __name__ == "__main__":
    main()
