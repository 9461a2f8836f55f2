"""DataLoader throughput: tensorlib vs PyTorch, in the same run.

A TensorDataset of 60000 x 784 float32 (MNIST-sized) and 60000 int64 labels, batch 128,
shuffle on, num_workers 0 and 2. Each figure is batches per second over one full epoch
(469 batches, worker start-up included), the best of --repeats epochs, each with a fresh
loader. Both libraries get the same numpy data (from_numpy, shared memory).

    python benchmarks/dataloader.py [--repeats 3] [--workers 0 2] [--no-torch] [--per-sample]

tensorlib's TensorDataset gathers a batch with one indexing per tensor (`__getitems__`);
--per-sample also times a TensorDataset subclass that fetches sample by sample, as PyTorch's
does, to compare the loader machinery alone.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _epoch(make_loader):
    loader = make_loader()
    start = time.perf_counter()
    n = 0
    for xb, yb in loader:
        n += 1
    elapsed = time.perf_counter() - start
    del loader
    return n / elapsed, n


def _bench(make_loader, repeats):
    best, n = 0.0, 0
    for _ in range(repeats):
        rate, n = _epoch(make_loader)
        best = max(best, rate)
    return best, n


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--per-sample", action="store_true")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((60000, 784), dtype=np.float32)
    y = rng.integers(0, 10, 60000)

    import tensorlib
    from tensorlib.utils.data import DataLoader, TensorDataset
    tl_ds = TensorDataset(tensorlib.from_numpy(x), tensorlib.from_numpy(y))

    class PerSample(TensorDataset):
        def __getitem__(self, index):
            return tuple(t[index] for t in self.tensors)
    slow_ds = PerSample(*tl_ds.tensors)
    torch = None
    if not args.no_torch:
        try:
            import torch
            from torch.utils.data import DataLoader as TorchLoader, TensorDataset as TorchDS
            torch.set_num_threads(os.cpu_count() or 1)
            th_ds = TorchDS(torch.from_numpy(x), torch.from_numpy(y))
        except ImportError:
            torch = None

    print(f"DataLoader throughput, TensorDataset 60000x784 float32, batch {args.batch_size}, "
          f"shuffle; batches/s, best of {args.repeats} epochs (start-up included)")
    print(f"cpus {os.cpu_count()}, load average before: "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"{'num_workers':>11} {'tensorlib':>10} {'torch':>10} {'ratio':>7}"
          + (f" {'per-sample':>11} {'ratio':>7}" if args.per_sample else ""))
    results = []
    for nw in args.workers:
        kw = dict(batch_size=args.batch_size, shuffle=True, num_workers=nw)
        tl, n = _bench(lambda: DataLoader(tl_ds, generator=np.random.default_rng(0), **kw),
                       args.repeats)
        th = None
        if torch is not None:
            th, _ = _bench(lambda: TorchLoader(th_ds, **kw), args.repeats)
        ratio = f"{tl / th:6.2f}x" if th else "-"
        line = f"{nw:>11} {tl:>10.1f} {th if th is None else round(th, 1)!s:>10} {ratio:>7}"
        slow = None
        if args.per_sample:
            slow, _ = _bench(lambda: DataLoader(slow_ds, generator=np.random.default_rng(0),
                                                **kw), args.repeats)
            line += f" {slow:>11.1f} " + (f"{slow / th:6.2f}x" if th else "-")
        print(line)
        results.append({"num_workers": nw, "tensorlib": tl, "torch": th, "batches": n,
                        "tensorlib_per_sample": slow})
    print(f"load average after: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return results


if __name__ == "__main__":
    main()
