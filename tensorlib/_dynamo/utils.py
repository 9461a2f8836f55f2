"""torch._dynamo.utils: `is_compile_supported`, which libraries ask before taking a path meant
for torch.compile (torchvision's pure-Python roi_align)."""


def is_compile_supported(device_type):
    """Whether tensorlib.compile runs on this device type: on every backend that can compute
    now (it records the kernels the backend runs; a backend without fusion runs them as
    recorded)."""
    import tensorlib
    return tensorlib.device(device_type).type in tensorlib.backends.available()
