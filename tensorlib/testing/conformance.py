"""The backend conformance suite: every primitive of ``tensorlib.backends.interface.PRIMITIVES``
checked against a numpy float64 oracle on every memory layout a kernel must accept.

A plugin author runs it from their own tests::

    from tensorlib.testing.conformance import ConformanceSuite

    class TestToy(ConformanceSuite):
        device = "toy"                     # or "toy:1"
        skip_ops = {"sort": "not written yet"}   # known gaps: reported as skips

or ``globals().update(conformance_tests("toy"))``. A primitive the backend lacks and that
skip_ops does not name fails with a message naming it. Each test runs all of its cases (layout
x dtype x output layout) and reports every failing one with expected and actual values. Each optional
composite kernel (``COMPOSITES``) the backend registers is compared with the framework's
reference path (``tensorlib.testing.composites``).

Inputs are made on the host with numpy, moved with ``tensorlib.tensor(a).to(device)`` and
viewed on the device; outputs are read back with ``.cpu()``. Output buffers are larger than the
view the kernel gets, so a write outside the view is caught. The semantics live in
``tensorlib.testing.oracle``, the layouts in ``tensorlib.testing.layouts`` and the cases of
each primitive family in ``tensorlib.testing._cases``.
"""
import numpy as np
import pytest

import tensorlib
from tensorlib._C.device import canonical
from tensorlib.backends.interface import COMPOSITES, PRIMITIVES
from tensorlib.testing import oracle as O
from tensorlib.testing._cases import CASES
from tensorlib.testing.layouts import Out, check, put

__all__ = ["ConformanceSuite", "conformance_tests"]


def _run(header, cases, detailed=3, listed=30):
    """Run every case; fail once, with the first few failures in full and the rest by label."""
    failures, total = [], 0
    for label, run in cases:
        total += 1
        try:
            run()
        except Exception as exc:           # a wrong value and a crash are both a failure
            failures.append((label, f"{type(exc).__name__}: {str(exc).strip()}"[:1500]))
    if failures:
        lines = [f"{header}: {len(failures)} of {total} cases failed"]
        for label, text in failures[:detailed]:
            lines += [f"--- [{label}]", "    " + text.replace("\n", "\n    ")]
        rest = [label for label, _ in failures[detailed:]]
        if rest:
            lines.append("--- also failing: " + "; ".join(rest[:listed])
                         + (f"; ... ({len(rest) - listed} more)" if len(rest) > listed else ""))
        pytest.fail("\n".join(lines), pytrace=False)


class ConformanceSuite:
    """Subclass with `device` set (a name pytest collects, e.g. ``TestMyBackend``)."""

    device = None
    skip_ops = {}          # op -> reason, or a set of ops: declared gaps, shown as skips
    rtol = 1e-5            # float32 results against the float64 oracle
    atol = 1e-6

    # -- helpers --
    def _dev(self):
        if self.device is None:
            pytest.fail("set `device` on the ConformanceSuite subclass", pytrace=False)
        return canonical(self.device)

    def _backend(self):
        return self._dev()._backend

    def _skip_reason(self, op):
        if op in self.skip_ops:
            reason = self.skip_ops[op] if isinstance(self.skip_ops, dict) else None
            return reason or "declared in skip_ops"
        return None

    def _kernel(self, op):
        reason = self._skip_reason(op)
        if reason is not None:
            pytest.skip(f"{op}: {reason}")
        dev = self._dev()
        kernel = dev._kernels.get(op)
        if kernel is None:
            pytest.fail(f"the '{dev.type}' backend does not implement the primitive '{op}' "
                        f"({PRIMITIVES[op]}). Register it in register(), or name it in "
                        f"skip_ops to declare the gap.", pytrace=False)
        return kernel

    # -- the primitives --
    def test_all_primitives_implemented(self):
        dev = self._dev()
        missing = sorted(op for op in PRIMITIVES
                         if op not in dev._kernels and self._skip_reason(op) is None)
        assert not missing, (f"the '{dev.type}' backend lacks {len(missing)} primitive(s): "
                             f"{', '.join(missing)}")

    @pytest.mark.parametrize("op", sorted(PRIMITIVES))
    def test_primitive(self, op):
        kernel = self._kernel(op)
        _run(f"'{op}' on {self._dev()}", CASES[op](self, kernel, op))

    # -- the optional composite kernels --
    @pytest.mark.parametrize("name", sorted(COMPOSITES))
    def test_composite(self, name):
        """A composite the backend registers gives what the framework's reference path gives
        (skipped for the composites it leaves to that path)."""
        from tensorlib.testing.composites import NO_REFERENCE, compare_with_reference
        dev = self._dev()
        if name not in dev._kernels:
            pytest.skip(f"{name}: not registered (the reference path runs)")
        if name in NO_REFERENCE:
            pytest.skip(f"{name}: no reference path to compare with")
        compare_with_reference(name, str(dev))

    # -- the backend object --
    def test_available(self):
        backend = self._backend()
        assert backend.is_available() and backend.unavailable_reason() is None

    def test_device_count(self):
        count = self._backend().device_count()
        assert isinstance(count, int) and count >= 1

    def test_allocate(self):
        dev = self._dev()
        for nbytes in (0, 1, 64, 4096):
            assert dev._backend.allocate(nbytes, dev.index) is not None

    @pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
    def test_host_round_trip(self, dtype):
        """copy_from_host into, and copy_to_host out of, views of every layout."""
        dev = self._dev()
        backend = dev._backend
        x = O.values(O.rng(), (4, 5), dtype)
        cases = []
        for layout in ("contiguous", "strided", "transposed", "offset"):
            def run(layout=layout):
                out = Out(x.shape, dtype, layout, dev)
                backend.copy_from_host(out.tensor, np.ascontiguousarray(x))
                check(out.read(), x)
                t, v = put(x, layout, dev)
                host = backend.copy_to_host(t)
                assert host.flags.c_contiguous, "copy_to_host must give a C-contiguous array"
                check(np.asarray(host).reshape(v.shape), v)
            cases.append((layout, run))
        _run(f"host copies on {dev}", cases)

    def test_synchronize(self):
        dev = self._dev()
        x = tensorlib.tensor(np.arange(6, dtype=np.float32)).to(dev)
        dev._backend.synchronize()
        dev._backend.synchronize(dev.index)
        check(x.cpu().numpy(), np.arange(6))

    def test_between_devices(self):
        dev = self._dev()
        if dev.index is None or dev._backend.device_count() < 2:
            pytest.skip("one device")
        other = canonical(f"{dev.type}:{1 if dev.index == 0 else 0}")
        t, v = put(O.values(O.rng(), (4, 5), O.F32), "transposed", dev)
        moved = t.to(other)
        assert moved.device == other
        check(moved.cpu().numpy(), v)


def conformance_tests(device, skip_ops=None, **attrs):
    """{name: a ConformanceSuite subclass for `device`}, for ``globals().update(...)``."""
    name = "TestConformance_" + "".join(c if c.isalnum() else "_" for c in str(device))
    if skip_ops is not None and not isinstance(skip_ops, dict):
        skip_ops = dict.fromkeys(skip_ops, "declared in skip_ops")
    body = {"device": device, "skip_ops": skip_ops or {}, **attrs}
    return {name: type(name, (ConformanceSuite,), body)}
