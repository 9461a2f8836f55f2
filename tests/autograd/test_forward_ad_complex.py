"""Forward-mode AD on complex tensors against torch: dual tensors with complex tangents
through holomorphic, real-valued and linear complex ops (torch.autograd.forward_ad), the
same through tensorlib.func.jvp against torch.func.jvp, and torch's refusals (jacfwd and
jacrev of complex functions)."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.autograd.forward_ad as fwAD

torch = pytest.importorskip("torch")
tfwAD = torch.autograd.forward_ad

RNG = np.random.default_rng(15)


def _c(shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _np(t):
    return t.detach().resolve_conj().numpy()


CASES = {
    "holomorphic": lambda m, z, w: (z * w - z / (w + 2) + z ** 2 + m.exp(z) + m.log(w)
                                    + m.sqrt(z) + m.sin(z) * m.cos(w) + m.tanh(z)
                                    + m.sigmoid(w) + 2.0 ** z - w.neg()),
    "pow_complex": lambda m, z, w: z ** w,
    "inverse_hyperbolic": lambda m, z, w: (m.asinh(z), m.acosh(w), m.atanh(z * 0.3),
                                           m.asinh(z.real), m.atanh(w.imag * 0.1)),
    "real_valued": lambda m, z, w: (z.abs(), z.angle(), (z * w).abs() ** 2, m.real(z * w),
                                    m.imag(z / w)),
    "linear": lambda m, z, w: (z.conj() * w, m.view_as_real(z * w), z.mH @ w, z[1:] + w[:1],
                               m.cat([z, w]).reshape(2, -1), z.transpose(0, 1).flip(0)),
    "sgn_polar": lambda m, z, w: (z.sgn(), m.polar(z.abs(), w.angle()),
                                  m.complex(z.real, w.imag)),
    "reductions": lambda m, z, w: (z.sum(), (z * w).mean(1), z.prod(0), z.var(1),
                                   m.linalg.vector_norm(z), z.norm(dim=0)),
    "matmul": lambda m, z, w: (z @ w.mT, m.matmul(z, w[0]), m.mm(z.mT, w)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_tangents_match_torch_forward_ad(name):
    primals = [_c((3, 4)), _c((3, 4)) + 1.5]
    tangents = [_c((3, 4)), _c((3, 4))]
    results = []
    for lib, fw in ((tl, fwAD), (torch, tfwAD)):
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(p), lib.tensor(t))
                     for p, t in zip(primals, tangents)]
            out = CASES[name](lib, *duals)
            outs = out if isinstance(out, tuple) else (out,)
            results.append([(fw.unpack_dual(o).primal, fw.unpack_dual(o).tangent)
                            for o in outs])
    for (p, t), (tp, tt) in zip(*results):
        np.testing.assert_allclose(_np(p), _np(tp), atol=1e-12)
        assert t.dtype.name == str(tt.dtype).split(".")[-1] and t.shape == tuple(tt.shape)
        np.testing.assert_allclose(_np(t), _np(tt), rtol=1e-9, atol=1e-11)


def test_real_tangent_of_a_complex_primal_and_real_to_complex_ops():
    z, t, x, s = _c((4,)), RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal(4)
    results = []
    for lib, fw in ((tl, fwAD), (torch, tfwAD)):
        with fw.dual_level():
            dz = fw.make_dual(lib.tensor(z), lib.tensor(t))
            dx = fw.make_dual(lib.tensor(x), lib.tensor(s))
            outs = (dz * (1 - 2j), dx * lib.tensor(z), lib.complex(dx, dx * 2),
                    lib.polar(dx.exp(), dx))
            results.append([_np(fw.unpack_dual(o).tangent) for o in outs])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, atol=1e-11)


def test_complex_jvp_through_func_and_autograd_functional_matches_torch():
    z, v = _c((2, 3)), _c((2, 3))

    def f(lib):
        return lambda z: (z ** 2 * z.conj(), z.abs(), lib.view_as_real(z.exp()), z.sin() / z)

    for ours_fn, theirs_fn in ((tl.func.jvp, torch.func.jvp),
                               (tl.autograd.functional.jvp, torch.autograd.functional.jvp)):
        ours = ours_fn(f(tl), (tl.tensor(z),), (tl.tensor(v),))[1]
        theirs = theirs_fn(f(torch), (torch.tensor(z),), (torch.tensor(v),))[1]
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(_np(o), _np(t), atol=1e-11)


def test_complex_jvp_with_backward_through_the_tangent():
    """A dual whose primal requires grad: the tangent is differentiable (gradients of a
    loss on the tangent, compared with torch)."""
    z, t = _c((3,)), _c((3,))
    grads = []
    for lib, fw in ((tl, fwAD), (torch, tfwAD)):
        p = lib.tensor(z, requires_grad=True)
        with fw.dual_level():
            out = fw.unpack_dual(lib.exp(fw.make_dual(p, lib.tensor(t))) * p).tangent
            lib.view_as_real(out).sum().backward()
        grads.append(_np(p.grad))
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-11)


def test_complex_refusals_match_torch():
    z = tl.tensor(_c((3,)))
    for transform in (tl.func.jacfwd, tl.func.jacrev):
        with pytest.raises(RuntimeError, match="Expected all inputs to be real but received "
                                               "complex tensor at flattened input idx: 0"):
            transform(lambda z: z * 2)(z)
        with pytest.raises(RuntimeError, match="Expected all outputs to be real"):
            transform(lambda x: x * (1 + 1j))(z.real)
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="complex tangent .* for a real primal"):
            fwAD.make_dual(z.real, z)
