"""tensorlib.masked's normalizations, scans and logaddexp against torch.masked: values
(a fully masked slice's softmax is nan), gradients, dtypes."""
import numpy as np
import pytest

import tensorlib as tl
from tests.masked._cases import MASK, X, assert_close, to_both

torch = pytest.importorskip("torch")

CASES = [
    ("softmax", (1,), {}), ("softmax", (0,), {}), ("log_softmax", (1,), {}),
    ("log_softmax", (-2,), {}), ("softmin", (1,), {}), ("softmin", (0,), {}),
    ("normalize", (2.0, 1), {}), ("normalize", (1.0, 0), {"eps": 1e-3}),
    ("cumsum", (1,), {}), ("cumsum", (0,), {}), ("cumprod", (1,), {}),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}{c[1]}{c[2]}" for c in CASES])
def test_values_and_gradients(device, case):
    name, args, kwargs = case
    ours_x, theirs_x = to_both(torch, X, device, requires_grad=True)
    ours_m, theirs_m = to_both(torch, MASK, device)
    ours = getattr(tl.masked, name)(ours_x, *args, mask=ours_m, **kwargs)
    theirs = getattr(torch.masked, name)(theirs_x, *args, mask=theirs_m, **kwargs)
    assert_close(ours, theirs)
    weights = np.random.default_rng(3).standard_normal(X.shape).astype(np.float32)
    weights[~np.isfinite(theirs.detach().numpy())] = 0
    ours_w, theirs_w = to_both(torch, weights, device)
    (ours * ours_w).nan_to_num().sum().backward()
    (theirs * theirs_w).nan_to_num().sum().backward()
    assert_close(ours_x.grad, theirs_x.grad, rtol=1e-4, atol=1e-5)


def test_dtype_argument(device):
    ours_x, theirs_x = to_both(torch, X, device)
    ours_m, theirs_m = to_both(torch, MASK, device)
    for name in ("softmax", "log_softmax", "softmin", "cumsum"):
        assert_close(getattr(tl.masked, name)(ours_x, 1, dtype=tl.float64, mask=ours_m),
                     getattr(torch.masked, name)(theirs_x, 1, dtype=torch.float64,
                                                 mask=theirs_m))


def test_logaddexp(device):
    other = np.random.default_rng(5).standard_normal((4, 5)).astype(np.float32)
    ours_x, theirs_x = to_both(torch, X, device, requires_grad=True)
    ours_o, theirs_o = to_both(torch, other, device, requires_grad=True)
    ours_m, theirs_m = to_both(torch, MASK, device)
    ours_n, theirs_n = to_both(torch, MASK[::-1].copy(), device)
    ours = tl.masked.logaddexp(ours_x, ours_o, input_mask=ours_m, other_mask=ours_n)
    theirs = torch.masked.logaddexp(theirs_x, theirs_o, input_mask=theirs_m,
                                    other_mask=theirs_n)
    assert_close(ours, theirs)
    ours.nan_to_num().sum().backward()
    theirs.nan_to_num().sum().backward()
    assert_close(ours_x.grad, theirs_x.grad)
    assert_close(ours_o.grad, theirs_o.grad)


def test_names_match_torch():
    """Every public name of torch.masked (its functions and the MaskedTensor type) is here."""
    assert set(tl.masked.__all__) == set(torch.masked.__all__)
