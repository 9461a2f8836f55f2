"""The CPU's fused layer_norm kernel against torch, on the layouts it takes and those it
hands to numpy."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("shape,normalized", [((64, 33), (33,)), ((4, 5, 6), (5, 6)),
                                               ((1, 7), (7,))])
def test_layer_norm_kernel_matches_torch(dtype, affine, shape, normalized):
    r = np.random.default_rng(0)
    x = r.standard_normal(shape).astype(dtype) * 3 + 1
    w = r.standard_normal(normalized).astype(dtype) if affine in ("both", "weight") else None
    b = r.standard_normal(normalized).astype(dtype) if affine in ("both", "bias") else None

    def conv(lib, a):
        return None if a is None else lib.tensor(a)
    got = F.layer_norm(tl.tensor(x), normalized, conv(tl, w), conv(tl, b), eps=1e-5)
    want = torch.nn.functional.layer_norm(torch.tensor(x), normalized, conv(torch, w),
                                          conv(torch, b), eps=1e-5)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol * 10, atol=tol * 10)


def test_layer_norm_kernel_on_a_strided_input_uses_the_numpy_path():
    x = np.random.default_rng(1).standard_normal((8, 12)).astype(np.float32)
    got = F.layer_norm(tl.tensor(x).t(), (8,))
    want = torch.nn.functional.layer_norm(torch.tensor(x).t(), (8,))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
