"""torch.library.Library (tensorlib.library.registration): implementations registered per
PyTorch dispatch key land where tensorlib keeps them, including registrations made before the
op is defined (torchvision registers its fake kernels whether or not its C++ ops loaded)."""
import itertools

import pytest

import tensorlib
from tensorlib import _C
from tensorlib.library import DispatchKey, DispatchKeySet, Library, custom_op, register_fake

_ids = itertools.count()


def _ns():
    """A namespace of its own per test: custom ops are process-wide, tests run in any order."""
    return f"regtest{next(_ids)}"


def test_kinds_and_keys_are_checked():
    with pytest.raises(ValueError, match="Unsupported kind"):
        Library(_ns(), "IMPLEMENT")
    with pytest.raises(ValueError, match="Unknown dispatch key"):
        Library(_ns(), "IMPL", "Cpu")
    ns = _ns()
    Library(ns, "DEF")
    with pytest.raises(RuntimeError, match="Only a single TORCH_LIBRARY"):
        Library(ns, "DEF")
    Library(ns, "FRAGMENT")
    assert repr(Library(ns, "IMPL", "Meta")) == f"Library(kind=IMPL, ns={ns}, dispatch_key=Meta)"


def test_cpu_impl_is_the_cpu_kernel():
    ns = _ns()

    @custom_op(f"{ns}::scale", mutates_args=(), device_types="opencl")
    def scale(x, k):
        raise AssertionError("the opencl kernel must not run for a cpu tensor")

    Library(ns, "IMPL", "CPU").impl("scale", lambda x, k: x * k)
    out = scale(tensorlib.tensor([1.0, 2.0]), 3.0)
    assert out.tolist() == [3.0, 6.0]


def test_meta_impl_is_the_fake_kernel_run_on_meta_tensors():
    ns = _ns()

    @custom_op(f"{ns}::pairs", mutates_args=())
    def pairs(x):
        return x.reshape(-1, 2).sum(1)

    Library(ns, "IMPL", "Meta").impl("pairs", lambda x: x.new_empty((x.numel() // 2,)))
    out = pairs(tensorlib.empty(6, 4, device="meta"))
    assert out.device.type == "meta" and tuple(out.shape) == (12,)
    assert pairs(tensorlib.ones(4)).tolist() == [2.0, 2.0]


def test_registrations_wait_for_the_op_to_be_defined():
    ns = _ns()
    seen = []

    @register_fake(f"{ns}::later")
    def fake(x):
        seen.append("fake")
        return x.new_empty(x.shape)

    Library(ns, "IMPL").impl("later", lambda x: x + 100, "CPU")
    with pytest.raises(AttributeError):
        getattr(tensorlib.ops, ns)                  # not defined yet: no op by that name

    @custom_op(f"{ns}::later", mutates_args=(), device_types="opencl")
    def later(x):
        return x

    assert later(tensorlib.zeros(2)).tolist() == [100.0, 100.0]
    later(tensorlib.empty(3, device="meta"))
    assert seen == ["fake"]


def test_autocast_impl_runs_only_under_autocast_and_reaches_the_kernel_under_the_guard():
    ns = _ns()
    calls = []

    @custom_op(f"{ns}::mm", mutates_args=())
    def mm(a, b):
        calls.append(a.dtype)
        return a @ b

    autocast_keys = DispatchKeySet(DispatchKey.AutocastCPU) | DispatchKeySet(
        DispatchKey.AutocastCUDA)

    def autocast_mm(a, b):
        with _C._ExcludeDispatchKeyGuard(autocast_keys):
            return mm(a.to(tensorlib.float64), b.to(tensorlib.float64)).to(a.dtype)

    lib = Library(ns, "IMPL")
    for key in ("AutocastCPU", "AutocastCUDA"):
        lib.impl("mm", autocast_mm, key)
    a = tensorlib.ones(2, 2)
    assert mm(a, a).dtype is tensorlib.float32 and calls == [tensorlib.float32]
    with tensorlib.autocast("cpu"):
        assert mm(a, a).dtype is tensorlib.float32
    assert calls == [tensorlib.float32, tensorlib.float64]


def test_composite_implicit_impl_is_differentiated_through():
    ns = _ns()

    @custom_op(f"{ns}::sq", mutates_args=(), device_types="opencl")
    def sq(x):
        return x

    Library(ns, "IMPL").impl("sq", lambda x: x * x)     # no key: CompositeImplicitAutograd
    x = tensorlib.tensor([3.0], requires_grad=True)
    sq(x).backward()
    assert x.grad.tolist() == [6.0]


def test_composite_explicit_impl_serves_every_device_without_a_kernel():
    ns = _ns()

    @custom_op(f"{ns}::neg", mutates_args=(), device_types="opencl")
    def neg(x):
        return x

    Library(ns, "FRAGMENT", "CompositeExplicitAutograd").impl(f"{ns}::neg.default", lambda x: -x)
    assert neg(tensorlib.ones(2)).tolist() == [-1.0, -1.0]


def test_what_tensorlib_lacks_says_so():
    ns = _ns()
    lib = Library(ns, "DEF")
    with pytest.raises(NotImplementedError, match="schemas"):
        lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match="register_autograd"):
        lib.impl("foo", lambda x: x, "Autograd")
    with pytest.raises(NotImplementedError, match="Functionalize"):
        lib.impl("foo", lambda x: x, "Functionalize")
    with pytest.raises(NotImplementedError, match="fallback"):
        lib.fallback(lambda *a: None)
    with pytest.raises(NotImplementedError, match="overloads"):
        lib.impl("foo.out", lambda x: x, "CPU")
    with pytest.raises(TypeError, match="callable"):
        lib.impl("foo", None, "CPU")


def test_get_ctx_is_none_outside_a_fake_kernel():
    import tensorlib._custom_ops as legacy
    assert tensorlib.library.get_ctx() is None and legacy.get_ctx() is None
