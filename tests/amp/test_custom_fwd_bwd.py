"""torch.amp.custom_fwd / custom_bwd on an autograd.Function and is_autocast_available: the
dtypes forward and backward see inside and outside a CPU autocast region, as torch's."""
import pytest

import tensorlib

torch = pytest.importorskip("torch")


def _function(lib, cast_inputs):
    seen = {}

    class Scale(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu", cast_inputs=cast_inputs)
        def forward(ctx, x, w):
            seen["forward"] = (str(x.dtype), lib.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x, w)
            return lib.mm(x, w)

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            seen["backward"] = lib.is_autocast_enabled("cpu")
            return lib.mm(grad, w.t()), lib.mm(x.t(), grad)
    return Scale, seen


def _run(lib, cast_inputs, region):
    fn, seen = _function(lib, cast_inputs)
    x = lib.ones(2, 3, requires_grad=True)
    w = lib.ones(3, 2, requires_grad=True)
    with lib.autocast("cpu", enabled=region):
        out = fn.apply(x, w)
    out.float().sum().backward()
    clean = {k: (v[0].replace("torch.", "").replace("tensorlib.", ""), v[1])
             if isinstance(v, tuple) else v for k, v in seen.items()}
    return str(out.dtype).split(".")[-1], clean, str(x.grad.dtype).split(".")[-1]


@pytest.mark.parametrize("cast_inputs", [None, "float64", "bfloat16"])
@pytest.mark.parametrize("region", [False, True])
def test_matches_torch(cast_inputs, region):
    ours = _run(tensorlib, cast_inputs and getattr(tensorlib, cast_inputs), region)
    theirs = _run(torch, cast_inputs and getattr(torch, cast_inputs), region)
    assert ours == theirs


def test_device_type_is_required_and_a_string():
    with pytest.raises(TypeError):
        tensorlib.amp.custom_fwd(lambda ctx: None)
    with pytest.raises(ValueError, match="device_type"):
        tensorlib.amp.custom_fwd(device_type=1)
    with pytest.raises(ValueError, match="device_type"):
        tensorlib.amp.custom_bwd(device_type=None)


def test_is_autocast_available():
    assert tensorlib.amp.is_autocast_available("cpu")
    assert tensorlib.amp.is_autocast_available("cuda")
    assert tensorlib.amp.is_autocast_available("opencl")
    with pytest.raises(RuntimeError):
        tensorlib.amp.is_autocast_available("no_such_device")
