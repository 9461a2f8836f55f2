"""torch.library.Library: registering implementations of custom ops per dispatch key, for code
written against PyTorch's dispatcher (torchvision registers its Meta and Autocast kernels so).

tensorlib picks kernels by device type, so each key maps onto what tensorlib.library has:
- CPU / CUDA: the kernel for that device type; PrivateUse1 (PyTorch's out-of-tree backend
  key): the kernel for every other tensorlib backend (opencl...).
- Meta: the fake kernel (`register_fake`), which runs on meta tensors.
- CompositeExplicitAutograd: the kernel for every device type without its own;
  CompositeImplicitAutograd: a function of other ops, run with autograd through them.
- AutocastCPU / AutocastCUDA / ... : run instead of the op while autocast is on for that device
  type (it turns autocast off with `_ExcludeDispatchKeyGuard` and calls the op again).
The Autograd keys (use `register_autograd`), boxed fallbacks and the other keys, which name
dispatcher layers tensorlib does not have, raise NotImplementedError naming them. Schemas are
not parsed: ops are defined with `custom_op`, and `define` says so."""
import tensorlib
from tensorlib.library import custom_ops
from tensorlib.library.dispatch_keys import DispatchKey

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_DEF_NAMESPACES = set()           # namespaces a "DEF" library holds, as PyTorch allows one
_NAMED_DEVICES = {"CPU": "cpu", "CUDA": "cuda"}
_AUTOCAST = {"AutocastCPU": "cpu", "AutocastCUDA": "cuda", "AutocastXPU": "xpu",
             "AutocastMPS": "mps", "AutocastHPU": "hpu", "AutocastIPU": "ipu"}


def _other_backends():
    """The tensorlib backends PyTorch has no key of its own for: its PrivateUse1."""
    return [b.name for b in tensorlib.backends.list()
            if b.name not in ("cpu", "cuda", "meta")]


def _qualname(ns, op_name):
    """"ns::name" for an op given as its name, "ns::name", "name.overload" or a CustomOpDef."""
    if isinstance(op_name, custom_ops.CustomOpDef):
        return op_name._qualname
    if not isinstance(op_name, str):
        raise TypeError(f"impl(): expected the op's name (str) or the op, got "
                        f"{type(op_name).__name__}")
    name = op_name if "::" in op_name else f"{ns}::{op_name}"
    base, _, overload = name.partition(".")
    if overload not in ("", "default"):
        raise NotImplementedError(f"{name}: tensorlib's custom ops have one signature, no "
                                  f"overloads besides 'default'")
    return base


def _registration(key, fn):
    """What registering fn under dispatch key `key` does to a CustomOpDef."""
    if key in _NAMED_DEVICES or key == "PrivateUse1":
        types = [_NAMED_DEVICES[key]] if key in _NAMED_DEVICES else _other_backends()
        return lambda op: op.register_kernel(types, fn) if types else None
    if key == "Meta":
        return lambda op: op.register_fake(fn)
    if key == "CompositeExplicitAutograd":
        return lambda op: setattr(op, "_default", fn)
    if key == "CompositeImplicitAutograd":
        return lambda op: setattr(op, "_implicit", fn)
    if key in _AUTOCAST or key == "AutocastPrivateUse1":
        types = [_AUTOCAST[key]] if key in _AUTOCAST else _other_backends()
        return lambda op: op._autocast.update(dict.fromkeys(types, fn))
    if key.startswith("Autograd"):
        raise NotImplementedError(f"Library.impl(..., '{key}'): tensorlib's custom ops take "
                                  f"their autograd from torch.library.register_autograd")
    raise NotImplementedError(f"Library.impl(..., '{key}'): the {key} dispatch key names a "
                              f"dispatcher layer tensorlib does not have")


class Library:
    """torch.library.Library(ns, kind, dispatch_key=""): kind "DEF" (one per namespace),
    "IMPL" or "FRAGMENT"; `impl` registers a function for an op under a dispatch key (the
    library's when none is given)."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if not isinstance(ns, str) or not ns.isidentifier():
            raise ValueError(f"Library namespace must be an identifier, got {ns!r}")
        if dispatch_key and dispatch_key not in DispatchKey.__members__:
            raise ValueError(f"Unknown dispatch key: {dispatch_key}")
        if kind == "DEF":
            if ns in _DEF_NAMESPACES:
                raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the "
                                   f"namespace {ns}; please put all of your definitions in a "
                                   f"single TORCH_LIBRARY block (or use a 'FRAGMENT' library)")
            _DEF_NAMESPACES.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key

    def define(self, schema, alias_analysis="", *, tags=()):
        raise NotImplementedError(
            f"Library.define({schema!r}): tensorlib does not parse operator schemas; define "
            f"the op with torch.library.custom_op('{self.ns}::name', mutates_args=...) on a "
            f"Python function")

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("Library.fallback: tensorlib has no boxed per-key fallbacks "
                                  "(kernels are chosen by op and device type)")

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """Register fn for the op under dispatch_key (default: the library's, else
        CompositeImplicitAutograd, as PyTorch). An op not defined yet gets it when it is."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if with_keyset:
            raise NotImplementedError("Library.impl(with_keyset=True): tensorlib calls kernels "
                                      "without a dispatch key set")
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if isinstance(key, DispatchKey):
            key = key.name
        if key not in DispatchKey.__members__:
            raise ValueError(f"Unknown dispatch key: {key}")
        qualname = _qualname(self.ns, op_name)
        custom_ops._when_defined(qualname, _registration(key, fn))

    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=False):
        """What torch.library.register_fake(..., lib=this) calls."""
        custom_ops.register_fake(_qualname(self.ns, op_name), fn)

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"
