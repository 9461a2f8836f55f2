"""The *_copy functions against torch: same values and shape, contiguous, no memory shared
with the input, gradients through them."""
import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")

CASES = [("alias_copy", ()), ("as_strided_copy", ((2, 2), (1, 2))), ("diagonal_copy", (0, 0, 1)),
         ("expand_copy", ((2, 3, 4),)), ("narrow_copy", (1, 1, 2)), ("permute_copy", ((1, 0),)),
         ("select_copy", (1, 2)), ("split_copy", (2,)), ("split_with_sizes_copy", ([1, 2],)),
         ("squeeze_copy", ()), ("t_copy", ()), ("transpose_copy", (0, 1)),
         ("unbind_copy", (1,)), ("unfold_copy", (1, 2, 1)), ("unsqueeze_copy", (0,)),
         ("view_copy", ((4, 3),)), ("slice_copy", (1, 1, 4, 2))]


@pytest.mark.parametrize("name,args", CASES)
def test_copy_matches_torch(device, name, args):
    base = np.arange(12.0).reshape(3, 4)
    ours = tensorlib.tensor(base, device=device, requires_grad=True)
    theirs = torch.tensor(base, requires_grad=True)
    out, want = getattr(tensorlib, name)(ours, *args), getattr(torch, name)(theirs, *args)
    outs, wants = (out, want) if isinstance(want, tuple) else ((out,), (want,))
    assert type(out) is tuple or not isinstance(want, tuple)
    for o, w in zip(outs, wants, strict=True):
        assert tuple(o.shape) == tuple(w.shape) and o.is_contiguous()
        np.testing.assert_array_equal(o.detach().cpu().numpy(), w.detach().numpy())
    sum(o.sum() * (i + 1) for i, o in enumerate(outs)).backward()
    sum(w.sum() * (i + 1) for i, w in enumerate(wants)).backward()
    np.testing.assert_array_equal(ours.grad.cpu().numpy(), theirs.grad.numpy())
    for o in outs:
        o.detach().add_(100.0)        # a copy's memory is its own
    np.testing.assert_array_equal(ours.detach().cpu().numpy(), base)


def test_copies_do_not_alias_and_complex_views():
    x = tensorlib.zeros(2, 3)
    y = tensorlib.diagonal_copy(x)
    y.fill_(1.0)
    assert x.sum().item() == 0.0
    assert x.narrow_copy(1, 0, 2).shape == (2, 2)
    z = tensorlib.tensor([1 + 2j, 3 - 1j])
    pairs = tensorlib.view_as_real_copy(z)
    assert pairs.cpu().numpy().tolist() == torch.view_as_real_copy(
        torch.tensor([1 + 2j, 3 - 1j])).tolist()
    assert tensorlib.view_as_complex_copy(pairs).cpu().numpy().tolist() == [1 + 2j, 3 - 1j]
