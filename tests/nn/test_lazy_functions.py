"""An uninitialized parameter or buffer passed to a tensorlib function raises PyTorch's
ValueError (as torch's __torch_function__ check does), on every device; the allowed
accessors keep working and a materialized one is an ordinary tensor."""
import pytest

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.nn.parameter import UninitializedBuffer, UninitializedParameter

_MESSAGE = (r"Attempted to use an uninitialized parameter in .*\. This error happens when you "
            r"are using a `LazyModule` or explicitly manipulating "
            r"`tensorlib\.nn\.parameter\.Uninitialized(Parameter|Buffer)` objects\. When using "
            r"LazyModules Call `forward` with a dummy batch to initialize the parameters before "
            r"calling tensorlib functions")

_USES = {
    "add": lambda lib, F, p, x: lib.add(p, 1),
    "add_tensor_first": lambda lib, F, p, x: lib.add(x, p),
    "mul_inplace_into_other": lambda lib, F, p, x: x.mul_(p),
    "exp": lambda lib, F, p, x: lib.exp(p),
    "relu": lambda lib, F, p, x: F.relu(p),
    "linear": lambda lib, F, p, x: F.linear(x, p),
    "sum": lambda lib, F, p, x: lib.sum(p),
    "cat": lambda lib, F, p, x: lib.cat([p, p]),
    "view_then_op": lambda lib, F, p, x: lib.reshape(p, (0,)) * 2,
    "operator": lambda lib, F, p, x: x + p,
    "out": lambda lib, F, p, x: lib.add(x[:0, 0], 1, out=p),
    "method": lambda lib, F, p, x: p.numel(),
}


@pytest.mark.parametrize("kind", [UninitializedParameter, UninitializedBuffer])
@pytest.mark.parametrize("use", sorted(_USES))
def test_use_before_initialization_raises_torch_error(device, kind, use):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
        _USES[use](torch, torch.nn.functional, getattr(torch.nn.parameter, kind.__name__)(),
                   torch.ones(2, 3))
    p = kind(device=device)
    with pytest.raises(ValueError, match=_MESSAGE):
        _USES[use](tensorlib, F, p, tensorlib.ones(2, 3, device=device))


def test_allowed_accessors_and_materialize(device):
    p = UninitializedParameter(device=device)
    assert p.device == tensorlib.empty(0, device=device).device and p.dtype == tensorlib.float32
    assert p.size() == (0,) and p.requires_grad and repr(p) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        p.shape
    assert tensorlib.empty(2, device=p.device).device == p.device   # p.device is the real one
    p.materialize((2, 3))
    assert type(p) is tensorlib.nn.Parameter and p.shape == (2, 3)
    assert (p.detach() * 0 + 1).sum().item() == 6.0


def test_lazy_module_runs_after_materializing(device):
    m = tensorlib.nn.LazyLinear(4).to(device=device, dtype=tensorlib.float64)
    with pytest.raises(ValueError, match=_MESSAGE):
        F.linear(tensorlib.ones(2, 3, dtype=tensorlib.float64, device=device), m.weight)
    y = m(tensorlib.ones(2, 3, dtype=tensorlib.float64, device=device))
    assert y.shape == (2, 4) and y.dtype == tensorlib.float64 and m.weight.device == y.device
