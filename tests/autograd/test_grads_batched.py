"""autograd.grad(is_grads_batched=True) against PyTorch: the first dim of each cotangent
indexes independent vector-Jacobian products (zuko's exact CNF Jacobians pass the identity),
with PyTorch's shape checks, unused inputs, create_graph and only_inputs."""
import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")

LIBS = [tensorlib, torch]


def _jacobian_setup(lib):
    x = lib.tensor([0.3, -1.2, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], dtype=lib.float64, requires_grad=True)
    return x, w, (w @ x.sin()) * x[:2]


def test_batched_cotangents_give_each_vjp():
    results = []
    for lib in LIBS:
        x, w, y = _jacobian_setup(lib)
        eye = lib.eye(2, dtype=lib.float64)
        jx, jw = lib.autograd.grad(y, [x, w], eye, is_grads_batched=True, retain_graph=True)
        rows = [lib.autograd.grad(y, [x, w], eye[i], retain_graph=True) for i in range(2)]
        assert jx.shape == (2, 3) and jw.shape == (2, 2, 3)
        for i, (rx, rw) in enumerate(rows):
            assert lib.allclose(jx[i], rx) and lib.allclose(jw[i], rw)
        results.append((np.array(jx.tolist()), np.array(jw.tolist())))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)


def test_several_outputs_and_a_dict_of_inputs():
    for lib in LIBS:
        x, w, y = _jacobian_setup(lib)
        z = (x ** 2).sum()
        out = lib.autograd.grad([y, z], {"x": x}, [lib.ones(4, 2, dtype=lib.float64),
                                                   lib.arange(4.0, dtype=lib.float64)],
                                is_grads_batched=True)
        assert list(out) == ["x"] and out["x"].shape == (4, 3)
        x2, w2, y2 = _jacobian_setup(lib)
        (last,) = lib.autograd.grad([y2, (x2 ** 2).sum()], x2,
                                    [lib.ones(2, dtype=lib.float64),
                                     lib.tensor(3.0, dtype=lib.float64)])
        assert lib.allclose(out["x"][3], last)


def test_create_graph_differentiates_the_jacobian():
    values = []
    for lib in LIBS:
        x = lib.tensor([0.3, -1.2], dtype=lib.float64, requires_grad=True)
        jac = lib.autograd.grad(x.sin() * x, x, lib.eye(2, dtype=lib.float64),
                                is_grads_batched=True, create_graph=True)[0]
        (second,) = lib.autograd.grad(jac.trace(), x)
        values.append(second.tolist())
    assert values[0] == pytest.approx(values[1], rel=1e-15)


def test_unused_inputs():
    for lib in LIBS:
        x, w, y = _jacobian_setup(lib)
        free = lib.ones(5, requires_grad=True)
        eye = lib.eye(2, dtype=lib.float64)
        with pytest.raises(RuntimeError, match="index 1 appears to not have been used"):
            lib.autograd.grad(y, [x, free], eye, is_grads_batched=True, retain_graph=True)
        _, none = lib.autograd.grad(y, [x, free], eye, is_grads_batched=True,
                                    retain_graph=True, allow_unused=True)
        assert none is None
        _, zeros = lib.autograd.grad(y, [x, free], eye, is_grads_batched=True,
                                     materialize_grads=True)
        assert zeros.shape == (5,) and not zeros.any()      # unbatched, as PyTorch gives it


@pytest.mark.parametrize("cotangents,error,match", [
    (lambda lib: lib.ones(2, 3, dtype=lib.float64), RuntimeError, "is_grads_batched=True"),
    (lambda lib: lib.ones(2, dtype=lib.float64), RuntimeError, "is_grads_batched=True"),
    (lambda lib: [lib.ones(2, 2, dtype=lib.float64), lib.ones(3, dtype=lib.float64)],
     ValueError, "same size in the mapped dimension"),
])
def test_shape_errors_match_torch(cotangents, error, match):
    for lib in LIBS:
        x, w, y = _jacobian_setup(lib)
        outputs = [y, (x ** 2).sum()] if isinstance(cotangents(lib), list) else y
        with pytest.raises(error, match=match):
            lib.autograd.grad(outputs, x, cotangents(lib), is_grads_batched=True)


def test_only_inputs_is_accepted_and_deprecated():
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            (g,) = lib.autograd.grad((x * 3).sum(), x, None, None, False, False)
        assert g.tolist() == [3.0, 3.0]
