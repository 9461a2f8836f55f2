"""Elementwise CPU kernels as small Cython callables around numpy ufuncs: the per-call cost
of a 4-element add is the framework's headline overhead, so no Python frame sits between the
dispatch and the ufunc. Large outputs are split across threads by tensorlib_cpu.ufunc_threads."""
import numpy as np

from cpython.contextvars cimport PyContextVar_Reset, PyContextVar_Set
from tensorlib._C.tensor_impl cimport TensorImpl, host_array

from tensorlib_cpu import ufunc_threads
from tensorlib_cpu.small_binary import op_code as _small_op_code
from tensorlib_cpu.small_binary cimport run as _run_small

cdef Py_ssize_t PARALLEL_MIN = ufunc_threads.PARALLEL_MIN

# PyTorch never warns about inf/nan results. np.errstate costs ~0.8 us a call, so quiet kernels
# set numpy's error-state context variable directly (what np.errstate.__enter__ does), falling
# back to np.errstate where numpy's internals differ.
try:
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    _QUIET = _make_extobj(all="ignore")
except ImportError:                                  # pragma: no cover - other numpy layouts
    _extobj_contextvar = None
    _QUIET = None


cdef class UfuncKernel:
    """kernel(out, *inputs): ufunc(*inputs) written into out's strided view.

    quiet: no numpy warnings for inf/nan results. integer_division: a zero divisor in an
    integer tensor raises ZeroDivisionError, as in PyTorch (numpy would write 0)."""
    cdef readonly object ufunc
    cdef bint quiet, integer_division, out_keyword
    cdef int small_op               # small_binary's loop for this ufunc (0: none)

    def __init__(self, ufunc, quiet=False, integer_division=False):
        self.ufunc = ufunc
        self.quiet = quiet
        self.integer_division = integer_division
        # numpy deprecates a positional `out` for maximum/minimum only
        self.out_keyword = ufunc in (np.maximum, np.minimum)
        self.small_op = 0 if integer_division or not quiet else _small_op_code(ufunc)

    def __repr__(self):
        return f"<cpu kernel {self.ufunc.__name__}>"

    def __call__(self, TensorImpl out, TensorImpl a, TensorImpl b=None):
        if self.small_op and b is not None and _run_small(self.small_op, out, a, b):
            return
        if self.integer_division:
            divisor = host_array(b)
            if divisor.dtype.kind in "iub" and not divisor.all():
                raise ZeroDivisionError("ZeroDivisionError")
        if not self.quiet:
            self._run(out, a, b)
        elif _extobj_contextvar is not None:
            token = PyContextVar_Set(_extobj_contextvar, _QUIET)
            try:
                self._run(out, a, b)
            finally:
                PyContextVar_Reset(_extobj_contextvar, token)
        else:
            with np.errstate(all="ignore"):
                self._run(out, a, b)

    cdef _run(self, TensorImpl out, TensorImpl a, TensorImpl b):
        o = host_array(out)
        if o.size >= PARALLEL_MIN and self.quiet:      # threads report no FP errors
            if b is None:
                done = ufunc_threads.run(self.ufunc, o, host_array(a))
            else:
                done = ufunc_threads.run(self.ufunc, o, host_array(a), host_array(b))
            if done:
                return
        if b is None:
            self.ufunc(host_array(a), o)
        elif self.out_keyword:
            self.ufunc(host_array(a), host_array(b), out=o)
        else:
            self.ufunc(host_array(a), host_array(b), o)
