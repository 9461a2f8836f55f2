"""tensorlib.compiler: torch.compile's machinery and torch.compiler's names.

The pipeline, one module per stage: `capture` (kernels recorded per call, graph breaks where
Python needs a value), `plan` (segments, liveness, fusion groups, the plan cache), the
generated kernels (`tensorlib.codegen.fused` + each backend's generator), `api` (the compiled
callable: signatures, the cache limit, custom backends), `module` (OptimizedModule), `hints`
(torch.compiler.allow_in_graph & co.)."""
from tensorlib.compiler.api import (CompiledFunction, compile, config, disable, is_compiling,
                                    list_backends, reset)
from tensorlib.compiler.capture import GraphBreakError
from tensorlib.compiler.hints import allow_in_graph, is_dynamo_compiling

__all__ = ["compile", "config", "disable", "is_compiling", "list_backends", "reset",
           "CompiledFunction", "GraphBreakError", "allow_in_graph", "is_dynamo_compiling"]
