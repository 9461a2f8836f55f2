"""erfcx, airy_ai, bessel_y0/y1 and the modified_bessel_k family against scipy (torch's own
airy_ai and bessel_y0/y1 are off by up to ~3e-6) and torch (edge values, dtypes, errors,
which functions record a graph), on every test device."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")
sp = pytest.importorskip("scipy.special")

GRID = np.concatenate([np.linspace(-40.0, 40.0, 321), np.geomspace(1e-5, 150.0, 60),
                       [2.0, 12.0, 25.0, -8.0, 1.999, 2.001, 11.999, 24.999, -7.999]])
EDGES = [0.0, -0.0, -1.0, float("inf"), float("-inf"), float("nan"), 120.0]

# name, scipy reference, absolute tolerance in float64 (series cancellation: module docstring)
CASES = [
    ("erfcx", sp.erfcx, 0.0),
    ("airy_ai", lambda x: sp.airy(x)[0], 1e-10),
    ("bessel_y0", sp.y0, 1e-10),
    ("bessel_y1", sp.y1, 1e-10),
    ("modified_bessel_k0", sp.k0, 0.0),
    ("modified_bessel_k1", sp.k1, 0.0),
    ("scaled_modified_bessel_k0", sp.k0e, 0.0),
    ("scaled_modified_bessel_k1", sp.k1e, 0.0),
]
NAMES = [c[0] for c in CASES]


@pytest.mark.parametrize("name,ref,atol", CASES, ids=NAMES)
def test_against_scipy_float64(device, name, ref, atol):
    x = GRID
    out = getattr(tl.special, name)(tl.tensor(x, dtype=tl.float64, device=device))
    expected = ref(x)
    finite = np.isfinite(expected)
    np.testing.assert_allclose(out.cpu().numpy()[finite], expected[finite], rtol=1e-12,
                               atol=atol)


@pytest.mark.parametrize("name", NAMES)
def test_against_torch_float32_and_edges(device, name):
    x = np.concatenate([np.linspace(-20.0, 20.0, 81), EDGES])
    for dtype in ("float32", "float64"):
        ours = getattr(tl.special, name)(tl.tensor(x, dtype=getattr(tl, dtype), device=device))
        theirs = getattr(torch.special, name)(torch.tensor(x, dtype=getattr(torch, dtype)))
        assert str(ours.dtype) == str(theirs.dtype).replace("torch", "tensorlib")
        # torch's float32 is itself ~1e-6 off for airy_ai / bessel_y*
        np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-5, atol=3e-6)


@pytest.mark.parametrize("name", NAMES)
def test_integers_promote_and_half_raises(name):
    fn = getattr(tl.special, name)
    assert fn(tl.tensor([1, 2])).dtype == tl.float32
    with pytest.raises(NotImplementedError, match=name):
        fn(tl.ones(2, dtype=tl.float16))


@pytest.mark.parametrize("name", [n for n in NAMES if n != "erfcx"])
def test_no_graph_as_torch(name):
    x = tl.tensor([0.5, 3.0], requires_grad=True)
    assert not getattr(tl.special, name)(x).requires_grad


def test_erfcx_gradient(device):
    values = [-3.0, -0.5, 0.0, 0.7, 4.0, 30.0]
    x = tl.tensor(values, dtype=tl.float64, device=device, requires_grad=True)
    tl.special.erfcx(x).sum().backward()
    xt = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    torch.special.erfcx(xt).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_out_argument():
    out = tl.empty(3, dtype=tl.float64)
    tl.special.modified_bessel_k0(tl.tensor([1.0, 2.0, 3.0]), out=out)
    np.testing.assert_allclose(out.numpy(), sp.k0([1.0, 2.0, 3.0]), rtol=1e-6)
