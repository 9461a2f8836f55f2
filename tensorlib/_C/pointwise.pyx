"""The eager path of elementwise ops, in Cython because it is the per-op overhead: promote
dtypes, broadcast, allocate the output, look the kernel up, call it."""
from tensorlib._C.dtypes cimport (dtype, DTYPES, BOOL, FLOAT16, BFLOAT16, FLOAT32, default_float,
                                  is_barebones_unsigned)
from tensorlib._C.device cimport device
from tensorlib._C.tensor_impl cimport TensorImpl, is_contiguous, wrap
from tensorlib._C.factory cimport empty, scalar_tensor, cast
from tensorlib._C.memory_format cimport empty_in_layout_of
from tensorlib._C.dispatch cimport lookup
from tensorlib._C.broadcast cimport broadcast_shapes2
from tensorlib._C.views cimport expand_strides
from tensorlib._C.promotion cimport result_type
from tensorlib._C.grad_mode cimport grad_enabled, recorder, inplace_recorder

from numpy import generic as _np_generic

# How an op's output dtype follows from the promoted input dtype.
cdef enum:
    K_SAME = 0      # add, mul, maximum, ...: the promoted dtype
    K_TO_BOOL = 1   # comparisons: bool out, computed in the promoted dtype
    K_TO_FLOAT = 2  # true division, exp, sin, ...: integers and bool go to the default float
    K_LOGICAL = 3   # logical_and/or/xor/not: bool out, inputs taken as bool

SAME, TO_BOOL, TO_FLOAT, LOGICAL = K_SAME, K_TO_BOOL, K_TO_FLOAT, K_LOGICAL


cdef device _common_device(TensorImpl a, TensorImpl b):
    if a._device is b._device:
        return a._device
    # a 0-dim cpu tensor may join an op on another device, as a scalar does in PyTorch
    if len(b._sizes) == 0 and b._device.type == "cpu":
        return a._device
    if len(a._sizes) == 0 and a._device.type == "cpu":
        return b._device
    for t in (a, b):        # an uninitialized parameter's device refuses (nn/parameter.py)
        refuse = getattr(t._device._allocate, "refuse", None)
        if refuse is not None:
            refuse()
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                       f"two devices, {a._device} and {b._device}!")


cdef TensorImpl _as_operand(object x, dtype dt, device dev, tuple shape):
    """`x` as a tensor of dtype `dt` on `dev`, broadcast (stride 0) to `shape`."""
    cdef TensorImpl t
    if not isinstance(x, TensorImpl):
        t = scalar_tensor(x, dt, dev)
    else:
        t = <TensorImpl>x
        if t._device is not dev:
            t = t.to(dev)
        if t._dtype is not dt:
            t = cast(t, dt)
    if t._sizes != shape:
        sizes, strides = expand_strides(t._sizes, t._strides, shape)
        t = wrap(t._storage, sizes, strides, t._offset, t._dtype)
    return t


# uint16/32/64 are PyTorch's barebones types: of the elementwise ops computed in their own
# dtype, PyTorch's CPU kernels exist only for these (floating ones compute in float)
cdef frozenset _UNSIGNED_BINARY = frozenset({"mul", "eq", "ne", "bitwise_and", "bitwise_or",
                                             "bitwise_xor"})
cdef frozenset _UNSIGNED_UNARY_MISSING = frozenset({"neg", "abs", "sign", "sgn", "bitwise_not",
                                                    "frac", "square", "relu"})


cdef inline _check_unsigned(str op, dtype compute, bint binary_op):
    """NotImplementedError (a RuntimeError), as PyTorch's, for an op it has no uint16/32/64
    kernel for."""
    if not is_barebones_unsigned(compute):
        return
    if (op in _UNSIGNED_BINARY) if binary_op else (op not in _UNSIGNED_UNARY_MISSING):
        return
    raise NotImplementedError(f'"{op}_cpu" not implemented for \'{compute.scalar_name}\'')


cdef inline _check_logical_unsigned(str op, object a, object b):
    """logical_and/or/xor/not take their inputs as bool, but not uint16/32/64 (PyTorch)."""
    for x in (a, b):
        if isinstance(x, TensorImpl) and is_barebones_unsigned((<TensorImpl>x)._dtype):
            _check_unsigned(op, (<TensorImpl>x)._dtype, True)


cdef inline dtype _out_dtype(dtype compute, int kind):
    if kind == K_TO_BOOL or kind == K_LOGICAL:
        return <dtype>DTYPES[BOOL]
    return compute


cdef inline dtype _compute_dtype(dtype promoted, int kind):
    if kind == K_TO_FLOAT and promoted.category < 2:
        return default_float()
    return promoted


cdef inline object _plain_number(object x):
    """A NumPy scalar (np.float32(0.5), np.int64(2), np.bool_) as the Python number PyTorch
    reads it as; anything else as it is."""
    if isinstance(x, _np_generic):
        return x.item()
    return x


cdef inline bint _half_by_number_op(str op, dtype compute, object a, object b):
    """mul and true div of a float16/bfloat16 tensor and a Python number: PyTorch's CPU
    kernels read the number in float32, not rounded to the tensor's dtype (`x * 0.1`
    multiplies by 0.1f; add, sub and pow round the number first, as the plain path does)."""
    return ((compute.code == FLOAT16 or compute.code == BFLOAT16) and (op == "mul" or op == "div")
            and not (isinstance(a, TensorImpl) and isinstance(b, TensorImpl)))


cdef TensorImpl _half_by_number(str op, TensorImpl t, object number, bint number_first,
                                dtype compute, device dev):
    """t * number, t / number (in float32, rounded once) or number / t (PyTorch's
    reciprocal(t) * number), as `compute`."""
    cdef dtype wide = <dtype>DTYPES[FLOAT32]
    cdef TensorImpl src = t if t._dtype is compute else cast(t, compute)
    cdef TensorImpl recip
    if op == "div" and number_first:
        recip = empty(src._sizes, compute, dev)
        lookup("div", dev)(recip, _as_operand(1.0, compute, dev, src._sizes), src)
        src, op = recip, "mul"
    cdef TensorImpl wide_src = cast(src, wide)
    cdef TensorImpl res = empty(wide_src._sizes, wide, dev)
    lookup(op, dev)(res, wide_src, _as_operand(number, wide, dev, wide_src._sizes))
    return cast(res, compute)


cpdef object binary(str op, object a, object b, int kind):
    """out = op(a, b) with broadcasting and promotion; a or b may be a Python number."""
    cdef TensorImpl ta, tb, out
    cdef dtype compute
    cdef device dev
    cdef tuple shape
    if isinstance(a, TensorImpl) and isinstance(b, TensorImpl):
        ta = <TensorImpl>a
        tb = <TensorImpl>b
        if ta._dtype is tb._dtype and ta._device is tb._device and ta._sizes == tb._sizes \
                and (kind != K_TO_FLOAT or ta._dtype.category >= 2):
            # the common case: nothing to promote, broadcast or move
            if is_barebones_unsigned(ta._dtype):
                if kind == K_LOGICAL:
                    _check_logical_unsigned(op, ta, tb)
                else:
                    _check_unsigned(op, ta._dtype, True)
            out = empty_in_layout_of(ta, _out_dtype(ta._dtype, kind))
            (<object>ta._device._kernels.get(op) or lookup(op, ta._device))(out, ta, tb)
            if (ta._requires_grad or tb._requires_grad) and grad_enabled():
                _record(op, kind, out, a, b)
            return out
        dev = _common_device(ta, tb)
        shape = broadcast_shapes2(ta._sizes, tb._sizes)
    elif isinstance(a, TensorImpl):
        ta = <TensorImpl>a
        dev = ta._device
        shape = ta._sizes
        b = _plain_number(b)
    elif isinstance(b, TensorImpl):
        tb = <TensorImpl>b
        dev = tb._device
        shape = tb._sizes
        a = _plain_number(a)
    else:
        raise TypeError(f"{op}(): expected at least one Tensor argument, got "
                        f"{type(a).__name__} and {type(b).__name__}")
    compute = _compute_dtype(result_type((a, b)), kind)
    if kind == K_LOGICAL:
        _check_logical_unsigned(op, a, b)
        compute = <dtype>DTYPES[BOOL]
    else:
        _check_unsigned(op, compute, True)
    if compute.category == 3 and dev.type != "cpu":
        raise complex_off_cpu(op, compute, dev)
    if _half_by_number_op(op, compute, a, b):
        out = _half_by_number(op, a, b, False, compute, dev) if isinstance(a, TensorImpl) \
            else _half_by_number(op, b, a, True, compute, dev)
        if (_needs_grad(a) or _needs_grad(b)) and grad_enabled():
            _record(op, kind, out, a, b)
        return out
    out = _empty_for(shape, _out_dtype(compute, kind), dev, a, b)
    lookup(op, dev)(out, _as_operand(a, compute, dev, shape), _as_operand(b, compute, dev, shape))
    if (_needs_grad(a) or _needs_grad(b)) and grad_enabled():
        _record(op, kind, out, a, b)
    return out


cdef TensorImpl _empty_for(tuple shape, dtype dt, device dev, object a, object b):
    """The output of a broadcasting op: in the layout of the first operand of the output's
    shape (channels-last stays channels-last, as in PyTorch), else contiguous."""
    cdef TensorImpl out
    for x in (a, b):
        if isinstance(x, TensorImpl) and (<TensorImpl>x)._sizes == shape:
            out = empty_in_layout_of(<TensorImpl>x, dt)
            if out._device is dev:
                return out
    return empty(shape, dt, dev)


def complex_off_cpu(str op, dtype dt, device dev):
    """The error for an op that would make a complex tensor off the CPU."""
    return RuntimeError(f"{op}: complex tensors ({dt.name}) are only supported on the cpu so "
                        f"far; the {dev.type} backend has no complex kernels (move the "
                        f"tensors with .cpu())")


cdef inline bint _needs_grad(object x):
    return isinstance(x, TensorImpl) and (<TensorImpl>x)._requires_grad


cdef _record(str op, int kind, TensorImpl out, object a, object b):
    """Hand the op to autograd; comparisons and logical ops are not differentiable."""
    if kind == K_SAME or kind == K_TO_FLOAT:
        recorder()(op, out, (a, b), None)


cpdef object binary_(str op, TensorImpl self, object other, int kind):
    """self = op(self, other) in place; `other` broadcasts to self, the result must be
    castable to self's dtype (RuntimeError otherwise, as torch)."""
    other = _plain_number(other)
    cdef dtype compute = _compute_dtype(result_type((self, other)), kind)
    cdef dtype result = _out_dtype(compute, kind)
    if kind == K_LOGICAL:
        _check_logical_unsigned(op, self, other)
        compute = <dtype>DTYPES[BOOL]
    else:
        _check_unsigned(op, compute, True)
    if result.category > self._dtype.category:
        raise RuntimeError(f"result type {result.scalar_name} can't be cast to the "
                           f"desired output type {self._dtype.scalar_name}")
    cdef device dev = self._device
    if isinstance(other, TensorImpl):
        dev = _common_device(self, <TensorImpl>other)
        if dev is not self._device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {self._device} and {other._device}!")
        if broadcast_shapes2(self._sizes, (<TensorImpl>other)._sizes) != self._sizes:
            raise RuntimeError(f"output with shape {list(self._sizes)} doesn't match the "
                               f"broadcast shape "
                               f"{list(broadcast_shapes2(self._sizes, other._sizes))}")
    if grad_enabled() and (self._requires_grad or _needs_grad(other)):
        return inplace_recorder()(op, kind, self, other)
    cdef TensorImpl tmp
    if _half_by_number_op(op, compute, self, other) and result is self._dtype:
        lookup("copy", dev)(self, _half_by_number(op, self, other, False, compute, dev))
        self._storage.version += 1
        return self
    kernel = lookup(op, dev)
    cdef TensorImpl rhs = _as_operand(other, compute, dev, self._sizes)
    if compute is self._dtype and result is self._dtype:
        kernel(self, self, rhs)
    else:
        tmp = empty(self._sizes, result, dev)
        kernel(tmp, _as_operand(self, compute, dev, self._sizes), rhs)
        lookup("copy", dev)(self, tmp)
    self._storage.version += 1
    return self


cpdef object unary(str op, TensorImpl x, int kind):
    """out = op(x); TO_FLOAT ops compute integers in the default float dtype."""
    cdef dtype compute = _compute_dtype(x._dtype, kind)
    if kind == K_LOGICAL:
        _check_logical_unsigned(op, x, None)
        compute = <dtype>DTYPES[BOOL]
    else:
        _check_unsigned(op, compute, False)
    cdef TensorImpl src = x if compute is x._dtype else cast(x, compute)
    cdef TensorImpl out = empty_in_layout_of(x, _out_dtype(compute, kind))
    (<object>x._device._kernels.get(op) or lookup(op, x._device))(out, src)
    if x._requires_grad and grad_enabled() and (kind == K_SAME or kind == K_TO_FLOAT):
        recorder()(op, out, (x,), None)
    return out


cdef bint _writable_result(TensorImpl out, object x, dtype compute, tuple shape):
    """Whether the kernel may write `out` as the result for operand x (any operand passes
    when out is contiguous, of the result's shape, and shares no memory with x unless it is
    x's very view: an elementwise kernel reads each element before writing it)."""
    if out._sizes != shape or not is_contiguous(out):
        return False
    if not isinstance(x, TensorImpl):
        return True
    cdef TensorImpl t = <TensorImpl>x
    if t._device is not out._device and not (len(t._sizes) == 0 and t._device.type == "cpu"):
        return False
    if t._storage is out._storage:
        return t._offset == out._offset and t._sizes == out._sizes and \
            t._strides == out._strides and t._dtype is compute
    return True


cpdef bint binary_into(str op, TensorImpl out, object a, object b, int kind):
    """op(a, b) written by the kernel straight into `out` (out= of add, mul, ...) when out
    already is the result: its shape and dtype, contiguous, on the operands' device, sharing
    memory with an operand only as that very view. False, having done nothing, otherwise:
    the caller computes, then copies (for 1M floats 0.37-0.94 ms against 0.08 for a + b)."""
    if kind != K_SAME and kind != K_TO_FLOAT:
        return False
    a, b = _plain_number(a), _plain_number(b)
    cdef tuple shape
    if isinstance(a, TensorImpl):
        shape = (<TensorImpl>a)._sizes
        if isinstance(b, TensorImpl):
            shape = broadcast_shapes2(shape, (<TensorImpl>b)._sizes)
    elif isinstance(b, TensorImpl):
        shape = (<TensorImpl>b)._sizes
    else:
        return False
    cdef dtype compute = _compute_dtype(result_type((a, b)), kind)
    if compute is not out._dtype or compute.category == 0 or \
            (compute.category == 3 and out._device.type != "cpu"):
        return False          # bool arithmetic keeps its own checks (sub refuses it)
    if not (_writable_result(out, a, compute, shape) and _writable_result(out, b, compute, shape)):
        return False
    _check_unsigned(op, compute, True)
    cdef device dev = out._device
    lookup(op, dev)(out, _as_operand(a, compute, dev, shape), _as_operand(b, compute, dev, shape))
    out._storage.version += 1
    return True


cpdef bint unary_into(str op, TensorImpl out, TensorImpl x, int kind):
    """op(x) written straight into `out`, on the terms of `binary_into`."""
    if kind != K_SAME and kind != K_TO_FLOAT:
        return False
    cdef dtype compute = _compute_dtype(x._dtype, kind)
    if compute is not out._dtype or x._device is not out._device or \
            not _writable_result(out, x, compute, x._sizes):
        return False
    _check_unsigned(op, compute, False)
    (<object>x._device._kernels.get(op) or lookup(op, x._device))(
        out, x if compute is x._dtype else cast(x, compute))
    out._storage.version += 1
    return True


cpdef object unary_if_taken(str op, TensorImpl x):
    """op(x) in x's dtype by a backend kernel that may decline (returns whether it wrote its
    output: a fused fast path, or a compile capture recording its fallback instead), recorded
    for autograd here; None when the device has none or it declined."""
    kernel = x._device._kernels.get(op)
    if kernel is None:
        return None
    cdef TensorImpl out = empty_in_layout_of(x, x._dtype)
    if not kernel(out, x):
        return None
    if x._requires_grad and grad_enabled():
        recorder()(op, out, (x,), None)
    return out


cpdef object unary_(str op, TensorImpl x, int kind):
    cdef dtype compute = _compute_dtype(x._dtype, kind)
    if compute is not x._dtype:
        raise RuntimeError(f"result type {compute.scalar_name} can't be cast to the "
                           f"desired output type {x._dtype.scalar_name}")
    _check_unsigned(op, compute, False)
    if x._requires_grad and grad_enabled():
        return inplace_recorder()(op, kind, x, None)
    lookup(op, x._device)(x, x)
    x._storage.version += 1
    return x


# Tensor's arithmetic dunders, defined here so `a + b` enters Cython without a Python frame.
# As PyTorch's, an operand they cannot take makes them return NotImplemented, so Python tries
# its reflected method (a MaskedTensor's __radd__, a user class's __rmul__).
cdef object _unsupported(object other, object error):
    """After the TypeError `error`: NotImplemented for an operand other than a tensor; a real
    torch.Tensor gets tensorlib's TypeError saying how to convert it; a tensor re-raises."""
    if isinstance(other, TensorImpl):
        raise error
    from tensorlib._foreign import is_torch_tensor, refuse_torch_tensor
    if is_torch_tensor(other):
        refuse_torch_tensor(other)
    return NotImplemented


def unsupported_operand(other, error):
    """_unsupported for the dunders written in Python (tensorlib/_tensor.py)."""
    return _unsupported(other, error)


def add_method(self, other):
    try:
        return binary("add", self, other, K_SAME)
    except TypeError as error:
        return _unsupported(other, error)


def radd_method(self, other):
    try:
        return binary("add", other, self, K_SAME)
    except TypeError as error:
        return _unsupported(other, error)


def mul_method(self, other):
    try:
        return binary("mul", self, other, K_SAME)
    except TypeError as error:
        return _unsupported(other, error)


def rmul_method(self, other):
    try:
        return binary("mul", other, self, K_SAME)
    except TypeError as error:
        return _unsupported(other, error)


def truediv_method(self, other):
    try:
        return binary("div", self, other, K_TO_FLOAT)
    except TypeError as error:
        return _unsupported(other, error)


def rtruediv_method(self, other):
    """other / self as PyTorch's Tensor.__rtruediv__ computes it: self.reciprocal() * other,
    rounded twice (2 ** 0.5 / t is not the correctly rounded quotient torch.div gives)."""
    try:
        return binary("mul", binary("div", 1.0, self, K_TO_FLOAT), other, K_SAME)
    except TypeError as error:
        return _unsupported(other, error)


cdef bint _is_bool(object x):
    return type(x) is bool or (isinstance(x, TensorImpl) and (<TensorImpl>x)._dtype.code == BOOL)


cdef _check_bool_sub(object a, object b):
    """PyTorch refuses a bool operand in a subtraction (tensor or Python bool)."""
    cdef bint a_bool = _is_bool(a), b_bool = _is_bool(b)
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


def sub_method(self, other):
    _check_bool_sub(self, other)
    try:
        return binary("sub", self, other, K_SAME)
    except TypeError as error:
        return _unsupported(other, error)


def rsub_method(self, other):
    _check_bool_sub(other, self)
    try:
        return binary("sub", other, self, K_SAME)
    except TypeError as error:
        return _unsupported(other, error)
