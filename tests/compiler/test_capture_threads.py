"""Compiled calls that record in several threads at once (tensorlib/compiler/capture.py). The
recorders are the process's and a capture takes them out at every graph break, so a second
thread's capture that began in such a gap used to leave a stale capture or delete the
backend's copy recorder twice; from then on every tensor made from host data raised
AttributeError, in whichever test ran next."""
import sys
import threading

import numpy as np

import tensorlib as tl
from tensorlib import _capture_state
from tensorlib._C.device import canonical
from tensorlib.compiler.capture import _Recorder


def _breaking(x):
    # item() ends a segment: the capture takes its recorders out and puts them back, the
    # window in which another thread's call used to start its own capture
    y = (x * 2).relu()
    scale = float(y.sum().item()) % 3.0 + 1.0
    return y * scale + tl.tensor([1.0, 2.0, 3.0, 4.0])


def _expected(x):
    y = np.maximum(x * 2, 0)
    return y * (float(y.sum()) % 3.0 + 1.0) + [1.0, 2.0, 3.0, 4.0]


def test_threads_recording_at_once_give_eager_values_and_leave_no_recorders():
    errors, wrong = [], []

    def work(seed):
        try:
            gen = np.random.default_rng(seed)
            for _ in range(30):
                g = tl.compile(_breaking)        # a fresh function: every call records
                x = gen.standard_normal(4).astype(np.float32)
                got = g(tl.from_numpy(x)).numpy()
                if not np.allclose(got, _expected(x), rtol=1e-4, atol=1e-4):
                    wrong.append((seed, got))
        except BaseException as exc:           # a thread's exception would pass unseen
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)        # the threads take turns inside each other's calls
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == [] and wrong == []
    cpu = canonical("cpu")
    assert _capture_state.current is None
    assert "copy_from_host" not in vars(cpu._backend)
    assert not any(isinstance(k, _Recorder) for k in cpu._kernels.values())
    np.testing.assert_array_equal(tl.tensor([1.0, 2.0]).numpy(), [1.0, 2.0])


def test_a_call_in_another_thread_while_one_records_runs_eagerly_and_right():
    started, proceed = threading.Event(), threading.Event()

    def slow(x):
        y = x + 1
        started.set()
        proceed.wait(10)
        return y * 2

    g_slow, g_other = tl.compile(slow), tl.compile(_breaking)
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("slow", g_slow(tl.ones(3))))
    worker.start()
    try:
        assert started.wait(10)
        x = np.arange(4, dtype=np.float32)
        for _ in range(3):      # records nothing while the worker's call holds the capture
            np.testing.assert_allclose(g_other(tl.from_numpy(x)).numpy(), _expected(x),
                                       rtol=1e-5)
    finally:
        proceed.set()
        worker.join(10)
    np.testing.assert_array_equal(out["slow"].numpy(), [4.0, 4.0, 4.0])
    assert _capture_state.current is None
