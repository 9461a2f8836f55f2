"""Time per optimizer step on a 784-512-256-10 MLP's parameter set (6 tensors, 535,818
float32 values) and on 200 tensors of 64 values: tensorlib single-tensor vs foreach (flat)
vs foreach over parameters that share one flat storage (`_functional.flatten_parameters_`:
the single-pass case), and torch.optim (for-loop and foreach) in the same run. Not a test
(pytest does not collect it):

    python tests/optim/bench_step.py [repeats]
"""
import sys
import time

import numpy as np

import tensorlib
import tensorlib.optim as optim
from tensorlib.optim import _functional as F

MLP = [(512, 784), (512,), (256, 512), (256,), (10, 256), (10,)]
SMALL = [(64,)] * 200          # many small tensors: where launches dominate
CONFIGS = [("SGD", dict(lr=0.01, momentum=0.9)), ("Adam", dict(lr=1e-3)),
           ("AdamW", dict(lr=1e-3)), ("RMSprop", dict(lr=1e-3)), ("Adagrad", dict(lr=1e-2))]


def _time(step, repeats):
    for _ in range(3):
        step()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeats):
            step()
        best = min(best, (time.perf_counter() - t0) / repeats)
    return best * 1e3


def bench(repeats=20, shapes=MLP):
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(np.float32) * 0.01 for s in shapes]
    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    rows = []
    for name, kw in CONFIGS:
        row = {}
        for label, foreach, flat in (("single", False, False), ("foreach", True, False),
                                     ("foreach+flat", True, True)):
            params = [tensorlib.tensor(x, requires_grad=True) for x in init]
            if flat:
                F.flatten_parameters_(params)
            for p, g in zip(params, grads):
                p.grad = tensorlib.tensor(g)
            opt = getattr(optim, name)(params, foreach=foreach, **kw)
            row[label] = _time(opt.step, repeats)
        try:
            import torch
            torch.set_num_threads(2)
            for label, foreach in (("torch", False), ("torch foreach", True)):
                tp = [torch.tensor(x, requires_grad=True) for x in init]
                for p, g in zip(tp, grads):
                    p.grad = torch.tensor(g)
                topt = getattr(torch.optim, name)(tp, foreach=foreach, **kw)
                row[label] = _time(topt.step, repeats)
        except ImportError:
            pass
        rows.append((name, row))
    cols = list(rows[0][1])
    print(f"{'ms/step':10s}" + "".join(f"{c:>15s}" for c in cols))
    for name, row in rows:
        print(f"{name:10s}" + "".join(f"{row[c]:15.3f}" for c in cols))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    print("784-512-256-10 MLP (6 tensors, 535,818 values)")
    bench(n, MLP)
    print("200 tensors of 64 values")
    bench(max(1, n // 4), SMALL)
