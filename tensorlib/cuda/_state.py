"""The one way `tensorlib.cuda` reaches the CUDA backend: `backend()` for calls that need a GPU
(RuntimeError saying why there is none), `available()` and `initialized()` for those that
answer anyway, as torch's do on a machine without a GPU."""
import tensorlib.backends as _backends

_initialized = False


def reason():
    """None when CUDA is usable, else why not (no driver, no GPU, pycuda missing)."""
    try:
        return _backends.why_unavailable("cuda")
    except RuntimeError as exc:                  # no 'cuda' entry point at all
        return str(exc)


def available():
    return reason() is None


def initialized():
    return _initialized


def backend():
    """The CUDA backend, initialised; RuntimeError with the reason when it can't be used."""
    global _initialized
    why = reason()
    if why is not None:
        hint = None
        try:
            hint = _backends._loader.LOADER.record("cuda").install_hint
        except RuntimeError:
            pass
        raise RuntimeError(f"CUDA is not available: {why.splitlines()[0]}"
                           + (f". To use it: {hint}" if hint else ""))
    b = _backends.get("cuda")
    _initialized = True
    return b


def index(device, optional=True):
    """The device ordinal of `device` (None, int, 'cuda:N', tensorlib.device); None and -1
    mean the current device when `optional`."""
    if device is None or (isinstance(device, int) and device == -1):
        if not optional:
            raise ValueError("Expected a cuda device with a specified index or an integer, "
                             f"but got: {device}")
        return current()
    if isinstance(device, bool):
        raise ValueError(f"Expected a cuda device, but got: {device}")
    if isinstance(device, int):
        return device
    from tensorlib._C.device import device as _device
    d = device if isinstance(device, _device) else _device(str(device))
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current() if d.index is None else d.index


def current():
    return backend().current_device()
