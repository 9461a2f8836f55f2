"""nn.Sequential's fused Linear + ReLU (linear.fused_linear_relu): where no gradient is
wanted a plain unhooked Linear followed by an unhooked ReLU runs as one product with the bias
and relu in the GEMM's epilogue; its values equal the module-by-module ones, and hooks,
subclasses and gradients keep the module calls."""
import numpy as np
import pytest

import tensorlib


def _mlp_pair():
    tensorlib.manual_seed(3)
    return tensorlib.nn.Sequential(tensorlib.nn.Linear(300, 200), tensorlib.nn.ReLU(),
                                   tensorlib.nn.Linear(200, 64), tensorlib.nn.ReLU(inplace=True),
                                   tensorlib.nn.Linear(64, 5))


def _unfused(model, x):
    for module in model:
        x = module(x)
    return x


@pytest.mark.parametrize("shape", [(40, 300), (4, 10, 300)])
def test_sequential_linear_relu_fused_without_grad_gives_the_same_values(shape):
    # the fused product (bias and relu in the GEMM's epilogue) where no gradient is wanted
    model = _mlp_pair()
    x = tensorlib.randn(*shape)
    with tensorlib.no_grad():
        got = model(x)
        want = _unfused(model, x)
        strided = model(tensorlib.randn(300, shape[0]).t())     # not contiguous: unfused
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert tuple(got.shape) == shape[:-1] + (5,) and tuple(strided.shape) == (shape[0], 5)


def test_sequential_hooks_subclasses_and_gradients_keep_the_module_calls():
    model = _mlp_pair()
    x = tensorlib.randn(40, 300)
    seen = []
    handle = model[1].register_forward_hook(lambda m, i, o: seen.append("relu"))
    with tensorlib.no_grad():
        model(x)
    handle.remove()
    handle = model[0].register_forward_pre_hook(lambda m, i: seen.append("linear"))
    with tensorlib.no_grad():
        model(x)
    handle.remove()
    assert seen == ["relu", "linear"]

    class Scaled(tensorlib.nn.Linear):
        def forward(self, input):  # noqa: A002
            return super().forward(input) * 2
    scaled = tensorlib.nn.Sequential(Scaled(300, 20), tensorlib.nn.ReLU())
    scaled[0].load_state_dict(tensorlib.nn.Linear(300, 20).state_dict())
    with tensorlib.no_grad():
        np.testing.assert_array_equal(scaled(x).numpy(), _unfused(scaled, x).numpy())

    out = model(x)                       # with grad: the modules run and record the graph
    out.sum().backward()
    assert model[0].weight.grad is not None and out.grad_fn is not None
