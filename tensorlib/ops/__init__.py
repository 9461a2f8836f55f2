"""The ops, one module per family. Each module lists the functions it exports as
`tensorlib.<name>` in `__all__`, and the Tensor methods it adds in `TENSOR_METHODS`
(name -> function); `install` wires both up when tensorlib is imported, and gives the
functions that take `out=` in PyTorch their `out=` (`_out.py`) and the factories their
`pin_memory=` (`pinned.py`)."""
import importlib

FAMILIES = ("creation", "pointwise", "reduction", "linalg", "shape", "indexing", "copy",
            "random", "joining", "sorting", "special",
            "decompositions", "combinatorics", "complex", "pointwise_math", "statistics",
            "differences", "matrices", "pinned",
            "memory_format")


def modules():
    return [importlib.import_module(f"tensorlib.ops.{name}") for name in FAMILIES]


def install(tensor_cls, namespace):
    """Attach every family's TENSOR_METHODS to Tensor and export its __all__ into
    `namespace` (tensorlib's globals)."""
    for module in modules():
        for name, fn in getattr(module, "TENSOR_METHODS", {}).items():
            setattr(tensor_cls, name, fn)
        for name in getattr(module, "__all__", ()):
            namespace[name] = getattr(module, name)
    from tensorlib.ops import _out         # out= on the functions that take it in PyTorch
    _out.install(namespace)
    tensor_cls.resize_ = _out.resize_
    from tensorlib.ops import pinned        # pin_memory= on the factories that take it
    pinned.install_factories(namespace)


def __getattr__(name):
    """tensorlib.ops.<namespace>: the custom ops of tensorlib.library.custom_op."""
    if name.startswith("_") or name in FAMILIES:     # submodules being imported
        raise AttributeError(f"module 'tensorlib.ops' has no attribute '{name}'")
    from tensorlib.library.custom_ops import namespace
    return namespace(name)
