"""A real PyTorch tensor handed to tensorlib (both libraries imported): a TypeError naming
both types and how to convert, not an endless bounce between the two __torch_function__."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

_MESSAGE = r"expected a tensorlib Tensor, got torch\.Tensor"


@pytest.mark.parametrize("call", [
    lambda t: tl.add(t, 1),
    lambda t: tl.nn.functional.relu(t),
    lambda t: tl.cat([tl.ones(2), t]),
    lambda t: tl.ones(2) + t,
    lambda t: tl.ones(2) * t,
    lambda t: tl.ones(2) @ t,
    lambda t: tl.ones(2) == t,
    lambda t: t + tl.ones(2),
    lambda t: torch.add(t, tl.ones(2)),
], ids=["add", "relu", "cat", "radd", "mul", "matmul", "eq", "torch-left", "torch-add"])
def test_refused_with_a_type_error(call):
    with pytest.raises(TypeError, match=_MESSAGE):
        call(torch.ones(2))


def test_parameter_is_refused_too():
    with pytest.raises(TypeError, match="expected a tensorlib Tensor"):
        tl.add(torch.nn.Parameter(torch.ones(2)), 1)


def test_the_conversion_the_message_names_works():
    t = torch.arange(3.0)
    assert (tl.from_numpy(t.detach().cpu().numpy()) + 1).tolist() == [1.0, 2.0, 3.0]
    assert np.asarray(tl.ones(2)).tolist() == [1.0, 1.0]
