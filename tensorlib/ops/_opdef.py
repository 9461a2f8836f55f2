"""@differentiable: how an op written in Python joins autograd. When recording is on and a
tensor input requires grad, the op body runs with recording off (its inner ops are an
implementation detail) and one node for the whole op is recorded with its formula."""
import functools

from tensorlib._C import grad_mode as _state
from tensorlib.ops import _autocast
from tensorlib._C.tensor_impl import TensorImpl

OPS = {}          # op name -> the decorated op (forward AD re-runs linear ops on tangents)


def _requires_grad(args):
    for a in args:
        if isinstance(a, TensorImpl):
            if a._requires_grad:
                return True
        elif isinstance(a, (list, tuple)):
            for t in a:
                if isinstance(t, TensorImpl) and t._requires_grad:
                    return True
    return False


def differentiable(name):
    def wrap(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if _autocast.active:
                return _autocast.run(name, op, args, kwargs)
            if not (_state.is_grad_enabled() and _requires_grad(args)):
                return fn(*args, **kwargs)
            prev = _state.set_grad_enabled(False)
            try:
                out = fn(*args, **kwargs)
            finally:
                _state.set_grad_enabled(prev)
            if any(out is a for a in args):     # a no-op (x.to(x.dtype)) returns its input
                return out
            from tensorlib.autograd.recording import record
            return record(name, out, args, kwargs)
        op.op_name = name
        OPS[name] = op
        return op
    return wrap
