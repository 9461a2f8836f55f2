"""torch.add/sub/mul/div/floor_divide (and their aliases) take two Python numbers and return a
0-dim tensor, where other binary ops require a tensor: compared with torch."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

CASES = [
    ("mul", (3, 5), {}), ("mul", (3, 2.5), {}), ("mul", (True, 2), {}), ("mul", (2, 3j), {}),
    ("mul", (np.float64(2), 3), {}), ("add", (2, 3.5), {}), ("add", (True, False), {}),
    ("add", (3, 2), {"alpha": 3}), ("sub", (5, 2), {"alpha": 2}), ("sub", (1.5, 4), {}),
    ("div", (3, 2), {}), ("div", (-3, 2), {"rounding_mode": "trunc"}),
    ("div", (-3, 2), {"rounding_mode": "floor"}), ("div", (7.5, 2), {"rounding_mode": "floor"}),
    ("floor_divide", (7, -2), {}), ("true_divide", (3, 2), {}), ("multiply", (3, 2), {}),
    ("subtract", (3, 2.0), {}), ("divide", (1, 4), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=lambda c: repr(c))
def test_two_numbers_make_a_0dim_tensor(name, args, kwargs):
    ours = getattr(tl, name)(*args, **kwargs)
    theirs = getattr(torch, name)(*args, **kwargs)
    assert ours.shape == () and str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert ours.device.type == "cpu" and not ours.requires_grad
    assert complex(ours.item()) == complex(theirs.item())


def test_the_number_pair_follows_the_default_dtype():
    tl.set_default_dtype(tl.float64)
    try:
        assert tl.mul(3, 2.5).dtype is tl.float64 and tl.div(3, 2).dtype is tl.float64
    finally:
        tl.set_default_dtype(tl.float32)


@pytest.mark.parametrize("call", [lambda m: m.sub(True, False), lambda m: m.maximum(3, 2),
                                  lambda m: m.remainder(3, 2), lambda m: m.mul("a", 2)])
def test_the_rest_still_refuse_numbers(call):
    with pytest.raises((TypeError, RuntimeError)) as theirs:
        call(torch)
    with pytest.raises(theirs.type):
        call(tl)
