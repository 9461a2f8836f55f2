"""torch.compiler's hints about user functions, for tensorlib's capture.

tensorlib's capture records the kernels a call runs, whatever Python produced them (see
capture.py), so it never needs PyTorch's frontend hints to see through a function."""
from tensorlib.compiler.api import is_compiling


def allow_in_graph(fn):
    """torch.compiler.allow_in_graph: keep `fn` in the captured graph rather than breaking the
    graph at it. The capture already records the kernels `fn` runs, so `fn` (or each function
    of a list or tuple) is returned unchanged, after checking it is callable."""
    functions = fn if isinstance(fn, (list, tuple)) else [fn]
    for f in functions:
        if not callable(f):
            raise TypeError(f"allow_in_graph expects a callable, got {type(f).__name__}")
    return fn


def is_dynamo_compiling():
    """torch.compiler.is_dynamo_compiling: true while tensorlib's capture traces a call."""
    return is_compiling()
