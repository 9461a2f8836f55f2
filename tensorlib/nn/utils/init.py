"""nn.utils.skip_init: a module whose parameters and buffers are left uninitialized.

PyTorch builds the module on the meta device and then calls `to_empty`; tensorlib builds it
on the requested device with every `nn.init` initializer made a no-op for the constructor's
duration (`nn.init.skipped`). The conditions are PyTorch's: the class takes a `device`
argument, and its constructor computes nothing on its parameters but their initialization
(in-place tensor methods such as `fill_` called directly still run)."""
import inspect

from tensorlib.nn import init
from tensorlib.nn.modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    r"""Instantiate `module_cls(*args, **kwargs)` without initializing its parameters and
    buffers (their values are whatever `empty` gave)."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    with init.skipped():
        return module_cls(*args, **kwargs)
