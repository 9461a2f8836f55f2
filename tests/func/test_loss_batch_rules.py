"""vmap (and jacfwd, which vmaps its tangents) of the elementwise losses when only one of
input and target is batched: binary_cross_entropy refused the unbatched operand's logical
shape against the batched one's; the batch rule expands the pair to one shape."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

P = [[0.2, 0.7, 0.4], [0.9, 0.1, 0.5]]
T = [[0.0, 1.0, 0.5], [1.0, 0.0, 1.0]]
W = [1.0, 2.0, 0.5]


def _both(fn):
    out = []
    for lib in (tl, torch):
        F = lib.nn.functional
        p, t, w = (lib.tensor(v, dtype=lib.float64) for v in (P, T, W))
        out.append(np.asarray(fn(lib, F, p, t, w).tolist()))
    return out


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("wrt", ["input", "target"])
def test_jacfwd_of_binary_cross_entropy(wrt, reduction, weighted):
    def fn(lib, F, p, t, w):
        weight = w if weighted else None
        if wrt == "input":
            return lib.func.jacfwd(lambda q: F.binary_cross_entropy(
                q, t, weight=weight, reduction=reduction))(p)
        return lib.func.jacfwd(lambda s: F.binary_cross_entropy(
            p, s, weight=weight, reduction=reduction))(t)
    got, want = _both(fn)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_jacfwd_of_jacrev_of_binary_cross_entropy():
    got, want = _both(lambda lib, F, p, t, w: lib.func.jacfwd(lib.func.jacrev(
        lambda q: F.binary_cross_entropy(q, t[0])))(p[0]))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("loss", ["binary_cross_entropy", "mse_loss", "l1_loss",
                                  "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("batched", ["input", "target"])
def test_vmap_with_one_operand_unbatched(loss, batched):
    def fn(lib, F, p, t, w):
        f = getattr(F, loss)
        if batched == "input":
            return lib.vmap(lambda q: f(q, t[0]))(p)
        return lib.vmap(lambda s: f(p[0], s))(t)
    got, want = _both(fn)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_keyword_operands():
    got, want = _both(lambda lib, F, p, t, w: lib.vmap(
        lambda q: F.binary_cross_entropy(q, target=t[0], reduction="sum"))(p))
    np.testing.assert_allclose(got, want, rtol=1e-12)
