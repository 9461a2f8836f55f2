"""torch._dynamo: the names libraries reach for under PyTorch's compiler frontend, answered by
tensorlib.compiler (tensorlib.compile captures by running Python, not by rewriting bytecode;
see tensorlib/compiler). Names of Dynamo's bytecode machinery are not provided."""
from tensorlib._dynamo import utils
from tensorlib.compiler.api import config, disable, is_compiling, list_backends, reset
from tensorlib.compiler.hints import allow_in_graph
from tensorlib.compiler.module import OptimizedModule

__all__ = ["allow_in_graph", "config", "disable", "is_compiling", "list_backends", "reset",
           "OptimizedModule", "utils"]
