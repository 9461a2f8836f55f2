"""Run by every rank (tests/nn/test_syncbatchnorm_ranks.py starts it with the launcher): a
SyncBatchNorm on each rank's slice of a batch against one BatchNorm on the whole batch
(outputs, input and parameter gradients, running statistics). Prints "SYNCBN <r> OK"."""
import numpy as np

import tensorlib as torch
import tensorlib.distributed as dist


def main():
    dist.init_process_group(backend="gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    whole = np.random.default_rng(7).standard_normal((2 * n, 3, 4, 2)) * 2 + 1
    weights = np.random.default_rng(8).standard_normal(whole.shape)

    ref = torch.nn.BatchNorm2d(3).double()
    x_all = torch.tensor(whole, requires_grad=True)
    y_all = ref(x_all)
    (y_all * torch.tensor(weights)).sum().backward()

    sync = torch.nn.SyncBatchNorm(3).double()
    x = torch.tensor(whole[2 * rank:2 * rank + 2], requires_grad=True)
    y = sync(x)
    (y * torch.tensor(weights[2 * rank:2 * rank + 2])).sum().backward()
    for p in sync.parameters():             # each rank holds its share of the gradient
        dist.all_reduce(p.grad)

    np.testing.assert_allclose(y.detach().numpy(),
                               y_all.detach().numpy()[2 * rank:2 * rank + 2], atol=1e-10)
    np.testing.assert_allclose(x.grad.numpy(), x_all.grad.numpy()[2 * rank:2 * rank + 2],
                               atol=1e-10)
    for a, b in zip(sync.parameters(), ref.parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-10)
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(sync, name).numpy(), getattr(ref, name).numpy(),
                                   atol=1e-10)
    print(f"SYNCBN {rank} OK", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
