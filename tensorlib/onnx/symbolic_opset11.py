"""torch.onnx.symbolic_opset11: in PyTorch, the TorchScript exporter's opset-11 symbolics, which
custom symbolics (torchvision's) call as helpers. tensorlib's exporter lowers its own graph
capture and has none of them: a custom symbolic writes its nodes with `g.op` (see
tensorlib/onnx/_custom_symbolics.py). Using one raises NotImplementedError naming it."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(
        f"torch.onnx.symbolic_opset11.{name}: tensorlib's ONNX exporter does not provide "
        f"PyTorch's TorchScript symbolic helpers; write the nodes with g.op(...)")
