"""tensorlib.compiler: torch.compile's machinery and torch.compiler's names.

The pipeline, one module per stage: `capture` (kernels recorded per call, graph breaks where
Python needs a value), `plan` (segments, liveness, fusion groups, the plan cache), the
generated kernels (`tensorlib.codegen.fused` + each backend's generator), `api` (the compiled
callable: signatures, the cache limit, custom backends), `module` (OptimizedModule)."""
from tensorlib.compiler.api import (CompiledFunction, compile, config, disable, is_compiling,
                                    list_backends, reset)
from tensorlib.compiler.capture import GraphBreakError

__all__ = ["compile", "config", "disable", "is_compiling", "list_backends", "reset",
           "CompiledFunction", "GraphBreakError"]
