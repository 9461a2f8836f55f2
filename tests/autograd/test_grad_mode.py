"""no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled."""
import threading

import pytest

import tensorlib as tl
from tensorlib import autograd

from ._util import leaf


@pytest.fixture(autouse=True)
def _restore_modes():
    yield
    assert tl.is_grad_enabled(), "a test left grad mode off"
    assert not tl.is_inference_mode_enabled()


def test_default_enabled():
    assert tl.is_grad_enabled() and autograd.is_grad_enabled()


def test_no_grad_context_manager():
    x = leaf([1.0])
    with tl.no_grad() as ctx:
        assert isinstance(ctx, tl.no_grad)
        assert not tl.is_grad_enabled()
        y = x * 2
    assert tl.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_no_grad_decorator_and_restores_on_exception():
    x = leaf([1.0])

    @tl.no_grad()
    def f(t):
        """doc"""
        return t * 2

    assert not f(x).requires_grad
    assert f.__name__ == "f" and f.__doc__ == "doc"

    @tl.no_grad()
    def boom():
        raise ValueError("x")

    with pytest.raises(ValueError):
        boom()
    assert tl.is_grad_enabled()
    with pytest.raises(KeyError):
        with tl.no_grad():
            raise KeyError
    assert tl.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = leaf([1.0])
    with tl.no_grad():
        with tl.enable_grad():
            assert tl.is_grad_enabled()
            y = x * 2
        assert not tl.is_grad_enabled()

        @tl.enable_grad()
        def g(t):
            return t * 3
        z = g(x)
    assert y.requires_grad and z.requires_grad


def test_nested_modes_restore():
    with tl.no_grad():
        with tl.no_grad():
            pass
        assert not tl.is_grad_enabled()
        with tl.set_grad_enabled(True):
            assert tl.is_grad_enabled()
        assert not tl.is_grad_enabled()


def test_set_grad_enabled_as_context_manager():
    x = leaf([1.0])
    with tl.set_grad_enabled(False):
        assert not tl.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert tl.is_grad_enabled()
    with tl.set_grad_enabled(True):
        assert (x * 2).requires_grad


def test_set_grad_enabled_plain_call():
    x = leaf([1.0])
    try:
        tl.set_grad_enabled(False)
        assert not tl.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        tl.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_set_grad_enabled_decorator_switches_only_inside_calls():
    x = leaf([1.0])

    @tl.set_grad_enabled(False)
    def f(t):
        assert not tl.is_grad_enabled()
        return t * 2

    assert tl.is_grad_enabled()
    assert not f(x).requires_grad
    assert tl.is_grad_enabled()


def test_backward_inside_no_grad_still_works():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    with tl.no_grad():
        y.backward()
        assert not tl.is_grad_enabled()
    assert x.grad.tolist() == [2.0, 4.0]


def test_in_place_on_leaf_allowed_under_no_grad():
    w = leaf([1.0, 2.0])
    with tl.no_grad():
        w.sub_(tl.tensor([0.5, 0.5], dtype=tl.float64))
    assert w.is_leaf and w.requires_grad and w.tolist() == [0.5, 1.5]


def test_inference_mode():
    x = leaf([1.0, 2.0])
    with tl.inference_mode():
        assert tl.is_inference_mode_enabled() and not tl.is_grad_enabled()
        y = x * 2
        t = tl.ones(2, dtype=tl.float64)
    assert not y.requires_grad
    assert not tl.is_inference_mode_enabled() and tl.is_grad_enabled()
    # inference tensors cannot later join a graph
    with pytest.raises(RuntimeError, match="[Ii]nference tensor"):
        t * x
    with pytest.raises(RuntimeError, match="[Ii]nference tensor"):
        t.requires_grad_()
    # but can still be used without autograd
    assert (t * 3).tolist() == [3.0, 3.0]


def test_inference_mode_decorator_and_false():
    @tl.inference_mode()
    def f():
        assert tl.is_inference_mode_enabled()
        return tl.ones(1)
    f()
    with tl.inference_mode(False):
        assert not tl.is_inference_mode_enabled() and tl.is_grad_enabled()
    with tl.no_grad():
        with tl.inference_mode(False):
            assert not tl.is_grad_enabled()


def test_modes_exported_from_autograd():
    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                 "is_grad_enabled"):
        assert getattr(autograd, name) is getattr(tl, name)


def test_bare_decorators():
    x = leaf([1.0])

    @tl.no_grad
    def f(t):
        return t * 2

    @tl.enable_grad
    def g(t):
        return t * 2

    @tl.inference_mode
    def h():
        return tl.is_inference_mode_enabled()

    assert not f(x).requires_grad and tl.is_grad_enabled()
    with tl.no_grad():
        assert g(x).requires_grad
    assert h() and not tl.is_inference_mode_enabled()


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


@pytest.mark.parametrize("lib_name", ["tensorlib", "torch"])
def test_grad_and_inference_mode_are_per_thread(lib_name):
    """A no_grad / inference_mode block in one thread leaves the others as they were, and a
    new thread starts recording, whatever the thread that started it is in (as PyTorch)."""
    lib = pytest.importorskip(lib_name)
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def evaluator():
        with lib.no_grad():
            seen["worker"] = lib.is_grad_enabled()
            inside.set()
            release.wait(10)

    t = threading.Thread(target=evaluator)
    t.start()
    inside.wait(10)
    w = lib.ones(3, requires_grad=True)
    seen["main"] = lib.is_grad_enabled()
    seen["records"] = (w * 2).requires_grad        # training goes on beside the evaluation
    release.set()
    t.join()
    with lib.no_grad():
        seen["fresh thread"] = _in_thread(lib.is_grad_enabled)
    with lib.inference_mode():
        seen["fresh thread, inference"] = _in_thread(lib.is_inference_mode_enabled)
        seen["here, inference"] = lib.is_inference_mode_enabled()
    assert seen == {"worker": False, "main": True, "records": True, "fresh thread": True,
                    "fresh thread, inference": False, "here, inference": True}
