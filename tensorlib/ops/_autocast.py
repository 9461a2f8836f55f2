"""The ops' hook for autocast (tensorlib.amp) and for the profiler's op events: while no
autocast region is enabled and no profiler records, an op pays one read of the module flag
`active`. Otherwise `run` records the op as a profiler event ("tensorlib::<name>"), casts its
floating inputs by the device type's autocast policy (tensorlib/amp/policy.py), and runs its
body with the hook off in this thread, as PyTorch's Autocast dispatch key excludes itself
below the op it wraps (the kernels inside are still profiled: see
tensorlib/profiler/_recorder.py). `run` takes the op's body without its own `active` check.

Ops join in one of two ways: `@differentiable` ops check the flag in their wrapper (so the
casts are recorded before the op's node), and the other listed ops take `@autocast_op(name)`."""
import functools
import threading

active = False          # an autocast region is enabled (in some thread) or a profiler records
_caster = None          # tensorlib.amp's: callable(name, args, kwargs) -> (args, kwargs)
_recorder = None        # the profiler's: begin(name, kind, args) -> event, end(event)
_inside = threading.local()     # .op: this thread runs the body of an op the hook took


def _refresh():
    global active
    active = _caster is not None or _recorder is not None


def set_caster(caster):
    """tensorlib.amp: the caster while some region is enabled, None when none is."""
    global _caster
    _caster = caster
    _refresh()


def set_recorder(recorder):
    """tensorlib.profiler: its recorder module while a profile records, else None."""
    global _recorder
    _recorder = recorder
    _refresh()


def run(name, fn, args, kwargs):
    """fn(*args, **kwargs) with the inputs cast for op `name`; the ops fn calls skip the hook
    (each thread on its own: another thread's ops still go through it)."""
    inside = _inside
    if getattr(inside, "op", False):
        return fn(*args, **kwargs)
    recorder = _recorder
    event = recorder.begin("tensorlib::" + name, "cpu_op", args) if recorder else None
    try:
        if _caster is not None:
            args, kwargs = _caster(name, args, kwargs)
        inside.op = True
        try:
            return fn(*args, **kwargs)
        finally:
            inside.op = False
    finally:
        if event is not None:
            recorder.end(event)


def autocast_op(name):
    """Let autocast cast the inputs of an op that is not `@differentiable`."""
    def wrap(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if active:
                return run(name, fn, args, kwargs)
            return fn(*args, **kwargs)
        return op
    return wrap
