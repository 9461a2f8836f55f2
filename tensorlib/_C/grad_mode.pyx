"""Grad mode (is autograd recording?) and the hook through which Cython fast paths record
graph nodes. Kept in C so the check costs nothing on the no-grad path.

Grad mode and inference mode are per thread, as PyTorch's: a `no_grad()` block in one thread
(an evaluation or a server's worker) leaves the others recording, and every thread starts
with grad mode on and inference mode off."""

cdef extern from *:
    """
    static __thread int tl_grad_mode_on = 1;
    static __thread int tl_inference_mode_on = 0;
    """
    int tl_grad_mode_on
    int tl_inference_mode_on

cdef object _recorder = None
cdef object _inplace_recorder = None


cdef bint grad_enabled():
    return tl_grad_mode_on


cdef object recorder():
    return _recorder


cdef object inplace_recorder():
    return _inplace_recorder


def is_grad_enabled():
    return bool(tl_grad_mode_on)


def set_grad_enabled(bint mode):
    """Switch recording on or off in this thread; returns the previous mode."""
    global tl_grad_mode_on
    previous = bool(tl_grad_mode_on)
    tl_grad_mode_on = mode
    return previous


cdef bint inference_enabled():
    return tl_inference_mode_on


def is_inference_mode_enabled():
    return bool(tl_inference_mode_on)


def set_inference_mode(bint mode):
    """Switch inference mode in this thread; returns the previous mode."""
    global tl_inference_mode_on
    previous = bool(tl_inference_mode_on)
    tl_inference_mode_on = mode
    return previous


def set_recorders(record, record_inplace):
    """tensorlib.autograd installs record(op, out, inputs, attrs) and
    record_inplace(op, kind, self, other) here."""
    global _recorder, _inplace_recorder
    _recorder = record
    _inplace_recorder = record_inplace
