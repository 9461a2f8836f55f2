"""A second backward through a graph freed by the first (retain_graph=False) raises as in
PyTorch exactly when a node on the way saved something, a number PyTorch keeps as a tensor
included (x * 2's 2); a graph that saved nothing (x + 1, views, sums) runs again."""
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

GRAPHS = {
    "mul_number": lambda x: x * 2,
    "rmul_number": lambda x: 2 * x,
    "div_number": lambda x: x / 2,
    "mul_method": lambda x: x.mul(3),
    "neg_then_mul": lambda x: -x * 3,
    "view_then_mul": lambda x: x.view(2, 1) * 3,
    "mul_tensor": lambda x: x * x,
    "exp": lambda x: x.exp(),
    "add_number": lambda x: x + 1,
    "sub_number": lambda x: 1 - x,
    "add_alpha": lambda x: tl_or_torch(x).add(x, x, alpha=3),
    "sub_alpha": lambda x: tl_or_torch(x).sub(x, x, alpha=2),
    "lerp_number": lambda x: tl_or_torch(x).lerp(x, x.detach() * 0, 0.5),
    "fmod_number": lambda x: x.fmod(0.5),
    "remainder_number": lambda x: x.remainder(0.5),
    "sum": lambda x: x,
    "view": lambda x: x.view(2, 1),
}


def tl_or_torch(x):
    return torch if isinstance(x, torch.Tensor) else tl


def _second(lib, make, how):
    x = lib.tensor([0.3, 0.6], requires_grad=True)
    y = make(x).sum()
    if how == "backward":
        y.backward()
        second = y.backward
    else:
        lib.autograd.grad(y, x)

        def second():
            lib.autograd.grad(y, x)
    try:
        second()
    except RuntimeError as e:
        assert "Trying to backward through the graph a second time" in str(e)
        return "raises"
    return "runs"


@pytest.mark.parametrize("how", ["backward", "grad"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_second_backward_matches_torch(name, how):
    assert _second(tl, GRAPHS[name], how) == _second(torch, GRAPHS[name], how)


def test_retain_graph_allows_one_more():
    for lib in (tl, torch):
        x = lib.tensor([0.3, 0.6], requires_grad=True)
        y = (x * 2).sum()
        y.backward(retain_graph=True)
        y.backward()
        assert x.grad.tolist() == [4.0, 4.0]
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.backward()
