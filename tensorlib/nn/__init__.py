"""tensorlib.nn: modules, parameters, functional, init and utils (torch.nn's layout)."""
from tensorlib.nn.parameter import Buffer, Parameter
from tensorlib.nn.modules import *  # noqa: F401,F403
from tensorlib.nn.modules import __all__ as _modules_all
from tensorlib.nn import functional, init, modules, parameter, utils  # noqa: F401

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", "parameter", "modules",
           *_modules_all]
