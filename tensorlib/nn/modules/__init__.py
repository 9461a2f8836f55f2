"""The layers of tensorlib.nn, one concept per file (as torch/nn/modules)."""
from tensorlib.nn.modules.module import Module
from tensorlib.nn.modules.container import (ModuleDict, ModuleList, ParameterDict,
                                            ParameterList, Sequential)
from tensorlib.nn.modules.linear import Bilinear, Identity, Linear
from tensorlib.nn.modules.flatten import Flatten, Unflatten
from tensorlib.nn.modules.activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink,
                                             Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                                             LogSigmoid, LogSoftmax, Mish, PReLU, ReLU, ReLU6,
                                             Sigmoid, SiLU, Softmax, Softmax2d, Softmin,
                                             Softplus, Softshrink, Softsign, Tanh, Tanhshrink,
                                             Threshold)

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict", "Identity", "Linear", "Bilinear", "Flatten", "Unflatten",
           "Threshold", "ReLU", "ReLU6", "LeakyReLU", "PReLU", "ELU", "CELU", "SELU", "GELU",
           "SiLU", "Mish", "Sigmoid", "Tanh", "Softplus", "Softsign", "Hardtanh", "Hardswish",
           "Hardsigmoid", "Softmax", "Softmin", "LogSoftmax", "Softmax2d", "LogSigmoid",
           "Tanhshrink", "Hardshrink", "Softshrink", "GLU"]
