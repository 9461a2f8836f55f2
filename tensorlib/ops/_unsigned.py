"""The refusal PyTorch gives uint16/uint32/uint64 (its barebones types) in the ops it has no
kernel for them: NotImplementedError, a RuntimeError, naming the kernel and the type."""
from tensorlib._C import dtypes as dt

BAREBONES = (dt.uint16, dt.uint32, dt.uint64)


def refuse_unsigned(kernel, dtype):
    """Raise as PyTorch's `kernel` does when dtype is uint16/32/64; nothing otherwise."""
    if dtype in BAREBONES:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dtype.scalar_name}\'')
