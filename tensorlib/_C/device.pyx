"""Device objects. A tensor's device is a canonical instance bound to its backend's kernel table,
so the per-op dispatch is one dict lookup."""

cdef object _loader = None          # set by tensorlib.backends: name -> backend (imports lazily)
cdef dict _canonical = {}
cdef object _default_hooks = None   # (get, set) the factories' default device: _default_device
cdef list _entered = []             # the defaults that `with device:` blocks replaced


def set_default_hooks(get, set_):
    """Install how `with device(...):` reads and sets the factories' default device
    (tensorlib._default_device does, at import)."""
    global _default_hooks
    _default_hooks = (get, set_)


def set_loader(loader):
    """Install the callable that loads a backend by device type (tensorlib.backends does)."""
    global _loader
    _loader = loader


cdef tuple _parse(object spec, object index):
    if isinstance(spec, device):
        if index is not None:
            raise ValueError("device(device, index) is not allowed; pass a string")
        return (<device>spec).type, (<device>spec).index
    if isinstance(spec, int) and not isinstance(spec, bool):
        raise RuntimeError("a bare device ordinal is ambiguous in tensorlib; "
                           "write 'cuda:0' or 'opencl:0'")
    if not isinstance(spec, str):
        raise TypeError(f"device() expects a string or a device, got {type(spec).__name__}")
    cdef str s = spec
    cdef str kind = s
    if ":" in s:
        kind, _, num = s.partition(":")
        if index is not None:
            raise RuntimeError(f"device string '{s}' already names an index")
        if not num.isdigit():
            raise RuntimeError(f"Invalid device string: '{s}'")
        index = int(num)
    if index is not None and index < 0:
        raise RuntimeError(f"Device index must not be negative, got {index}")
    return kind, index


cdef class device:
    """`tensorlib.device("cpu")`, `device("opencl:1")`, `device("cuda", 0)`."""

    def __init__(self, spec, index=None):
        kind, idx = _parse(spec, index)
        if _loader is not None:
            _loader.check_known(kind)
        self.type = kind
        self.index = idx

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == (<device>other).type and self.index == (<device>other).index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (str(self),))

    def __enter__(self):
        """`with device("opencl"):` makes factories allocate there until the block ends, as
        PyTorch's device context does (one default for the process, like set_default_device)."""
        _entered.append(_default_hooks[0]())
        _default_hooks[1](self)
        return self

    def __exit__(self, *exc):
        _default_hooks[1](_entered.pop())
        return False


cpdef device canonical(object spec):
    """The device instance tensors carry: backend loaded, index resolved (cpu and meta keep
    None)."""
    cdef device d
    if isinstance(spec, device):
        d = <device>spec
        if d._kernels is not None:
            return d
        key = (d.type, d.index)
    elif spec is None:
        key = ("cpu", None)
    else:
        key = _parse(spec, None)
    found = _canonical.get(key)
    if found is not None:
        return <device>found
    kind, idx = key
    backend = _loader.load(kind)            # raises RuntimeError naming what to install
    if kind == "cpu" or kind == "meta":     # one device, no index (PyTorch's device('meta'))
        idx = None
    else:
        if idx is None:
            idx = 0
        count = backend.device_count()
        if idx >= count:
            raise RuntimeError(f"{kind}:{idx} does not exist: the {kind} backend has "
                               f"{count} device(s)")
    found = _canonical.get((kind, idx))
    if found is not None:                   # 'cpu:0' after 'cpu' (or 'cuda' after 'cuda:0'):
        _canonical[key] = found             # the one instance, which tensors compare by `is`
        return <device>found
    d = device.__new__(device)
    d.type = kind
    d.index = idx
    d._backend = backend
    d._kernels = _loader.kernel_table(kind)
    d._allocate = backend.allocate
    d._release = getattr(backend, "release", None)
    _canonical[key] = d
    _canonical[(kind, idx)] = d
    return d
