"""Tensor subclasses and their __torch_function__: the same subclass code runs on tensorlib
and on PyTorch, and the results, their types and the functions the subclass saw must agree."""
import pytest

import tensorlib
from tensorlib import overrides

torch = pytest.importorskip("torch")


def make_classes(lib):
    """A plain subclass, a logging one and its child, for library `lib`."""
    class Plain(lib.Tensor):
        pass

    class Logging(lib.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            Logging.seen.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    class Child(Logging):
        pass

    return Plain, Logging, Child


CALLS = {
    "add_scalar": lambda lib, x, y: x + 1,
    "radd_scalar": lambda lib, x, y: 2 + x,
    "plain_left": lambda lib, x, y: y * x,
    "sub": lambda lib, x, y: x - y,
    "div": lambda lib, x, y: x / 2,
    "neg": lambda lib, x, y: -x,
    "compare": lambda lib, x, y: x > 0,
    "matmul": lambda lib, x, y: x @ y.T,
    "getitem": lambda lib, x, y: x[0],
    "transpose_property": lambda lib, x, y: x.T,
    "method": lambda lib, x, y: x.sum(dim=1),
    "view": lambda lib, x, y: x.view(3, 2),
    "function": lambda lib, x, y: lib.add(x, y),
    "functional": lambda lib, x, y: lib.nn.functional.relu(x),
    "tuple_result": lambda lib, x, y: x.max(0).values,
    "list_result": lambda lib, x, y: x.split(1)[1],
    "cat": lambda lib, x, y: lib.cat([y, x]),
}


def run(lib, name, cls_index, device):
    classes = make_classes(lib)
    cls = classes[cls_index]
    dev = {} if lib is torch else {"device": device}
    data = lib.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], **dev)
    x, y = data.as_subclass(cls), data.clone()
    classes[1].seen.clear()
    out = CALLS[name](lib, x, y)
    return type(out).__name__, out.tolist(), list(classes[1].seen)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("cls_index", [0, 1])
def test_subclass_results_and_seen_functions_match_torch(name, cls_index, device):
    assert run(tensorlib, name, cls_index, device) == run(torch, name, cls_index, "cpu")


@pytest.mark.parametrize("lib", [tensorlib, torch], ids=["tensorlib", "torch"])
def test_subclass_handler_comes_before_its_base(lib):
    order = []

    class Base(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            order.append(("base", types))
            return NotImplemented

    class Derived(Base):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            order.append(("derived", types))
            return "derived answer"

    b, d = lib.ones(2).as_subclass(Base), lib.ones(2).as_subclass(Derived)
    assert lib.add(b, d) == "derived answer"
    assert order == [("derived", (Derived, Base))]


def test_parameters_stay_plain_and_skip_dispatch():
    p = tensorlib.nn.Parameter(tensorlib.ones(2, 2))
    tp = torch.nn.Parameter(torch.ones(2, 2))
    for lib, param in ((tensorlib, p), (torch, tp)):
        assert type(param + 1) is lib.Tensor and type(param.view(4)) is lib.Tensor
        assert type(param.T) is lib.Tensor
        assert not overrides.has_torch_function((p,))
    assert "__add__" not in vars(tensorlib.nn.Parameter)        # no Python operator wrappers


def test_as_subclass_keeps_the_graph(device):
    _, Logging, _ = make_classes(tensorlib)
    x = tensorlib.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    s = x.as_subclass(Logging)
    (s * s).sum().backward()
    tx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (tx.as_subclass(make_classes(torch)[1]) ** 2).sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()
    with pytest.raises(TypeError):
        x.as_subclass(int)


def test_make_subclass(device):
    plain = make_classes(tensorlib)[0]
    data = tensorlib.ones(3, device=device)
    s = tensorlib.Tensor._make_subclass(plain, data, True)
    assert type(s) is plain and s.requires_grad and s.is_leaf
    s.detach().add_(1)
    assert data.tolist() == [2.0, 2.0, 2.0]                   # the same memory


def test_disable_torch_function_subclass():
    _, Logging, _ = make_classes(tensorlib)
    x = tensorlib.ones(2).as_subclass(Logging)
    Logging.seen.clear()
    with tensorlib._C.DisableTorchFunctionSubclass():
        out = x + 1
        assert tensorlib.relu(x).tolist() == [1.0, 1.0]
    assert Logging.seen == [] and type(out) is tensorlib.Tensor
    assert tensorlib._C._is_torch_function_enabled()


@pytest.mark.parametrize("lib", [tensorlib, torch], ids=["tensorlib", "torch"])
def test_modes_and_disable_switches_are_per_thread(lib):
    """A mode entered in one thread sees none of another thread's calls, a thread started
    inside a mode starts with an empty stack, and DisableTorchFunction in one thread leaves
    the others' modes on (PyTorch's are thread-local)."""
    import threading
    Recorder = mode_class(lib)
    x = lib.ones(3)
    entered, release, done = threading.Event(), threading.Event(), threading.Event()
    seen_elsewhere = []

    def worker():
        with Recorder() as mine:
            entered.set()
            release.wait(10)
            (x * 2).sum()
        seen_elsewhere.extend(mine.seen)
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(10)
    with lib._C.DisableTorchFunction():
        y = (x + 1).relu()                       # the worker's mode sees none of this
    z = x - 1
    release.set()
    thread.join(10)
    assert done.is_set() and seen_elsewhere == ["mul", "sum"]
    assert y.tolist() == [2.0, 2.0, 2.0] and z.tolist() == [0.0, 0.0, 0.0]
    with Recorder() as outer:
        inner_seen = []
        thread = threading.Thread(target=lambda: inner_seen.append(float((x + 1).sum())))
        thread.start()
        thread.join(10)
        x.neg()
    assert inner_seen == [6.0] and outer.seen == ["neg"]


def test_torch_dispatch_class_is_defined_but_never_instantiated():
    """Libraries define __torch_dispatch__ wrappers at import (PyG's EdgeIndex): the class
    may exist, but no instance that would skip its dispatch is ever made."""
    class Dispatching(tensorlib.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return None

    x = tensorlib.ones(3)
    for make in (lambda: x.as_subclass(Dispatching),
                 lambda: tensorlib.Tensor._make_subclass(Dispatching, x),
                 lambda: Dispatching(x),
                 lambda: tensorlib.Tensor._make_wrapper_subclass(Dispatching, (3,))):
        with pytest.raises(NotImplementedError, match="Dispatching defines __torch_dispatch__"):
            make()
    with pytest.raises(NotImplementedError, match="wrapper subclass"):
        tensorlib.Tensor._make_wrapper_subclass(tensorlib.Tensor, (3,))
    assert type(x + 1) is tensorlib.Tensor


def mode_class(lib):
    class Recorder(lib.overrides.TorchFunctionMode):
        def __init__(self):
            self.seen = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.seen.append(func.__name__)
            return func(*args, **(kwargs or {}))
    return Recorder


@pytest.mark.parametrize("lib", [tensorlib, torch], ids=["tensorlib", "torch"])
def test_a_mode_sees_plain_tensor_calls(lib):
    Recorder = mode_class(lib)
    x = lib.tensor([[1.0, -1.0], [2.0, 0.5]])
    with Recorder() as outer:
        with Recorder() as inner:
            y = lib.nn.functional.relu(x + 1).sum()
            z = x.T[0]
    assert inner.seen == ["add", "relu", "sum", "__get__", "__getitem__"]
    assert outer.seen == inner.seen                      # the inner mode's calls reach it
    assert y.item() == 6.5 and z.tolist() == [1.0, 2.0]
    before = list(inner.seen)
    x + 1                                                 # after the modes: not seen
    assert inner.seen == before


def test_tensor_operators_are_its_own_again_after_a_mode():
    add = vars(tensorlib.Tensor)["__add__"]
    with mode_class(tensorlib)():
        assert vars(tensorlib.Tensor)["__add__"] is not add
    assert vars(tensorlib.Tensor)["__add__"] is add


@pytest.mark.parametrize("lib", [tensorlib, torch], ids=["tensorlib", "torch"])
def test_mode_is_off_under_disable_torch_function(lib):
    Recorder = mode_class(lib)
    with Recorder() as rec:
        with lib._C.DisableTorchFunction():
            lib.relu(lib.ones(1))
        lib.neg(lib.ones(1))
    assert rec.seen == ["ones", "neg"]


def test_overridable_and_ignored_functions():
    overridable = overrides.get_overridable_functions()
    assert tensorlib.add in overridable[tensorlib]
    assert tensorlib.nn.functional.relu in overridable[tensorlib.nn.functional]
    assert tensorlib.Tensor.sum in overridable[tensorlib.Tensor]
    assert tensorlib.add not in overrides.get_ignored_functions()


@pytest.mark.parametrize("lib", [tensorlib, torch], ids=["tensorlib", "torch"])
def test_a_subclass_given_by_keyword_is_dispatched(lib):
    _, Logging, _ = make_classes(lib)
    x = lib.ones(2).as_subclass(Logging)
    Logging.seen.clear()
    out = lib.add(lib.ones(2), other=x)
    assert type(out) is Logging and Logging.seen == ["add"]


@pytest.mark.parametrize("lib", [tensorlib, torch], ids=["tensorlib", "torch"])
def test_user_functions_dispatch_through_handle_torch_function(lib):
    def scaled(x, factor):
        if lib.overrides.has_torch_function_unary(x):
            return lib.overrides.handle_torch_function(scaled, (x,), x, factor)
        return x * factor

    _, Logging, _ = make_classes(lib)
    x = lib.ones(2).as_subclass(Logging)
    Logging.seen.clear()
    assert type(scaled(x, 3)) is Logging and Logging.seen == ["scaled"]
    assert scaled(lib.ones(1), 2).tolist() == [2.0]


def test_operator_wrappers_count_as_tensor_methods():
    _, Logging, _ = make_classes(tensorlib)
    assert overrides.is_tensor_method_or_property(Logging.__dict__["__getitem__"])
    assert overrides.is_tensor_method_or_property(Logging.__dict__["T"].__get__)


def metadata_reads(lib):
    _, Logging, _ = make_classes(lib)
    x = lib.ones(2, 3).as_subclass(Logging)
    Logging.seen.clear()
    values = [str(x.dtype).split(".")[-1], x.device.type, x.requires_grad, x.grad, x.ndim,
              x.dim(), list(x.size()), list(x.shape), len(x), x.is_leaf]
    text = repr(x == 1)
    return values, Logging.seen, "True" in text


def test_metadata_reads_and_repr_match_torch():
    assert metadata_reads(tensorlib) == metadata_reads(torch)


def test_setting_requires_grad_on_a_subclass():
    plain = make_classes(tensorlib)[0]
    x = tensorlib.ones(2).as_subclass(plain)
    x.requires_grad = True
    (x * 2).sum().backward()
    assert x.requires_grad and x.grad.tolist() == [2.0, 2.0] and type(x.grad) is tensorlib.Tensor


def tagged_model_run(lib):
    """A subclass carrying metadata (made with _make_subclass) through an nn model."""
    class Tagged(lib.Tensor):
        @staticmethod
        def __new__(cls, data, tag):
            return lib.Tensor._make_subclass(cls, data, data.requires_grad)

        def __init__(self, data, tag):
            self.tag = tag

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            out = super().__torch_function__(func, types, args, kwargs)
            tags = [a.tag for a in args if isinstance(a, Tagged) and hasattr(a, "tag")]
            if isinstance(out, Tagged) and tags:
                out.tag = tags[0]
            return out

    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.linspace(-1, 1, p.numel()).reshape(p.shape))
    y = model(Tagged(lib.ones(5, 3), "img"))
    y.sum().backward()
    grad = model[0].weight.grad
    return (type(y).__name__, y.tag, type(grad).__name__,
            [round(v, 5) for v in grad.flatten().tolist()],
            [type(t).__name__ for t in (y.detach(), y.float(), lib.stack([y, y]), y.unbind(0)[0])])


def test_a_tagged_subclass_through_a_model_matches_torch():
    assert tagged_model_run(tensorlib) == tagged_model_run(torch)
