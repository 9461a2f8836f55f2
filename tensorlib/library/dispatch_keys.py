"""PyTorch's dispatch-key names (torch._C.DispatchKey, DispatchKeySet,
_ExcludeDispatchKeyGuard) for code written against PyTorch's C++ dispatcher.

tensorlib has no per-key dispatcher: a kernel is chosen by (op, device type), autocast is a
per-device-type switch and autograd recording a global one. The names here keep PyTorch's
values and set algebra so libraries (torchvision's autocast registrations) can build and test
key sets, and the guard turns off what tensorlib has for the keys it excludes: the Autocast
keys switch autocast off for their device types, the Autograd keys switch recording off.
The other keys (Python, Functionalize, FuncTorch*, ADInplaceOrView, the backend keys...)
name layers tensorlib does not have; the guard accepts them and does nothing for them."""
import enum

from tensorlib import _C

# PyTorch 2.13's DispatchKey members and values (duplicates are the End-of-range markers)
_KEYS = [
    ('Undefined', 0), ('CompositeExplicitAutogradNonFunctional', 155),
    ('CompositeExplicitAutograd', 154), ('CompositeImplicitAutogradNestedTensor', 153),
    ('CompositeImplicitAutograd', 151), ('AutogradNestedTensor', 22), ('AutogradOther', 20),
    ('Autograd', 150), ('Conjugate', 16), ('ZeroTensor', 18), ('Negative', 17),
    ('BackendSelect', 11), ('ADInplaceOrView', 19), ('PythonTLSSnapshot', 41), ('Python', 13),
    ('FuncTorchDynamicLayerFrontMode', 42), ('FuncTorchDynamicLayerBackMode', 14),
    ('FuncTorchBatchedDecomposition', 152), ('FuncTorchBatched', 34), ('FuncTorchVmapMode', 36),
    ('FuncTorchGradWrapper', 39), ('PythonDispatcher', 46), ('PreDispatch', 45),
    ('Functionalize', 15), ('AutocastCPU', 24), ('AutocastMPS', 31), ('AutocastXPU', 27),
    ('AutocastHPU', 29), ('AutocastIPU', 28), ('AutocastCUDA', 32), ('AutocastPrivateUse1', 33),
    ('Dense', 1), ('StartOfDenseBackends', 48), ('CPU', 49), ('CUDA', 50), ('HIP', 51),
    ('XLA', 52), ('MPS', 53), ('IPU', 54), ('XPU', 55), ('HPU', 56), ('VE', 57), ('Lazy', 58),
    ('MTIA', 59), ('MAIA', 60), ('PrivateUse1', 61), ('PrivateUse2', 62), ('PrivateUse3', 63),
    ('Meta', 64), ('EndOfDenseBackends', 64), ('Quantized', 5), ('StartOfQuantizedBackends', 65),
    ('QuantizedCPU', 66), ('QuantizedCUDA', 67), ('QuantizedHIP', 68), ('QuantizedXLA', 69),
    ('QuantizedMPS', 70), ('QuantizedIPU', 71), ('QuantizedXPU', 72), ('QuantizedHPU', 73),
    ('QuantizedVE', 74), ('QuantizedLazy', 75), ('QuantizedMTIA', 76), ('QuantizedMAIA', 77),
    ('QuantizedPrivateUse1', 78), ('QuantizedPrivateUse2', 79), ('QuantizedPrivateUse3', 80),
    ('QuantizedMeta', 81), ('EndOfQuantizedBackends', 81), ('Sparse', 8),
    ('StartOfSparseBackends', 82), ('SparseCPU', 83), ('SparseCUDA', 84), ('SparseHIP', 85),
    ('SparseXLA', 86), ('SparseMPS', 87), ('SparseIPU', 88), ('SparseXPU', 89),
    ('SparseHPU', 90), ('SparseVE', 91), ('SparseLazy', 92), ('SparseMTIA', 93),
    ('SparseMAIA', 94), ('SparsePrivateUse1', 95), ('SparsePrivateUse2', 96),
    ('SparsePrivateUse3', 97), ('SparseMeta', 98), ('EndOfSparseBackends', 98), ('SparseCsr', 9),
    ('StartOfSparseCsrBackends', 99), ('SparseCsrCPU', 100), ('SparseCsrCUDA', 101),
    ('SparseCsrHIP', 102), ('SparseCsrXLA', 103), ('SparseCsrMPS', 104), ('SparseCsrIPU', 105),
    ('SparseCsrXPU', 106), ('SparseCsrHPU', 107), ('SparseCsrVE', 108), ('SparseCsrLazy', 109),
    ('SparseCsrMTIA', 110), ('SparseCsrMAIA', 111), ('SparseCsrPrivateUse1', 112),
    ('SparseCsrPrivateUse2', 113), ('SparseCsrPrivateUse3', 114), ('SparseCsrMeta', 115),
    ('EndOfSparseCsrBackends', 115), ('NestedTensor', 10), ('StartOfNestedTensorBackends', 116),
    ('NestedTensorCPU', 117), ('NestedTensorCUDA', 118), ('NestedTensorHIP', 119),
    ('NestedTensorXLA', 120), ('NestedTensorMPS', 121), ('NestedTensorIPU', 122),
    ('NestedTensorXPU', 123), ('NestedTensorHPU', 124), ('NestedTensorVE', 125),
    ('NestedTensorLazy', 126), ('NestedTensorMTIA', 127), ('NestedTensorMAIA', 128),
    ('NestedTensorPrivateUse1', 129), ('NestedTensorPrivateUse2', 130),
    ('NestedTensorPrivateUse3', 131), ('NestedTensorMeta', 132),
    ('EndOfNestedTensorBackends', 132), ('AutogradFunctionality', 21),
    ('StartOfAutogradFunctionalityBackends', 133), ('AutogradCPU', 134), ('AutogradCUDA', 135),
    ('AutogradHIP', 136), ('AutogradXLA', 137), ('AutogradMPS', 138), ('AutogradIPU', 139),
    ('AutogradXPU', 140), ('AutogradHPU', 141), ('AutogradVE', 142), ('AutogradLazy', 143),
    ('AutogradMTIA', 144), ('AutogradMAIA', 145), ('AutogradPrivateUse1', 146),
    ('AutogradPrivateUse2', 147), ('AutogradPrivateUse3', 148), ('AutogradMeta', 149),
    ('EndOfAutogradFunctionalityBackends', 149),
]
DispatchKey = enum.Enum("DispatchKey", _KEYS, module=__name__, qualname="DispatchKey")
DispatchKey.__doc__ = "torch._C.DispatchKey: PyTorch's dispatch keys, with PyTorch's values."

# per-backend functionalities: base key -> the range of their per-backend keys (start, end]
_PER_BACKEND = {base: (DispatchKey[f"StartOf{name}Backends"].value,
                       DispatchKey[f"EndOf{name}Backends"].value)
                for base, name in (("Dense", "Dense"), ("Quantized", "Quantized"),
                                   ("Sparse", "Sparse"), ("SparseCsr", "SparseCsr"),
                                   ("NestedTensor", "NestedTensor"),
                                   ("AutogradFunctionality", "AutogradFunctionality"))}
_FIRST_ALIAS = DispatchKey.Autograd.value        # Autograd and the Composite* keys alias others
_AUTOCAST_DEVICE = {"AutocastCPU": "cpu", "AutocastCUDA": "cuda", "AutocastXPU": "xpu",
                    "AutocastMPS": "mps", "AutocastHPU": "hpu", "AutocastIPU": "ipu"}


def _key(value):
    if isinstance(value, DispatchKey):
        return value
    if isinstance(value, str):
        try:
            return DispatchKey[value]
        except KeyError:
            raise ValueError(f"Unknown dispatch key: {value}") from None
    raise TypeError(f"expected a torch._C.DispatchKey (or its name), got {type(value).__name__}")


def _split(key):
    """(functionality key, backend index or None) of a key, as PyTorch's bitset holds it: a
    per-backend key (CPU, SparseCUDA, AutogradMeta...) is its functionality (Dense, Sparse,
    AutogradFunctionality...) plus a backend bit; other keys are a functionality alone. None
    for Undefined and the alias keys, which name no bit."""
    v = key.value
    if v == 0 or v >= _FIRST_ALIAS:
        return None
    for base, (start, end) in _PER_BACKEND.items():
        if start < v <= end:
            return DispatchKey[base], v - start - 1
        if v == start:                   # a StartOf marker is its functionality
            return DispatchKey[base], None
    return key, None


class DispatchKeySet:
    """torch._C.DispatchKeySet: an immutable set of dispatch keys held as PyTorch holds it,
    functionality bits beside backend bits, so `SparseCPU | CUDA` also holds SparseCUDA and
    CPU, as in PyTorch. `|`, `&`, `-` (drops functionalities, keeps backends), `has`,
    `add`/`remove` (new sets), `==`; unhashable and printed as PyTorch does."""
    __slots__ = ("_functionalities", "_backends")
    __hash__ = None

    def __init__(self, key):
        split = _split(_key(key))
        functionalities, backends = (), ()
        if split is not None:
            functionalities = (split[0],)
            backends = () if split[1] is None else (split[1],)
        object.__setattr__(self, "_functionalities", frozenset(functionalities))
        object.__setattr__(self, "_backends", frozenset(backends))

    @classmethod
    def _of(cls, functionalities, backends):
        ks = cls.__new__(cls)
        object.__setattr__(ks, "_functionalities", frozenset(functionalities))
        object.__setattr__(ks, "_backends", frozenset(backends))
        return ks

    def __setattr__(self, name, value):
        raise AttributeError("DispatchKeySet is immutable")

    def __or__(self, other):
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return DispatchKeySet._of(self._functionalities | other._functionalities,
                                  self._backends | other._backends)

    def __and__(self, other):
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return DispatchKeySet._of(self._functionalities & other._functionalities,
                                  self._backends & other._backends)

    def __sub__(self, other):
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return DispatchKeySet._of(self._functionalities - other._functionalities,
                                  self._backends)

    def __eq__(self, other):
        if not isinstance(other, DispatchKeySet):
            return NotImplemented
        return (self._functionalities == other._functionalities
                and self._backends == other._backends)

    def has(self, key):
        """Whether the set holds this key (a functionality base such as Dense: whether it
        holds that functionality)."""
        split = _split(_key(key))
        if split is None or split[0] not in self._functionalities:
            return False
        return split[1] is None or split[1] in self._backends

    def add(self, key):
        return self | DispatchKeySet(key)

    def remove(self, key):
        """Without the key's functionality (its backend bit stays, as in PyTorch)."""
        split = _split(_key(key))
        gone = {split[0]} if split is not None else set()
        return DispatchKeySet._of(self._functionalities - gone, self._backends)

    def highestPriorityTypeId(self):  # noqa: N802 - PyTorch's name
        """The key dispatch would pick first: the highest functionality, on the highest
        backend (a per-backend functionality without one: its StartOf marker, as PyTorch);
        Undefined for an empty set."""
        if not self._functionalities:
            return DispatchKey.Undefined
        top = max(self._functionalities, key=lambda k: k.value)
        if top.name not in _PER_BACKEND:
            return top
        start = _PER_BACKEND[top.name][0]
        return DispatchKey(start + 1 + max(self._backends)) if self._backends else \
            DispatchKey(start)

    def __iter__(self):
        for functionality in sorted(self._functionalities, key=lambda k: k.value):
            if functionality.name in _PER_BACKEND:
                start = _PER_BACKEND[functionality.name][0]
                for backend in sorted(self._backends):
                    yield DispatchKey(start + 1 + backend)
            else:
                yield functionality

    def __repr__(self):
        return f"DispatchKeySet({', '.join(k.name for k in self)})"

    __str__ = __repr__


class _ExcludeDispatchKeyGuard:
    """`with torch._C._ExcludeDispatchKeyGuard(keyset):` runs its body as if the dispatcher
    skipped those keys: autocast off for the device types of the Autocast keys excluded
    (AutocastPrivateUse1: every tensorlib backend PyTorch has no key for), autograd recording
    off if an Autograd key is excluded (tensorlib's grad mode is one switch for all devices).
    Keys naming layers tensorlib lacks change nothing."""

    def __init__(self, keyset):
        if not isinstance(keyset, DispatchKeySet):
            raise TypeError(f"_ExcludeDispatchKeyGuard expects a DispatchKeySet, got "
                            f"{type(keyset).__name__}")
        self._keyset = keyset
        self._saved = None

    def _autocast_devices(self):
        import tensorlib
        types = set()
        for key in self._keyset:
            if key.name in _AUTOCAST_DEVICE:
                types.add(_AUTOCAST_DEVICE[key.name])
            elif key is DispatchKey.AutocastPrivateUse1:
                types.update(b.name for b in tensorlib.backends.list()
                             if b.name not in _AUTOCAST_DEVICE.values())
        return types

    def __enter__(self):
        from tensorlib import amp
        from tensorlib._C import grad_mode
        autocast = {d: amp.is_autocast_enabled(d) for d in self._autocast_devices()}
        grad = None
        if self._keyset.has(DispatchKey.AutogradFunctionality) or any(
                self._keyset.has(k) for k in (DispatchKey.AutogradOther,
                                              DispatchKey.AutogradNestedTensor)):
            grad = grad_mode.is_grad_enabled()
            grad_mode.set_grad_enabled(False)
        for device_type in autocast:
            amp.set_autocast_enabled(device_type, False)
        self._saved = (autocast, grad)
        return self

    def __exit__(self, *exc):
        from tensorlib import amp
        from tensorlib._C import grad_mode
        autocast, grad = self._saved
        for device_type, enabled in autocast.items():
            amp.set_autocast_enabled(device_type, enabled)
        if grad is not None:
            grad_mode.set_grad_enabled(grad)
        return False


# where PyTorch programs reach them
_C.DispatchKey, _C.DispatchKeySet = DispatchKey, DispatchKeySet
_C._ExcludeDispatchKeyGuard = _ExcludeDispatchKeyGuard
