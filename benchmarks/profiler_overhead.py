"""What tensorlib.profiler costs on the small-op benchmark (`a + b` on 4 elements): with no
profile recording (before any, and after each one stopped: nothing may stay on the kernel
path) and inside one, on the CPU (CPU activity) and on opencl (CPU + PrivateUse1: every
kernel timed on the device through the profiling queue), with torch's CPU profiler beside.

    python benchmarks/profiler_overhead.py [--rounds 12]

Rounds alternate no-profile and profiled timings in one process; each figure is the best
round (the machines are shared and noisy)."""
import argparse
import time

import tensorlib
from tensorlib.profiler import ProfilerActivity, profile


def _per_op_us(add, a, b, n, sync):
    start = time.perf_counter_ns()
    for _ in range(n):
        add(a, b)
    sync()
    return (time.perf_counter_ns() - start) / n / 1000


def _measure(make, profiler, n, rounds, sync=lambda: None):
    """(best µs/op with no profile, best µs/op inside one)."""
    a, b = make(), make()
    add = type(a).__add__
    for _ in range(3):
        _per_op_us(add, a, b, n, sync)
    plain, profiled = [], []
    for _ in range(rounds):
        plain.append(_per_op_us(add, a, b, n, sync))
        with profiler():
            profiled.append(_per_op_us(add, a, b, n, sync))
    return min(plain), min(profiled)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    rows = [("tensorlib cpu", *_measure(lambda: tensorlib.randn(4), lambda: profile(
        activities=[ProfilerActivity.CPU]), 20000, args.rounds))]
    if tensorlib.opencl.is_available():
        rows.append(("tensorlib opencl", *_measure(
            lambda: tensorlib.randn(4, device="opencl"),
            lambda: profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]),
            2000, args.rounds, tensorlib.opencl.synchronize)))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        rows.append(("torch cpu", *_measure(lambda: torch.randn(4), lambda: torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU]), 20000, args.rounds)))
    print(f"{'a + b, 4 elements':<18} {'no profile us':>14} {'profiled us':>12} {'ratio':>7}")
    for name, plain, profiled in rows:
        print(f"{name:<18} {plain:>14.2f} {profiled:>12.2f} {profiled / plain:>6.2f}x")


if __name__ == "__main__":
    main()
