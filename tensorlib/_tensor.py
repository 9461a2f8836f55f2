"""tensorlib.Tensor: the Python face of TensorImpl. Methods are thin: each forwards to the op
of the same name in tensorlib.ops, where the work and the checks live."""
import numpy as np

import tensorlib._C.dtypes as dt
from tensorlib._C import pointwise as _pw
from tensorlib._C.tensor_impl import TensorImpl, set_tensor_class, host_array, is_contiguous, numel
from tensorlib._C.storage import Storage as _Storage
from tensorlib._C.views import alias as _alias, wrap_dim
from tensorlib._C.grad_mode import is_grad_enabled
from tensorlib._legacy import LegacyConstructorMeta, new as _legacy_new
from tensorlib._size import Size, from_sizes
from tensorlib._tensor_str import tensor_repr
from tensorlib import _capture_state
from tensorlib.ops import copy as _copy, indexing as _idx, linalg as _la, pointwise as _p
from tensorlib.ops import _conj_view, reduction as _r, shape as _s
from tensorlib.ops.pointwise import inplace

SAME, TO_BOOL, TO_FLOAT, LOGICAL = _pw.SAME, _pw.TO_BOOL, _pw.TO_FLOAT, _pw.LOGICAL


def _reflectable(operator):
    """A binary operator that returns NotImplemented for an operand it cannot take, as
    PyTorch's do, so Python tries the other operand's reflected method."""
    def method(self, other):
        try:
            return operator(self, other)
        except TypeError as error:
            return _pw.unsupported_operand(other, error)
    method.__name__ = method.__qualname__ = operator.__name__
    method.__doc__ = operator.__doc__
    return method


def _matmul_operand(other):
    """`@` takes tensors only (a number too raises, as PyTorch's matmul)."""
    if not isinstance(other, TensorImpl):
        raise TypeError(f"matmul(): argument 'other' must be Tensor, not "
                        f"{type(other).__name__}")


class _KeepAlive:
    """The release of a `.data` storage: holds the buffer's owning storage alive, frees
    nothing."""
    __slots__ = ("storage",)

    def __init__(self, storage):
        self.storage = storage

    def __call__(self, handle, nbytes):
        pass


class Tensor(TensorImpl, metaclass=LegacyConstructorMeta):
    """A strided n-dimensional array on a device (torch.Tensor)."""

    __module__ = "tensorlib"
    __array_priority__ = 1000     # numpy scalars defer to our reflected operators

    # ---- metadata -------------------------------------------------------------------------
    @property
    def shape(self):
        return from_sizes(self._sizes)

    def size(self, dim=None):
        if dim is None:
            return from_sizes(self._sizes)
        return self._sizes[wrap_dim(dim, len(self._sizes))]

    def stride(self, dim=None):
        if dim is None:
            return self._strides
        return self._strides[wrap_dim(dim, len(self._sizes))]

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._device

    @property
    def ndim(self):
        return len(self._sizes)

    def dim(self):
        return len(self._sizes)

    def numel(self):
        return numel(self._sizes)

    nelement = numel

    def element_size(self):
        return self._dtype.itemsize

    def storage_offset(self):
        return self._offset

    def is_contiguous(self, memory_format=None):
        if memory_format is None:
            return is_contiguous(self)
        from tensorlib.ops.memory_format import is_in
        return is_in(self, memory_format)

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_signed(self):
        return self._dtype.is_signed

    def is_same_size(self, other):
        return self._sizes == other._sizes

    def is_nonzero(self):
        """The truth of a one-element tensor (torch's errors for none or several)."""
        n = numel(self._sizes)
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def type_as(self, other):
        """This tensor in other's dtype (and on its device, as torch's type strings carry)."""
        return self.to(device=other.device, dtype=other.dtype)

    ndimension = dim

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def is_meta(self):
        return self._device.type == "meta"

    @property
    def _version(self):
        return self._storage.version

    def untyped_storage(self):
        return self._storage

    def storage(self):
        """The deprecated typed storage (torch.TypedStorage), with PyTorch's warning."""
        from tensorlib._storage_typed import TypedStorage, warn_typed_storage_removal
        warn_typed_storage_removal()
        return TypedStorage(wrap_storage=self._storage, dtype=self._dtype, _internal=True)

    def data_ptr(self):
        if self._device.type != "cpu":
            raise RuntimeError("data_ptr() is only available for cpu tensors in tensorlib")
        return host_array(self).__array_interface__["data"][0]

    def __len__(self):
        if not self._sizes:
            raise TypeError("len() of a 0-d tensor")
        return self._sizes[0]

    def __iter__(self):
        if not self._sizes:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._sizes[0]))

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, protocol):
        """Pickle by value (host bytes, dtype, device, requires_grad): storages hold device
        handles that can't travel. tensorlib.save is the format for files."""
        array = self.detach().cpu().numpy().copy()
        return (_rebuild_tensor, (array, str(self._device), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        from tensorlib._C import grad_mode
        previous = grad_mode.set_grad_enabled(False)
        try:
            out = self.clone()
        finally:
            grad_mode.set_grad_enabled(previous)
        out._requires_grad = self._requires_grad
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out

    # ---- autograd -------------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. "
                                   "If you want to use a computed variable in a subgraph that "
                                   "doesn't require differentiation use var_no_grad = "
                                   "var.detach().")
            return self
        if requires_grad and self._dtype.category < 2:
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        if requires_grad and self._is_inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        if self._no_grad_view:          # its base's requires_grad still shows through
            self._own_requires_grad = bool(requires_grad)
            self._requires_grad = self._own_requires_grad or self._base._requires_grad
            return self
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            import warnings
            warnings.warn("The .grad attribute of a Tensor that is not a leaf Tensor is being "
                          "accessed. Its .grad attribute won't be populated during "
                          "autograd.backward(). If you indeed want the gradient for a non-leaf "
                          "Tensor, use .retain_grad() on the non-leaf Tensor.", stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None and value._sizes != self._sizes:
            raise RuntimeError(f"assigned grad has data of a different size: "
                               f"{list(value._sizes)} vs {list(self._sizes)}")
        if value is not None and value._device != self._device:
            raise RuntimeError(f"assigned grad has data located on a different device: "
                               f"{value._device} vs {self._device}")
        self._grad = value

    @grad.deleter
    def grad(self):
        """`del p.grad` (optimizers free a gradient they are done with) is p.grad = None."""
        self._grad = None

    @property
    def grad_fn(self):
        if self._base is not None and self._requires_grad:
            from tensorlib._C.autograd import edge
            edge(self)              # a view's history made stale by a write through another
        return self._grad_fn

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def data(self):
        """A detached alias with a version counter of its own, as in PyTorch: writes through
        `.data` are hidden from autograd's saved-tensor checks (libraries write scratch space
        this way); `detach()` shares the counter."""
        out = self.detach()
        out._storage = _Storage(self._storage.handle, self._storage._nbytes, self._storage.device,
                                release=_KeepAlive(self._storage))
        return out

    @data.setter
    def data(self, value):
        self._storage, self._sizes, self._strides = value._storage, value._sizes, value._strides
        self._offset, self._dtype, self._device = value._offset, value._dtype, value._device
        self._cache = None

    def detach(self):
        return _alias(self)

    def detach_(self):
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from tensorlib.autograd import backward
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def register_hook(self, hook):
        """hook(grad) runs when this tensor's gradient is computed; a returned tensor
        replaces the gradient."""
        from tensorlib.autograd.hooks import register_tensor_hook
        return register_tensor_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        from tensorlib.autograd.hooks import register_post_accumulate_hook
        return register_post_accumulate_hook(self, hook)

    def retain_grad(self):
        from tensorlib.autograd.hooks import retain_grad
        retain_grad(self)

    # ---- conversion -----------------------------------------------------------------------
    def numpy(self, *, force=False):
        if _capture_state.current is not None:
            _capture_state.materialize("numpy()")
        if self._requires_grad and is_grad_enabled() and not force:    # no_grad lets it by
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            if force:
                return self.cpu().numpy()
            raise TypeError(f"can't convert {self._device} device type tensor to numpy. Use "
                            f"Tensor.cpu() to copy the tensor to host memory first.")
        return host_array(self)

    def __array__(self, dtype=None, copy=None):
        array = self.numpy(force=True)
        return array if dtype is None else array.astype(dtype)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """A NumPy ufunc's result on a tensor comes back as a tensor (np.exp(t), scipy's
        expit(t)), booleans as uint8 and 0-dim results too, as PyTorch's does."""
        from tensorlib.ops.creation import from_numpy
        array = np.asarray(array)
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return from_numpy(array)

    def item(self):
        if numel(self._sizes) != 1:
            raise RuntimeError(f"a Tensor with {numel(self._sizes)} elements cannot be "
                               f"converted to Scalar")
        if _capture_state.current is not None:
            _capture_state.materialize("item()")
        if self._device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        value = self._device._backend.copy_to_host(self).reshape(()).item()
        return float(value) if self._dtype in (dt.bfloat16, dt.float16) else value

    def tolist(self):
        if _capture_state.current is not None:
            _capture_state.materialize("tolist()")
        array = self._device._backend.copy_to_host(self)
        if self._dtype in (dt.bfloat16, dt.float16):
            array = array.astype(np.float32)
        return array.tolist()

    def __bool__(self):
        if numel(self._sizes) != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __contains__(self, element):
        """`x in t`: whether any element of t equals x (a tensor compared broadcast)."""
        if not isinstance(element, (Tensor, int, float, complex, np.number)):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you "
                               f"passed in a {type(element)}.")
        return bool(_r.any(_p.eq(self, element)).item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._dtype.is_floating_point or numel(self._sizes) != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __repr__(self):
        if _capture_state.current is not None:
            _capture_state.materialize("printing a tensor")
        return tensor_repr(self)

    def __format__(self, spec):
        # a plain 0-dim tensor formats as its number (f"{x.sum()}" reads "2", not "tensor(2)");
        # any other, subclasses included, as object does: str(self), and no format spec
        if self.dim() == 0 and not self.is_meta and type(self) is Tensor:
            return self.detach().item().__format__(spec)
        return object.__format__(self, spec)

    to = _copy.to
    copy_ = _copy.copy_

    def cpu(self):
        return _copy.to_device(self, "cpu")

    new = _legacy_new

    def type(self, dtype=None):
        """The type name ("tensorlib.FloatTensor", "tensorlib.cuda.FloatTensor"), or self in
        `dtype`: a dtype, a typed class or a type name ("torch.LongTensor" and
        "tensorlib.LongTensor" both name int64; "torch.cuda.LongTensor" moves to the GPU;
        Tensor itself names the default dtype on the CPU)."""
        device = self._device.type
        if dtype is None:
            where = "cuda." if device == "cuda" else ""      # the typed-class namespaces
            return f"{dt.package_name()}.{where}{self._dtype.scalar_name}Tensor"
        if dtype is Tensor or dtype in ("torch.Tensor", f"{dt.package_name()}.Tensor"):
            dtype, device = dt.get_default_dtype(), "cpu"     # the default tensor type
        elif isinstance(dtype, str):
            prefix, _, name = dtype.rpartition(".")
            match = [d for d in dt.all_dtypes if f"{d.scalar_name}Tensor" == name] \
                if name.endswith("Tensor") else []
            if not match:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype, device = match[0], "cuda" if prefix.endswith(".cuda") else "cpu"
        elif isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), dt.dtype):
            dtype, device = dtype.dtype, dtype.device_type    # FloatTensor, cuda.FloatTensor
        elif isinstance(dtype, type):
            raise ValueError(f"invalid type: '{dtype.__name__}'")
        else:
            return self.to(dtype)
        return self.to(device=device, dtype=dtype)

    type.python_types_as_dtypes = False     # x.type(int) is PyTorch's ValueError, not int64

    def float(self):
        return self.to(dt.float32)

    def double(self):
        return self.to(dt.float64)

    def half(self):
        return self.to(dt.float16)

    def bfloat16(self):
        return self.to(dt.bfloat16)

    def long(self):
        return self.to(dt.int64)

    def int(self):
        return self.to(dt.int32)

    def short(self):
        return self.to(dt.int16)

    def bool(self):
        return self.to(dt.bool_)

    def byte(self):
        return self.to(dt.uint8)

    def char(self):
        return self.to(dt.int8)

    def cfloat(self):
        return self.to(dt.complex64)

    def cdouble(self):
        return self.to(dt.complex128)

    # ---- views and shape ------------------------------------------------------------------
    view = _s.view
    reshape = _s.reshape
    contiguous = _s.contiguous
    clone = _s.clone
    flatten = _s.flatten
    ravel = _s.ravel
    permute = _s.permute
    transpose = _s.transpose
    swapaxes = _s.swapaxes
    swapdims = _s.swapdims
    t = _s.t
    expand = _s.expand
    squeeze = _s.squeeze
    unsqueeze = _s.unsqueeze
    narrow = _s.narrow
    select = _s.select
    unfold = _s.unfold
    as_strided = _s.as_strided
    diagonal = _s.diagonal

    @property
    def T(self):
        return _s.permute(self, tuple(range(self.dim() - 1, -1, -1)))

    @property
    def mT(self):
        return _s.transpose(self, -2, -1)

    def view_as(self, other):
        return _s.view(self, other._sizes)

    def reshape_as(self, other):
        return _s.reshape(self, other._sizes)

    def expand_as(self, other):
        return _s.expand(self, other._sizes)

    __getitem__ = _idx.getitem
    __setitem__ = _idx.setitem

    # ---- arithmetic ---------------------------------------------------------------------
    __add__ = _pw.add_method
    __radd__ = _pw.radd_method
    __mul__ = _pw.mul_method
    __rmul__ = _pw.rmul_method
    __truediv__ = _pw.truediv_method
    __rtruediv__ = _pw.rtruediv_method

    __sub__ = _pw.sub_method

    @_reflectable
    def __rsub__(self, other):
        """number - tensor; a Python bool on the left raises as in PyTorch (ops.sub says so)."""
        if other is True or other is False:
            return _p.sub(other, self)
        return _pw.rsub_method(self, other)

    @_reflectable
    def __floordiv__(self, other):
        return _p.floor_divide(self, other)

    @_reflectable
    def __rfloordiv__(self, other):
        return _p.floor_divide(other, self)

    @_reflectable
    def __mod__(self, other):
        return _p.remainder(self, other)

    @_reflectable
    def __rmod__(self, other):
        return _p.remainder(other, self)

    @_reflectable
    def __pow__(self, other):
        return _p.pow(self, other)

    @_reflectable
    def __rpow__(self, other):
        return _p.pow(other, self)

    @_reflectable
    def __matmul__(self, other):
        _matmul_operand(other)
        return _la.matmul(self, other)

    @_reflectable
    def __rmatmul__(self, other):
        _matmul_operand(other)
        return _la.matmul(other, self)

    def __neg__(self):
        return _p.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _p.abs(self)

    def __invert__(self):
        return _p.bitwise_not(self)

    @_reflectable
    def __and__(self, other):
        return _p.bitwise_and(self, other)

    __rand__ = __and__

    @_reflectable
    def __or__(self, other):
        return _p.bitwise_or(self, other)

    __ror__ = __or__

    @_reflectable
    def __xor__(self, other):
        return _p.bitwise_xor(self, other)

    __rxor__ = __xor__

    @_reflectable
    def __eq__(self, other):
        return _pw.binary("eq", self, other, TO_BOOL)

    @_reflectable
    def __ne__(self, other):
        return _pw.binary("ne", self, other, TO_BOOL)

    @_reflectable
    def __lt__(self, other):
        return _pw.binary("lt", self, other, TO_BOOL)

    @_reflectable
    def __le__(self, other):
        return _pw.binary("le", self, other, TO_BOOL)

    @_reflectable
    def __gt__(self, other):
        return _pw.binary("gt", self, other, TO_BOOL)

    @_reflectable
    def __ge__(self, other):
        return _pw.binary("ge", self, other, TO_BOOL)

    __iadd__ = add_ = inplace("add")
    __isub__ = sub_ = inplace("sub")
    __imul__ = mul_ = inplace("mul")
    __itruediv__ = div_ = inplace("div", TO_FLOAT)
    __ifloordiv__ = floor_divide_ = inplace("floor_divide")
    __imod__ = remainder_ = inplace("remainder")
    __ipow__ = pow_ = inplace("pow")
    __iand__ = bitwise_and_ = inplace("bitwise_and")
    __ior__ = bitwise_or_ = inplace("bitwise_or")
    __ixor__ = bitwise_xor_ = inplace("bitwise_xor")

    def fill_(self, value):
        from tensorlib._C.dispatch import lookup
        if isinstance(value, TensorImpl):
            value = value.item()       # cast as PyTorch casts it: uint8 from 1000 is 232
        elif type(value) in (int, float):
            from tensorlib.ops.creation import overflows
            if overflows(value, self._dtype):
                raise RuntimeError(f"value cannot be converted to type "
                                   f"{str(self._dtype).split('.')[-1]}_t without overflow")

        def write():
            lookup("fill", self._device)(self, value)
            self._storage.version += 1
        if self._requires_grad and is_grad_enabled():
            from tensorlib.autograd.recording import record_overwrite
            return record_overwrite("fill_", self, write, ())
        write()
        return self

    def zero_(self):
        return self.fill_(0)

    add = _p.add
    sub = _p.sub
    mul = _p.mul
    div = _p.div
    pow = _p.pow
    maximum = _p.maximum
    minimum = _p.minimum
    eq = _p.eq
    ne = _p.ne
    lt = _p.lt
    le = _p.le
    gt = _p.gt
    ge = _p.ge
    abs = _p.abs
    neg = _p.neg
    exp = _p.exp
    log = _p.log
    sqrt = _p.sqrt
    sin = _p.sin
    cos = _p.cos
    tanh = _p.tanh
    floor = _p.floor
    ceil = _p.ceil
    round = _p.round
    sign = _p.sign
    isnan = _p.isnan
    where = _p.where
    logical_not = _p.logical_not

    # ---- reductions and linear algebra ----------------------------------------------------
    sum = _r.sum
    sum_to_size = _r.sum_to_size
    any = _r.any
    all = _r.all
    mean = _r.mean
    prod = _r.prod
    amax = _r.amax
    amin = _r.amin
    max = _r.max
    min = _r.min
    argmax = _r.argmax
    argmin = _r.argmin
    matmul = _la.matmul
    mm = _la.mm


def _rebuild_tensor(array, device, requires_grad):
    from tensorlib.ops.creation import tensor
    return tensor(array, device=device, requires_grad=requires_grad)


set_tensor_class(Tensor)
_conj_view.register_tensor_class(Tensor)
