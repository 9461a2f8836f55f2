"""nn.Module: registration, naming, state_dict, repr, modes, hooks, conversions, compared
with PyTorch where PyTorch is the reference (the same structure built in both)."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn

torch = pytest.importorskip("torch")


def build(lib_nn, lib):
    """One model with every kind of member, written once for both libraries."""
    class Block(lib_nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib_nn.Linear(4, 3)
            self.register_buffer("running", lib.zeros(3))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)
            self.scale = lib_nn.Parameter(lib.ones(3))

        def forward(self, x):
            return self.fc(x) * self.scale + self.running

    class Net(lib_nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.seq = lib_nn.Sequential(lib_nn.Linear(3, 5), lib_nn.ReLU(),
                                         lib_nn.Linear(5, 2, bias=False))
            self.heads = lib_nn.ModuleList([lib_nn.Linear(2, 2) for _ in range(3)])
            self.named = lib_nn.ModuleDict({"a": lib_nn.Tanh(), "b": lib_nn.Linear(2, 1)})
            self.plist = lib_nn.ParameterList([lib_nn.Parameter(lib.zeros(2, 2))])
            self.pdict = lib_nn.ParameterDict({"p": lib_nn.Parameter(lib.zeros(1))})
            self.act = lib_nn.Sequential(OrderedDict([("gelu", lib_nn.GELU()),
                                                      ("flat", lib_nn.Flatten())]))

        def forward(self, x):
            x = self.seq(self.block(x))
            for h in self.heads:
                x = h(x)
            return self.named["b"](self.named["a"](x))

    return Net()


def _tl_to_torch_text(s):
    return s.replace("tensorlib", "torch")


def test_state_dict_keys_match_torch():
    ours = build(nn, tensorlib).state_dict()
    theirs = build(torch.nn, torch).state_dict()
    assert list(ours.keys()) == list(theirs.keys())
    assert isinstance(ours, OrderedDict)
    for k in ours:
        assert tuple(ours[k].shape) == tuple(theirs[k].shape), k
    assert "block.scratch" not in ours          # non-persistent


def test_named_members_match_torch():
    ours, theirs = build(nn, tensorlib), build(torch.nn, torch)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [n for n, _ in ours.named_parameters(prefix="m", recurse=False)] == \
        [n for n, _ in theirs.named_parameters(prefix="m", recurse=False)]
    assert [n for n, _ in ours.block.named_parameters(prefix="x")] == \
        [n for n, _ in theirs.block.named_parameters(prefix="x")]


def test_repr_matches_torch():
    assert _tl_to_torch_text(repr(build(nn, tensorlib))) == repr(build(torch.nn, torch))
    assert repr(nn.Linear(2, 3, bias=False)) == repr(torch.nn.Linear(2, 3, bias=False))
    layers = [(nn.ReLU(inplace=True), torch.nn.ReLU(inplace=True)),
              (nn.ReLU6(), torch.nn.ReLU6()),
              (nn.LeakyReLU(0.2, True), torch.nn.LeakyReLU(0.2, True)),
              (nn.PReLU(3), torch.nn.PReLU(3)),
              (nn.ELU(0.5), torch.nn.ELU(0.5)), (nn.SELU(True), torch.nn.SELU(True)),
              (nn.GELU("tanh"), torch.nn.GELU("tanh")), (nn.SiLU(), torch.nn.SiLU()),
              (nn.Mish(), torch.nn.Mish()), (nn.Sigmoid(), torch.nn.Sigmoid()),
              (nn.Softplus(2, 10), torch.nn.Softplus(2, 10)),
              (nn.Hardtanh(-2, 2), torch.nn.Hardtanh(-2, 2)),
              (nn.Hardswish(), torch.nn.Hardswish()), (nn.Hardsigmoid(), torch.nn.Hardsigmoid()),
              (nn.Softmax(dim=1), torch.nn.Softmax(dim=1)),
              (nn.LogSoftmax(-1), torch.nn.LogSoftmax(-1)),
              (nn.Bilinear(2, 3, 4), torch.nn.Bilinear(2, 3, 4)),
              (nn.Unflatten(1, (2, 3)), torch.nn.Unflatten(1, (2, 3))),
              (nn.Identity(), torch.nn.Identity()),
              (nn.Threshold(0.1, 2.0), torch.nn.Threshold(0.1, 2.0))]
    for ours, theirs in layers:
        assert repr(ours) == repr(theirs)
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)])
    tml = torch.nn.ModuleList([torch.nn.Linear(2, 2), torch.nn.Linear(2, 2), torch.nn.ReLU(),
                               torch.nn.Linear(2, 2)])
    assert repr(ml) == repr(tml)
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())
    assert repr(nn.Sequential()) == repr(torch.nn.Sequential())


def test_state_dict_values_detached_and_keep_vars():
    m = nn.Linear(2, 3)
    sd = m.state_dict()
    assert not sd["weight"].requires_grad
    assert type(sd["weight"]) is tensorlib.Tensor
    sd["weight"][0, 0] = 5.0                         # shares storage with the parameter
    assert m.weight[0, 0].item() == 5.0
    kv = m.state_dict(keep_vars=True)
    assert kv["weight"] is m.weight
    assert list(m.state_dict(prefix="p.").keys()) == ["p.weight", "p.bias"]


def test_load_state_dict_roundtrip_and_torch_checkpoint():
    ours = build(nn, tensorlib)
    theirs = build(torch.nn, torch)
    sd = {k: tensorlib.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    result = ours.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for k, v in ours.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), theirs.state_dict()[k].numpy())
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    np.testing.assert_allclose(ours(tensorlib.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_load_state_dict_in_place_under_no_grad():
    m = nn.Linear(2, 2)
    w = m.weight
    m.load_state_dict({"weight": tensorlib.ones(2, 2), "bias": tensorlib.zeros(2)})
    assert m.weight is w and w.is_leaf and w.requires_grad
    np.testing.assert_array_equal(w.detach().numpy(), np.ones((2, 2)))


def test_load_state_dict_strict_errors_like_torch():
    def errors(lib_nn, lib):
        m = lib_nn.Sequential(lib_nn.Linear(2, 3))
        sd = {"0.weight": lib.zeros(3, 2), "extra": lib.zeros(1), "1.weight": lib.zeros(1)}
        with pytest.raises(RuntimeError) as info:
            m.load_state_dict(sd)
        res = m.load_state_dict(sd, strict=False)
        return str(info.value), res.missing_keys, res.unexpected_keys
    ours, theirs = errors(nn, tensorlib), errors(torch.nn, torch)
    assert ours == theirs
    assert 'Missing key(s) in state_dict: "0.bias"' in ours[0]
    assert ours[1] == ["0.bias"]                    # non-strict still reports, no raise
    assert ours[2] == ["extra", "1.weight"]


def test_load_state_dict_size_mismatch_message():
    m = nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict({"weight": tensorlib.zeros(3, 3), "bias": tensorlib.zeros(3)})
    tm = torch.nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as tinfo:
        tm.load_state_dict({"weight": torch.zeros(3, 3), "bias": torch.zeros(3)})
    assert _tl_to_torch_text(str(info.value)) == str(tinfo.value)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([1, 2])


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", nn.Parameter(tensorlib.zeros(1)))
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("", tensorlib.zeros(1))
    with pytest.raises(TypeError, match="parameter name should be a string"):
        m.register_parameter(1, None)
    with pytest.raises(TypeError, match="cannot assign 'tensorlib.FloatTensor' object to "
                                        "parameter 'w'"):
        m.register_parameter("w", tensorlib.zeros(1))
    leaf = tensorlib.zeros(2, requires_grad=True)
    nonleaf = nn.Parameter(leaf)
    nonleaf._grad_fn = (leaf * 2).grad_fn
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        m.register_parameter("w", nonleaf)
    m.w = nn.Parameter(tensorlib.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'tensorlib.FloatTensor' as parameter "
                                        "'w' \\(tensorlib.nn.Parameter or None expected\\)"):
        m.w = tensorlib.zeros(1)
    m.w = None
    assert m.w is None and "w" in m._parameters
    m.other = 3
    with pytest.raises(KeyError, match="attribute 'other' already exists"):
        m.register_buffer("other", tensorlib.zeros(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)

    class Early(nn.Module):
        def __init__(self):
            self.p = nn.Parameter(tensorlib.zeros(1))
    with pytest.raises(AttributeError, match="cannot assign parameters before "
                                             "Module.__init__\\(\\) call"):
        Early()


def test_setattr_routes_and_delattr():
    m = nn.Module()
    m.p = nn.Parameter(tensorlib.zeros(1))
    m.child = nn.Linear(1, 1)
    m.register_buffer("b", tensorlib.zeros(1))
    m.b = tensorlib.ones(2)                           # replaces the buffer
    assert m._buffers["b"].shape == (2,)
    m.buf = nn.Buffer(tensorlib.zeros(3), persistent=False)
    assert "buf" in m._buffers and "buf" in m._non_persistent_buffers_set
    assert set(m.state_dict()) == {"p", "b", "child.weight", "child.bias"}
    del m.b
    assert "b" not in m._buffers
    with pytest.raises(TypeError, match="cannot assign 'tensorlib.nn.modules.linear.Linear' "
                                        "as parameter 'p'"):
        m.p = nn.Linear(1, 1)
    m.q = nn.Linear(1, 1)
    m.q = nn.Parameter(tensorlib.zeros(1))            # a parameter replaces the module
    assert "q" in m._parameters and "q" not in m._modules
    del m.child
    assert "child" not in m._modules
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'child'"):
        m.child
    assert "buf" in dir(m) and "p" in dir(m) and "q" in dir(m)


def test_get_submodule_and_parameter():
    m = build(nn, tensorlib)
    assert m.get_submodule("block.fc") is m.block.fc
    assert m.get_submodule("") is m
    assert m.get_parameter("seq.0.weight") is m.seq[0].weight
    assert m.get_buffer("block.running") is m.block.running
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        m.get_submodule("block.nope")
    with pytest.raises(AttributeError, match="`running` is not an nn.Parameter"):
        m.get_parameter("block.running")


def test_shared_parameters_deduplicated():
    lin = nn.Linear(2, 2)
    m = nn.Sequential(lin, lin)
    assert len(list(m.parameters())) == 2
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4
    assert [n for n, _ in m.named_modules()] == ["", "0"]
    assert list(m.state_dict().keys()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_train_eval():
    m = build(nn, tensorlib)
    assert all(mod.training for mod in m.modules())
    assert m.eval() is m
    assert not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")


def test_to_dtype_keeps_parameter_objects():
    m = build(nn, tensorlib)
    params = list(m.parameters())
    m.block.register_buffer("count", tensorlib.zeros(1, dtype=tensorlib.int64))
    m.to(tensorlib.float64)
    assert all(p.dtype == tensorlib.float64 for p in m.parameters())
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    assert all(isinstance(p, nn.Parameter) and p.is_leaf and p.requires_grad for p in params)
    assert m.block.running.dtype == tensorlib.float64
    assert m.block.count.dtype == tensorlib.int64       # integers are not cast
    m.float()
    assert m.block.fc.weight.dtype == tensorlib.float32
    m.half()
    assert m.block.fc.weight.dtype == tensorlib.float16
    m.to(dtype=tensorlib.float32, device="cpu")
    m.to(tensorlib.zeros(1, dtype=tensorlib.float64))
    assert m.block.fc.weight.dtype == tensorlib.float64
    assert m.cpu() is m
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        m.to(tensorlib.int32)


def test_to_converts_grads():
    m = nn.Linear(2, 2)
    m(tensorlib.ones(1, 2)).sum().backward()
    m.double()
    assert m.weight.grad.dtype == tensorlib.float64


def test_zero_grad_and_requires_grad_():
    m = nn.Linear(3, 1)
    m(tensorlib.ones(2, 3)).sum().backward()
    assert m.weight.grad is not None
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(m.weight.grad.numpy(), np.zeros((1, 3)))
    m.zero_grad()
    assert m.weight.grad is None
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_apply_order():
    seen = []
    m = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen == ["Linear", "ReLU", "Sequential", "Sequential"]


def test_forward_hooks_order_and_removal():
    calls = []
    m = nn.Linear(2, 2)
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre1"))
    h2 = m.register_forward_pre_hook(lambda mod, args: calls.append("pre0"), prepend=True)
    h3 = m.register_forward_hook(lambda mod, args, out: calls.append("post"))
    m(tensorlib.ones(1, 2))
    assert calls == ["pre0", "pre1", "post"]
    for h in (h1, h2, h3):
        h.remove()
    calls.clear()
    m(tensorlib.ones(1, 2))
    assert calls == []
    assert not m._forward_hooks and not m._forward_pre_hooks


def test_forward_hooks_replace_args_and_output():
    m = nn.Identity()
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    m.register_forward_hook(lambda mod, args, out: out + 1)
    out = m(tensorlib.tensor([1.0]))
    assert out.item() == 3.0


def test_forward_hooks_with_kwargs():
    class KW(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale
    m = KW()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": 10.0}),
                                with_kwargs=True)
    seen = {}
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.update(kwargs),
                            with_kwargs=True)
    assert m(tensorlib.tensor([1.0])).item() == 10.0
    assert seen == {"scale": 10.0}


def test_global_forward_hook():
    from tensorlib.nn.modules.module import register_module_forward_hook
    calls = []
    handle = register_module_forward_hook(lambda mod, args, out: calls.append(type(mod)))
    try:
        nn.Sequential(nn.ReLU())(tensorlib.ones(1))
    finally:
        handle.remove()
    assert calls == [nn.ReLU, nn.Sequential]


def _backward_hook_log(lib_nn, lib, x_requires_grad):
    """The grads seen by full backward (pre-)hooks, as numpy arrays."""
    m = lib_nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]))
        m.bias.zero_()
    log = []

    def pre(mod, grad_output):
        log.append(("pre", [None if g is None else g.detach().numpy().copy()
                            for g in grad_output]))

    def post(mod, grad_input, grad_output):
        log.append(("post", [None if g is None else g.detach().numpy().copy()
                             for g in grad_input],
                    [g.detach().numpy().copy() for g in grad_output]))
    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(post)
    x = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=x_requires_grad)
    (m(x) * lib.tensor([[1.0, 10.0]])).sum().backward()
    return log, (x.grad.numpy() if x_requires_grad else None)


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")
@pytest.mark.parametrize("x_requires_grad", [True, False])
def test_full_backward_hooks_match_torch(x_requires_grad):
    ours, ours_grad = _backward_hook_log(nn, tensorlib, x_requires_grad)
    theirs, theirs_grad = _backward_hook_log(torch.nn, torch, x_requires_grad)
    assert [e[0] for e in ours] == [e[0] for e in theirs] == ["pre", "post"]
    for a, b in zip(ours, theirs):
        for xs, ys in zip(a[1:], b[1:]):
            assert len(xs) == len(ys)
            for x, y in zip(xs, ys):
                if y is None:
                    assert x is None
                else:
                    np.testing.assert_allclose(x, y)
    if x_requires_grad:
        np.testing.assert_allclose(ours_grad, theirs_grad)


def test_full_backward_hook_replaces_grad_input_and_removal():
    m = nn.Identity()
    handle = m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
    pre = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
    x = tensorlib.ones(2, requires_grad=True)
    m(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])
    handle.remove()
    pre.remove()
    x.grad = None
    m(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_call_fast_path_calls_forward_directly():
    class Count(nn.Module):
        def forward(self, x):
            return x + 1
    assert Count()(tensorlib.zeros(1)).item() == 1.0
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(tensorlib.zeros(1))


def test_parameter_basics():
    data = tensorlib.arange(6, dtype=tensorlib.float32).reshape(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, tensorlib.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    data[0, 0] = 7.0                                   # storage is shared
    assert p[0, 0].item() == 7.0
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert type(p * 2) is tensorlib.Tensor
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert nn.Parameter().shape == (0,)
    with pytest.raises(TypeError):
        nn.Parameter([1.0])


def test_parameter_deepcopy_and_pickle():
    p = nn.Parameter(tensorlib.tensor([1.0, 2.0]))
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert isinstance(q, nn.Parameter) and q.requires_grad
        np.testing.assert_array_equal(q.detach().numpy(), [1.0, 2.0])
        assert q.untyped_storage() is not p.untyped_storage()


def _noop_hook(module, args, output):
    return None


def test_module_pickle_and_deepcopy():
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    m.register_forward_hook(_noop_hook)
    for clone in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert repr(clone) == repr(m)
        for (k, a), (_, b) in zip(clone.state_dict().items(), m.state_dict().items()):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert clone[0].weight is not m[0].weight


class _PrefixNoting(nn.Linear):
    """A module whose load hook is its own bound method, registered without the module
    argument (GPyTorch's pattern); module level, so that it pickles."""

    def __init__(self):
        super().__init__(2, 2)
        self.prefixes = []
        self._register_load_state_dict_pre_hook(self._note)

    def _note(self, state_dict, prefix, *rest):
        self.prefixes.append(prefix)


def test_private_load_state_dict_pre_hook_form_and_pickling():
    net = _PrefixNoting()
    seen = []
    net._register_load_state_dict_pre_hook(
        lambda module, state_dict, *rest: seen.append(module), with_module=True)
    net.load_state_dict(_PrefixNoting().state_dict())
    assert net.prefixes == [""] and seen == [net]
    plain = _PrefixNoting()
    twin = pickle.loads(pickle.dumps(copy.deepcopy(plain)))
    twin.load_state_dict(plain.state_dict())
    assert twin.prefixes == [""]


def test_module_tables_are_plain_dicts_like_torch():
    """ModuleDict.keys() is dict_keys, as in PyTorch 2 (torchmetrics prints it in a message)."""
    torch = pytest.importorskip("torch")
    for lib in (torch, tensorlib):
        linear = lib.nn.Linear(2, 2)
        assert type(linear._parameters) is dict and type(linear._modules) is dict
        assert type(linear._buffers) is dict
        assert type(lib.nn.ModuleDict({"a": linear}).keys()).__name__ == "dict_keys"


def test_replicate_for_data_parallel_is_a_shallow_replica():
    """PyTorch's DataParallel replica (timm's caches test against it): the same attribute
    values, no parameters of its own, its own buffer and submodule tables."""
    model = tensorlib.nn.Sequential(tensorlib.nn.Linear(2, 3), tensorlib.nn.BatchNorm1d(3))
    model.cache = {}
    replica = model._replicate_for_data_parallel()
    assert type(replica) is type(model) and replica._is_replica
    assert not hasattr(model, "_is_replica") or not model._is_replica
    assert replica.cache is model.cache
    assert replica._modules is not model._modules and replica[0] is model[0]
    bn = model[1]._replicate_for_data_parallel()
    assert list(bn._parameters) == [] and bn._buffers is not model[1]._buffers
    assert bn.running_mean is model[1].running_mean
