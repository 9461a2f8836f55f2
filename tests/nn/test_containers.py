"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict: PyTorch's indexing,
mutation and naming rules."""
from collections import OrderedDict

import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn

torch = pytest.importorskip("torch")


def test_sequential_indexing_slicing_and_forward():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c
    sub = s[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c]
    assert list(sub._modules) == ["1", "2"]            # slicing keeps the keys, as torch
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    x = tensorlib.ones(4, 2)
    expected = c(b(a(x)))
    np.testing.assert_array_equal(s(x).detach().numpy(), expected.detach().numpy())


def test_sequential_mutation_matches_torch():
    def ops(lib_nn):
        s = lib_nn.Sequential(lib_nn.ReLU(), lib_nn.Tanh())
        s.append(lib_nn.Sigmoid())
        s.extend([lib_nn.Identity(), lib_nn.GELU()])
        s.insert(1, lib_nn.ReLU6())
        s.insert(-1, lib_nn.SiLU())
        popped = s.pop(0)
        del s[1]
        s[0] = lib_nn.Softsign()
        t = s + lib_nn.Sequential(lib_nn.Mish())
        s2 = lib_nn.Sequential(lib_nn.ReLU()) * 2
        return repr(s), repr(t), repr(popped), repr(s2), list(s._modules)
    assert ops(nn) == ops(torch.nn)


def test_sequential_ordered_dict_constructor():
    s = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(s.state_dict()) == ["fc.weight", "fc.bias"]
    assert s.fc is s[0]
    ts = torch.nn.Sequential(OrderedDict([("fc", torch.nn.Linear(2, 2)),
                                          ("act", torch.nn.ReLU())]))
    assert repr(s) == repr(ts)


def test_modulelist():
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    assert len(ml) == 3
    assert list(ml.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias", "2.weight",
                                     "2.bias"]
    first = ml[0]
    ml.append(nn.ReLU())
    ml.insert(0, nn.Tanh())
    assert isinstance(ml[0], nn.Tanh) and ml[1] is first
    ml.extend([nn.Sigmoid()])
    assert isinstance(ml[-1], nn.Sigmoid)
    del ml[0]
    assert ml[0] is first and list(ml._modules) == [str(i) for i in range(len(ml))]
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    ml += [nn.ReLU()]
    assert len(ml) == 6
    assert ml.pop(-1).__class__ is nn.ReLU
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable"):
        ml.extend(3)
    with pytest.raises(NotImplementedError):
        ml(tensorlib.ones(1))


def test_moduledict():
    md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Linear(1, 1)})
    assert list(md.keys()) == ["b", "a"]
    assert "a" in md and len(md) == 2
    md["c"] = nn.Tanh()
    md.update([("d", nn.Sigmoid())])
    assert list(md) == ["b", "a", "c", "d"]
    assert isinstance(md.pop("b"), nn.ReLU)
    assert list(md.state_dict()) == ["a.weight", "a.bias"]
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("x",)])
    md.clear()
    assert len(md) == 0


def test_parameterlist():
    pl = nn.ParameterList([tensorlib.zeros(2), nn.Parameter(tensorlib.ones(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl)     # tensors are wrapped
    assert len(pl) == 2 and len(list(pl.parameters())) == 2
    pl.append(tensorlib.zeros(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert isinstance(pl[0:2], nn.ParameterList) and len(pl[0:2]) == 2
    tpl = torch.nn.ParameterList([torch.zeros(2), torch.nn.Parameter(torch.ones(3)),
                                  torch.zeros(1)])
    assert repr(pl).replace("tensorlib", "torch") == repr(tpl)
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        pl()


def test_parameterdict():
    pd = nn.ParameterDict({"w": tensorlib.zeros(2), "b": nn.Parameter(tensorlib.ones(1))})
    assert list(pd.keys()) == ["b", "w"]                   # a plain dict is sorted, as torch
    assert isinstance(pd["w"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["b", "w"]
    pd["z"] = tensorlib.zeros(3)
    assert "z" in pd and len(pd) == 3
    assert isinstance(pd.pop("z"), nn.Parameter) and "z" not in pd
    assert pd.get("missing") is None
    merged = pd | nn.ParameterDict({"q": tensorlib.zeros(1)})
    assert list(merged.keys()) == ["b", "w", "q"]
    tpd = torch.nn.ParameterDict({"w": torch.zeros(2), "b": torch.nn.Parameter(torch.ones(1))})
    assert repr(pd).replace("tensorlib", "torch") == repr(tpd)
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = tensorlib.zeros(1)
