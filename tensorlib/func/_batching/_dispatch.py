"""Which batch rule runs a call that reached BatchedTensor.__torch_function__.

Rules are found by the op's name (functions, Tensor methods, operators and properties
report their names the same way); a rule returns NotImplemented for argument forms it does
not cover, and the call then takes the per-sample loop (`_fallback.py`)."""
from tensorlib import _tensor_subclass
from tensorlib.func._batching import _fallback
from tensorlib.func._batching._batched import metadata, top_level

RULES = {}          # op name -> rule(func, level, args, kwargs)
# ops of another namespace sharing a name with a ruled one, with other semantics
_SHADOWED = {("tensorlib.ops.linalg", "norm"), ("tensorlib.ops.factorizations", "diagonal")}
# ops that only read the logical fields (shape, dtype, device) of their arguments
_METADATA = {"shape", "dtype", "device", "layout", "ndim", "size", "dim", "ndimension",
             "numel", "nelement", "is_floating_point", "is_complex", "is_signed",
             "element_size", "__len__", "is_cuda", "is_cpu", "is_sparse", "is_quantized",
             "is_meta", "get_device", "itemsize", "nbytes", "is_inference"}


def register(*names):
    def deco(rule):
        for n in names:
            RULES[n] = rule
        return rule
    return deco


def op_name(func):
    """The op's name: a property's for the `__get__` PyTorch reports for properties."""
    owner = getattr(func, "__self__", None)
    if getattr(func, "__name__", None) == "__get__" and isinstance(owner, property):
        for name, wrapper in _tensor_subclass._wrappers.items():
            if wrapper is owner:
                return name
        return None
    return getattr(func, "__name__", None)


def dispatch(func, args, kwargs):
    level = top_level(args, kwargs)
    name = op_name(func)
    if name in _METADATA:
        return metadata(func, args, kwargs)
    rule = RULES.get(name)
    if rule is not None and (getattr(func, "__module__", None), name) not in _SHADOWED:
        out = rule(func, level, args, kwargs)
        if out is not NotImplemented:
            return out
    return _fallback.per_sample(func, name, level, args, kwargs)
