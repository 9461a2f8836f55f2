"""The generated-code backends' scatter_add on long index lines (the sorted path: one stable
sort, then a binary search per output element) against the CPU and, bit for bit, against the
scanning path it replaces."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.codegen import primitives as P

DEVICES = [d for d in ("opencl", "cuda") if tl.backends.why_unavailable(d) is None]
pytestmark = pytest.mark.skipif(not DEVICES, reason="no OpenCL or CUDA device")


@pytest.fixture(params=DEVICES)
def gpu(request):
    return request.param


def _scatter(device, out_shape, dim, idx, src, dtype, transpose_out=False):
    out = tl.zeros(out_shape[::-1] if transpose_out else out_shape, dtype=dtype, device=device)
    out = out.t() if transpose_out else out
    index = idx if isinstance(idx, tl.Tensor) else tl.tensor(idx)
    out.scatter_add_(dim, index.to(device), tl.tensor(src, dtype=dtype, device=device))
    return out.cpu().numpy()


@pytest.mark.parametrize("dim", [0, 1, 2])
@pytest.mark.parametrize("dtype", [tl.float32, tl.int64])
def test_long_lines_match_the_cpu_and_the_scanning_path(gpu, dim, dtype, monkeypatch):
    rng = np.random.default_rng(dim)
    out_shape = (5, 70, 7)
    idx_shape = [4, 60, 6]
    idx_shape[dim] = 150                         # above SORTED_SCATTER_FROM: the sorted path
    idx = rng.integers(0, out_shape[dim], idx_shape)
    src = rng.standard_normal([160 if d == dim else (6, 80, 8)[d] for d in range(3)]) * 10
    got = _scatter(gpu, out_shape, dim, idx, src, dtype)
    np.testing.assert_allclose(got, _scatter("cpu", out_shape, dim, idx, src, dtype), rtol=1e-5,
                               atol=1e-4)
    monkeypatch.setattr(P, "SORTED_SCATTER_FROM", 1 << 30)
    np.testing.assert_array_equal(got, _scatter(gpu, out_shape, dim, idx, src, dtype))


def test_expanded_index_and_strided_output(gpu):
    rng = np.random.default_rng(7)
    idx = tl.tensor(rng.integers(0, 200, (300, 1))).expand(300, 3)
    src = rng.standard_normal((300, 3))
    got = _scatter(gpu, (200, 3), 0, idx, src, tl.float32, transpose_out=True)
    want = _scatter("cpu", (200, 3), 0, idx, src, tl.float32, transpose_out=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
