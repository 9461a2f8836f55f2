"""Test configuration: the devices that per-device tests run on, a random test order on
request, and tensorlib's global state put back after every test.

TENSORLIB_TEST_DEVICES=cpu,opencl picks them; by default every available backend is used.
Tests for a device that is not available skip with the backend's reason.

`--random-order=SEED` (or `--random-order=random`) shuffles the modules, then the tests in each
module (a module's tests stay together, so its module-scoped fixtures are built once), and
prints the seed so a failing order can be replayed. It only reorders: no RNG is reseeded
(pytest-randomly reseeds Python's, numpy's and the test's RNGs, which would hide a test that
depends on RNG state another test left). Instead `_global_state` below puts back, after every
test, tensorlib's global switches and its default generator, numpy's and Python's global RNGs
and the environment, so each test starts from the same state whatever ran before it; the
tests that changed something are listed at the end (TENSORLIB_TEST_LEAKS=fail turns a leak
into a test error; TENSORLIB_TEST_LEAKS=keep lists leaks without putting anything back)."""
import os
import random
import sys

# The CPU backend's kernels follow the cores other processes leave free (cpu_load.py); tests
# compare results bitwise across runs, so they keep the configured thread count (the
# adaptive count is tested in tests/backends/cpu/test_cpu_load.py).
os.environ.setdefault("TENSORLIB_ADAPTIVE_THREADS", "0")

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None)
settings.load_profile("ci")

_LEAKS = []


def pytest_addoption(parser):
    parser.addoption("--random-order", default=None, metavar="SEED",
                     help="shuffle modules and the tests in each module with this seed "
                          "(an integer, or 'random' for a fresh one)")


def _order_seed(config):
    seed = config.getoption("--random-order")
    if seed is None:
        return None
    if seed == "random":
        if not hasattr(config, "_tensorlib_order_seed"):
            config._tensorlib_order_seed = random.SystemRandom().randrange(2 ** 31)
        return config._tensorlib_order_seed
    return int(seed)


def pytest_report_header(config):
    seed = _order_seed(config)
    if seed is not None:
        return f"random order: --random-order={seed}"


def pytest_collection_modifyitems(session, config, items):
    seed = _order_seed(config)
    if seed is None:
        return
    rng = random.Random(seed)
    modules = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    groups = list(modules.values())
    rng.shuffle(groups)
    for group in groups:
        rng.shuffle(group)
    items[:] = [item for group in groups for item in group]


def _devices():
    import tensorlib
    wanted = os.environ.get("TENSORLIB_TEST_DEVICES")
    if wanted:
        return [d.strip() for d in wanted.split(",") if d.strip()]
    return tensorlib.backends.available()


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", _devices())


@pytest.fixture(autouse=True)
def _skip_unavailable(request):
    device = request.node.callspec.params.get("device") if hasattr(request.node, "callspec") \
        else None
    if device is None:
        return
    import tensorlib
    reason = tensorlib.backends.why_unavailable(device.split(":")[0])
    if reason:
        pytest.skip(f"device {device} unavailable: {reason}")


def _switches():
    """(name, read, write) for every process-wide setting a test may change."""
    import tensorlib
    from tensorlib import backends, hub
    from tensorlib.autograd import anomaly_mode

    def attrs(obj, prefix, names):
        return [(f"{prefix}.{n}", lambda n=n: getattr(obj, n),
                 lambda v, n=n: setattr(obj, n, v)) for n in names]

    def deterministic(v):
        tensorlib.use_deterministic_algorithms(v[0], warn_only=v[1])

    def anomaly(v):
        anomaly_mode._enabled, anomaly_mode._check_nan = v
        anomaly_mode._sync()

    out = [
        ("default dtype", tensorlib.get_default_dtype, tensorlib.set_default_dtype),
        ("default device", tensorlib.get_default_device, tensorlib.set_default_device),
        ("grad mode", tensorlib.is_grad_enabled, tensorlib.set_grad_enabled),
        ("deterministic algorithms", lambda: (
            tensorlib.are_deterministic_algorithms_enabled(),
            tensorlib.is_deterministic_algorithms_warn_only_enabled()), deterministic),
        ("deterministic debug mode", tensorlib.get_deterministic_debug_mode,
         tensorlib.set_deterministic_debug_mode),
        ("float32 matmul precision", tensorlib.get_float32_matmul_precision,
         tensorlib.set_float32_matmul_precision),
        ("threads", tensorlib.get_num_threads, tensorlib.set_num_threads),
        ("cpu fallback", backends.cpu_fallback_enabled, backends.set_cpu_fallback),
        ("anomaly mode", lambda: (anomaly_mode._enabled, anomaly_mode._check_nan), anomaly),
        ("hub dir", lambda: hub._hub_dir, lambda v: setattr(hub, "_hub_dir", v)),
        ("autocast cache", tensorlib.is_autocast_cache_enabled,
         tensorlib.set_autocast_cache_enabled),
        ("random stream", tensorlib.random.get_stream, tensorlib.random.set_stream),
    ]
    for dev in ("cpu", "cuda"):
        out += [(f"autocast {dev}", lambda d=dev: tensorlib.is_autocast_enabled(d),
                 lambda v, d=dev: tensorlib.set_autocast_enabled(d, v)),
                (f"autocast dtype {dev}", lambda d=dev: tensorlib.get_autocast_dtype(d),
                 lambda v, d=dev: tensorlib.set_autocast_dtype(d, v))]
    from tensorlib.distributions import Distribution
    out += attrs(Distribution, "distributions validate_args", ["_validate_args"])
    if "torch" in sys.modules:   # the oracle's own switches (a parity test may flip them)
        torch = sys.modules["torch"]
        out += attrs(torch.distributions.Distribution, "torch distributions validate_args",
                     ["_validate_args"])
        out += [("torch default dtype", torch.get_default_dtype, torch.set_default_dtype),
                ("torch grad mode", torch.is_grad_enabled, torch.set_grad_enabled)]
    out += attrs(backends.cudnn, "backends.cudnn",
                 ["enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit"])
    out += attrs(backends.mkldnn, "backends.mkldnn", ["enabled", "deterministic"])
    out += attrs(backends.cuda.matmul, "backends.cuda.matmul",
                 ["allow_tf32", "allow_fp16_reduced_precision_reduction",
                  "allow_bf16_reduced_precision_reduction"])
    try:   # the CPU backend's library choices (tests switch them in-process)
        from tensorlib_cpu import gemm, onednn
    except ImportError:
        pass
    else:
        from tensorlib_cpu import fastreduce
        out += [("oneDNN in use", lambda: onednn.library() is not None, onednn.use),
                ("BLAS library", lambda: gemm.LIBRARY, gemm.use_blas),
                ("adaptive threads", lambda: fastreduce._sampler.enabled,
                 fastreduce.use_adaptive_threads)]
    for kind in ("flash", "mem_efficient", "math", "cudnn"):
        out.append((f"{kind} sdp", getattr(backends.cuda, f"{kind}_sdp_enabled"),
                    getattr(backends.cuda, f"enable_{kind}_sdp")))
    return out


@pytest.fixture
def pytorch_stream():
    """The test draws from PyTorch's CPU random stream (tensorlib.random.set_stream); the
    stream and the generator state are put back afterwards."""
    import tensorlib
    import tensorlib.random as tl_random
    saved = tensorlib.get_rng_state()
    previous = tl_random.set_stream("pytorch")
    try:
        yield
    finally:
        tl_random.set_stream(previous)
        tensorlib.set_rng_state(saved)


def _rngs():
    """(name, read, write, equal) for the global random generators."""
    import tensorlib
    same_tensor = lambda a, b: bool((a == b).all().item())   # noqa: E731
    return [
        ("tensorlib RNG", tensorlib.get_rng_state, tensorlib.set_rng_state, same_tensor),
        ("numpy RNG", np.random.get_state, np.random.set_state,
         lambda a, b: a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]),
        ("random RNG", random.getstate, random.setstate, lambda a, b: a == b),
    ]


_IMPORT_SET = ("TORCH", "PYOPENCL")


def _environ():
    """os.environ less the variable pytest itself sets for each test."""
    return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


@pytest.fixture(autouse=True)
def _global_state(request):
    """Puts back, after the test, every global setting and generator state it changed."""
    switches, rngs = _switches(), _rngs()
    before = [read() for _, read, _ in switches]
    rng_before = [read() for _, read, _, _ in rngs]
    environ = _environ()
    yield
    keep = os.environ.get("TENSORLIB_TEST_LEAKS") == "keep"   # to find what a leak breaks
    changed = []
    for (name, read, write), old in zip(switches, before):
        if read() != old:
            changed.append(name)
            if not keep:
                write(old)
    for (name, read, write, equal), old in zip(rngs, rng_before):
        if not equal(read(), old) and not keep:
            write(old)   # not a leak: the next test starts from the same state regardless
    now = _environ()
    if now != environ:
        # torch and pyopencl set their own variables when first imported: not a test's doing
        keys = sorted(k for k in set(environ) | set(now) if environ.get(k) != now.get(k)
                      and not (k not in environ and k.startswith(_IMPORT_SET)))
        if keys:
            changed.append("environment: " + ", ".join(keys))
        for k in keys if not keep else ():
            if k in environ:
                os.environ[k] = environ[k]
            else:
                del os.environ[k]
    if changed:
        _LEAKS.append((request.node.nodeid, changed))
        if os.environ.get("TENSORLIB_TEST_LEAKS") == "fail":
            pytest.fail("left global state changed: " + "; ".join(changed), pytrace=False)


def pytest_terminal_summary(terminalreporter):
    seed = _order_seed(terminalreporter.config)
    if seed is not None:
        terminalreporter.write_line(f"random order: --random-order={seed}")
    if _LEAKS:
        terminalreporter.section("tests that left global state changed (put back)")
        for nodeid, changed in _LEAKS:
            terminalreporter.write_line(f"{nodeid}: {'; '.join(changed)}")
