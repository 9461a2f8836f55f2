"""torch._C.DispatchKey / DispatchKeySet / _ExcludeDispatchKeyGuard (tensorlib.library.
dispatch_keys): PyTorch's key names and values, the set algebra and its printing, and the guard
turning off what tensorlib has for the keys it excludes."""
import pytest

import tensorlib
from tensorlib import _C
from tensorlib.library import DispatchKey, DispatchKeySet

K = DispatchKey


def test_reachable_where_pytorch_programs_look():
    assert _C.DispatchKey is DispatchKey and _C.DispatchKeySet is DispatchKeySet
    assert _C._ExcludeDispatchKeyGuard is not None


def test_key_names_and_values_match_pytorch():
    torch = pytest.importorskip("torch")
    theirs = {name: int(value) for name, value in torch._C.DispatchKey.__members__.items()}
    ours = {name: key.value for name, key in DispatchKey.__members__.items()}
    assert ours == theirs


@pytest.mark.parametrize("keys", [("AutocastCPU", "AutocastCUDA", "AutocastXPU"),
                                  ("AutogradCPU", "CPU", "AutocastCPU"),
                                  ("SparseCPU", "CUDA", "QuantizedCPU", "Python"),
                                  ("Dense",), ("CompositeImplicitAutograd",), ("Undefined",),
                                  ("Meta", "AutogradMeta", "FuncTorchBatched")])
def test_sets_print_and_order_as_pytorch(keys):
    torch = pytest.importorskip("torch")
    ours, theirs = DispatchKeySet(keys[0]), torch._C.DispatchKeySet(getattr(torch._C.DispatchKey,
                                                                              keys[0]))
    for name in keys[1:]:
        ours = ours | DispatchKeySet(K[name])
        theirs = theirs | torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, name))
    assert repr(ours) == repr(theirs)
    assert ours.highestPriorityTypeId().name == theirs.highestPriorityTypeId().name


def test_set_algebra():
    cpu, cuda = DispatchKeySet(K.AutocastCPU), DispatchKeySet(K.AutocastCUDA)
    both = cpu | cuda
    assert both.has(K.AutocastCPU) and both.has(K.AutocastCUDA) and not both.has(K.CPU)
    assert both & cpu == cpu and both - cpu == cuda and (cpu - cpu) == DispatchKeySet(K.Undefined)
    assert both.remove(K.AutocastCUDA) == cpu and cpu.add(K.AutocastCUDA) == both
    assert DispatchKeySet(K.CPU).has(K.Dense) and not DispatchKeySet(K.CPU).has(K.Sparse)
    assert repr(both) == "DispatchKeySet(AutocastCPU, AutocastCUDA)"
    assert DispatchKeySet("CPU") == DispatchKeySet(K.CPU)


def test_sets_are_immutable_and_unhashable():
    ks = DispatchKeySet(K.CPU)
    with pytest.raises(AttributeError):
        ks._keys = frozenset()
    with pytest.raises(TypeError):
        hash(ks)
    with pytest.raises(ValueError, match="Unknown dispatch key"):
        DispatchKeySet("NotAKey")
    with pytest.raises(TypeError):
        DispatchKeySet(3)
    with pytest.raises(TypeError):
        _ = ks | 1


def test_excluding_autocast_keys_turns_autocast_off_inside():
    x = tensorlib.ones(2, 2)
    with tensorlib.autocast("cpu", dtype=tensorlib.bfloat16):
        assert (x @ x).dtype is tensorlib.bfloat16
        with _C._ExcludeDispatchKeyGuard(DispatchKeySet(K.AutocastCPU) |
                                         DispatchKeySet(K.AutocastCUDA)):
            assert not tensorlib.is_autocast_enabled("cpu")
            assert (x @ x).dtype is tensorlib.float32
        assert tensorlib.is_autocast_enabled("cpu")
        assert (x @ x).dtype is tensorlib.bfloat16
        with _C._ExcludeDispatchKeyGuard(DispatchKeySet(K.AutocastCUDA)):
            assert (x @ x).dtype is tensorlib.bfloat16     # CPU's autocast is not excluded


def test_excluding_autograd_keys_stops_recording_and_restores():
    w = tensorlib.ones(2, requires_grad=True)
    with _C._ExcludeDispatchKeyGuard(DispatchKeySet(K.AutogradCPU)):
        assert not (w * 2).requires_grad
    assert (w * 2).requires_grad and tensorlib.is_grad_enabled()


def test_keys_without_a_tensorlib_layer_change_nothing():
    w = tensorlib.ones(2, requires_grad=True)
    with _C._ExcludeDispatchKeyGuard(DispatchKeySet(K.Python) | DispatchKeySet(K.Functionalize)):
        assert (w * 2).requires_grad


def test_guard_restores_after_an_exception():
    with tensorlib.autocast("cpu"):
        with pytest.raises(KeyError):
            with _C._ExcludeDispatchKeyGuard(DispatchKeySet(K.AutocastCPU)):
                raise KeyError("boom")
        assert tensorlib.is_autocast_enabled("cpu")


def test_guard_takes_a_key_set():
    with pytest.raises(TypeError, match="DispatchKeySet"):
        _C._ExcludeDispatchKeyGuard(K.AutocastCPU)


def test_algebra_matches_pytorch_bit_for_bit():
    torch = pytest.importorskip("torch")
    names = [("CPU", "AutogradCPU"), ("SparseCUDA", "AutocastCPU"), ("CUDA",), ("AutogradCPU",),
             ("QuantizedCPU", "Python", "AutocastCUDA")]

    def both(keys):
        ours = theirs = None
        for name in keys:
            o, t = DispatchKeySet(K[name]), torch._C.DispatchKeySet(getattr(torch._C.DispatchKey,
                                                                             name))
            ours, theirs = (o, t) if ours is None else (ours | o, theirs | t)
        return ours, theirs

    for a in names:
        for b in names:
            (oa, ta), (ob, tb) = both(a), both(b)
            for op in ("__or__", "__and__", "__sub__"):
                assert repr(getattr(oa, op)(ob)) == repr(getattr(ta, op)(tb)), (a, b, op)
            assert (oa == ob) == (ta == tb)
            assert repr(oa.remove(K[b[0]])) == repr(ta.remove(getattr(torch._C.DispatchKey, b[0])))
            for name in ("CPU", "CUDA", "Dense", "AutogradCPU", "AutocastCPU", "SparseCPU"):
                assert oa.has(K[name]) == ta.has(getattr(torch._C.DispatchKey, name)), (a, name)
