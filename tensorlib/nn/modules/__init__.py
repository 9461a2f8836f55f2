"""The layers of tensorlib.nn, one concept per file (as torch/nn/modules)."""
from tensorlib.nn.modules.module import Module
from tensorlib.nn.modules.container import (Container, ModuleDict, ModuleList, ParameterDict,
                                            ParameterList, Sequential)
from tensorlib.nn.modules.linear import Bilinear, Identity, Linear
from tensorlib.nn.modules.flatten import Flatten, Unflatten
from tensorlib.nn.modules.activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink,
                                             Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                                             LogSigmoid, RReLU, LogSoftmax, Mish, PReLU,
                                             ReLU, ReLU6,
                                             Sigmoid, SiLU, Softmax, Softmax2d, Softmin,
                                             Softplus, Softshrink, Softsign, Tanh, Tanhshrink,
                                             Threshold, MultiheadAttention)

__all__ = ["Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict", "Identity", "Linear", "Bilinear", "Flatten", "Unflatten",
           "Threshold", "ReLU", "ReLU6", "LeakyReLU", "RReLU", "PReLU", "ELU", "CELU", "SELU",
           "GELU",
           "SiLU", "Mish", "Sigmoid", "Tanh", "Softplus", "Softsign", "Hardtanh", "Hardswish",
           "Hardsigmoid", "Softmax", "Softmin", "LogSoftmax", "Softmax2d", "LogSigmoid",
           "Tanhshrink", "Hardshrink", "Softshrink", "GLU", "MultiheadAttention"]

# Layer families, one file each (torch/nn/modules layout); each lists its classes in __all__.
from tensorlib.nn.modules.batchnorm import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.conv import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.distance import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.dropout import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.fold import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.instancenorm import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.loss import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.normalization import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.padding import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.pixelshuffle import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.pooling import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.rnn import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.sparse import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.transformer import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.upsampling import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.lazy import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.syncbatchnorm import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.adaptive import *  # noqa: E402,F401,F403


def _family_names():
    import importlib
    families = ("batchnorm", "conv", "distance", "dropout", "fold", "instancenorm", "loss",
                "normalization", "padding", "pixelshuffle", "pooling", "rnn", "sparse",
                "transformer", "upsampling", "lazy", "syncbatchnorm", "adaptive")
    return [name for family in families
            for name in importlib.import_module(f"tensorlib.nn.modules.{family}").__all__]


__all__ += _family_names()
