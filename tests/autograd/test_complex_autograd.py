"""Complex autograd against torch: PyTorch's convention (the gradient of a real loss at
z = x + iy is dL/dx + i dL/dy), real inputs of complex ops getting the real part, and
gradcheck on complex inputs and outputs (real and imaginary parts perturbed apart)."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)
Z = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
W = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
M = RNG.standard_normal((4, 2)) + 1j * RNG.standard_normal((4, 2))
X = RNG.standard_normal((3, 4))


def _loss(lib, out):
    """A real loss that reaches every real and imaginary part with different weights."""
    out = out if out.is_complex() else out + 0j
    weights = lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape) / 7 + 0.5
    return (lib.view_as_real(out) * lib.stack([weights, weights.flip(-1) if out.dim() else
                                                weights], -1)).sum()


CASES = {
    "mul": (lambda lib, z, w, x: z * w, "zw"),
    "div": (lambda lib, z, w, x: z / w, "zw"),
    "add_sub_neg": (lambda lib, z, w, x: -(z + 2 * w) - 1j * z, "zw"),
    "pow_scalar": (lambda lib, z, w, x: z ** 3, "z"),
    "pow_tensor": (lambda lib, z, w, x: z ** w, "zw"),
    "exp_log": (lambda lib, z, w, x: z.exp() + w.log(), "zw"),
    "sqrt": (lambda lib, z, w, x: z.sqrt(), "z"),
    "trig": (lambda lib, z, w, x: z.sin() * w.cos() + z.tan(), "zw"),
    "hyperbolic": (lambda lib, z, w, x: z.sinh() + z.cosh() + w.tanh(), "zw"),
    "sigmoid": (lambda lib, z, w, x: lib.sigmoid(z), "z"),
    "reciprocal_rsqrt": (lambda lib, z, w, x: z.reciprocal() + w.rsqrt(), "zw"),
    "abs": (lambda lib, z, w, x: z.abs(), "z"),
    "angle": (lambda lib, z, w, x: z.angle(), "z"),
    "real_imag": (lambda lib, z, w, x: z.real * 2 + w.imag * z.imag, "zw"),
    "conj": (lambda lib, z, w, x: z.conj() * w, "zw"),
    "view_as_real": (lambda lib, z, w, x: lib.view_as_real(z) ** 2, "z"),
    "view_as_complex": (lambda lib, z, w, x:
                        lib.view_as_complex(lib.stack([x, x * x], -1)) * z, "zx"),
    "polar": (lambda lib, z, w, x: lib.polar(x.abs() + 1, x * 2), "x"),
    "complex": (lambda lib, z, w, x: lib.complex(x, x.exp()), "x"),
    "real_times_complex": (lambda lib, z, w, x: (x * (1 + 2j)).sin() * z, "zx"),
    "to_complex": (lambda lib, z, w, x: x.to(lib.complex128) * w, "xw"),
    "matmul": (lambda lib, z, w, x: z @ lib.tensor(M) @ lib.tensor(M).mT, "z"),
    "matmul_both": (lambda lib, z, w, x: z.mT @ w, "zw"),
    "reductions": (lambda lib, z, w, x: z.sum(0) * w.mean(1).sum() + z.prod(1).sum(), "zw"),
    "shape_and_index": (lambda lib, z, w, x:
                        z.reshape(4, 3).t()[1:, ::2] * w.flatten()[lib.tensor([5, 5])]
                        .view(2, 1), "zw"),
    "cat_stack": (lambda lib, z, w, x: lib.cat([z, w]) * lib.stack([z, w]).sum(0).repeat(2, 1),
                  "zw"),
    "where": (lambda lib, z, w, x: lib.where(lib.tensor(X) > 0, z, w * 2), "zw"),
    "squared_modulus": (lambda lib, z, w, x: (z * z.conj()).real, "z"),
    "var_std": (lambda lib, z, w, x: z.var(1) + w.std(1, correction=0), "zw"),
    "cumsum_cumprod": (lambda lib, z, w, x: z.cumsum(1) + w.cumprod(1), "zw"),
    "cumprod_with_zero": (lambda lib, z, w, x: (z * lib.tensor(X > -0.3)).cumprod(0), "z"),
    "linear": (lambda lib, z, w, x: lib.nn.functional.linear(z, w[:2], w[2, :2]), "zw"),
    "gather_masked_fill": (lambda lib, z, w, x:
                           z.gather(1, lib.tensor([[0, 0], [1, 2], [3, 3]]))
                           + w.masked_fill(lib.tensor(X > 0), 0)[:, :2], "zw"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch(name):
    fn, wrt = CASES[name]
    grads = []
    for lib in (tl, torch):
        inputs = {k: lib.tensor(v, requires_grad=k in wrt) for k, v in
                  (("z", Z), ("w", W), ("x", X))}
        _loss(lib, fn(lib, inputs["z"], inputs["w"], inputs["x"])).backward()
        grads.append([inputs[k].grad for k in wrt])
    for ours, theirs in zip(*grads):
        assert ours.dtype.name == str(theirs.dtype).split(".")[-1]
        np.testing.assert_allclose(ours.numpy(), theirs.resolve_conj().numpy(), rtol=1e-9,
                                   atol=1e-10)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, wrt = CASES[name]
    inputs = {k: tl.tensor(v, requires_grad=k in wrt) for k, v in
              (("z", Z), ("w", W), ("x", X))}
    order = [k for k in "zwx" if k in wrt]

    def call(*diff):
        args = dict(inputs, **dict(zip(order, diff)))
        return fn(tl, args["z"], args["w"], args["x"])
    assert gradcheck(call, tuple(inputs[k] for k in order))


def test_gradgradcheck_complex():
    z = tl.tensor(Z[:2, :2], requires_grad=True)
    w = tl.tensor(W[:2, :2], requires_grad=True)
    assert gradgradcheck(lambda z, w: (z * w).exp() @ w.conj(), (z, w))


def test_squared_modulus_gradient_is_two_z():
    z = tl.tensor(Z, requires_grad=True)
    (z.abs() ** 2).sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * Z)


def test_abs_and_angle_at_zero_match_torch():
    for lib in (tl, torch):
        z = lib.zeros(2, dtype=lib.complex128, requires_grad=True)
        (z.abs().sum() + z.angle().sum()).backward()
        assert z.grad.numpy().tolist() == [0j, 0j]


def test_gradcheck_rejects_a_formula_without_the_conjugate():
    class Square(tl.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            z, = ctx.saved_tensors
            return 2 * g * z                   # torch's convention needs conj(2 z)
    z = tl.tensor(Z[:1, :2], requires_grad=True)
    assert not gradcheck(Square.apply, (z,), raise_exception=False)


def test_complex_leaf_and_backward_seed():
    z = tl.tensor([1 + 1j], requires_grad=True)
    assert z.requires_grad and z.dtype is tl.complex64          # as torch
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * 2).sum().backward()
    out = z * 2
    out.backward(tl.tensor([1j]))
    assert z.grad.numpy().tolist() == [2j]
    with pytest.raises(RuntimeError, match="floating point and complex"):
        tl.ones(2, dtype=tl.int64).requires_grad_()


def _writes_through_real_views(lib, a, b):
    """In-place ops through x.real / x.imag / view_as_real of a complex tensor with history,
    one after another (each remakes the view's history), then reads of base and views."""
    z = lib.fft.fft(a)
    r = z.real
    r += b
    r[..., 0] -= (a * 2).sum(-1)
    z.imag.mul_(3)
    lib.view_as_real(z)[:, 1:, 0].add_(a[:, :2] ** 2)
    return (lib.view_as_real(z) ** 2).sum() + (r * lib.arange(3.0, dtype=a.dtype)).sum() + \
        (z.imag * b).sum()


def test_inplace_writes_into_parts_of_a_complex_tensor_match_torch():
    a = RNG.standard_normal((2, 3))
    b = RNG.standard_normal(3)
    ours = [tl.tensor(v, requires_grad=True) for v in (a, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b)]
    out, expected = _writes_through_real_views(tl, *ours), _writes_through_real_views(
        torch, *theirs)
    np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-12)
    out.backward()
    expected.backward()
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_inplace_writes_through_real_views_pass_gradcheck():
    a = tl.tensor(RNG.standard_normal((2, 3)), requires_grad=True)
    b = tl.tensor(RNG.standard_normal(3), requires_grad=True)
    assert gradcheck(lambda a, b: _writes_through_real_views(tl, a, b), (a, b))
