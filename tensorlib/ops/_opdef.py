"""@differentiable: how an op written in Python joins autograd. When recording is on and a
tensor input requires grad, the op body runs with recording off (its inner ops are an
implementation detail) and one node for the whole op is recorded with its formula. The
wrapper itself is Cython (tensorlib/_C/opdef.pyx): it runs on every op call."""
import functools

from tensorlib.ops import _autocast
from tensorlib._C.opdef import make_op

OPS = {}          # op name -> the decorated op (forward AD re-runs linear ops on tangents)


def differentiable(name):
    def wrap(fn):
        op = functools.update_wrapper(make_op(name, fn, _autocast), fn)
        op.op_name = name
        OPS[name] = op
        return op
    return wrap
