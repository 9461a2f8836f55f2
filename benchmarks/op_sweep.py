"""Times ~150 everyday ops with tensorlib and with PyTorch, each library in its own process,
and prints them slowest-first as ratios (PyTorch time / tensorlib time: below 1, tensorlib is
slower). The bench rows (`tensorlib-bench`) cover models and a few hot ops; this sweep finds
the op a program stops on because nobody timed it.

    python benchmarks/op_sweep.py                    # 1M floats (1024x1024), forward
    python benchmarks/op_sweep.py --size 16          # 16 floats: the per-call overhead
    python benchmarks/op_sweep.py --backward         # forward and backward
    python benchmarks/op_sweep.py --only topk,sort   # some ops

tensorlib runs the sweep through `python -m tensorlib.torch_compat`, i.e. as `torch`; each op
is timed best-of-many over 0.25 s after two warm-up calls. Needs torch installed."""
import argparse
import json
import subprocess
import sys
import time


def _cases(torch, n):
    """{name: (fn(a) -> tensor, differentiable)} on `a`, a (n // 1024, 1024) float32 tensor
    (one row of n for n < 1024), and the module-level tensors below."""
    F = torch.nn.functional
    rows, cols = (n // 1024, 1024) if n >= 1024 else (1, n)
    torch.manual_seed(0)
    y = torch.randn(rows, cols)
    p = torch.rand(rows, cols) * 0.98 + 0.01
    idx = torch.randint(0, rows, (rows,))
    tokens = torch.randint(0, 1000, (rows, 16))
    table = torch.randn(1000, 64)
    img = torch.randn(max(1, rows // 128), 16, 32, 32)
    # `a` as N x 64 x 32 x 32 images (one 1 x 1 x 2 x n/2 plane below 64K elements: reflect
    # pads need two rows), and a per-channel affine
    ch = 64 if n % 65536 == 0 else 1
    chw, chb = torch.randn(ch), torch.randn(ch)

    def nchw(a):
        return a.view(-1, ch, 32, 32) if ch == 64 else a.view(1, 1, 2, -1)
    return {
        # activations
        "relu": (F.relu, True), "gelu": (F.gelu, True),
        "gelu_tanh": (lambda a: F.gelu(a, approximate="tanh"), True),
        "silu": (F.silu, True), "sigmoid": (torch.sigmoid, True), "tanh": (torch.tanh, True),
        "softplus": (F.softplus, True), "mish": (F.mish, True), "elu": (F.elu, True),
        "selu": (F.selu, True), "celu": (F.celu, True),
        "leaky_relu": (lambda a: F.leaky_relu(a, 0.1), True), "hardswish": (F.hardswish, True),
        "hardsigmoid": (F.hardsigmoid, True), "hardtanh": (F.hardtanh, True),
        "relu6": (F.relu6, True), "logsigmoid": (F.logsigmoid, True),
        "softsign": (F.softsign, True), "tanhshrink": (F.tanhshrink, True),
        # normalization, softmax
        "softmax": (lambda a: F.softmax(a, -1), True),
        "log_softmax": (lambda a: F.log_softmax(a, -1), True),
        "softmax_dim0": (lambda a: F.softmax(a, 0), True),
        "log_softmax_dim0": (lambda a: F.log_softmax(a, 0), True),
        "softmax_3d_dim1": (lambda a: F.softmax(a.view(max(1, rows // 128), -1, cols), 1), True),
        "layer_norm": (lambda a: F.layer_norm(a, a.shape[-1:]), True),
        "rms_norm": (lambda a: F.rms_norm(a, a.shape[-1:]), True),
        "normalize": (lambda a: F.normalize(a, dim=-1), True),
        "group_norm": (lambda a: F.group_norm(img, 4), False),
        "group_norm_affine": (lambda a: F.group_norm(nchw(a), min(ch, 8), chw, chb), True),
        # pointwise
        "exp": (torch.exp, True), "log": (lambda a: torch.log(a.abs() + 1), True),
        "sqrt": (lambda a: a.abs().sqrt(), True), "rsqrt": (lambda a: (a.abs() + 1).rsqrt(), True),
        "sin": (torch.sin, True), "erf": (torch.erf, True), "expm1": (torch.expm1, True),
        "abs": (torch.abs, True), "neg": (torch.neg, True), "square": (torch.square, True),
        "pow2": (lambda a: a ** 2, True), "pow3": (lambda a: a.pow(3), True),
        "pow1.7": (lambda a: a.abs().pow(1.7), True), "clamp": (lambda a: a.clamp(-1, 1), True),
        "sign": (torch.sign, False), "round": (torch.round, False),
        "nan_to_num": (torch.nan_to_num, False), "fmod": (lambda a: torch.fmod(a, 0.7), True),
        "remainder": (lambda a: torch.remainder(a, 0.7), True),
        "atan2": (lambda a: torch.atan2(a, y), True), "add": (lambda a: a + y, True),
        "mul": (lambda a: a * y, True), "div": (lambda a: a / (y.abs() + 1), True),
        "addcmul": (lambda a: torch.addcmul(a, a, y, value=0.5), True),
        "lerp": (lambda a: torch.lerp(a, y, 0.3), True),
        "maximum": (lambda a: torch.maximum(a, y), True),
        "where": (lambda a: torch.where(a > 0, a, y), True),
        "masked_fill": (lambda a: a.masked_fill(a > 0, 0.0), True),
        "eq": (lambda a: a == y, False), "isfinite": (torch.isfinite, False),
        "to_half": (lambda a: a.half(), False), "to_double": (lambda a: a.double(), True),
        # losses
        "mse": (lambda a: F.mse_loss(a, y), True), "l1": (lambda a: F.l1_loss(a, y), True),
        "smooth_l1": (lambda a: F.smooth_l1_loss(a, y), True),
        "huber": (lambda a: F.huber_loss(a, y), True),
        "bce": (lambda a: F.binary_cross_entropy(torch.sigmoid(a), p), True),
        "bce_logits": (lambda a: F.binary_cross_entropy_with_logits(a, p), True),
        "cross_entropy": (lambda a: F.cross_entropy(a, torch.zeros(rows, dtype=torch.long)),
                          True),
        # reductions, scans, sorting
        "sum": (lambda a: a.sum(), True), "mean_-1": (lambda a: a.mean(-1), True),
        "var_-1": (lambda a: a.var(-1), True), "std": (lambda a: a.std(), True),
        "amax_-1": (lambda a: a.amax(-1), True), "argmax_-1": (lambda a: a.argmax(-1), False),
        "norm": (lambda a: a.norm(), True), "logsumexp": (lambda a: a.logsumexp(-1), True),
        "norm_dim1": (lambda a: a.norm(dim=1), True),
        "vector_norm": (lambda a: torch.linalg.vector_norm(a), True),
        "cumsum": (lambda a: a.cumsum(-1), True), "cumprod": (lambda a: a.cumprod(-1), True),
        "sort": (lambda a: a.sort(-1).values, False), "topk": (lambda a: a.topk(5, -1).values,
                                                             False),
        "median": (lambda a: a.median(-1).values, False), "any": (lambda a: (a > 5).any(), False),
        # shape, copy, indexing
        "clone": (lambda a: a.clone(), True), "transpose_contig": (lambda a: a.t().contiguous(),
                                                                  True),
        "expand_contig": (lambda a: a[:, :1].expand(rows, cols).contiguous(), True),
        "cat": (lambda a: torch.cat([a, y], 0), True), "stack": (lambda a: torch.stack([a, y]),
                                                                True),
        "flip": (lambda a: a.flip(1), True), "tril": (lambda a: a.tril(), True),
        "pad": (lambda a: F.pad(a, (1, 1, 2, 2)), True),
        "pad_nchw": (lambda a: F.pad(nchw(a), (1, 1, 1, 1)), True),
        "pad_reflect": (lambda a: F.pad(nchw(a), (1, 1, 1, 1), mode="reflect"), True),
        "pad_replicate": (lambda a: F.pad(nchw(a), (1, 1, 1, 1), mode="replicate"), True),
        "flip0": (lambda a: a.flip(0), True), "flip01": (lambda a: a.flip(0, 1), True),
        "index_select": (lambda a: a.index_select(0, idx), True),
        "getitem_index": (lambda a: a[idx], True), "getitem_mask": (lambda a: a[a > 0], True),
        "nonzero": (lambda a: (a > 0).nonzero(), False),
        "where_tuple": (lambda a: torch.where(a > 0)[0], False),
        "gather": (lambda a: a.gather(1, torch.zeros(rows, 8, dtype=torch.long)), True),
        "embedding": (lambda a: F.embedding(tokens, table), False),
        "adaptive_avg_pool": (lambda a: F.adaptive_avg_pool2d(img, 1), False),
        "randn": (lambda a: torch.randn(rows, cols), False),
    }


def _child(args):
    import torch
    cases = _cases(torch, args.size)
    x = torch.randn(*((args.size // 1024, 1024) if args.size >= 1024 else (1, args.size)))
    only = set(args.only.split(",")) if args.only else None
    times = {}
    for name, (fn, differentiable) in cases.items():
        if only and name not in only or args.backward and not differentiable:
            continue
        try:
            if args.backward:
                a = x.clone().requires_grad_(True)

                def call(fn=fn, a=a):
                    out = fn(a)
                    (out.sum() if out.dim() else out).backward()
                    a.grad = None
            else:
                def call(fn=fn):
                    fn(x)
            call()
            call()
            best, end, count = float("inf"), time.perf_counter() + 0.25, 0
            while time.perf_counter() < end or count < 5:
                began = time.perf_counter()
                call()
                best = min(best, time.perf_counter() - began)
                count += 1
            times[name] = best
        except Exception as exc:             # reported, not fatal: the other ops still run
            times[name] = f"{type(exc).__name__}: {str(exc)[:80]}"
    json.dump(times, sys.stdout)


def _run(library, argv):
    prefix = [sys.executable, "-m", "tensorlib.torch_compat"] if library == "tensorlib" else \
        [sys.executable]
    done = subprocess.run(prefix + [__file__, "--child"] + argv, capture_output=True,
                          text=True)
    if done.returncode:
        raise SystemExit(f"{library}'s sweep failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 20, help="elements of the input")
    parser.add_argument("--backward", action="store_true", help="time forward + backward")
    parser.add_argument("--only", default="", help="comma-separated op names")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child(args)
    argv = ["--size", str(args.size)] + (["--backward"] if args.backward else []) + \
        (["--only", args.only] if args.only else [])
    ours, theirs = _run("tensorlib", argv), _run("torch", argv)
    rows = []
    for name, t in theirs.items():
        o = ours.get(name)
        if isinstance(o, str) or isinstance(t, str):
            print(f"{name:18s} tensorlib: {o}  torch: {t}")
            continue
        rows.append((t / o, name, o, t))
    print(f"{'op':18s} {'tensorlib':>12s} {'torch':>12s}  torch/tensorlib")
    for ratio, name, o, t in sorted(rows):
        print(f"{name:18s} {o * 1e6:10.1f}us {t * 1e6:10.1f}us  {ratio:6.2f}x")


if __name__ == "__main__":
    main()
