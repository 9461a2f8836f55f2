"""Process-wide numerics switches PyTorch programs set: deterministic algorithms and the
float32 matmul precision.

NOTE [ Deterministic algorithms ]
PyTorch raises (or, with warn_only, warns) under use_deterministic_algorithms(True) for the
ops whose kernels are nondeterministic on a device: atomic adds on CUDA in scatter_add,
index_add, index_put with accumulate, the backward of interpolate, and so on; on the CPU none
is. tensorlib has no such kernel on any backend: the CPU kernels are sequential per output,
and the OpenCL/CUDA scatter_add and index_add sort their indices once and add in that order
(bit-identical sums run to run), so no op raises or warns. What the mode does change, as in
PyTorch, is uninitialized memory: with `tensorlib.utils.deterministic.
fill_uninitialized_memory` (default True), `empty`, `empty_like`, `empty_strided` and
`new_empty` fill floating and complex tensors with NaN and integer tensors with their
largest value (bool: True). The float32 matmuls are always full precision, so the matmul
precision is kept, validated and reported as PyTorch's, and read by nothing."""

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision",
           "get_float32_matmul_precision"]

_deterministic = False
_warn_only = False
_matmul_precision = "highest"
_DEBUG_MODES = ("default", "warn", "error")
# called with the new mode when deterministic algorithms are switched (a backend registers:
# the CPU backend then keeps its thread count fixed, see cpu_load.py)
_deterministic_listeners = []
_PRECISIONS = ("highest", "high", "medium")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms (with warn_only, a nondeterministic op warns)."""
    global _deterministic, _warn_only
    if not isinstance(mode, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must "
                        f"be bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _deterministic, _warn_only = mode, warn_only and mode
    for listener in _deterministic_listeners:
        listener(mode)


def on_deterministic_algorithms(listener):
    """Call `listener(mode)` now and whenever use_deterministic_algorithms switches."""
    _deterministic_listeners.append(listener)
    listener(_deterministic)


def are_deterministic_algorithms_enabled():
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled():
    return _warn_only


def set_deterministic_debug_mode(debug_mode):
    """0/'default' off, 1/'warn' deterministic with warnings, 2/'error' deterministic."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _deterministic:
        return 0
    return 1 if _warn_only else 2


def set_float32_matmul_precision(precision):
    """'highest' (full float32), 'high' or 'medium' (TF32/bf16 allowed); anything else warns
    and changes nothing, as PyTorch's."""
    global _matmul_precision
    if precision not in _PRECISIONS:
        import warnings
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _matmul_precision = precision


def fill_uninitialized(t):
    """t, filled as NOTE [ Deterministic algorithms ] says when the mode is on."""
    if not _deterministic:
        return t
    from tensorlib.utils import deterministic
    if not deterministic.fill_uninitialized_memory or t.numel() == 0:
        return t
    import tensorlib
    dtype = t.dtype
    if dtype.is_floating_point or dtype.is_complex:
        value = float("nan")
    elif dtype is tensorlib.bool:
        value = True
    else:
        value = int(tensorlib.iinfo(dtype).max)
    from tensorlib._C.dispatch import lookup
    lookup("fill", t._device)(t, value)
    return t


def get_float32_matmul_precision():
    return _matmul_precision
