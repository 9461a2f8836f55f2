"""The TorchScript markers libraries put on their code (torch.jit.unused, ignore, export,
_overload_method, _script_if_tracing, annotate): they change nothing when the code runs in
Python, which is how PyTorch runs it outside `torch.jit.script` too. tensorlib's `script`
traces instead of compiling source, so it reads none of them."""
_overloads = {}              # qualified name -> the overload signatures declared for it


def _mark(fn, modifier):
    if isinstance(fn, property):
        for f in (fn.fget, fn.fset):
            if f is not None:
                f._torchscript_modifier = modifier
        return fn
    fn._torchscript_modifier = modifier
    return fn


def unused(fn):
    """torch.jit.unused: script would replace fn by a raise; in Python it runs as written."""
    return _mark(fn, "unused")


def ignore(drop=False, **kwargs):
    """torch.jit.ignore, as `@ignore` or `@ignore(drop=True)`: left to Python."""
    if callable(drop):
        return _mark(drop, "ignore")
    return lambda fn: _mark(fn, "unused" if drop else "ignore")


def export(fn):
    """torch.jit.export: a method script compiles besides forward."""
    return _mark(fn, "export")


def _overload(fn):
    """torch.jit._overload: declares one typed signature of a function defined after it."""
    _overloads.setdefault(f"{fn.__module__}.{fn.__qualname__}", []).append(fn)
    return fn


_overload_method = _overload


def _script_if_tracing(fn):
    """torch.jit._script_if_tracing: PyTorch scripts fn when jit.trace reaches it, to keep its
    control flow; tensorlib's trace records the ops fn runs on the example instead."""
    return fn


def annotate(the_type, the_value):
    """torch.jit.annotate: a type hint for script; the value itself in Python."""
    return the_value
