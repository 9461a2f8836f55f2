"""Shared inputs for the torch.masked parity tests: a 4x5 input, a mask with one fully
masked row and one fully masked column, and the call in tensorlib and in torch."""
import numpy as np

import tensorlib as tl

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 5)).astype(np.float32)
MASK = RNG.random((4, 5)) > 0.35
MASK[1, :] = False          # a fully masked row
MASK[:, 3] = False          # and column
MASK[0, :] = True           # and a fully masked-in one


def to_both(torch, array, device, requires_grad=False):
    ours = tl.tensor(array, device=device)
    theirs = torch.tensor(array)
    if requires_grad:
        ours.requires_grad_(True)
        theirs.requires_grad_(True)
    return ours, theirs


def assert_close(ours, theirs, rtol=1e-5, atol=1e-6):
    got = ours.detach().cpu().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    want = theirs.detach().numpy()
    assert got.shape == want.shape, (got.shape, want.shape)
    assert str(ours.dtype).rsplit(".", 1)[-1] == str(theirs.dtype).rsplit(".", 1)[-1]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
