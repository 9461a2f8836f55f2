"""tensorlib: PyTorch's API over a Cython core and plugin backends.

`import tensorlib as torch` runs PyTorch code for the supported subset."""
import operator as _operator

from tensorlib._C.dtypes import (bool_ as bool, uint8, int8, int16, int32, int64, float16,  # noqa: A004
                                 bfloat16, float32, float64, dtype, get_default_dtype,
                                 set_default_dtype, promote_types, can_cast)
from tensorlib._C.device import device
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.promotion import result_type as _result_type
from tensorlib import backends
from tensorlib._size import Size
from tensorlib._tensor import Tensor
from tensorlib import ops

float = float32  # noqa: A001 - torch.float
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16

__version__ = "0.1.0"


def result_type(a, b):
    return _result_type((a, b))


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(t):
    return t.numel()


def set_num_threads(n):
    """Threads the CPU backend's kernels use (torch.set_num_threads)."""
    n = _operator.index(n)           # (this module's `int` is tensorlib.int32)
    if n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    backends.get("cpu").set_num_threads(n)


def get_num_threads():
    return backends.get("cpu").get_num_threads()


# every op family's functions and Tensor methods (tensorlib/ops/__init__.py)
ops.install(Tensor, globals())
swapaxes = transpose  # noqa: F821 - installed above

# autograd's formulas are written in the ops above, so it is imported last
from tensorlib import autograd  # noqa: E402
from tensorlib.autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: E402
                                is_grad_enabled, is_inference_mode_enabled)
from tensorlib import linalg, nn, opencl, optim, serialization, utils  # noqa: E402
from tensorlib.serialization import load, save  # noqa: E402
from tensorlib import cuda  # noqa: E402
import tensorlib.utils.data  # noqa: E402,F401 - tensorlib.utils.data after `import tensorlib`
