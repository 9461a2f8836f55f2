"""full, full_like and Tensor.new_full take a Number (or a 0-dim tensor) for fill_value and
raise TypeError naming the function and the type otherwise, as PyTorch's parser does;
full_like(x, None) filled nothing (uninitialised memory)."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

CALLS = {
    "full": lambda lib, v: lib.full((2,), v),
    "full_like": lambda lib, v: lib.full_like(lib.zeros(2), v),
    "new_full": lambda lib, v: lib.zeros(2).new_full((2,), v),
}
BAD = {"none": None, "str": "a", "list": [1.0], "one_dim_tensor": "tensor1d"}
GOOD = {"int": 2, "float": 2.5, "bool": True, "numpy_float": np.float32(2.0),
        "numpy_int": np.int64(3), "zero_dim_tensor": "tensor0d"}


def _value(lib, v):
    if v == "tensor1d":
        return lib.tensor([2.0])
    if v == "tensor0d":
        return lib.tensor(2.0)
    return v


@pytest.mark.parametrize("value", sorted(BAD))
@pytest.mark.parametrize("call", sorted(CALLS))
def test_non_number_fill_value_raises_type_error(call, value):
    messages = []
    for lib in (tl, torch):
        with pytest.raises(TypeError) as info:
            CALLS[call](lib, _value(lib, BAD[value]))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("value", sorted(GOOD))
@pytest.mark.parametrize("call", sorted(CALLS))
def test_number_fill_value(call, value):
    got, want = (CALLS[call](lib, _value(lib, GOOD[value])) for lib in (tl, torch))
    assert got.tolist() == want.tolist()
