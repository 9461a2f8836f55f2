"""torch.ops.aten: PyTorch's ATen operators addressed by overload (`aten.add.Tensor`,
`aten.sort.stable`), as libraries name them: as keys of their op tables (PyG's Index and
EdgeIndex register handlers per overload at import) and as calls. Each overload provided
takes its ATen schema's arguments and runs the tensorlib function with the same semantics
(autograd included); an op or overload not listed raises AttributeError, as PyTorch does for
a name it lacks."""
import tensorlib
from tensorlib._C.views import wrap_dim


def _slice(self, dim=0, start=None, end=None, step=1):
    """aten::slice.Tensor: self[..., start:end:step, ...] along dim (a view)."""
    dim = wrap_dim(dim, self.dim())
    return self[(slice(None),) * dim + (slice(start, end, step),)]


def _index(self, indices):
    """aten::index.Tensor: advanced indexing by a list whose None entries take a whole dim."""
    return self[tuple(slice(None) if i is None else i for i in indices)]


def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    """aten::_to_copy: always a new tensor, in the dtype/device asked (else self's)."""
    if layout is not None and layout != self.layout:
        raise RuntimeError(f"to(options) doesn't support converting to a different layout, "
                           f"but got self.layout being {self.layout} and options.layout set "
                           f"as {layout}")
    out = self.to(dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device, non_blocking=non_blocking,
                  copy=True, memory_format=memory_format or tensorlib.preserve_format)
    return out.pin_memory() if pin_memory else out


def _clone(self, *, memory_format=None):
    return tensorlib.clone(self, memory_format=memory_format or tensorlib.preserve_format)


def _alias(self):
    """aten::alias: a view of all of self (its own Tensor object, the same memory)."""
    return self.as_strided(self.size(), self.stride(), self.storage_offset())


def _sort(self, dim=-1, descending=False):
    return tuple(tensorlib.sort(self, dim=dim, descending=descending))


def _sort_stable(self, *, stable, dim=-1, descending=False):
    return tuple(tensorlib.sort(self, stable=stable, dim=dim, descending=descending))


def _in_place(name):
    """self.<name>(*args): the in-place method as a function of self."""
    def run(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    run.__name__ = name
    return run


def _function(name):
    return getattr(tensorlib, name)


# op -> {overload: the function of that overload's schema}
_TABLE = {
    "add": {"Tensor": _function("add"), "Scalar": _function("add")},
    "sub": {"Tensor": _function("sub"), "Scalar": _function("sub")},
    "mul": {"Tensor": _function("mul"), "Scalar": _function("mul")},
    "div": {"Tensor": _function("div"), "Scalar": _function("div")},
    "add_": {"Tensor": _in_place("add_"), "Scalar": _in_place("add_")},
    "sub_": {"Tensor": _in_place("sub_"), "Scalar": _in_place("sub_")},
    "mul_": {"Tensor": _in_place("mul_"), "Scalar": _in_place("mul_")},
    "div_": {"Tensor": _in_place("div_"), "Scalar": _in_place("div_")},
    "neg": {"default": _function("neg")},
    "clone": {"default": _clone},
    "_to_copy": {"default": _to_copy},
    "alias": {"default": _alias},
    "detach": {"default": _function("detach")},
    "_pin_memory": {"default": lambda self, device=None: self.pin_memory(device)},
    "sort": {"default": _sort, "stable": _sort_stable},
    "cat": {"default": _function("cat")},
    "flip": {"default": _function("flip")},
    "index_select": {"default": _function("index_select")},
    "slice": {"Tensor": _slice},
    "index": {"Tensor": _index},
    "select": {"int": _function("select")},
    "unsqueeze": {"default": _function("unsqueeze")},
    "squeeze": {"default": _function("squeeze"), "dim": _function("squeeze"),
                "dims": _function("squeeze")},
    "unbind": {"int": lambda self, dim=0: list(tensorlib.unbind(self, dim))},
    "view": {"default": lambda self, size: self.view(size)},
    "t": {"default": _function("t")},
    "mm": {"default": _function("mm")},
    "_sparse_addmm": {"default": tensorlib.sparse.addmm},
}


class OpOverload:
    """One overload, `aten.<op>.<overload>`: callable, hashable, named as PyTorch names it."""

    def __init__(self, packet, overload, fn):
        self.overloadpacket, self._overloadname, self._fn = packet, overload, fn
        self.__name__ = self.__qualname__ = f"{packet.__name__}.{overload}"

    def name(self):
        return f"aten::{self.__name__}"

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverload(op='aten.{self.overloadpacket.__name__}', " \
               f"overload='{self._overloadname}')>"


class OpOverloadPacket:
    """`aten.<op>`: its overloads as attributes. Called, it is the op's Python function,
    which takes every overload's arguments (PyTorch picks the overload from them)."""

    def __init__(self, name, overloads):
        self.__name__ = self.__qualname__ = name
        self._overloads = {key: OpOverload(self, key, fn) for key, fn in overloads.items()}
        self._call = getattr(tensorlib, name, None) or next(iter(overloads.values()))

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, overload):
        try:
            return self._overloads[overload]
        except KeyError:
            raise AttributeError(f"The underlying op of 'aten.{self.__name__}' has no "
                                 f"overload name '{overload}'") from None

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __repr__(self):
        return f"<OpOverloadPacket(op='aten.{self.__name__}')>"


class _AtenNamespace:
    """torch.ops.aten: one packet per op, made once (so overloads compare and hash as the
    same objects however they are reached)."""

    def __init__(self):
        self._packets = {name: OpOverloadPacket(name, table) for name, table in _TABLE.items()}

    def __getattr__(self, name):
        try:
            return self._packets[name]
        except KeyError:
            raise AttributeError(f"'_OpNamespace' 'aten' object has no attribute "
                                 f"'{name}'") from None


NAMESPACE = _AtenNamespace()
