"""The host compiler's flags for the fused kernels (codegen.py): 512-bit vectors off AMD (gcc's
Intel AVX-512 tunings prefer 256-bit, which ran the compiled exp chain 1.3x slower), none of
it in a portable build; the values stay the eager ones (the width changes no result)."""
import numpy as np
import pytest

import tensorlib as tl

codegen = pytest.importorskip("tensorlib_cpu.codegen")


def test_wide_vectors_with_native_builds_off_amd(monkeypatch):
    monkeypatch.setattr(codegen.platform, "machine", lambda: "x86_64")
    monkeypatch.delenv("TENSORLIB_PORTABLE", raising=False)
    monkeypatch.setattr(codegen, "_WIDE_VECTORS", True)
    assert "-mprefer-vector-width=512" in codegen._flags()
    monkeypatch.setattr(codegen, "_WIDE_VECTORS", False)
    assert "-mprefer-vector-width=512" not in codegen._flags()
    monkeypatch.setattr(codegen, "_WIDE_VECTORS", True)
    monkeypatch.setenv("TENSORLIB_PORTABLE", "1")
    assert not any(f.startswith(("-march", "-mprefer")) for f in codegen._flags())


def test_chain_equals_eager_bit_for_bit():
    tl.manual_seed(0)
    x = tl.randn(100_003) * 4
    tl.compiler.reset()
    f = tl.compile(lambda t: (t * 2 + 1).relu().exp())
    np.testing.assert_array_equal(f(x).numpy(), (x * 2 + 1).relu().exp().numpy())
