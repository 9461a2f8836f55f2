"""QuantStub / DeQuantStub / QuantWrapper: the markers of where a model's tensors would be
quantized and dequantized by static quantization's convert. Before convert (and in tensorlib,
whose static convert is not provided) they pass their input through, as PyTorch's do; model
code (torchvision's quantizable models) builds them unconditionally."""
from tensorlib.nn.modules.module import Module


class QuantStub(Module):
    """Where float tensors would become quantized: identity until converted."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(Module):
    """Where quantized tensors would become float again: identity until converted."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantWrapper(Module):
    """module between a QuantStub and a DeQuantStub, which take the module's qconfig."""

    def __init__(self, module):
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X):  # noqa: N803 - PyTorch's argument name
        return self.dequant(self.module(self.quant(X)))
