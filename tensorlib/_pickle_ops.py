"""Ops pickle by reference to where they are public (`torch.sigmoid`, `Tensor.exp`,
`F.gelu`), as PyTorch's functions do: a module holding an activation function pickles. pickle
finds a function at its `__module__.__qualname__`, which for an op names the unwrapped
function it was defined as (or a local one, for the ops made in a loop), not the public
object, so each op's `__reduce__` asks here for its public path."""
import importlib

from tensorlib._C.opdef import set_pickle_reducer

_NAMESPACES = ("tensorlib", "tensorlib.nn.functional", "tensorlib.special", "tensorlib.linalg",
               "tensorlib.fft")
_paths = {}


def _public_paths():
    """id(op) -> (module, name): first namespace first; Tensor's methods as "Tensor.name"."""
    if not _paths:
        import tensorlib
        for module_name in _NAMESPACES:
            module = importlib.import_module(module_name)
            for name, obj in vars(module).items():
                _paths.setdefault(id(obj), (module_name, name))
        for name, obj in vars(tensorlib.Tensor).items():
            _paths.setdefault(id(obj), ("tensorlib", f"Tensor.{name}"))
    return _paths


def reduce_op(op):
    path = _public_paths().get(id(op))
    if path is None or load_op(*path) is not op:
        return op.__qualname__            # pickle's own lookup, and its error if it fails
    return load_op, path


def load_op(module_name, name):
    """The object at module_name's dotted `name`."""
    obj = importlib.import_module(module_name)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


set_pickle_reducer(reduce_op)
