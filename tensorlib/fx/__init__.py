"""tensorlib.fx: PyTorch FX's graph IR and symbolic tracer, with its names, so FX code and
custom compile backends `(graph_module, example_inputs) -> callable` port.

Layout: `node` (Node, map_arg), `graph` (Graph and its Python code), `graph_module`
(GraphModule), `proxy` (Proxy, Tracer, symbolic_trace, wrap), `interpreter` (Interpreter,
Transformer), `subgraph_rewriter` (replace_pattern), `passes.shape_prop` (ShapeProp)."""
from tensorlib.fx.graph import Graph
from tensorlib.fx.graph_module import GraphModule
from tensorlib.fx.interpreter import Interpreter, Transformer
from tensorlib.fx.node import Node, map_arg
from tensorlib.fx.proxy import Proxy, TraceError, Tracer, symbolic_trace, wrap
from tensorlib.fx import passes, subgraph_rewriter  # noqa: F401
from tensorlib.fx.subgraph_rewriter import replace_pattern  # noqa: F401

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "Proxy", "TraceError", "Tracer",
           "Transformer", "map_arg", "replace_pattern", "symbolic_trace", "wrap"]
