"""Tensor.numpy(): refused on a tensor that requires grad only while grad mode is on, as in
PyTorch (BoTorch reads parameters into NumPy under no_grad without detaching)."""
import numpy as np
import pytest

import tensorlib as tl


def test_numpy_of_a_tensor_requiring_grad_works_under_no_grad():
    x = tl.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    y = x * 3
    with tl.no_grad():
        np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
        np.testing.assert_array_equal(y.view(-1).numpy(), [3.0, 6.0])
    with pytest.raises(RuntimeError, match="requires grad"):
        y.numpy()
    with tl.inference_mode():
        assert x.numpy().tolist() == [1.0, 2.0]
