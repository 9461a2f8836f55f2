"""tensorlib: PyTorch's API over a Cython core and plugin backends.

`import tensorlib as torch` runs PyTorch code for the supported subset."""
import operator as _operator

from tensorlib._C.dtypes import (bool_ as bool, uint8, int8, int16, int32, int64, float16,  # noqa: A004
                                 bfloat16, float32, float64, dtype, get_default_dtype,
                                 set_default_dtype, promote_types, can_cast)
from tensorlib._C.dtypes import complex64, complex128, uint16, uint32, uint64  # noqa: E402
from tensorlib._C.device import device
from tensorlib._C.broadcast import broadcast_shapes as _broadcast_shapes
from tensorlib._C.promotion import result_type as _result_type
from tensorlib import backends
from tensorlib._size import Size
from tensorlib._tensor import Tensor
from tensorlib._legacy import *  # noqa: F401,F403 - FloatTensor, LongTensor, ...
from tensorlib import ops

float = float32  # noqa: A001 - torch.float
double = float64
cfloat, cdouble = complex64, complex128
half = float16
long = int64
int = int32  # noqa: A001
short = int16

from math import e, inf, nan, pi  # noqa: E402 - torch.pi, torch.e, torch.inf, torch.nan
newaxis = None                     # torch.newaxis, x[:, torch.newaxis]

__version__ = "0.1.0"


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to, as a Size (torch.broadcast_shapes)."""
    return Size(_broadcast_shapes(*shapes))


def result_type(tensor1, tensor2):
    return _result_type((tensor1, tensor2))


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
# Tensor subclasses keep their type through ops and reach __torch_function__ (torch.overrides)
from tensorlib import _tensor_subclass  # noqa: E402
_tensor_subclass.install(Tensor)
is_floating_point, is_signed = Tensor.is_floating_point, Tensor.is_signed
is_nonzero, is_same_size = Tensor.is_nonzero, Tensor.is_same_size
from tensorlib._dtype_info import finfo, iinfo  # noqa: E402

# autograd's formulas are written in the ops above, so it is imported last
from tensorlib import autograd  # noqa: E402
from tensorlib.autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: E402
                                is_grad_enabled, is_inference_mode_enabled)
from tensorlib import linalg, nn, opencl, optim, serialization, utils  # noqa: E402
from tensorlib import special  # noqa: E402 - torch.special
from tensorlib import distributions  # noqa: E402 - torch.distributions
from tensorlib.serialization import load, save  # noqa: E402
from tensorlib import compiler, export, fx, jit, onnx  # noqa: E402
from tensorlib.compiler import compile  # noqa: E402,A004
# runtime surface PyTorch programs touch (issue 13)
from tensorlib import accelerator, hub, multiprocessing, testing  # noqa: E402,F401
from tensorlib import _pickle_ops  # noqa: E402,F401 - ops pickle by their public names
from tensorlib._global_flags import *  # noqa: E402,F401,F403
from tensorlib._runtime_misc import *  # noqa: E402,F401,F403 - typename, set_warn_always, ...
from tensorlib._storage_typed import *  # noqa: E402,F401,F403 - TypedStorage, FloatStorage...
from tensorlib._tensor_str import set_printoptions  # noqa: E402,F401
from tensorlib._default_device import get_default_device, set_default_device  # noqa: E402
from tensorlib._toplevel_nn import *  # noqa: E402,F401,F403 - torch.conv2d, torch.dropout, ...
from tensorlib._toplevel_nn_extra import *  # noqa: E402,F401,F403 - torch.embedding, cells
from tensorlib._toplevel_embedding_bag import embedding_bag  # noqa: E402,F401
from tensorlib._method_aliases import *  # noqa: E402,F401,F403 - torch.exp_, torch.greater, ...
from tensorlib import cuda  # noqa: E402
import tensorlib.utils.data  # noqa: E402,F401 - tensorlib.utils.data after `import tensorlib`
from tensorlib import distributed  # noqa: E402,F401 - torch.distributed (no MPI until a world > 1)
from tensorlib import fft, func  # noqa: E402 - torch.fft, torch.func
from tensorlib.func import vmap  # noqa: E402 - torch.vmap is torch.func.vmap
from tensorlib import masked  # noqa: E402 - torch.masked
from tensorlib import quasirandom, random, return_types, signal  # noqa: E402 - torch.random, ...
from tensorlib import futures  # noqa: E402 - torch.futures; torch.Future is its base class
from tensorlib import __config__  # noqa: E402 - torch.__config__.show(), parallel_info()
Future = futures._BaseFuture
from tensorlib._global_switches import *  # noqa: E402,F401,F403 - has_mkl, is_anomaly_enabled, ...
from tensorlib.fft._stft import istft, stft  # noqa: E402
# production tools (issue 17): mixed precision, profiler, custom ops
from tensorlib import amp, cpu, library, profiler  # noqa: E402
from tensorlib.amp import GradScaler  # noqa: E402 - torch.GradScaler is torch.amp's
import tensorlib.autograd.profiler  # noqa: E402,F401
from tensorlib.amp import (autocast, is_autocast_enabled, get_autocast_dtype,  # noqa: E402
                           set_autocast_enabled, set_autocast_dtype, clear_autocast_cache,
                           is_autocast_cache_enabled, set_autocast_cache_enabled)
# torch.sparse and the layouts; last: sparse tensors refuse the Tensor methods installed above
from tensorlib import sparse  # noqa: E402
sparse.install(Tensor, globals())
# torch.ao.quantization, its quantized dtypes and tensors, and the torch.quantization alias
from tensorlib.ao.quantization import _qtensor as _quantized  # noqa: E402
_quantized.install(Tensor, globals())
from tensorlib import ao, quantization  # noqa: E402
import tensorlib.nn.quantized  # noqa: E402,F401 - torch.nn.quantized, the older name
del _quantized
# torch.overrides: the public functions ops.install did not wrap also hand a call failing on a
# tensor-like argument (an fx Proxy) to its __torch_function__
from tensorlib import overrides, _toplevel_nn, _toplevel_nn_extra  # noqa: E402
overrides.make_overridable(globals(), _toplevel_nn.__all__)
overrides.make_overridable(globals(), _toplevel_nn_extra.__all__)
for _namespace in (nn.functional, linalg, special, masked):
    overrides.make_overridable(_namespace, _namespace.__all__)
del _namespace
# torch's builtins do not bind as methods when kept on a class (`conv = torch.conv2d`)
from tensorlib import _function_binding  # noqa: E402
_function_binding.unbind_builtins(globals(), nn.functional, (linalg, special))
del _function_binding
legacy_contiguous_format = contiguous_format  # noqa: F405 - torch's older name of the format
