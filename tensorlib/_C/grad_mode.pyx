"""Grad mode (is autograd recording?) and the hook through which Cython fast paths record
graph nodes. Kept in C so the check costs nothing on the no-grad path."""

cdef bint _enabled = True
cdef bint _inference = False
cdef object _recorder = None
cdef object _inplace_recorder = None


cdef bint grad_enabled():
    return _enabled


cdef object recorder():
    return _recorder


cdef object inplace_recorder():
    return _inplace_recorder


def is_grad_enabled():
    return _enabled


def set_grad_enabled(bint mode):
    """Switch recording on or off; returns the previous mode."""
    global _enabled
    previous = _enabled
    _enabled = mode
    return previous


cdef bint inference_enabled():
    return _inference


def is_inference_mode_enabled():
    return _inference


def set_inference_mode(bint mode):
    global _inference
    previous = _inference
    _inference = mode
    return previous


def set_recorders(record, record_inplace):
    """tensorlib.autograd installs record(op, out, inputs, attrs) and
    record_inplace(op, kind, self, other) here."""
    global _recorder, _inplace_recorder
    _recorder = record
    _inplace_recorder = record_inplace
