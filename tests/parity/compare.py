"""How the differential fuzzer compares a call in tensorlib with the same call in torch:
either both raise the same builtin exception class, or both return the same shapes, dtypes and
values (within a tolerance per dtype); tuples and lists are compared element by element."""
import builtins
import math

import numpy as np
import pytest

import tensorlib

torch = pytest.importorskip("torch")

TOLERANCE = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "float64": 1e-10,
             "complex64": 2e-5, "complex128": 1e-10}


def _builtin(exc_type):
    """The builtin exception class an exception is (numpy's UFuncTypeError is a TypeError)."""
    for cls in exc_type.__mro__:
        if getattr(builtins, cls.__name__, None) is cls:
            return cls
    return Exception


def _outcome(fn):
    try:
        return "returns", fn()
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return "raises", type(exc)


def _host(t):
    """(shape, dtype name, float64 or exact values) of a tensor of either library."""
    name = str(t.dtype).split(".")[-1]
    t = t.detach().cpu()
    if name in ("float16", "bfloat16"):
        t = t.float()
    return tuple(t.shape), name, np.array(t.tolist(), dtype=object if name == "int64" else None)


def _same(ours, ref, where, scale=1, tolerance=None):
    if isinstance(ref, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(ref), where
        for o, r in zip(ours, ref):
            _same(o, r, where, scale, tolerance)
        return
    if isinstance(ref, torch.dtype):
        assert str(ours).split(".")[-1] == str(ref).split(".")[-1], f"{where}: {ours} vs {ref}"
        return
    if not isinstance(ref, torch.Tensor):
        assert ours == ref or (isinstance(ref, float) and math.isnan(ref) and
                               math.isnan(ours)), f"{where}: {ours!r} vs {ref!r}"
        return
    (shape, dtype, values), (rshape, rdtype, rvalues) = _host(ours), _host(ref)
    assert (shape, dtype) == (rshape, rdtype), f"{where}: shape/dtype {shape} {dtype} vs " \
                                               f"{rshape} {rdtype}"
    if dtype in TOLERANCE:
        tol = max(tolerance or 0, TOLERANCE[dtype]) * scale
        np.testing.assert_allclose(values, rvalues, rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=where)
    else:
        assert values.tolist() == rvalues.tolist(), where


def check(call, args_for, describe, has_number=False, scale=1, any_exception=False,
          tolerance=None):
    """`scale` widens the tolerance for ops that accumulate (matmul, conv, norms);
    `any_exception`: when both raise, the classes are not compared; `tolerance` widens the
    result dtype's (a float64 out of a bfloat16 computation holds bfloat16 roundings)."""
    ours = _outcome(lambda: call(tensorlib, args_for(tensorlib)))
    ref = _outcome(lambda: call(torch, args_for(torch)))
    if ref[0] == "raises":
        ref = "raises", _builtin(ref[1])
    where = describe()
    if has_number and ref == ("raises", TypeError):
        # torch's binding refuses a Python number where its signature says Tensor (e.g.
        # torch.maximum(t, 0.5)); tensorlib takes the number as a 0-d tensor (and then
        # computes, or rejects the dtypes). The one difference the fuzzer accepts:
        # tensorlib is the wider API there.
        return False
    assert ours[0] == ref[0], f"{where}: tensorlib {ours[0]} {ours[1]!r} / torch {ref[0]} " \
                              f"{ref[1]!r}"
    if ref[0] == "raises":
        # `except <torch's class>` must catch ours (ours may be a subclass of several)
        assert any_exception or issubclass(ours[1], ref[1]), \
            f"{where}: tensorlib raises {ours[1]}, torch {ref[1]}"
    else:
        _same(ours[1], ref[1], where, scale, tolerance)
    return ref[0] == "returns"
