"""torch._jit_internal: the decorators libraries import from it directly. Scripting in
tensorlib keeps a module's Python methods (tensorlib.jit), so a method marked to be copied
onto a script wrapper needs nothing more; the others are tensorlib.jit's."""
from tensorlib.jit import is_scripting
from tensorlib.jit._markers import _overload, _overload_method, export, ignore, unused

__all__ = ["_copy_to_script_wrapper", "_overload", "_overload_method", "export", "ignore",
           "is_scripting", "unused"]


def _copy_to_script_wrapper(fn):
    """Marks a module method that a ScriptModule wrapper also has (nn containers' __len__,
    __iter__): tensorlib's scripted modules are the module itself, so fn as it is."""
    return fn
