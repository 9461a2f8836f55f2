"""torch.nn.parallel.scatter_gather: split a batch across accelerator devices and join outputs.

Libraries import `scatter` for their own multi-device paths (Captum's layer attributions with
`device_ids`). Tensors are chunked along `dim` (as `Tensor.chunk` splits) and each chunk is
moved to its device; `gather` concatenates on the target device. Both are built from
differentiable ops, so gradients flow back the way PyTorch's Scatter/Gather functions send
them. Containers are walked as PyTorch walks them: tuples, lists, dicts and namedtuples are
transposed into one per device, anything else is repeated for each device."""
import warnings

from tensorlib import accelerator
from tensorlib._C.device import device as _device
from tensorlib._tensor import Tensor
from tensorlib.ops.joining import cat

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def _accelerator_device(spec):
    """A target of scatter/gather as a device: ints and index-free names take the current
    accelerator's index; the CPU is refused, as PyTorch's _get_device_index refuses it."""
    if isinstance(spec, int):
        kind = accelerator.current_accelerator()
        if kind is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return _device(kind.type, spec)
    dev = spec if isinstance(spec, _device) else _device(spec)
    if dev.type == "cpu":
        raise ValueError(f"Expected a non cpu device, but got: {dev}")
    if dev.index is None:
        return _device(dev.type, accelerator.current_device_index())
    return dev


def _scatter_tensor(tensor, target_gpus, dim):
    devices = [_accelerator_device(t) for t in target_gpus]
    return tuple(chunk.to(dev) for chunk, dev in zip(tensor.chunk(len(devices), dim), devices))


def scatter(inputs, target_gpus, dim=0):
    """One copy of `inputs` per device in `target_gpus`, tensors split along `dim`."""
    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return _scatter_tensor(obj, target_gpus, dim)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]
    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """scatter() of positional and keyword arguments, the shorter padded with empty ones."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def _gather_tensors(tensors, target_device, dim):
    if not all(t.device.type != "cpu" for t in tensors):
        raise AssertionError("Gather function not implemented for CPU tensors")
    if target_device == "cpu" or target_device == -1:
        target = _device("cpu")
    else:
        target = _accelerator_device(target_device)
    if all(t.dim() == 0 for t in tensors) and dim == 0:
        warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                      "scalars; will instead unsqueeze and return a vector.")
        tensors = [t.view(1) for t in tensors]
    return cat([t.to(target) for t in tensors], dim)


def gather(outputs, target_device, dim=0):
    """The per-device `outputs` joined on `target_device` (-1 or "cpu": the host)."""
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            return _gather_tensors(outputs, target_device, dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs)))
        return type(out)(map(gather_map, zip(*outputs)))
    return gather_map(outputs)
