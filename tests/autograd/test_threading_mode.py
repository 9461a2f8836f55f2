"""autograd's multithreading switch (per thread, call / context manager / decorator, as
torch's), is_view_replay_enabled and kineto_available, against torch's answers."""
import threading

import pytest

import tensorlib
import tensorlib.autograd as autograd

torch = pytest.importorskip("torch")


def test_default_matches_torch():
    assert autograd.is_multithreading_enabled() is torch.autograd.is_multithreading_enabled()


def test_context_manager_and_call_restore_like_torch():
    for lib in (autograd, torch.autograd):
        with lib.set_multithreading_enabled(False):
            assert lib.is_multithreading_enabled() is False
            with lib.set_multithreading_enabled(True):
                assert lib.is_multithreading_enabled() is True
            assert lib.is_multithreading_enabled() is False
        assert lib.is_multithreading_enabled() is True
        switch = lib.set_multithreading_enabled(False)      # a call switches at once
        assert lib.is_multithreading_enabled() is False
        switch.__exit__(None, None, None)
        assert lib.is_multithreading_enabled() is True


def test_decorator_switches_only_inside_calls():
    seen = []

    @autograd.set_multithreading_enabled(False)
    def inner():
        seen.append(autograd.is_multithreading_enabled())

    assert autograd.is_multithreading_enabled() is True
    inner()
    assert seen == [False] and autograd.is_multithreading_enabled() is True


def test_flag_is_per_thread_and_backward_still_runs():
    seen = []
    with autograd.set_multithreading_enabled(False):
        t = threading.Thread(target=lambda: seen.append(autograd.is_multithreading_enabled()))
        t.start()
        t.join()
        x = tensorlib.ones(3, requires_grad=True)
        (x * x).sum().backward()
    assert seen == [True]
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_queries_match_torch_defaults():
    assert autograd.is_view_replay_enabled() is torch.autograd.is_view_replay_enabled()
    assert autograd.kineto_available() is False
