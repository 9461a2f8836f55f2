"""A backward formula that returns fewer gradients than its op has tensor inputs: the inputs
left out get none, and the other paths into them still deliver theirs. (x.to(other) once
recorded `other` as an input of its copy, whose formula answers x alone: every gradient
through `other`'s history was lost, BoTorch's qExpectedImprovement went flat.)"""
import numpy as np

import tensorlib as tl
from tensorlib._C.autograd import FORMULAS, formula
from tensorlib.ops._opdef import differentiable

_NAME = "test_only_first_input_formula"


@differentiable(_NAME)
def _first_of_two(x, y):
    return x.clone()


def test_inputs_a_formula_leaves_out_still_get_their_other_paths():
    formula(_NAME)(lambda ctx, g: (g,))
    try:
        a = tl.tensor([1.0, 2.0], requires_grad=True)
        b = tl.tensor([3.0, 4.0], requires_grad=True)
        shared = b * 1.0                      # a node below both the op and the second path
        out = _first_of_two(a * 1.0, shared) + shared * 2.0
        grad_a, grad_b = tl.autograd.grad(out.sum(), (a, b))
        np.testing.assert_array_equal(grad_a.numpy(), [1.0, 1.0])
        np.testing.assert_array_equal(grad_b.numpy(), [2.0, 2.0])
    finally:
        FORMULAS.pop(_NAME, None)


def test_to_other_takes_no_gradient_path_through_other():
    x = tl.tensor([[-2.0], [0.8]], dtype=tl.float64, requires_grad=True)
    obj = x * 1.0
    threshold = tl.tensor(0.0).unsqueeze(-1).to(obj)
    assert threshold.dtype is tl.float64 and not threshold.requires_grad
    (grad,) = tl.autograd.grad((obj - threshold).clamp_min(0).sum(), x)
    np.testing.assert_array_equal(grad.numpy(), [[0.0], [1.0]])
    assert obj.to(tl.tensor(1, dtype=tl.float32)).grad_fn is not None
