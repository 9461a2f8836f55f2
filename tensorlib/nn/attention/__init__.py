r"""torch.nn.attention: choosing the scaled_dot_product_attention backend, and
`flex_attention` (in its own submodule, as in PyTorch).

What each SDPBackend means in tensorlib:

* ``FLASH_ATTENTION`` and ``EFFICIENT_ATTENTION`` both name the backend's fused kernels (on
  the CPU, the flash-style Cython/OpenMP kernel of tensorlib_cpu/attention_kernels.pyx,
  forward and backward). Either one enabled allows them.
* ``MATH`` is the composite path written in tensorlib ops: every device, dropout, masks that
  need a gradient, double backward of the whole op.
* ``CUDNN_ATTENTION`` and ``OVERRIDEABLE`` are accepted and recorded; no tensorlib kernel
  answers to them.

With every allowed backend unable to run a call, SDPA raises PyTorch's RuntimeError
("No available kernel"). The switches are those of tensorlib.backends.cuda
(`enable_flash_sdp`, ...), which PyTorch's context also sets.
"""
import contextlib
import enum

from tensorlib.backends import cuda as _switches

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The SDPA backends, with PyTorch's values."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


# SDPBackend -> the tensorlib.backends.cuda switch it sets
_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient",
           SDPBackend.CUDNN_ATTENTION: "cudnn"}
_DEFAULT_PRIORITY = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                     SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]
_priority = list(_DEFAULT_PRIORITY)


def _enabled():
    return [b for b in _DEFAULT_PRIORITY if b in _SWITCH
            and getattr(_switches, f"{_SWITCH[b]}_sdp_enabled")()]


def _set(backends, set_priority):
    global _priority
    for backend, switch in _SWITCH.items():
        getattr(_switches, f"enable_{switch}_sdp")(backend in backends)
    if set_priority:
        _priority = list(backends) + [b for b in _DEFAULT_PRIORITY if b not in backends]


def prefers_math():
    """Whether the priority order (sdpa_kernel(..., set_priority=True)) puts MATH before both
    fused names; SDPA then takes the composite path even where the fused kernels apply."""
    order = {b: i for i, b in enumerate(_priority)}
    return order[SDPBackend.MATH] < min(order[SDPBackend.FLASH_ATTENTION],
                                        order[SDPBackend.EFFICIENT_ATTENTION])


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    r"""Allow only `backends` (one SDPBackend or a list) for scaled_dot_product_attention in
    the block; with `set_priority`, their order is also the order of preference. The
    previous switches (and priority) come back on exit."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise AssertionError(f"Backend must be an instance of SDPBackend or a list of "
                                 f"SDPBackend instances, got {type(b).__name__}")
    global _priority
    backends = list(dict.fromkeys(backends))
    previous, previous_priority = _enabled(), list(_priority)
    try:
        _set(backends, set_priority)
        yield {}
    finally:
        _set(previous, False)
        _priority = previous_priority
