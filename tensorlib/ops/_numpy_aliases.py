"""The NumPy spellings PyTorch's argument parser accepts for every op: `axis` for `dim`,
`keepdims` for `keepdim`, `x`/`a`/`x1` (and `input`) for the input tensor, `x2` (and
`other`) for the second, `from` for `from_`; the keywords of PyTorch's overloads one
parameter here stands for (`indices=`/`sections=` for `indices_or_sections`); and those an op
declares in its `keyword_aliases` attribute (max's `other=`). Each op gets a table {alias:
its own parameter name} from its signature once, and a C wrapper (tensorlib/_C/aliased_call.h,
through opdef.pyx) renames the keywords of a call that names one; other calls pass through
it untouched."""
import inspect

from tensorlib._C.opdef import AliasedOp, with_aliases

_INPUT_NAMES = ("input", "x", "a", "self", "t", "tensor", "A")  # how ops name their input
_OTHER_NAMES = ("other", "b", "y")                           # ... and the second tensor
_TORCH = {"dim": ("axis",), "keepdim": ("keepdims",), "from_": ("from",)}
# the keywords of PyTorch's overloads that one parameter here takes: tensor_split(x,
# indices=(1,)), hsplit(x, sections=2)...
_OVERLOAD_NAMES = {"indices_or_sections": ("indices", "sections", "tensor_indices_or_sections")}


def alias_table(fn):
    """{alias: parameter of fn} for the spellings fn does not take itself; None when none
    apply (or fn's signature cannot be read)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None                         # it reads any keyword itself
    table = {}
    for name, aliases in (*_TORCH.items(), *_OVERLOAD_NAMES.items()):
        if name in params:
            table.update((a, name) for a in aliases)
    positional = [n for n, p in params.items()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)]
    if positional and positional[0] in _INPUT_NAMES:
        table.update((a, positional[0]) for a in ("input", "x", "a", "x1"))
    if len(positional) > 1 and positional[1] in _OTHER_NAMES:
        table.update((a, positional[1]) for a in ("other", "x2"))
    table.update(getattr(fn, "keyword_aliases", {}))    # an op's own: max(x, other=y)
    table = {a: n for a, n in table.items() if a not in params}
    return table or None


def accept_aliases(fn):
    """fn taking the NumPy spellings too, in the C wrapper that also hands a call failing on a
    tensor-like argument to its __torch_function__ (tensorlib.overrides); values, classes
    and ops already wrapped are returned as they are."""
    if not callable(fn) or isinstance(fn, (AliasedOp, type, staticmethod, classmethod)):
        return fn
    import functools
    return functools.update_wrapper(with_aliases(fn, alias_table(fn) or {}), fn)
