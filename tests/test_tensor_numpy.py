"""Tensor.numpy(): refused on a tensor that requires grad only while grad mode is on, as in
PyTorch (BoTorch reads parameters into NumPy under no_grad without detaching). NumPy's ufuncs
on a tensor give a tensor back, and `x in t` searches the tensor, as PyTorch's do."""
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


def test_numpy_ufuncs_on_a_tensor_return_tensors_like_torch():
    """torchmetrics' tests pass tensors through scipy's expit and np.round and then call
    .numpy() on what comes back."""
    torch = pytest.importorskip("torch")
    special = pytest.importorskip("scipy.special")
    data = np.array([[-1.5, 0.25], [2.0, -0.75]], dtype=np.float32)
    cases = [lambda t: special.expit(t), lambda t: np.exp(t), lambda t: np.add(t, t),
             lambda t: np.round(t, 1), lambda t: np.maximum(t, 0), lambda t: np.isnan(t),
             lambda t: np.matmul(t[0], t[0]), lambda t: np.negative(t.long())]
    for case in cases:
        want = case(torch.tensor(data))
        got = case(tl.tensor(data))
        assert isinstance(got, tl.Tensor), case
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_in_searches_the_tensor_like_torch():
    torch = pytest.importorskip("torch")
    rows = np.arange(8.0).reshape(4, 2)
    for lib in (torch, tl):
        t = lib.tensor(rows)
        assert t[1] in t and lib.tensor([9.0, 9.0]) not in t
        assert 3 in t and 2.5 not in t and np.float64(7.0) in t
        with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
            "x" in t
