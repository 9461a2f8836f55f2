"""The `*_copy` functions (torch.diagonal_copy, expand_copy, ...): the view op's result as a
new tensor of its own (`.clone()`, contiguous), generated from one table. Gradients flow
through the view and the clone. Ops that return several views return a tuple of copies."""
__all__ = []
TENSOR_METHODS = {}

# name_copy -> the Tensor method whose result it copies
_VIEWS = ("alias", "as_strided", "diagonal", "expand", "narrow", "permute", "select", "split",
          "split_with_sizes", "squeeze", "t", "transpose", "unbind", "unfold", "unsqueeze",
          "view", "view_as_real", "view_as_complex")


def _alias(self):
    return self.view_as(self)


def _slice(self, dim=0, start=None, end=None, step=1):
    key = [slice(None)] * self.dim()
    key[dim] = slice(start, end, step)
    return self[tuple(key)]


def _make(name, view):
    def copy(input, *args, **kwargs):  # noqa: A002
        result = view(input, *args, **kwargs)
        if isinstance(result, (tuple, list)):
            return tuple(part.clone(memory_format=_contiguous()) for part in result)
        return result.clone(memory_format=_contiguous())
    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = f"torch.{name}: the result of {name[:-5]} as a tensor of its own."
    return copy


def _contiguous():
    from tensorlib.ops.memory_format import contiguous_format
    return contiguous_format


def _view(name):
    if name == "alias":
        return _alias

    def view(input, *args, **kwargs):  # noqa: A002
        import tensorlib                # resolved per call: the ops are installed after this
        fn = getattr(tensorlib.Tensor, name, None) or getattr(tensorlib, name)
        return fn(input, *args, **kwargs)
    return view


for _name in _VIEWS:
    globals()[f"{_name}_copy"] = _make(f"{_name}_copy", _view(_name))
    __all__.append(f"{_name}_copy")
slice_copy = _make("slice_copy", _slice)
__all__.append("slice_copy")
TENSOR_METHODS["narrow_copy"] = globals()["narrow_copy"]
del _name
