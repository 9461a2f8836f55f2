"""tensorlib: PyTorch's API over a Cython core and plugin backends.

`import tensorlib as torch` runs PyTorch code for the supported subset."""
from tensorlib._C.dtypes import (bool_ as bool, uint8, int8, int16, int32, int64, float16,  # noqa: A004
                                 bfloat16, float32, float64, dtype, get_default_dtype,
                                 set_default_dtype, promote_types, can_cast)
from tensorlib._C.device import device
from tensorlib._C.broadcast import broadcast_shapes
from tensorlib._C.promotion import result_type as _result_type
from tensorlib import backends
from tensorlib._size import Size
from tensorlib._tensor import Tensor
from tensorlib.ops.creation import (tensor, as_tensor, from_numpy, empty, zeros, ones, full,
                                    empty_like, zeros_like, ones_like, full_like, arange)
from tensorlib.ops.pointwise import *  # noqa: F401,F403 - the elementwise ops
from tensorlib.ops.reduction import (sum, mean, prod, amax, amin, max, min, argmax, argmin,  # noqa: A004
                                     any, all, sum_to_size)
from tensorlib.ops.linalg import matmul, mm
from tensorlib.ops.shape import (view, reshape, flatten, permute, transpose, t, squeeze,
                                 unsqueeze, narrow, select, unfold, as_strided, clone,
                                 diagonal)

float = float32  # noqa: A001 - torch.float
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
swapaxes = transpose

__version__ = "0.1.0"


def result_type(a, b):
    return _result_type((a, b))


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(t):
    return t.numel()


# every op family's functions and Tensor methods (tensorlib/ops/__init__.py)
from tensorlib import ops  # noqa: E402
ops.install(Tensor, globals())

# autograd's formulas are written in the ops above, so it is imported last
from tensorlib import autograd  # noqa: E402
from tensorlib.autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: E402
                                is_grad_enabled, is_inference_mode_enabled)
