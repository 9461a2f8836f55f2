"""torch.TypedStorage: what the deprecated `Tensor.storage()` returns, the tensor's byte
storage read as elements of its dtype. Every view of one base shares the one untyped Storage
(tensorlib/_C/storage.pyx), so their typed storages have the same data_ptr, as PyTorch's."""
import warnings

from tensorlib._C import dtypes as dt
from tensorlib._C.storage import Storage
from tensorlib._C.tensor_impl import wrap

_LEGACY_NAMES = {"Float": dt.float32, "Double": dt.float64, "Half": dt.float16,
                 "BFloat16": dt.bfloat16, "Long": dt.int64, "Int": dt.int32, "Short": dt.int16,
                 "Char": dt.int8, "Byte": dt.uint8, "Bool": dt.bool_,
                 "ComplexFloat": dt.complex64, "ComplexDouble": dt.complex128}

__all__ = ["TypedStorage", "UntypedStorage"] + [f"{n}Storage" for n in _LEGACY_NAMES]

UntypedStorage = Storage

_REMOVAL = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
            "will be the only storage class. This should only matter to you if you are using "
            "storages directly.  To access UntypedStorage directly, use "
            "tensor.untyped_storage() instead of tensor.storage()")
_warned = False


def warn_typed_storage_removal(stacklevel=2):
    """PyTorch's deprecation warning, once per process unless set_warn_always(True)."""
    global _warned
    from tensorlib._runtime_misc import is_warn_always_enabled
    if _warned and not is_warn_always_enabled():
        return
    _warned = True
    warnings.warn(_REMOVAL, UserWarning, stacklevel=stacklevel + 1)


def storage_elements(storage, dtype):
    """A 1-D tensor over all of storage as dtype elements (bytes when dtype is None)."""
    dtype = dt.uint8 if dtype is None else dtype
    return wrap(storage, (storage._nbytes // dtype.itemsize,), (1,), 0, dtype)


def storage_data_ptr(storage):
    """The address of the storage's first byte (host memory only, as Tensor.data_ptr)."""
    return storage_elements(storage, None).data_ptr()


def storage_item(storage, dtype, index):
    """storage[index] as a Python number; an index past either end raises IndexError."""
    if not isinstance(index, int) or isinstance(index, bool):
        raise RuntimeError(f"can't index a {'TypedStorage' if dtype else 'UntypedStorage'} "
                           f"with {type(index).__name__}")
    elements = storage_elements(storage, dtype)
    size = elements.numel()
    if not -size <= index < size:
        raise IndexError(f"index {index} out of range for storage of size {size}")
    return elements[index].item()


class TypedStorage:
    """The deprecated typed view of an untyped storage (torch.TypedStorage)."""
    is_sparse = False

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            warn_typed_storage_removal()
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError("TypedStorage(): with wrap_storage, give only dtype")
            if not isinstance(wrap_storage, Storage):
                raise TypeError("TypedStorage(): argument 'wrap_storage' must be "
                                f"UntypedStorage, but got {type(wrap_storage).__name__}")
            self._untyped_storage = wrap_storage
            self.dtype = dt.get_default_dtype() if dtype is None else dtype
            return
        import tensorlib
        dtype = dt.get_default_dtype() if dtype is None else dtype
        if len(args) > 1:
            raise TypeError("TypedStorage(): expected at most one argument, a size or a sequence")
        data = args[0] if args else 0
        made = (tensorlib.empty(data, dtype=dtype, device=device) if isinstance(data, int)
                else tensorlib.tensor(data, dtype=dtype, device=device))
        self._untyped_storage = made._storage
        self.dtype = dtype

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def untyped(self):
        return self._untyped_storage

    def size(self):
        return self._untyped_storage._nbytes // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self._untyped_storage._nbytes

    def data_ptr(self):
        return storage_data_ptr(self._untyped_storage)

    def tolist(self):
        return storage_elements(self._untyped_storage, self.dtype).tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __getitem__(self, index):
        return storage_item(self._untyped_storage, self.dtype, index)

    def __setitem__(self, index, value):
        size = self.size()
        if not isinstance(index, int) or not -size <= index < size:
            raise IndexError(f"index {index} out of range for storage of size {size}")
        storage_elements(self._untyped_storage, self.dtype)[index] = value

    def is_shared(self):
        return False

    def type(self):
        return f"{dt.package_name()}.{self.dtype.scalar_name}Storage"

    def __repr__(self):
        values = "\n".join(f" {v}" for v in self.tolist())
        head = values + "\n" if values else ""
        return (f"{head}[tensorlib.TypedStorage(dtype={self.dtype}, device="
                f"{self.device}) of size {self.size()}]")


class _LegacyStorageMeta(type):
    """torch.FloatStorage and its kin: calling one makes a TypedStorage of its dtype, and any
    TypedStorage of that dtype is an instance of it, as in PyTorch."""

    def __call__(cls, *args, device=None):
        warn_typed_storage_removal()
        return TypedStorage(*args, dtype=cls.dtype, device=device, _internal=True)

    def __instancecheck__(cls, instance):
        return isinstance(instance, TypedStorage) and instance.dtype is cls.dtype


for _name, _dtype in _LEGACY_NAMES.items():
    globals()[f"{_name}Storage"] = _LegacyStorageMeta(f"{_name}Storage", (),
                                                      {"dtype": _dtype, "__module__": "tensorlib"})
