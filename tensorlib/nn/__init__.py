"""tensorlib.nn: modules, parameters, functional, init and utils (torch.nn's layout)."""
from tensorlib.nn.parameter import (Buffer, Parameter, UninitializedBuffer,
                                    UninitializedParameter)
from tensorlib.nn.modules import *  # noqa: F401,F403
from tensorlib.nn.modules import __all__ as _modules_all
from tensorlib.nn import functional, init, modules, parameter, utils  # noqa: F401
from tensorlib.nn import parallel  # noqa: F401
from tensorlib.nn import attention  # noqa: F401
from tensorlib.nn.parallel import DataParallel
from tensorlib.nn import common_types, grad  # noqa: F401
from tensorlib.nn._factory import factory_kwargs
from tensorlib.nn import _native_bindings  # noqa: F401 - torch._C._nn

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           "functional", "init", "utils", "parameter", "modules",
           "parallel", "DataParallel", "factory_kwargs", *_modules_all]
