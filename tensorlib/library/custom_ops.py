"""Custom ops (torch.library.custom_op's API): a Python function becomes an op
`tensorlib.ops.<ns>.<name>` whose kernels live in the dispatch table under "<ns>::<name>"
per device type, like the built-in primitives (so the profiler and the CPU fallback see
them), with autograd from register_autograd and a fake (shape/dtype) function for the graph
capture from register_fake."""
import inspect
import sys

import tensorlib
from tensorlib._C import dispatch
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.autograd.function import Function

_OPS = {}                    # "ns::name" -> CustomOpDef
# registrations made before their op is defined ("ns::name" -> [fn(op)]): PyTorch's dispatcher
# keeps an impl for a name not yet defined and uses it once the op is (torchvision registers
# fake kernels for its C++ ops whether or not that library loaded)
_PENDING = {}


def _parse(qualname):
    if not isinstance(qualname, str) or qualname.count("::") != 1:
        raise ValueError(f"Expected the name of a custom op as 'namespace::name', got "
                         f"{qualname!r}")
    ns, name = qualname.split("::")
    if not ns.isidentifier() or not name.isidentifier():
        raise ValueError(f"custom op names must be identifiers, got {qualname!r}")
    return ns, name


def _device_types(device_types):
    if device_types is None:
        return None
    return (device_types,) if isinstance(device_types, str) else tuple(device_types)


def _detached(args):
    """Kernels run below autograd: they see their tensors without history."""
    return [a.detach() if isinstance(a, TensorImpl) else a for a in args]


class _NoAutograd(Function):
    """The node of a custom op without register_autograd: backward says so."""

    @staticmethod
    def forward(ctx, op, kernel, *args):
        ctx.op = op
        return kernel(*_detached(args))

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"Trying to backward through {ctx.op._qualname} but no autograd "
                           f"formula was registered. Please use register_autograd to add one.")


class _WithAutograd(Function):
    @staticmethod
    def forward(ctx, op, kernel, *args):
        ctx.op_def = op
        out = kernel(*_detached(args))
        if op._setup_context is not None:
            op._setup_context(ctx, args, out)
        return out

    @staticmethod
    def backward(ctx, *grads):
        op = ctx.op_def
        result = op._backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != op._n_args:
            raise RuntimeError(f"{op._qualname}: the backward registered with "
                               f"register_autograd returned {len(result)} gradients, expected "
                               f"{op._n_args} (one per input, None for non-tensors)")
        return (None, None) + result


class CustomOpDef:
    """What custom_op returns: call it like the function it wraps."""

    def __init__(self, qualname, fn, mutates_args, device_types):
        self._namespace, self._name = _parse(qualname)
        self._qualname = qualname
        self._init_fn = fn
        self._signature = inspect.signature(fn)
        params = list(self._signature.parameters.values())
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY) for p in params):
            raise ValueError(f"custom op {qualname}: only positional-or-keyword parameters "
                             f"are supported, got {self._signature}")
        self._n_args = len(params)
        names = [p.name for p in params]
        if mutates_args == "unknown":
            mutates_args = tuple(names)
        unknown = [m for m in mutates_args if m not in names]
        if unknown:
            raise ValueError(f"custom op {qualname}: mutates_args names {unknown}, which are "
                             f"not parameters of {self._signature}")
        self._mutated = [names.index(m) for m in mutates_args]
        self._default = None
        self._backward = self._setup_context = self._fake_fn = None
        self._implicit = None        # a CompositeImplicitAutograd impl: autograd through its ops
        self._autocast = {}          # device type -> the impl run while autocast is on there
        self.__name__ = self._name
        self.__doc__ = fn.__doc__
        types = _device_types(device_types)
        if types is None:
            self._default = fn
        else:
            self.register_kernel(types, fn)

    # ---- registration ----------------------------------------------------------------------
    def register_kernel(self, device_types, fn=None):
        """fn runs the op on tensors of these device types (a decorator when fn is None). An
        OpenCL C kernel is registered as `OpenCLKernel(source, ...)` for "opencl", a CUDA C
        one as `CUDAKernel(source, ...)` for "cuda"."""
        def register(fn):
            for device_type in _device_types(device_types):
                dispatch.register_kernel(device_type, self._qualname, fn)
            return fn
        return register if fn is None else register(fn)

    def register_fake(self, fn):
        """fn(*args) returns outputs with the right shapes and dtypes, computing nothing; it is
        the op's kernel on "meta" tensors (PyTorch's Meta key) unless one is registered."""
        self._fake_fn = fn
        return fn

    def register_autograd(self, backward, *, setup_context=None):
        """backward(ctx, *grads) -> one gradient per input; setup_context(ctx, inputs, output)
        saves what backward needs."""
        self._backward = backward
        self._setup_context = setup_context
        self._node_cls = type(self._name, (_WithAutograd,), {})     # names the grad_fn

    # ---- calling ---------------------------------------------------------------------------
    def _kernel(self, device):
        k = device._kernels.get(self._qualname)
        if k is None and device.type == "meta":
            k = self._fake_fn
        if k is None:
            k = self._default
        if k is None:
            have = dispatch.devices_with(self._qualname)
            raise NotImplementedError(f"{self._qualname} has no kernel for the "
                                      f"'{device.type}' backend; it has kernels for {have}. "
                                      f"Register one with register_kernel('{device.type}', fn)")
        return k

    def __call__(self, *args, **kwargs):
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        args = tuple(bound.arguments.values())
        fx = sys.modules.get("tensorlib.fx.proxy")     # no fx imported: nothing is tracing
        if fx is not None:
            proxies = fx._contains_proxy(args, {})
            if proxies and not proxies[0].tracer._evaluating:   # fx / jit.trace: one node
                return proxies[0].tracer.create_proxy("call_function", self, args, {})
        tensors = [a for a in args if isinstance(a, TensorImpl)]
        if not tensors:
            raise RuntimeError(f"{self._qualname}: expected at least one Tensor argument")
        device = tensors[0]._device
        autocast = self._autocast.get(device.type)
        if autocast is not None and tensorlib.amp.is_autocast_enabled(device.type):
            return autocast(*args)
        if self._implicit is not None and device._kernels.get(self._qualname) is None and \
                not (device.type == "meta" and self._fake_fn is not None):
            return self._implicit(*args)
        kernel = self._kernel(device)
        recording = tensorlib.is_grad_enabled() and any(t._requires_grad for t in tensors)
        if not recording:
            out = kernel(*args)
        elif self._backward is None:
            out = _NoAutograd.apply(self, kernel, *args)
        else:
            out = self._node_cls.apply(self, kernel, *args)
        for i in self._mutated:
            if isinstance(args[i], TensorImpl):
                args[i]._storage.version += 1
        return out

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """`@custom_op("mylib::op", mutates_args=())` turns a function into op
    tensorlib.ops.mylib.op; the function is its kernel for device_types (all if None)."""
    def wrap(fn):
        if name in _OPS:
            raise RuntimeError(f"a custom op named {name} is already registered")
        op = CustomOpDef(name, fn, mutates_args, device_types)
        _OPS[name] = op
        for register in _PENDING.pop(name, ()):
            register(op)
        return op
    return wrap if fn is None else wrap(fn)


def _op(qualname):
    op = qualname if isinstance(qualname, CustomOpDef) else _OPS.get(qualname)
    if op is None:
        raise ValueError(f"no custom op named {qualname!r}; define it with custom_op first")
    return op


def register_kernel(op, device_types, func=None):
    return _op(op).register_kernel(device_types, func)


def _when_defined(qualname, register):
    """register(op) now if qualname is defined, else when custom_op defines it."""
    if isinstance(qualname, CustomOpDef) or qualname in _OPS:
        return register(_op(qualname))
    _parse(qualname)
    _PENDING.setdefault(qualname, []).append(register)
    return None


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """The fake (meta) kernel of op; for a name not defined yet it waits for custom_op."""
    def register(fn):
        _when_defined(op, lambda target: target.register_fake(fn))
        return fn
    return register if func is None else register(func)


def get_ctx():
    """torch.library.get_ctx: the context of the fake kernel that is running. tensorlib runs
    fake kernels on meta tensors only, where shapes are concrete: there is no such context,
    so it is None, as PyTorch's is outside FakeTensor tracing."""
    return None


def register_autograd(op, backward, *, setup_context=None):
    _op(op).register_autograd(backward, setup_context=setup_context)


class _Namespace:
    """tensorlib.ops.<ns>: the custom ops of one namespace as attributes."""

    def __init__(self, ns):
        self._ns = ns

    def __getattr__(self, name):
        op = _OPS.get(f"{self._ns}::{name}")
        if op is None:
            raise AttributeError(f"'_OpNamespace' '{self._ns}' object has no attribute "
                                 f"'{name}'")
        return op


def namespace(ns):
    if not any(q.startswith(ns + "::") for q in _OPS):
        raise AttributeError(f"module 'tensorlib.ops' has no attribute '{ns}'")
    return _Namespace(ns)
