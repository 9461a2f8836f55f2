"""The ops, one module per family. Each module lists the functions it exports as
`tensorlib.<name>` in `__all__`, and the Tensor methods it adds in `TENSOR_METHODS`
(name -> function); `install` wires both up when tensorlib is imported, and gives the
functions that take `out=` in PyTorch their `out=` (`_out.py`) and the factories their
`pin_memory=` (`pinned.py`)."""
import importlib

FAMILIES = ("creation", "pointwise", "clamping", "float_checks", "reduction", "linalg", "shape", "indexing",
            "copy", "random", "joining", "triangular", "scatter_gather", "selection", "sorting",
            "special", "decompositions", "combinatorics", "complex", "pointwise_math", "statistics",
            "differences", "matrices", "windows", "view_copies", "method_aliases_inplace",
            "lu_legacy", "pinned", "bit_shifts", "scatter_views", "linalg_legacy", "lowrank",
            "random_fill", "random_multinomial", "index_writes", "aliases_extra", "segment", "tensor_methods_extra",
            "interop", "memory_format", "activations", "piecewise_activations",
            "exp_activations", "foreach")


def modules():
    return [importlib.import_module(f"tensorlib.ops.{name}") for name in FAMILIES]


def install(tensor_cls, namespace):
    """Attach every family's TENSOR_METHODS to Tensor and export its __all__ into
    `namespace` (tensorlib's globals), each taking PyTorch's NumPy keyword spellings
    (axis=, keepdims=, x1=/x2=...: `_numpy_aliases`)."""
    from tensorlib.ops._numpy_aliases import accept_aliases
    names = []
    for module in modules():
        for name, fn in getattr(module, "TENSOR_METHODS", {}).items():
            setattr(tensor_cls, name, fn)
        for name in getattr(module, "__all__", ()):
            namespace[name] = getattr(module, name)
            names.append(name)
    from tensorlib.ops import _out         # out= on the functions that take it in PyTorch
    _out.install(namespace)
    tensor_cls.resize_ = _out.resize_
    from tensorlib.ops import pinned        # pin_memory= on the factories that take it
    pinned.install_factories(namespace)
    for name in names:                      # last: around the out= and pin_memory= wrappers
        namespace[name] = accept_aliases(namespace[name])
    # every method (the families' and those written in Tensor itself); size() and stride()
    # stay as they are: metadata reads too frequent for even the wrapper's ~20 ns
    for name, fn in list(vars(tensor_cls).items()):
        if not name.startswith("_") and name not in ("size", "stride") and callable(fn) \
                and not isinstance(fn, type):
            setattr(tensor_cls, name, accept_aliases(fn))


def load_library(path):
    """torch.ops.load_library: PyTorch dlopens a shared library whose static initialisers
    register operators with libtorch's C++ dispatcher. tensorlib has no such dispatcher, and
    such a library needs libtorch itself, so this raises OSError (what PyTorch raises for a
    library it cannot load: callers such as torchvision fall back on it)."""
    raise OSError(f"torch.ops.load_library({str(path)!r}): operator libraries built against "
                  f"PyTorch's C++ library (libtorch) cannot be loaded by tensorlib; register "
                  f"operators with tensorlib.library.custom_op, or build C++ code with "
                  f"tensorlib.utils.cpp_extension")


def __getattr__(name):
    """tensorlib.ops.<namespace>: the custom ops of tensorlib.library.custom_op,
    tensorlib.ops.profiler (record_function ranges as ops) and tensorlib.ops.aten (ATen's
    overloads by name)."""
    if name.startswith("_") or name in FAMILIES:     # submodules being imported
        raise AttributeError(f"module 'tensorlib.ops' has no attribute '{name}'")
    if name == "profiler":
        from tensorlib.profiler._ops import NAMESPACE
        return NAMESPACE
    if name == "aten":
        from tensorlib.library.aten import NAMESPACE
        return NAMESPACE
    from tensorlib.library.custom_ops import namespace
    return namespace(name)
