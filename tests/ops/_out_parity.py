"""One out= call run in torch and in tensorlib: both raise the same class of exception, or
both write the same values into an out of the same dtype and shape and return it."""
import warnings

import numpy as np
import pytest

import tensorlib


def check_out_call(torch, fn_name, namespace, device, args, out_dtype, out_size=(0,),
                   same_message=True):
    """`args` are numpy arrays (tensors on both sides) or plain values; `namespace` is the
    dotted module path below torch/tensorlib ("special", "fft")."""
    def run(lib, on_device):
        fn = getattr(getattr(lib, namespace), fn_name)
        values = [lib.tensor(a, device=on_device) if isinstance(a, np.ndarray) else a
                  for a in args]
        out = lib.empty(out_size, dtype=getattr(lib, out_dtype), device=on_device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = fn(*values, out=out)
            except Exception as e:  # noqa: BLE001 - the class is what is compared
                return e, out
        assert result is out
        return None, out

    expected_error, expected = run(torch, "cpu")
    error, got = run(tensorlib, device)
    if expected_error is not None:
        assert error is not None, f"torch raised {expected_error!r}, tensorlib did not"
        assert type(error) is type(expected_error), (error, expected_error)
        if same_message and isinstance(expected_error, RuntimeError):
            assert str(error).split(",")[0] == str(expected_error).split(",")[0], \
                (str(error), str(expected_error))
        return
    if error is not None:
        raise error
    assert got.dtype.name == str(expected.dtype).replace("torch.", "")
    assert tuple(got.shape) == tuple(expected.shape)
    want = expected.numpy() if out_dtype != "complex32" else expected.to(torch.complex64).numpy()
    np.testing.assert_allclose(got.cpu().numpy().astype(want.dtype), want,
                               rtol=2e-3 if out_dtype in ("float16", "bfloat16") else 1e-5,
                               atol=1e-5, equal_nan=True)


def torch_or_skip():
    return pytest.importorskip("torch")
