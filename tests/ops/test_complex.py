"""Complex dtypes against torch: dtypes and promotion, creation, printing, the complex-only
ops (real/imag/conj/angle/abs/polar/view_as_real/view_as_complex), elementwise math,
matmul and reductions; non-CPU devices raise clearly (complex autograd:
tests/autograd/test_complex_autograd.py)."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(5)
Z = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex128)
W = (RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2))).astype(np.complex64)


def same(ours, theirs, rtol=1e-6):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=1e-6)


def test_dtypes_and_aliases():
    assert tl.cfloat is tl.complex64 and tl.cdouble is tl.complex128
    assert tl.complex64.is_complex and not tl.complex64.is_floating_point
    assert not tl.float32.is_complex
    assert tl.complex128.itemsize == 16


@pytest.mark.parametrize("a,b", [("complex64", "float64"), ("complex64", "complex128"),
                                 ("float16", "complex64"), ("int64", "complex64"),
                                 ("bool", "complex128"), ("bfloat16", "complex64")])
def test_promote_types_matches_torch(a, b):
    ours = tl.promote_types(getattr(tl, a), getattr(tl, b))
    theirs = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert ours.name == str(theirs).split(".")[-1]


def test_result_type_with_python_complex_and_zero_dim():
    for lhs, rhs in [(tl.ones(2), 1j), (tl.ones(2, dtype=tl.float64), 2j),
                     (tl.ones(2, dtype=tl.complex64), tl.tensor(1.0, dtype=tl.float64)),
                     (tl.arange(3), 1 + 1j)]:
        ours = (lhs + rhs).dtype
        t_lhs = torch.tensor(lhs.numpy())
        t_rhs = torch.tensor(rhs.numpy()) if isinstance(rhs, tl.Tensor) else rhs
        assert ours.name == str((t_lhs + t_rhs).dtype).split(".")[-1]


def test_creation_from_python_and_numpy():
    same(tl.tensor([1 + 2j, 3.5]), torch.tensor([1 + 2j, 3.5]))
    same(tl.tensor(Z), torch.tensor(Z))
    same(tl.from_numpy(W), torch.from_numpy(W))
    assert tl.tensor([1j]).item() == 1j
    assert tl.zeros(2, dtype=tl.cfloat).dtype is tl.complex64


def test_printing_like_torch():
    assert repr(tl.tensor([1 + 2j, 3 - 1j])) == "tensor([1.+2.j, 3.-1.j])"
    assert repr(tl.tensor([1.5 + 2j], dtype=tl.complex128)) == \
        repr(torch.tensor([1.5 + 2j], dtype=torch.complex128)).replace("torch", "tensorlib")


def test_parts_and_views():
    z, tz = tl.tensor(Z), torch.tensor(Z)
    same(z.real, tz.real)
    same(z.imag, tz.imag)
    same(tl.real(z), torch.real(tz))
    same(tl.view_as_real(z), torch.view_as_real(tz))
    same(tl.view_as_complex(tl.view_as_real(z)), tz)
    same(z.conj(), tz.conj().resolve_conj())
    same(tl.angle(z), torch.angle(tz))
    same(z.abs(), tz.abs())
    same(abs(z), abs(tz))
    r = tl.tensor(np.array([-1.0, 0.0, 2.0]))
    same(tl.angle(r), torch.angle(torch.tensor([-1.0, 0.0, 2.0], dtype=torch.float64)))
    same(tl.polar(tl.tensor([2.0]), tl.tensor([0.5])),
         torch.polar(torch.tensor([2.0]), torch.tensor([0.5])))
    same(tl.complex(tl.tensor([1.0, 2.0]), tl.tensor([3.0])),
         torch.complex(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 3.0])))
    view = tl.view_as_real(z)                 # writes through the view reach z
    view[0, 0, 1] = 7.0
    assert z[0, 0].item().imag == 7.0


def test_view_errors_match_torch():
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        tl.view_as_real(tl.ones(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        tl.view_as_complex(tl.ones(3))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        tl.view_as_complex(tl.ones(2, 4).t())
    with pytest.raises(RuntimeError, match="non-complex"):
        tl.ones(2).imag


def test_elementwise_matmul_and_reductions():
    z, tz = tl.tensor(Z), torch.tensor(Z)
    w, tw = tl.tensor(W), torch.tensor(W)
    same(z * z + 2j * z - z / (z + 1), tz * tz + 2j * tz - tz / (tz + 1))
    same(z.exp() + z.sqrt() + z.log() + z.sin() + z.cos() + z.tanh(),
         tz.exp() + tz.sqrt() + tz.log() + tz.sin() + tz.cos() + tz.tanh())
    same(z * 2.0 - 1, tz * 2.0 - 1)
    same(z @ w.to(tl.complex128), tz @ tw.to(torch.complex128))
    same(w.t() @ w, tw.t() @ tw, rtol=1e-5)
    same(z.sum(), tz.sum())
    same(z.sum(0), tz.sum(0))
    same(z.mean(1), tz.mean(1))
    same(z.prod(1), tz.prod(1))
    assert bool((z == z).all())
    same(z.to(tl.complex64), tz.to(torch.complex64))
    same(tl.tensor([1.0, 2.0]).to(tl.complex64), torch.tensor([1.0, 2.0]).to(torch.complex64))


def test_non_cpu_devices_raise(device):
    if tl.device(device).type == "cpu":
        assert tl.ones(2, dtype=tl.complex64, device=device).dtype is tl.complex64
        return
    with pytest.raises(RuntimeError, match=r"complex tensors \(complex64\) are only supported"):
        tl.ones(2, dtype=tl.complex64, device=device)
    x = tl.ones(2, 2, device=device)
    for op, dtype, call in [
            ("to", "complex128", lambda: tl.tensor(Z).to(device)),
            ("to", "complex64", lambda: x.to(tl.complex64)),
            ("mul", "complex64", lambda: x * 1j),
            ("add", "complex64", lambda: x + tl.tensor(1j)),
            ("view_as_complex", "complex64", lambda: tl.view_as_complex(x)),
            ("complex", "complex64", lambda: tl.complex(x, x)),
            ("polar", "complex64", lambda: tl.polar(x, x)),
            ("tensorlib.fft.fft", "complex64", lambda: tl.fft.fft(x)),
            ("tensorlib.fft.rfft", "complex64", lambda: tl.fft.rfft(x)),
            ("linalg.eig", "complex64", lambda: tl.linalg.eig(x))]:
        with pytest.raises(RuntimeError, match=rf"^{op}: .*{dtype}.*only supported on the cpu"):
            call()


def test_fill_setitem_and_full_with_complex_values_match_torch():
    results = []
    for lib in (tl, torch):
        z = lib.zeros(4, dtype=lib.complex128)
        z.fill_(2)
        z[1] = 3
        z[2] = 1 - 1j
        z[3:].zero_()
        full = lib.full((2,), 1j)
        results.append((z.numpy(), full.numpy(), str(full.dtype).split(".")[-1]))
    (z, full, name), (tz, tfull, tname) = results
    np.testing.assert_array_equal(z, tz)
    np.testing.assert_array_equal(full, tfull)
    assert name == tname == "complex64"
