"""The ops' hook for autocast (tensorlib.amp): while no autocast region is open, an op pays one
read of the module flag `active`. When one is open, `run` casts the op's floating inputs by
the device type's policy (tensorlib/amp/policy.py) and runs the op's body with autocast off,
as PyTorch's Autocast dispatch key excludes itself below the op it wraps.

Ops join in one of two ways: `@differentiable` ops check the flag in their wrapper (so the
casts are recorded before the op's node), and the other listed ops take `@autocast_op(name)`."""
import functools

active = False          # some device type has an enabled autocast region open
_caster = None          # tensorlib.amp installs: callable(name, args, kwargs) -> (args, kwargs)


def set_state(is_active, caster):
    """tensorlib.amp switches the hook on and off as regions open and close."""
    global active, _caster
    active = is_active
    _caster = caster


def run(name, fn, args, kwargs):
    """fn(*args, **kwargs) with the inputs cast for op `name`, autocast off inside."""
    global active
    args, kwargs = _caster(name, args, kwargs)
    active = False
    try:
        return fn(*args, **kwargs)
    finally:
        active = True


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
