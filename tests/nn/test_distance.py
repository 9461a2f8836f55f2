"""pairwise_distance, cosine_similarity, pdist and their modules against PyTorch (float64):
forward, broadcasting, gradients, gradcheck, errors, repr."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(9)


def t64(a, grad=False):
    return tensorlib.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def th64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def close(a, b, rtol=1e-10, atol=1e-12):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def both(fn_t, fn_p, arrays, **kwargs):
    mine = [t64(a, True) for a in arrays]
    ref = [th64(a, True) for a in arrays]
    out, exp = fn_t(*mine, **kwargs), fn_p(*ref, **kwargs)
    close(out, exp)
    assert tuple(out.shape) == tuple(exp.shape)
    g = RNG.standard_normal(tuple(exp.shape))
    (out * t64(g)).sum().backward()
    (exp * th64(g)).sum().backward()
    for m, r in zip(mine, ref):
        close(m.grad, r.grad, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf")])
@pytest.mark.parametrize("shapes", [((4, 5), (4, 5)), ((4, 5), (1, 5)), ((5,), (5,)),
                                    ((3, 2, 4), (2, 4))])
@pytest.mark.parametrize("keepdim", [False, True])
def test_pairwise_distance(p, shapes, keepdim):
    a, b = (RNG.standard_normal(s) for s in shapes)
    both(F.pairwise_distance, TF.pairwise_distance, (a, b), p=p, keepdim=keepdim, eps=1e-4)


@pytest.mark.parametrize("shapes,dim", [(((4, 5), (4, 5)), 1), (((4, 5), (1, 5)), 1),
                                        (((3, 4, 2), (3, 4, 2)), -1), (((3, 4, 2), (4, 1)), 0),
                                        (((5,), (5,)), 0)])
def test_cosine_similarity(shapes, dim):
    a, b = (RNG.standard_normal(s) for s in shapes)
    both(F.cosine_similarity, TF.cosine_similarity, (a, b), dim=dim)


def test_cosine_similarity_eps_and_zero_vectors():
    a = np.array([[0.0, 0.0], [1e-10, 0.0], [3.0, 4.0]])
    b = np.array([[1.0, 2.0], [1.0, 0.0], [3.0, 4.0]])
    both(F.cosine_similarity, TF.cosine_similarity, (a, b), dim=1, eps=1e-6)
    out = F.cosine_similarity(t64(RNG.standard_normal((50, 3)) * 1e3),
                              t64(RNG.standard_normal((50, 3)) * 1e3)).numpy()
    assert np.all(np.abs(out) <= 1.0)


@pytest.mark.parametrize("p", [2, 1, 3.5, float("inf")])
def test_pdist(p):
    both(F.pdist, TF.pdist, (RNG.standard_normal((5, 3)),), p=p)
    assert F.pdist(tensorlib.randn(1, 3)).shape == (0,)


def test_distance_gradchecks():
    a = t64(RNG.standard_normal((3, 4)), True)
    b = t64(RNG.standard_normal((3, 4)), True)
    assert gradcheck(lambda a, b: F.pairwise_distance(a, b, 3.0), (a, b))
    assert gradcheck(lambda a, b: F.cosine_similarity(a, b, dim=1), (a, b))
    assert gradcheck(lambda a: F.pdist(a, 2), (a,))


def test_modules_and_repr():
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    pairs = [(nn.PairwiseDistance(), torch.nn.PairwiseDistance()),
             (nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True),
              torch.nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True)),
             (nn.CosineSimilarity(), torch.nn.CosineSimilarity()),
             (nn.CosineSimilarity(dim=0, eps=1e-3), torch.nn.CosineSimilarity(dim=0, eps=1e-3))]
    for mine, ref in pairs:
        close(mine(t64(a), t64(b)), ref(th64(a), th64(b)))
        assert repr(mine) == repr(ref)
        assert list(mine.state_dict()) == []


def test_errors():
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.cosine_similarity(tensorlib.randn(3, 4), tensorlib.randn(3, 4), dim=2)
    with pytest.raises(RuntimeError, match="size of tensor a"):
        F.pairwise_distance(tensorlib.randn(3, 4), tensorlib.randn(2, 4))
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(tensorlib.randn(2, 3, 4))


def test_distances_on_device_match_cpu(device):
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    results = []
    for d in ("cpu", device):
        ta = tensorlib.tensor(a.astype(np.float32), device=d, requires_grad=True)
        tb = tensorlib.tensor(b.astype(np.float32), device=d, requires_grad=True)
        out = (F.pairwise_distance(ta, tb, 3.0).sum() + F.cosine_similarity(ta, tb).sum()
               + F.pdist(ta).sum())
        out.backward()
        results.append((out.item(), ta.grad.cpu().numpy(), tb.grad.cpu().numpy()))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-5)
    for x, y in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(y, x, rtol=1e-4, atol=1e-5)
