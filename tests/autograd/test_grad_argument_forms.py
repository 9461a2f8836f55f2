"""autograd.grad/backward take their tensors in every form PyTorch does: one tensor, any
iterable (a generator such as `model.parameters()`, consumed once), or a dict of inputs
(grad returns a dict with the same keys); other Mappings and empty inputs are refused."""
import collections

import pytest

import tensorlib

torch = pytest.importorskip("torch")

LIBS = ["tensorlib", "torch"]


def _lib(name):
    return tensorlib if name == "tensorlib" else torch


def _model_and_loss(lib):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    return model, (model(lib.ones(4, 3)) ** 2).sum()


@pytest.mark.parametrize("lib", LIBS)
def test_grad_of_a_parameters_generator(lib):
    mod = _lib(lib)
    model, loss = _model_and_loss(mod)
    grads = mod.autograd.grad(loss, model.parameters(), retain_graph=True)
    expected = mod.autograd.grad(loss, list(model.parameters()))
    assert len(grads) == 2
    assert all(mod.equal(g, e) for g, e in zip(grads, expected))


@pytest.mark.parametrize("lib", LIBS)
def test_generators_of_outputs_and_grad_outputs_are_read_once(lib):
    mod = _lib(lib)
    x = mod.ones(3, requires_grad=True)
    (g,) = mod.autograd.grad((y for y in [(x * 2).sum()]), iter([x]),
                             grad_outputs=iter([mod.tensor(3.0)]))
    assert g.tolist() == [6.0, 6.0, 6.0]


@pytest.mark.parametrize("lib", LIBS)
def test_backward_inputs_from_a_generator(lib):
    mod = _lib(lib)
    model, loss = _model_and_loss(mod)
    loss.backward(inputs=(p for p in model.parameters() if p.dim() == 1))
    assert model.weight.grad is None and model.bias.grad is not None


@pytest.mark.parametrize("lib", LIBS)
def test_dict_inputs_give_a_dict_of_gradients(lib):
    mod = _lib(lib)
    x = mod.tensor([1.0, 2.0], requires_grad=True)
    y = mod.tensor([3.0, 5.0], requires_grad=True)
    out = (x * y).sum()
    grads = mod.autograd.grad(out, {"b": y, "a": x}, retain_graph=True)
    assert type(grads) is dict and list(grads) == ["b", "a"]
    assert grads["a"].tolist() == [3.0, 5.0] and grads["b"].tolist() == [1.0, 2.0]
    out.backward(inputs={"only": x})
    assert x.grad.tolist() == [3.0, 5.0] and y.grad is None


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("fn", ["grad", "backward"])
def test_other_mappings_and_empty_inputs_are_refused(lib, fn):
    mod = _lib(lib)
    x = mod.ones(2, requires_grad=True)
    out = (x * 2).sum()

    def call(inputs):
        if fn == "grad":
            return mod.autograd.grad(out, inputs, retain_graph=True)
        return out.backward(inputs=inputs, retain_graph=True)

    with pytest.raises(TypeError, match=f"`inputs` argument to `{fn}\\(\\)` must be a dict, "
                                        "not OrderedDict"):
        call(collections.OrderedDict(a=x))
    for empty in ([], {}, iter([])):
        with pytest.raises(RuntimeError, match=f"`inputs` argument to `{fn}\\(\\)` cannot "
                                               "be empty"):
            call(empty)
