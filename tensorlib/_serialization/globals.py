"""Which classes and functions a checkpoint may name, and how a name is turned into one.

A checkpoint names a class by its path, `module.qualname`. Loading turns a path into an object
only when it is

- tensorlib's own: the path starts with `tensorlib.` and the object found there is defined
  in tensorlib (its own `__module__.__qualname__` is that path), so a path cannot reach numpy,
  os or anything else that a tensorlib module happens to import; and it is of a kind that
  the use allows (classes outside the Cython core; see `_tensorlib_own`);
- given by the user with `safe_globals([...])` (a context manager, for one load) or
  `add_safe_globals([...])` (for the process), as in PyTorch; entries are objects, or
  `(object, "path")` pairs to allow an object under another name;
- one of a few builtin types (dict, list, set, ...) that `defaultdict` factories name.

Anything else raises UnsafeGlobalError naming the path and saying how to allow it. Nothing is
ever imported except tensorlib's own modules.
"""
import collections
import importlib
import threading

from tensorlib._serialization.errors import UnsafeGlobalError

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "path_of", "resolve"]

_registered = {}
_local = threading.local()

_BUILTINS = {f"builtins.{t.__name__}": t for t in (
    dict, list, set, frozenset, tuple, int, float, complex, bool, str, bytes, bytearray,
    slice, range)}
_BUILTINS.update({"collections.OrderedDict": collections.OrderedDict,
                  "collections.defaultdict": collections.defaultdict,
                  "collections.Counter": collections.Counter,
                  "collections.deque": collections.deque})


def path_of(obj):
    """`module.qualname` of a class or function."""
    return f"{obj.__module__}.{obj.__qualname__}"


def _entries(objs):
    out = {}
    for entry in objs:
        if isinstance(entry, tuple):
            obj, path = entry
        else:
            obj, path = entry, path_of(entry)
        out[path] = obj
    return out


def add_safe_globals(safe_globals):
    """Allow these classes/functions (or `(object, "path")` pairs) in every later load."""
    _registered.update(_entries(safe_globals))


def get_safe_globals():
    """What add_safe_globals allowed (objects, or `(object, path)` where the path differs)."""
    return [obj if path == _path_or_none(obj) else (obj, path)
            for path, obj in _registered.items()]


def _path_or_none(obj):
    try:
        return path_of(obj)
    except AttributeError:
        return None


def clear_safe_globals():
    """Forget what add_safe_globals allowed."""
    _registered.clear()


class safe_globals:
    """`with safe_globals([MyModule, ...]): tensorlib.load(f)` allows these classes and
    functions inside the block only (this thread)."""

    def __init__(self, safe_globals):
        self._allowed = _entries(safe_globals)

    def __enter__(self):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self._allowed)
        return self

    def __exit__(self, *exc):
        _local.stack.pop()
        return False


def _user(path):
    for allowed in reversed(getattr(_local, "stack", None) or ()):
        if path in allowed:
            return allowed[path]
    if path in _registered:
        return _registered[path]
    return _BUILTINS.get(path)


def _tensorlib_object(path):
    if not path.startswith("tensorlib."):
        return None
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(module_name)
        except ImportError:
            continue
        try:
            for name in parts[i:]:
                obj = getattr(obj, name)
        except AttributeError:
            return None
        return obj if _path_or_none(obj) == path else None
    return None


def _tensorlib_own(path, kind):
    """tensorlib's object at `path` when `kind` of use allows it:

    - "class": a class to rebuild as cls.__new__(cls) + its state (native format): any
      Python class of tensorlib outside the Cython core, except tensors (they have their own
      node);
    - "tensor class": a Tensor subclass, rebuilt as cls(tensor, requires_grad);
    - "global": a reference that is stored, never called by loading: those classes, and the
      functions of tensorlib.nn.functional;
    - "pickle": something a pickle may call with arguments of its choosing (PyTorch reader):
      only Module subclasses (their constructors only build layers).
    """
    import tensorlib
    obj = tensorlib.Tensor if path == "tensorlib.Tensor" else _tensorlib_object(path)
    if obj is None:
        return None
    is_class = isinstance(obj, type)
    if kind == "tensor class":
        return obj if is_class and issubclass(obj, tensorlib.Tensor) else None
    core = obj.__module__.startswith("tensorlib._C")
    if kind in ("class", "global") and is_class and not core and \
            not issubclass(obj, tensorlib.Tensor):
        return obj
    if kind == "global" and not is_class and obj.__module__ == "tensorlib.nn.functional":
        return obj
    if kind == "pickle" and is_class:
        try:
            from tensorlib.nn import Module
        except ImportError:
            return None
        return obj if issubclass(obj, Module) else None
    return None


def resolve(path, what="global", kind="global"):
    """The object a checkpoint names by `path` for a use of `kind` (see _tensorlib_own),
    when allowed; else UnsafeGlobalError."""
    obj = _user(path) if isinstance(path, str) else None
    if obj is None and isinstance(path, str):
        obj = _tensorlib_own(path, kind)
    if obj is None:
        short = str(path).rsplit(".", 1)[-1]
        raise UnsafeGlobalError(
            f"Weights only load failed: the checkpoint names the {what} {path!r}, which is "
            f"not allowed (nothing was imported or run). If you trust this checkpoint, allow "
            f"it with `with tensorlib.serialization.safe_globals([{short}]): ...` or "
            f"tensorlib.serialization.add_safe_globals([{short}]).")
    return obj


def is_allowed(path, kind="global"):
    try:
        resolve(path, kind=kind)
    except UnsafeGlobalError:
        return False
    return True

