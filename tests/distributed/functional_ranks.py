"""Run by every rank of a job (tests/distributed/test_nn_functional.py starts it with the
launcher): each differentiable collective of tensorlib.distributed.nn.functional, its
forward values and its gradients against what the chain rule gives across ranks, computed
in numpy from every rank's data. Prints "CHECK <name> rank <r>;" per passed check and
"RANK <r> DONE;" at the end; a failed check raises, which aborts the job."""
import numpy as np

import tensorlib as torch
import tensorlib.distributed as dist
import tensorlib.distributed.nn.functional as F

SHAPE = (3, 4)


def data(r, salt=0, shape=SHAPE):
    return np.random.default_rng(100 * salt + r).standard_normal(shape)


def close(got, want, what):
    got = got.detach().numpy() if isinstance(got, torch.Tensor) else np.asarray(got)
    if not np.allclose(got, want, rtol=1e-9, atol=1e-12):
        raise AssertionError(f"rank {dist.get_rank()}: {what}: got\n{got}\nwant\n{want}")


def leaf(a):
    return torch.tensor(a, requires_grad=True)


def checks(rank, n):
    xs = [data(r) for r in range(n)]            # every rank's input
    ws = [data(r, salt=1) for r in range(n)]    # every rank's loss weights
    x = leaf(xs[rank])

    def done(name):
        print(f"CHECK {name} rank {rank};", flush=True)

    for op, value, grad in [
            (dist.ReduceOp.SUM, sum(xs), sum(ws)),
            (dist.ReduceOp.AVG, sum(xs) / n, sum(ws) / n),
            (dist.ReduceOp.MAX, np.max(xs, 0), sum(ws) * (xs[rank] == np.max(xs, 0)))]:
        x.grad = None
        y = F.all_reduce(x, op)
        (y * torch.tensor(ws[rank])).sum().backward()
        close(y, value, f"all_reduce {op}")
        close(x.grad, grad, f"all_reduce {op} grad")
        close(x, xs[rank], "all_reduce leaves its input")
    done("all_reduce")

    wj = [[data(r, salt=10 + j) for j in range(n)] for r in range(n)]
    x.grad = None
    outs = F.all_gather(x)
    sum((o * torch.tensor(wj[rank][j])).sum() for j, o in enumerate(outs)).backward()
    for j in range(n):
        close(outs[j], xs[j], "all_gather")
    close(x.grad, sum(wj[r][rank] for r in range(n)), "all_gather grad")
    done("all_gather")

    src = n - 1
    x.grad = None
    y = F.broadcast(x, src)
    (y * torch.tensor(ws[rank])).sum().backward()
    close(y, xs[src], "broadcast")
    close(x.grad, sum(ws) if rank == src else np.zeros(SHAPE), "broadcast grad")
    done("broadcast")

    x.grad = None
    y = F.reduce(x, 0)
    (y * torch.tensor(ws[rank])).sum().backward()
    if rank == 0:
        close(y, sum(xs), "reduce")
    close(x.grad, ws[0], "reduce grad")
    done("reduce")

    x.grad = None
    outs = F.gather(x, dst=0)
    sum((o * torch.tensor(wj[rank][j])).sum() for j, o in enumerate(outs)).backward()
    if rank == 0:
        for j in range(n):
            close(outs[j], xs[j], "gather")
    close(x.grad, wj[0][rank], "gather grad")
    done("gather")

    x.grad = None
    y = F.scatter([x * (j + 1) for j in range(n)], src=0)
    (y * torch.tensor(ws[rank])).sum().backward()
    close(y, xs[0] * (rank + 1), "scatter")
    want = sum((j + 1) * ws[j] for j in range(n)) if rank == 0 else np.zeros(SHAPE)
    close(x.grad, want, "scatter grad")
    done("scatter")

    x.grad = None
    out = torch.empty(SHAPE, dtype=torch.float64)
    y = F.reduce_scatter(out, [x * (j + 1) for j in range(n)])
    (y * torch.tensor(ws[rank])).sum().backward()
    close(y, sum(xs) * (rank + 1), "reduce_scatter")
    close(out, sum(xs) * (rank + 1), "reduce_scatter fills its output")
    close(x.grad, sum((k + 1) * ws[k] for k in range(n)), "reduce_scatter grad")
    done("reduce_scatter")

    x.grad = None
    outs = F.all_to_all([torch.empty(SHAPE, dtype=torch.float64) for _ in range(n)],
                        [x * (j + 1) for j in range(n)])
    sum((o * torch.tensor(wj[rank][j])).sum() for j, o in enumerate(outs)).backward()
    for j in range(n):
        close(outs[j], xs[j] * (rank + 1), "all_to_all")
    close(x.grad, sum((r + 1) * wj[r][rank] for r in range(n)), "all_to_all grad")
    done("all_to_all")

    rows = (2 * n, 3)
    big = [data(r, salt=30, shape=rows) for r in range(n)]
    wbig = [data(r, salt=31, shape=rows) for r in range(n)]
    xb = leaf(big[rank])
    y = F.all_to_all_single(torch.empty(rows, dtype=torch.float64), xb)
    (y * torch.tensor(wbig[rank])).sum().backward()
    close(y, np.concatenate([big[j][2 * rank:2 * rank + 2] for j in range(n)]),
          "all_to_all_single")
    close(xb.grad, np.concatenate([wbig[r][2 * rank:2 * rank + 2] for r in range(n)]),
          "all_to_all_single grad")
    done("all_to_all_single")


def main():
    dist.init_process_group(backend="gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    checks(rank, n)
    dist.destroy_process_group()
    print(f"RANK {rank} DONE;", flush=True)


if __name__ == "__main__":
    main()
