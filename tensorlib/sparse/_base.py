"""What the sparse layouts share: a Tensor whose data is in component tensors (see the NOTE in
_guard.py), its metadata, moving and casting, printing's frame, and the refusal of the dense
Tensor methods that PyTorch does not run on a sparse layout."""
import tensorlib._C.dtypes as dt
from tensorlib._C.grad_mode import is_inference_mode_enabled as _inference_enabled
from tensorlib._tensor import Tensor
from tensorlib.overrides import _disabled_torch_function_impl
from tensorlib.sparse._guard import guard_device, guard_storage, not_supported

__all__ = ["SparseTensor", "refuse_dense_methods", "parse_to"]


class SparseTensor(Tensor):
    """A Tensor in a sparse layout. Subclasses name `_layout` and `_components` (the attribute
    names of their component tensors, values last) and define `_from_parts`, `_with` (the
    same sparsity, each component mapped by fn(name, tensor)) and `_map_values`."""

    __module__ = "tensorlib"
    # ops reach the sparse layouts through their own methods, never __torch_function__
    __torch_function__ = _disabled_torch_function_impl
    _layout = None
    _components = ()

    @classmethod
    def _make(cls, sizes, dtype, dev, **components):
        """A new tensor of this layout with logical `sizes`, on the canonical device `dev`."""
        self = cls.__new__(cls)
        guard = guard_device(cls._layout, dev)
        self._sizes = tuple(sizes)
        self._strides = (0,) * len(sizes)
        self._offset = 0
        self._dtype = dtype
        self._device = guard
        self._storage = guard_storage(guard, dtype)
        self._is_inference = _inference_enabled()
        self._real = dev
        self.__dict__.update(components)
        return self

    # ---- metadata -------------------------------------------------------------------------
    @property
    def device(self):
        return self._real

    @property
    def layout(self):
        return self._layout

    @property
    def is_cuda(self):
        return self._real.type == "cuda"

    @property
    def is_cpu(self):
        return self._real.type == "cpu"

    @property
    def is_meta(self):
        return self._real.type == "meta"

    @property
    def data(self):
        return self.detach()

    def storage_offset(self):
        return 0

    def is_contiguous(self, memory_format=None):
        return False

    def _nnz(self):
        return self.__dict__[self._components[-1]]._sizes[0]

    def numpy(self, *, force=False):
        raise TypeError(f"can't convert {self._layout_key()} layout tensor to numpy. Use "
                        f"Tensor.to_dense() first.")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to "
                               f"Scalar")
        return self.to_dense().item()

    def _layout_key(self):
        return {"sparse_coo": "Sparse", "sparse_csr": "SparseCsr",
                "sparse_csc": "SparseCsc"}[self._layout._name]

    # ---- copies, moves and casts ----------------------------------------------------------
    def detach(self):
        return self._with(lambda name, t: t.detach())

    def clone(self, *, memory_format=None):
        return self._map_values(lambda v: v.clone(), lambda g: g)

    def to(self, *args, **kwargs):
        device, dtype, copy = parse_to(self, args, kwargs)
        device = self._real if device is None else device
        dtype = self._dtype if dtype is None else dtype
        if device is self._real and dtype is self._dtype and not copy:
            return self
        src_device, src_dtype = self._real, self._dtype
        return self._map_values(lambda v: v.to(device=device, dtype=dtype),
                                lambda g: g.to(device=src_device, dtype=src_dtype),
                                device=device)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else device)

    def type(self, dtype=None):
        if dtype is None:
            if self._layout._name == "sparse_csc":
                raise RuntimeError(f"Unimplemented backend {self._layout_key()[:-1]}r"
                                   f"{self._real.type.upper()}")
            prefix = {"sparse_coo": "sparse", "sparse_csr": "sparse_csr"}[self._layout._name]
            return f"{dt.package_name()}.{prefix}.{self._dtype.scalar_name}Tensor"
        return Tensor.type(self, dtype)

    def float(self):
        return self.to(dt.float32)

    def double(self):
        return self.to(dt.float64)

    def half(self):
        return self.to(dt.float16)

    def bfloat16(self):
        return self.to(dt.bfloat16)

    def long(self):
        return self.to(dt.int64)

    def int(self):
        return self.to(dt.int32)

    def bool(self):
        return self.to(dt.bool_)

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        if id(self) in memo:
            return memo[id(self)]
        out = self._with(lambda name, t: t.detach().clone())
        out._requires_grad = self._requires_grad
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol):
        parts = tuple(self.__dict__[name].detach().cpu() for name in self._components)
        return (_rebuild, (type(self), parts, self._sizes, str(self._real),
                           self._requires_grad, self.__dict__.get("_coalesced", False)))

    def __repr__(self):
        from tensorlib.sparse._repr import sparse_repr
        return sparse_repr(self)


def _rebuild(cls, parts, sizes, device, requires_grad, coalesced=False):
    out = cls._from_parts(parts, sizes, coalesced=coalesced).to(device)
    out._requires_grad = requires_grad
    return out


def parse_to(self, args, kwargs):
    """Tensor.to's arguments as (device, dtype, copy): device and dtype None when not given."""
    import tensorlib
    from tensorlib._C.device import canonical
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for arg in args:
        if isinstance(arg, dt.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, (str, tensorlib.device)):
            device = arg
        elif isinstance(arg, bool):
            pass                                # non_blocking, copy as positionals
        else:
            raise TypeError(f"to() received an invalid combination of arguments: "
                            f"{type(arg).__name__}")
    return (None if device is None else canonical(device)), dtype, copy


# ---- the dense methods refused on a sparse layout -----------------------------------------
_KEEP = frozenset((
    "shape", "size", "dim", "ndim", "ndimension", "numel", "nelement", "dtype",
    "element_size", "is_floating_point", "is_signed", "is_complex", "is_same_size",
    "requires_grad", "requires_grad_", "grad", "grad_fn", "is_leaf", "retains_grad",
    "retain_grad", "output_nr", "register_hook", "backward", "_version", "is_inference",
    "conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "stride",
    "mm", "matmul", "mv",
    # flags PyTorch answers False for every sparse tensor too (PyG's collate reads is_nested)
    "is_nested", "is_mkldnn", "is_xpu", "is_mps", "is_ipu", "is_xla", "is_mtia", "is_maia",
    "is_vulkan"))
_DUNDERS = frozenset((
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__",
    "__rmul__", "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__",
    "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__imod__", "__pow__",
    "__rpow__", "__ipow__", "__matmul__", "__rmatmul__", "__neg__", "__pos__", "__abs__",
    "__invert__", "__and__", "__rand__", "__iand__", "__or__", "__ror__", "__ior__",
    "__xor__", "__rxor__", "__ixor__", "__lshift__", "__rshift__", "__eq__", "__ne__",
    "__lt__", "__le__", "__gt__", "__ge__", "__getitem__", "__setitem__", "__iter__",
    "__bool__", "__float__", "__int__", "__index__", "__complex__"))


def _refused_method(name):
    op = name.strip("_") if name.startswith("__") else name

    def refused(self, *args, **kwargs):
        raise not_supported(op, self._layout, self._real)
    refused.__name__ = name
    return refused


def refuse_dense_methods(tensor_cls=Tensor):
    """Give SparseTensor a refusing stand-in for every Tensor method and property it does not
    define or keep (called once every op family has installed its methods)."""
    for name, attr in list(vars(tensor_cls).items()):
        if name in _KEEP or name in vars(SparseTensor):
            continue
        if name.startswith("__") and name not in _DUNDERS:
            continue
        if isinstance(attr, property):
            setattr(SparseTensor, name, property(_refused_method(name)))
        elif callable(attr):
            setattr(SparseTensor, name, _refused_method(name))
