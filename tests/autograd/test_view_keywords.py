"""Views called with keyword arguments record and differentiate like positional calls
(BoTorch's samples.select(dim=..., index=...) failed in backward): select, narrow, unfold,
transpose, permute(dims=), expand(size=), swapaxes/swapdims with PyTorch's keywords; the
gradients against torch's."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

CALLS = {
    "select": lambda lib, x: x.select(dim=1, index=2),
    "select-function": lambda lib, x: lib.select(x, dim=-1, index=1),
    "narrow": lambda lib, x: x.narrow(dim=1, start=1, length=2),
    "narrow-function": lambda lib, x: lib.narrow(x, 0, start=1, length=1),
    "unfold": lambda lib, x: x.unfold(dimension=1, size=2, step=1),
    "transpose": lambda lib, x: x.transpose(dim0=0, dim1=1),
    "transpose-function": lambda lib, x: lib.transpose(x, dim0=1, dim1=0),
    "permute": lambda lib, x: x.permute(dims=(1, 0)),
    "permute-function": lambda lib, x: lib.permute(x, dims=(1, 0)),
    "swapaxes": lambda lib, x: x.swapaxes(axis0=0, axis1=1),
    "swapaxes-function": lambda lib, x: lib.swapaxes(x, axis0=0, axis1=1),
    "swapdims": lambda lib, x: x.swapdims(dim0=1, dim1=0),
    "expand": lambda lib, x: x[:1].expand(size=(3, 3)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_keyword_views_differentiate_as_torchs(name):
    results = []
    for lib in (tl, torch):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = CALLS[name](lib, x)
        weights = lib.tensor(np.arange(1.0, 1.0 + y.numel()).reshape(tuple(y.shape)))
        (y * weights).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy()))
    (ours, our_grad), (theirs, their_grad) = results
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(our_grad, their_grad)


def test_sizes_keyword_is_refused_beside_positional_sizes_or_misnamed():
    x = tl.zeros(2, 3)
    with pytest.raises(TypeError, match="multiple values for argument 'dims'"):
        x.permute(1, 0, dims=(1, 0))
    with pytest.raises(TypeError, match="unexpected keyword argument 'sizes'"):
        x.expand(sizes=(2, 3))
