"""tensorlib.masked's reductions against torch.masked: values (fully masked slices give
torch's identity or nan), broadcast masks, dtypes, gradients and error types."""
import numpy as np
import pytest

import tensorlib as tl
from tests.masked._cases import MASK, X, assert_close, to_both

torch = pytest.importorskip("torch")

# (name, positional args after the input, keyword args); each runs with MASK and with a
# broadcast mask (one row of MASK), over one dim, two dims and all
REDUCTIONS = [
    ("sum", (1,), {}), ("sum", ((0, 1),), {"keepdim": True}), ("sum", (), {}),
    ("prod", (1,), {}), ("prod", (0,), {"keepdim": True}),
    ("amax", (1,), {}), ("amax", (), {}), ("amin", (0,), {}), ("amin", ((0, 1),), {}),
    ("mean", (1,), {}), ("mean", (0,), {"keepdim": True}), ("mean", (), {}),
    ("median", (1,), {}), ("median", (0,), {"keepdim": True}),
    ("norm", (2.0, 1), {}), ("norm", (1.0, 0), {}), ("norm", (float("inf"), 1), {}),
    ("norm", (float("-inf"), 1), {}), ("norm", (3.0, None), {}),
    ("var", (1,), {}), ("var", (0,), {"correction": 0}), ("var", (1, False), {}),
    ("std", (1,), {"keepdim": True}), ("std", ((0, 1),), {}),
    ("logsumexp", (1,), {}), ("logsumexp", (), {}),
]


def _ids(case):
    return f"{case[0]}{case[1]}{case[2]}"


@pytest.mark.parametrize("case", REDUCTIONS, ids=[_ids(c) for c in REDUCTIONS])
@pytest.mark.parametrize("broadcast", [False, True])
def test_reduction_values_and_gradients(device, case, broadcast):
    name, args, kwargs = case
    mask = MASK[2] if broadcast else MASK
    ours_x, theirs_x = to_both(torch, X, device, requires_grad=True)
    ours_m, theirs_m = to_both(torch, mask, device)
    ours = getattr(tl.masked, name)(ours_x, *args, mask=ours_m, **kwargs)
    theirs = getattr(torch.masked, name)(theirs_x, *args, mask=theirs_m, **kwargs)
    assert_close(ours, theirs)
    weights = np.random.default_rng(1).standard_normal(tuple(theirs.shape)).astype(np.float32)
    # a fully masked slice's non-finite result has no gradient to compare: zero its weight
    weights[~np.isfinite(theirs.detach().numpy())] = 0
    ours_w, theirs_w = to_both(torch, weights, device)
    (ours * ours_w).nan_to_num().sum().backward()
    (theirs * theirs_w).nan_to_num().sum().backward()
    assert_close(ours_x.grad, theirs_x.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions(device, name):
    ours_x, theirs_x = to_both(torch, X, device)
    ours_m, theirs_m = to_both(torch, MASK, device)
    for dim, keepdim in [(1, False), (0, True), (None, False)]:
        ours = getattr(tl.masked, name)(ours_x, dim, keepdim=keepdim, mask=ours_m)
        theirs = getattr(torch.masked, name)(theirs_x, dim, keepdim=keepdim, mask=theirs_m)
        assert_close(ours, theirs)       # the index, in the input's dtype as torch's
    ours = getattr(tl.masked, name)(ours_x, 1, dtype=tl.int64, mask=ours_m)
    assert_close(ours, getattr(torch.masked, name)(theirs_x, 1, dtype=torch.int64,
                                                   mask=theirs_m))


def test_without_mask_is_the_plain_reduction(device):
    ours_x, theirs_x = to_both(torch, X, device)
    for name, args in [("sum", (1,)), ("mean", (0,)), ("amax", (1,)), ("var", (1,)),
                       ("norm", (2.0, 1)), ("logsumexp", (0,)), ("prod", (1,))]:
        assert_close(getattr(tl.masked, name)(ours_x, *args),
                     getattr(torch.masked, name)(theirs_x, *args))


def test_integer_inputs(device):
    data = np.arange(-6, 14, dtype=np.int32).reshape(4, 5)
    ours_x, theirs_x = to_both(torch, data, device)
    ours_m, theirs_m = to_both(torch, MASK, device)
    for name, args in [("sum", (1,)), ("prod", (0,)), ("amax", (1,)), ("amin", (1,)),
                       ("var", (0,)), ("std", (1,))]:
        assert_close(getattr(tl.masked, name)(ours_x, *args, mask=ours_m),
                     getattr(torch.masked, name)(theirs_x, *args, mask=theirs_m))
    # median of an integer input converts back to its dtype when no slice is fully masked
    full = np.ones((4, 5), dtype=bool)
    full[:, 1] = False
    assert_close(tl.masked.median(ours_x, 1, mask=tl.tensor(full, device=device)),
                 torch.masked.median(theirs_x, 1, mask=torch.tensor(full)))
    with pytest.raises(ValueError):
        tl.masked.median(ours_x, 1, mask=ours_m)
    with pytest.raises(ValueError):
        tl.masked.mean(ours_x, 1, mask=ours_m)
    assert_close(tl.masked.mean(ours_x, 1, mask=ours_m, dtype=tl.float32),
                 torch.masked.mean(theirs_x, 1, mask=theirs_m, dtype=torch.float32))


def test_errors(device):
    x = tl.tensor(X, device=device)
    mask = tl.tensor(MASK, device=device)
    with pytest.raises(IndexError):
        tl.masked.sum(x, 2, mask=mask)
    with pytest.raises(RuntimeError):
        tl.masked.sum(x, (1, 1), mask=mask)
    with pytest.raises(IndexError):          # a mask with more dims than the input
        tl.masked.sum(x, 1, mask=mask[None])
    with pytest.raises(RuntimeError):        # a mask that does not broadcast
        tl.masked.sum(x, 1, mask=mask[:, :2])
    with pytest.raises(AssertionError):
        tl.masked.var(x, 1, True, correction=1, mask=mask)
