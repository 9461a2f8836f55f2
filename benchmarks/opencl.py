"""OpenCL backend throughput beside numpy, measured in the same run.

    python benchmarks/opencl.py [--device opencl:0] [--repeats 5] [--sizes 256 1024]

GEMM: float32 (n x n) @ (n x n), GFLOP/s = 2n^3 / time, numpy (its BLAS) vs tensorlib on the
device (one batched GEMM launch, synchronized). Elementwise: a + b and (x * 2 + 1).exp() on
16M float32, GB/s counted as bytes read + written. Best of --repeats, after one warm-up call
(which also compiles, or loads from the kernel cache)."""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _best(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="opencl:0")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--elements", type=int, default=1 << 24)
    args = parser.parse_args(argv)

    import tensorlib as tl
    import tensorlib.opencl  # noqa: F401
    dev = tl.device(args.device)
    sync = tl.opencl.synchronize
    print(f"device: {args.device} = {tl.opencl.get_device_name(dev.index or 0)}")
    rows = []
    r = np.random.default_rng(0)
    for n in args.sizes:
        a, b = (r.standard_normal((n, n)).astype(np.float32) for _ in "ab")
        ta, tb = tl.tensor(a, device=dev), tl.tensor(b, device=dev)
        t_np = _best(lambda: a @ b, args.repeats)

        def run():
            ta @ tb
            sync()
        t_cl = _best(run, args.repeats)
        flop = 2.0 * n ** 3
        rows.append((f"matmul {n}x{n} GFLOP/s", flop / t_np / 1e9, flop / t_cl / 1e9))
    n = args.elements
    x, y = (r.standard_normal(n).astype(np.float32) for _ in "xy")
    tx, ty = tl.tensor(x, device=dev), tl.tensor(y, device=dev)
    out = np.empty_like(x)
    t_np = _best(lambda: np.add(x, y, out=out), args.repeats)

    def add():
        tx + ty
        sync()
    t_cl = _best(add, args.repeats)
    rows.append((f"add {n >> 20}M GB/s", 12 * n / t_np / 1e9, 12 * n / t_cl / 1e9))
    t_np = _best(lambda: np.exp(x * 2 + 1), args.repeats)

    def chain():
        (tx * 2 + 1).exp()
        sync()
    t_cl = _best(chain, args.repeats)
    rows.append((f"(x*2+1).exp() {n >> 20}M GB/s", 24 * n / t_np / 1e9, 24 * n / t_cl / 1e9))
    print(f"{'workload':32s} {'numpy':>10s} {'opencl':>10s} {'opencl/numpy':>13s}")
    for name, v_np, v_cl in rows:
        print(f"{name:32s} {v_np:10.2f} {v_cl:10.2f} {v_cl / v_np:12.2f}x")
    return rows


if __name__ == "__main__":
    main()
