"""out= on tensorlib.fft.*: c2c/r2c transforms write any complex out, c2r ones any real
floating out (1-D ihfft needs the exact dtype), fftfreq takes out's dtype; against torch."""
import numpy as np
import pytest

from tests.ops._out_parity import check_out_call, torch_or_skip

_RNG = np.random.default_rng(0)
_REAL = _RNG.standard_normal((4, 6)).astype(np.float32)
_COMPLEX = (_RNG.standard_normal((4, 6)) + 1j * _RNG.standard_normal((4, 6))).astype(
    np.complex64)
_TRANSFORMS = [p + n for p in ("", "i") for n in ("fft", "fft2", "fftn")] + \
    [p + n for p in ("r", "ir", "h", "ih") for n in ("fft", "fft2", "fftn")]
_DTYPES = ["complex64", "complex128", "float32", "float64", "int64"]


@pytest.mark.parametrize("out_dtype", _DTYPES)
@pytest.mark.parametrize("name", _TRANSFORMS)
def test_transform_out_matches_torch(device, name, out_dtype):
    torch = torch_or_skip()
    if device != "cpu":
        pytest.skip("complex tensors live only on the cpu backend (see test_fft.py)")
    signal = _REAL if name.startswith(("r", "ih")) else _COMPLEX
    check_out_call(torch, name, "fft", device, (signal,), out_dtype, out_size=(4, 6))


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies_out_matches_torch(device, name, out_dtype):
    torch = torch_or_skip()
    check_out_call(torch, name, "fft", device, (6, 0.5), out_dtype)


def test_shift_takes_no_out():
    import tensorlib
    with pytest.raises(TypeError):
        tensorlib.fft.fftshift(tensorlib.ones(2), out=tensorlib.empty(2))
