"""bitwise_left_shift / bitwise_right_shift, `<<`, `>>` and the in-place forms against torch:
every integer width, negative values, shifts below 0 and past the width; floats refused."""
import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")

WIDTHS = ["int8", "uint8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", WIDTHS)
@pytest.mark.parametrize("op", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shifts_match_torch(device, name, op):
    info = np.iinfo(name)
    rng = np.random.default_rng(7)
    a = rng.integers(info.min, info.max, 300, dtype=name, endpoint=True)
    low = 0 if info.min == 0 else -3
    s = rng.integers(low, info.bits + 3, 300).astype(name)
    ours = getattr(tensorlib, op)(tensorlib.tensor(a, device=device),
                                  tensorlib.tensor(s, device=device))
    want = getattr(torch, op)(torch.tensor(a), torch.tensor(s))
    assert ours.dtype is getattr(tensorlib, name)
    np.testing.assert_array_equal(ours.cpu().numpy(), want.numpy())


def test_operators_scalars_and_inplace(device):
    x = tensorlib.tensor([1, -6, 9], dtype=tensorlib.int32, device=device)
    tx = torch.tensor([1, -6, 9], dtype=torch.int32)
    assert (x << 2).tolist() == (tx << 2).tolist() and (x << 2).dtype is tensorlib.int32
    assert (x >> 1).tolist() == (tx >> 1).tolist()
    assert (3 << x.abs()).tolist() == (3 << tx.abs()).tolist()
    assert (100 >> x.abs()).tolist() == (100 >> tx.abs()).tolist()
    assert x.bitwise_left_shift(tensorlib.tensor(1, device=device)).tolist() == (tx << 1).tolist()
    y = x.clone()
    y <<= 3
    ty = tx.clone()
    ty <<= 3
    assert y.tolist() == ty.tolist() and y.dtype is tensorlib.int32
    x.bitwise_right_shift_(1)
    tx.bitwise_right_shift_(1)
    assert x.tolist() == tx.tolist()


def test_floats_are_refused_as_torch():
    with pytest.raises(NotImplementedError, match="lshift"):
        tensorlib.tensor([1.5]) << 1
    with pytest.raises(NotImplementedError, match="rshift"):
        tensorlib.bitwise_right_shift(tensorlib.tensor([1.5]), 1)
    with pytest.raises(NotImplementedError):
        torch.tensor([1.5]) << 1
