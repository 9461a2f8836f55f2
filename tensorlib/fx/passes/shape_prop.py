"""ShapeProp: run a GraphModule on example inputs and record each node's result shape and
dtype in `node.meta["tensor_meta"]` (and the value's metadata in `node.meta["val"]`)."""
from collections import namedtuple

from tensorlib.fx.interpreter import Interpreter

TensorMetadata = namedtuple("TensorMetadata", ["shape", "dtype", "requires_grad", "stride",
                                               "memory_format", "is_quantized", "qparams"])


def _extract(result):
    from tensorlib._tensor import Tensor
    if isinstance(result, Tensor):
        return TensorMetadata(result.shape, result.dtype, result.requires_grad,
                              result.stride(), None, False, {})
    if type(result) in (tuple, list):
        return type(result)(_extract(r) for r in result)
    return None


class ShapeProp(Interpreter):
    def run_node(self, n):
        result = super().run_node(n)
        meta = _extract(result)
        if meta is not None:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        return super().run(*args)
