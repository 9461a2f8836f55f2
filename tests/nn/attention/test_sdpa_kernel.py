"""tensorlib.nn.attention.SDPBackend and sdpa_kernel: PyTorch's names and values, which
path scaled_dot_product_attention takes under each choice, the switches restored after."""
import pytest

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.backends import cuda as switches
from tensorlib.nn.attention import SDPBackend, sdpa_kernel

FUSED = "ScaledDotProductAttentionFusedBackward0"


def path(device="cpu"):
    q = tensorlib.randn(1, 2, 5, 4, device=device, requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q)
    return "fused" if type(out.grad_fn).__name__ == FUSED else "math"


def test_names_and_values_match_torch():
    torch = pytest.importorskip("torch")
    from torch.nn.attention import SDPBackend as TorchBackend
    assert {m.name: int(m.value) for m in SDPBackend} == {
        name: int(m.value) for name, m in TorchBackend.__members__.items()}
    assert tensorlib.nn.attention.SDPBackend is SDPBackend


def test_choice_of_path_and_restore():
    assert path() == "fused"
    with sdpa_kernel(SDPBackend.MATH):
        assert path() == "math"
        assert switches.math_sdp_enabled() and not switches.flash_sdp_enabled()
    for fused_name in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):
        with sdpa_kernel([fused_name]):
            assert path() == "fused"
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION], set_priority=True):
        assert path() == "math"
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], set_priority=True):
        assert path() == "fused"
    assert path() == "fused"
    assert all(getattr(switches, f"{k}_sdp_enabled")()
               for k in ("flash", "mem_efficient", "math", "cudnn"))


def test_no_available_kernel():
    q = tensorlib.randn(1, 2, 5, 4)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):   # dropout needs the composite path
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert F.scaled_dot_product_attention(q, q, q).shape == (1, 2, 5, 4)
    with pytest.raises(AssertionError, match="SDPBackend"):
        with sdpa_kernel("math"):
            pass


def test_other_devices_take_the_composite_path(device):
    assert path(device) == ("fused" if device == "cpu" else "math")
