"""What `tensorlib.compile(module)` returns, and `Module.compile()`, as in PyTorch: an
`OptimizedModule` holding the original as `_orig_mod` (its parameters are the original's,
so optimizers and checkpoints see one set), whose calls go through a compiled function."""
from tensorlib.compiler.api import CompiledFunction
from tensorlib.nn.modules.module import Module


class OptimizedModule(Module):
    def __init__(self, mod, **compile_kwargs):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled_call"] = CompiledFunction(mod.__call__, module=mod,
                                                           **compile_kwargs)

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled_call"](*args, **kwargs)

    @property
    def dynamo_ctx(self):
        """The compiled callable this module's calls run through. PyTorch's OptimizedModule
        keeps its compile context under this name, and libraries (skorch) look for it to
        tell a compiled module from a plain one."""
        return self.__dict__["_compiled_call"]

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)

    def __repr__(self):
        return f"OptimizedModule({self._orig_mod!r})"


_compiled_classes = {}


def compile_in_place(module, **compile_kwargs):
    """Module.compile(): later calls of `module` run compiled; the module stays itself (its
    class is a same-named subclass whose __call__ goes through the compiled function)."""
    cls = type(module)
    if not getattr(cls, "_tl_compiled_subclass", False):
        sub = _compiled_classes.get(cls)
        if sub is None:
            def __call__(self, *args, **kwargs):
                return self.__dict__["_compiled_call_impl"](*args, **kwargs)
            sub = type(cls.__name__, (cls,), {"__call__": __call__,
                                              "_tl_compiled_subclass": True,
                                              "__module__": cls.__module__,
                                              "__qualname__": cls.__qualname__})
            _compiled_classes[cls] = sub
        module.__class__ = sub
    base = type(module).__mro__[1]
    module.__dict__["_compiled_call_impl"] = CompiledFunction(
        lambda *a, **k: base._call_impl(module, *a, **k), module=module, **compile_kwargs)
    module.__dict__["_compiled_call_impl"].__name__ = f"{base.__name__}.forward"
