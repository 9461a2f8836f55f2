"""no_grad, enable_grad, set_grad_enabled and inference_mode: context managers that also work
as decorators, switching the C-level flag the fast paths read."""
import functools

from tensorlib._C import grad_mode as _state

is_grad_enabled = _state.is_grad_enabled
is_inference_mode_enabled = _state.is_inference_mode_enabled


class _Mode:
    """Base: subclasses say what to set on entry; exit restores what was there."""

    def _enter(self):
        raise NotImplementedError(f"{type(self).__name__} must implement _enter()")

    def __enter__(self):
        self._saved = self._enter()
        return self

    def __exit__(self, *exc):
        self._restore(self._saved)
        return False

    def _restore(self, saved):
        _state.set_grad_enabled(saved)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class _NoParamMode(_Mode):
    """A mode that also decorates without parentheses: `@no_grad` as well as `@no_grad()`."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        if callable(orig_func):
            return cls()(orig_func)
        raise TypeError(f"{cls.__name__}() takes no arguments (got {orig_func!r})")

    def __init__(self, orig_func=None):
        pass


class no_grad(_NoParamMode):
    """Ops inside record no graph (for evaluation and parameter updates)."""

    def _enter(self):
        return _state.set_grad_enabled(False)


class enable_grad(_NoParamMode):
    """Recording on again, e.g. inside a no_grad region."""

    def _enter(self):
        return _state.set_grad_enabled(True)


class set_grad_enabled(_Mode):
    """set_grad_enabled(mode): as a function call it switches at once (like torch); as a
    context manager it restores the previous mode on exit."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._previous = _state.set_grad_enabled(self.mode)

    def _enter(self):
        return self._previous

    def __call__(self, fn):
        _state.set_grad_enabled(self._previous)     # as a decorator, switch only inside calls
        return super().__call__(fn)

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_Mode):
    """Like no_grad, and tensors made inside can never join a graph later."""

    def __new__(cls, mode=True):
        if callable(mode):                  # bare @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _enter(self):
        return (_state.set_grad_enabled(not self.mode and _state.is_grad_enabled()),
                _state.set_inference_mode(self.mode))

    def _restore(self, saved):
        _state.set_grad_enabled(saved[0])
        _state.set_inference_mode(saved[1])

    def clone(self):
        return type(self)(self.mode)
