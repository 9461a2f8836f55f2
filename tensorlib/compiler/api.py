"""`tensorlib.compile`: what a compiled callable does on each call.

Our backend ("inductor", the default, and "eager") re-runs the function's Python on every
call with the kernels recorded (`capture`), and runs each segment through its cached plan
(`plan`): the Python is the guard, so anything that changes what the function does -- shapes,
dtypes, devices, grad mode, the training flag, a Python branch -- changes the recorded
segment and so its plan. Graph breaks cost one segment each and nothing else. Custom
backends get the function's FX graph (`tensorlib.fx.symbolic_trace`) and example inputs, as
in PyTorch, once per input signature.

The signature of a call (shapes unless dynamic, dtypes, devices, requires_grad, grad mode,
training flag, Python arguments) is counted as PyTorch counts recompiles: past
`config.cache_size_limit` distinct ones a function runs eagerly, with one warning. A second
shape for the same call marks its sizes dynamic (PyTorch's automatic dynamic): the generated
kernels take sizes at run time, so new sizes compile nothing.
"""
import functools
import warnings
import weakref

from tensorlib import _capture_state
from tensorlib._C import grad_mode as _grad_mode
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.compiler import capture as _capture
from tensorlib.compiler import plan as _plan
from tensorlib.compiler import replay as _replay
from tensorlib.compiler.logs import log as _log


class config:
    """Knobs with PyTorch's names (torch._dynamo.config), and `replay`: whether verified
    recordings replay without running the Python (`compiler/replay.py`)."""
    cache_size_limit = 8
    suppress_errors = False
    replay = True


_BACKENDS = ("inductor", "eager", "aot_eager")
_disabled_depth = 0
_compiled = weakref.WeakSet()   # for reset()


def list_backends():
    return list(_BACKENDS)


def _flatten(obj, out):
    if isinstance(obj, TensorImpl):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _flatten(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _flatten(x, out)
    return out


def _arg_signature(a, dynamic):
    if isinstance(a, TensorImpl):
        return ("T", None if dynamic else a._sizes, a._dtype.name, str(a._device),
                a._requires_grad)
    if isinstance(a, (list, tuple)):
        return (type(a).__name__,) + tuple(_arg_signature(x, dynamic) for x in a)
    if isinstance(a, dict):
        return ("dict",) + tuple((k, _arg_signature(v, dynamic)) for k, v in a.items())
    if a is None or isinstance(a, (bool, int, float, str)):
        return (type(a).__name__, a)
    return ("object", type(a).__name__)


class CompiledFunction:
    """The callable `tensorlib.compile(fn)` returns."""

    def __init__(self, fn, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
                 options=None, module=None):
        self._orig = fn
        self._module = module
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.mode = mode
        self.options = dict(options or {})
        if backend is None:
            backend = "inductor"
        if isinstance(backend, str):
            if backend not in _BACKENDS:
                raise RuntimeError(f"tensorlib.compile: unknown backend '{backend}'; the "
                                   f"backends are {list_backends()} or a callable "
                                   f"(graph_module, example_inputs) -> callable")
            self.backend = backend
        elif callable(backend):
            self.backend = backend
        else:
            raise TypeError(f"tensorlib.compile: backend must be a string or a callable, not "
                            f"{type(backend).__name__}")
        self.signatures = set()
        self._shapes_seen = {}          # signature without sizes -> sizes
        self._dynamic_marked = dynamic is True
        self._gave_up = False
        self._custom = {}               # signature -> callable from the custom backend
        self.graph_breaks = []          # (reason, (file, line, name)) of the last call
        self._replayer = None
        if isinstance(self.backend, str) and self.options.get("replay", True):
            self._replayer = _replay.Replayer(fn, module)
        functools.update_wrapper(self, fn)
        _compiled.add(self)

    @property
    def replayed_calls(self):
        """How many calls ran as a replay of a verified recording (`compiler/replay.py`)."""
        return self._replayer.replayed if self._replayer is not None else 0

    # -- guards ------------------------------------------------------------------------------
    def _signature(self, args, kwargs):
        state = (_grad_mode.is_grad_enabled(),
                 self._module.training if self._module is not None else None,
                 _replay.ambient())      # inference mode and autocast, as Dynamo's guards
        if not self._dynamic_marked:
            full = (_arg_signature(args, False), _arg_signature(kwargs, False), state)
            if full in self.signatures:     # its sizes were checked when it was new
                return full
        static = (_arg_signature(args, True), _arg_signature(kwargs, True), state)
        if not self._dynamic_marked and self.dynamic is not False:
            sizes = tuple(t._sizes for t in _flatten((args, kwargs), []))
            seen = self._shapes_seen.setdefault(static, sizes)
            if seen != sizes:
                self._dynamic_marked = True
                _log("recompiles", f"{self.__name__}: sizes changed from {seen} to {sizes}; "
                                   f"marking them dynamic")
        if self._dynamic_marked:
            return static
        return full

    def _admit(self, args, kwargs):
        """False when the call must run eagerly (past the cache limit)."""
        if self._gave_up:
            return False
        sig = self._last_signature = self._signature(args, kwargs)
        if sig in self.signatures:
            return True
        if len(self.signatures) >= config.cache_size_limit:
            self._gave_up = True
            warnings.warn(f"tensorlib.compile: {self.__name__} reached cache_size_limit "
                          f"({config.cache_size_limit}) distinct input signatures; it runs "
                          f"eagerly from now on (raise tensorlib.compiler.config."
                          f"cache_size_limit to compile more)", RuntimeWarning, stacklevel=3)
            return False
        if self.signatures:
            _log("recompiles", f"{self.__name__}: new input signature {sig}")
        self.signatures.add(sig)
        return True

    # -- calling -------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _disabled_depth or not self._admit(args, kwargs):
            return self._orig(*args, **kwargs)
        if not isinstance(self.backend, str):
            return self._call_custom(args, kwargs)
        tensors = _flatten((args, kwargs), [])
        learning = None
        if self._replayer is not None and config.replay and _capture_state.current is None:
            result, learning = self._replayer.lookup(self._last_signature, tensors)
            if result is not _replay.MISS:
                return result
        devices = _capture.capture_devices(
            tensors + list(self._module.parameters()) if self._module is not None else tensors)
        fuse = self.backend != "eager" and self.backend != "aot_eager"
        breaks = []

        def on_break(reason, frame):
            breaks.append((reason, frame))
            _log("graph_breaks", f"graph break in {self.__name__} at {frame[0]}:{frame[1]}: "
                                 f"{reason}")

        if learning is None:
            result, _ = _capture.run_captured(
                self._orig, args, kwargs, devices,
                lambda nodes, cap: _plan.run_segment(nodes, cap, fuse), self.fullgraph,
                on_break)
        else:
            for d in learning[1].devices:       # a bound optimizer's parameters, say
                if all(d is not e for e in devices):
                    devices.append(d)
            log = []
            result, cap = _capture.run_captured(self._orig, args, kwargs, devices,
                                                _replay.logging_runner(fuse), self.fullgraph,
                                                on_break, program=log)
            if cap is not None:     # None: it ran eagerly beside another thread's capture
                self._replayer.learn(learning, cap, log, tensors, result, devices, fuse)
        self.graph_breaks = breaks
        if _grad_mode.is_grad_enabled() and any(
                t._requires_grad and (t._grad_fn is None or not t._grad_fn._released)
                for t in _flatten(result, [])):     # not a loss it already ran backward from
            _capture_state.backward = (devices, fuse)
        return result

    def _positional(self, args, kwargs):
        """Keyword arguments bound to the traced function's parameters, defaults filled in:
        the GraphModule's placeholders are positional."""
        import inspect
        target = self._module.forward if self._module is not None else self._orig
        params = inspect.signature(target).parameters.values()
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            raise NotImplementedError(f"tensorlib.compile with a custom backend: "
                                      f"{self.__name__} takes *args/**kwargs, which a graph's "
                                      f"placeholders cannot represent")
        bound = inspect.signature(target).bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def _call_custom(self, args, kwargs):
        if kwargs:
            args, kwargs = self._positional(args, kwargs), {}
        sig = self._signature(args, kwargs)
        compiled = self._custom.get(sig)
        if compiled is None:
            from tensorlib import fx
            target = self._module if self._module is not None else self._orig
            try:
                gm = fx.symbolic_trace(target)
            except fx.TraceError as exc:
                if self.fullgraph:
                    raise _capture.GraphBreakError(
                        f"tensorlib.compile(fullgraph=True): {exc}") from exc
                warnings.warn(f"tensorlib.compile: {self.__name__} could not be captured as "
                              f"one graph for the custom backend ({exc}); running it eagerly",
                              RuntimeWarning, stacklevel=3)
                compiled = self._orig
            else:
                fx.passes.shape_prop.ShapeProp(gm).propagate(*args)
                compiled = self.backend(gm, list(args))
                if not callable(compiled):
                    raise TypeError(f"the compile backend {self.backend!r} returned "
                                    f"{type(compiled).__name__}, not a callable")
            self._custom[sig] = compiled
        return compiled(*args)


def run_backward_compiled(run_backward, *args):
    """The engine's backward after a compiled forward: under a capture, so its elementwise
    chains (activation gradients, accumulation) fuse like the forward's."""
    devices, fuse = _capture_state.backward
    _capture_state.backward = None
    _capture.run_captured(run_backward, args, {}, devices,
                          lambda nodes, cap: _plan.run_segment(nodes, cap, fuse))


_capture_state.run_backward_compiled = run_backward_compiled


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """torch.compile: a callable (or module) that computes what `model` computes, with its
    recorded kernels fused and generated per backend. Usable as a decorator, with or without
    arguments."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if disable:
        return model
    if mode not in (None, "default", "reduce-overhead", "max-autotune",
                    "max-autotune-no-cudagraphs"):
        raise RuntimeError(f"tensorlib.compile: unknown mode '{mode}'")
    from tensorlib.nn.modules.module import Module
    if isinstance(model, Module):
        from tensorlib.compiler.module import OptimizedModule
        return OptimizedModule(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                               mode=mode, options=options)
    if not callable(model):
        raise RuntimeError(f"tensorlib.compile: expected a callable or a Module, got "
                           f"{type(model).__name__}")
    return CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                            mode=mode, options=options)


def disable(fn=None, recursive=True):
    """Decorator (torch.compiler.disable): `fn` runs eagerly even inside a compiled call; its
    kernels run for real, after those recorded before it."""
    if fn is None:
        return lambda f: disable(f, recursive)

    @functools.wraps(fn)
    def eager(*args, **kwargs):
        global _disabled_depth
        from tensorlib import _capture_state
        cap = _capture_state.current
        if cap is None:
            _disabled_depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                _disabled_depth -= 1
        cap.flush()
        cap.uninstall()
        cap.opaque = True
        _disabled_depth += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _disabled_depth -= 1
            cap.install()
    return eager


def reset():
    """torch.compiler.reset: forget every plan and every compiled function's signatures."""
    _plan.reset()
    for c in _compiled:
        if c._replayer is not None:
            c._replayer.reset()
        c.signatures.clear()
        c._shapes_seen.clear()
        c._custom.clear()
        c._gave_up = False
        c._dynamic_marked = c.dynamic is True


def is_compiling():
    from tensorlib import _capture_state
    return _capture_state.current is not None
