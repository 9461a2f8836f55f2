"""select/slice/diagonal/as_strided_scatter against torch: values and gradients, on every
test device; the size check's RuntimeError."""
import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")

CASES = [("select_scatter", (4, 6), (1, 2)), ("select_scatter", (5, 6), (0, -1)),
         ("slice_scatter", (4, 2, 6), (1, 1, 5, 2)), ("slice_scatter", (4, 5, 6), ()),
         ("slice_scatter", (4, 5, 2), (-1, None, 4, 2)),
         ("diagonal_scatter", (6, 4), (1, 0, 1)), ("diagonal_scatter", (4, 5), (0, 1, 2)),
         ("as_strided_scatter", (2, 3), ((2, 3), (6, 2), 3))]


def _run(lib, device, name, src_shape, args):
    x = np.arange(120, dtype=np.float32).reshape(4, 5, 6) / 7
    src = -np.arange(np.prod(src_shape), dtype=np.float32).reshape(src_shape)
    kw = {} if lib is torch else {"device": device}
    X = lib.tensor(x, requires_grad=True, **kw)
    S = lib.tensor(src, requires_grad=True, **kw)
    out = getattr(lib, name)(X, S, *args)
    (out * out).sum().backward()
    return [t.detach().cpu().numpy() for t in (out, X.grad, S.grad)]


@pytest.mark.parametrize("name,src_shape,args", CASES)
def test_values_and_gradients_match_torch(device, name, src_shape, args):
    ours = _run(tensorlib, device, name, src_shape, args)
    want = _run(torch, device, name, src_shape, args)
    np.testing.assert_allclose(ours[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(ours[2], want[2], rtol=1e-6)
    if name != "as_strided_scatter":
        np.testing.assert_allclose(ours[1], want[1], rtol=1e-6)
    else:
        # torch 2.x returns the gradient under the view instead of outside it; ours is
        # d(sum(out^2))/d(input): 2*out where input survives, 0 where src replaced it
        kept = _run(tensorlib, device, name, src_shape, args)[0]
        replaced = np.zeros(120, dtype=bool)
        replaced[np.add.outer(np.arange(2) * 6, np.arange(3) * 2).ravel() + 3] = True
        expected = np.where(replaced.reshape(4, 5, 6), 0, 2 * kept)
        np.testing.assert_allclose(ours[1], expected, rtol=1e-6)


def test_methods_and_size_errors(device):
    x = tensorlib.zeros(3, 4, device=device)
    out = x.select_scatter(tensorlib.ones(4, device=device), 0, 1)
    assert out.sum().item() == 4 and x.sum().item() == 0
    assert x.diagonal_scatter(tensorlib.ones(3, device=device)).trace().item() == 3
    assert x.slice_scatter(tensorlib.ones(3, 2, device=device), 1, 0, 2).sum().item() == 6
    with pytest.raises(RuntimeError, match="expected src to have a size equal to the slice"):
        x.select_scatter(tensorlib.ones(3, device=device), 0, 1)
    with pytest.raises(RuntimeError):
        torch.zeros(3, 4).select_scatter(torch.ones(3), 0, 1)
