"""In-place safety: the version counter catches saved tensors modified in place, in-place
ops on leaves that require grad are refused, in-place ops on non-leaves are differentiated
(compared with PyTorch), and writes through views (being implemented); on every test
device."""
import numpy as np
import pytest

import tensorlib as tl

from ._util import close, leaf, npy, require_float64


def test_version_counter_bumps(device):
    x = tl.tensor([1.0, 2.0], device=device)
    v0 = x._version
    x.add_(1)
    x.mul_(2)
    assert x._version == v0 + 2
    view = x[0:1]
    view.add_(1)
    assert x._version == v0 + 3                     # shared with views


@pytest.mark.parametrize("saver, node", [
    (lambda y: y * y, "MulBackward0"),
    (lambda y: y.sin(), "SinBackward0"),
    (lambda y: y / 2 + 1 / y, "DivBackward0"),
    (lambda y: y.log(), "LogBackward0"),
])
def test_saved_input_modified_in_place_raises_naming_op(saver, node, device):
    x = leaf([1.0, 2.0], device=device)
    y = x * 2
    z = saver(y)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as err:
        z.sum().backward()
    msg = str(err.value)
    assert node in msg
    assert "version 1" in msg and "expected version 0" in msg


def test_saved_output_modified_in_place_raises(device):
    x = leaf([1.0, 2.0], device=device)
    e = x.exp()                                      # exp saves its output
    e.mul_(2)
    with pytest.raises(RuntimeError, match="ExpBackward0"):
        e.sum().backward()


def test_modification_of_unsaved_tensor_is_fine(device):
    x = leaf([1.0, 2.0], device=device)
    y = x * 2
    z = y + 3                                        # add saves nothing
    y.mul_(100)
    z.sum().backward()
    close(x.grad, [2.0, 2.0])


def test_in_place_on_leaf_requiring_grad_raises(device):
    x = leaf([1.0, 2.0], device=device)
    for op in (lambda: x.add_(1), lambda: x.mul_(2), lambda: x.sub_(x),
               lambda: x.fill_(0), lambda: x.zero_(),
               lambda: x.copy_(tl.ones(2, device=device))):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            op()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x += 1


def test_in_place_on_leaf_allowed_without_grad(device):
    x = leaf([1.0, 2.0], device=device)
    with tl.no_grad():
        x.mul_(3)
    close(x, [3.0, 6.0])
    assert x.is_leaf and x.requires_grad


def test_in_place_on_non_leaf_changes_grad_fn(device):
    x = leaf([1.0, 2.0], device=device)
    y = x * 2
    before = y.grad_fn
    y.add_(1)
    assert y.grad_fn is not before and y.grad_fn.name() == "AddBackward0"
    assert not y.is_leaf


def test_in_place_into_tensor_not_requiring_grad_starts_history(device):
    x = leaf([1.0, 2.0], device=device)
    buf = tl.zeros(2, dtype=tl.float64, device=device)
    buf.add_(x)
    assert buf.requires_grad and not buf.is_leaf
    (buf * 3).sum().backward()
    close(x.grad, [3.0, 3.0])


def test_copy_into_non_leaf_and_fill(device):
    x, y = leaf([1.0, 2.0], device=device), leaf([3.0, 4.0], device=device)
    z = x * 1
    z.copy_(y * 2)
    (z * z).sum().backward()
    assert x.grad is None or np.all(npy(x.grad) == 0)
    close(y.grad, 8 * np.array([3.0, 4.0]))
    w = x * 1
    w.fill_(2.0)
    out = (w * x).sum()
    out.backward()
    close(x.grad, [2.0, 2.0])




def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("program", [
    "y = x * 2; y.add_(1); y.mul_(3); y.sub_(x); y.div_(2); y.pow_(2); out = y",
    "y = x * 2; z = y.clone(); y.mul_(z); out = y",
    "y = x.exp(); y.add_(x); y.mul_(x); out = y",
    "y = x.sin(); y.add_(x); y.mul_(x); out = y",
    "y = x.sin(); y.add_(x); y.mul_(2); out = y * x",
    "y = x * 1; y += x; y *= x; y -= 1; y /= x + 2; out = y",
    "y = x + 0; y.mul_(2); y.pow_(3); y.div_(x); out = y * y",
    "y = x * 3; y.fill_(1.5); y.mul_(x); out = y",
    "y = x * 2; y.sin_(); y.exp_(); out = y",
    "y = x * 1; y.abs_(); y.sqrt_(); out = y * x",
    "y = x * 1; y.clamp_(-1, 1); y.neg_(); out = y",
])
def test_in_place_on_non_leaf_matches_torch(program, device):
    torch = _torch()
    require_float64(device)
    values = [0.5, 1.5, -2.0]
    results = []
    for lib in (tl, torch):
        on = {"device": device} if lib is tl else {}
        x = lib.tensor(values, dtype=lib.float64, requires_grad=True, **on)
        env = {"x": x}
        exec(program, {}, env)
        try:
            env["out"].sum().backward()
        except RuntimeError as e:          # both must refuse (saved value overwritten)
            assert "modified by an inplace operation" in str(e)
            results.append(None)
            continue
        results.append((env["out"].detach().cpu().numpy(), x.grad.cpu().numpy()))
    assert (results[0] is None) == (results[1] is None), results
    if results[0] is None:
        return
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


def test_mul_in_place_by_itself_raises_like_torch(device):
    # y.mul_(y) saves y as the `other` operand and then overwrites it: torch raises too
    x = leaf([1.0, 2.0, 3.0], device=device)
    y = x * 2
    y.add_(1)
    y.mul_(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_result_gradcheck(device):
    def f(x):
        y = x * 1.5
        y.add_(x)
        y.mul_(x)
        return y
    assert tl.autograd.gradcheck(f, (leaf([0.3, -0.7], device=device),))


def test_setitem_on_non_leaf_view_matches_torch(device):
    torch = _torch()
    require_float64(device)
    results = []
    for lib in (tl, torch):
        on = {"device": device} if lib is tl else {}
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True, **on)
        w = lib.tensor([7.0, 8.0], dtype=lib.float64, requires_grad=True, **on)
        y = x * 2
        y[0] = w * 3
        y[1, 1] = 5.0
        (y * y).sum().backward()
        results.append((x.grad.cpu().numpy(), w.grad.cpu().numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_setitem_on_view_current_behaviour(device):
    """Documents what an in-place write through a view does today: either differentiated
    correctly (views implemented) or NotImplementedError (older behaviour)."""
    x = leaf([[1.0, 2.0], [3.0, 4.0]], device=device)
    y = x * 1
    try:
        y[0] = 5.0
    except NotImplementedError:
        return
    y.sum().backward()
    close(x.grad, [[0.0, 0.0], [1.0, 1.0]])


def test_in_place_on_view_of_leaf_raises(device):
    x = leaf([[1.0, 2.0], [3.0, 4.0]], device=device)
    with pytest.raises((RuntimeError, NotImplementedError)):
        x[0].add_(1)
    with pytest.raises((RuntimeError, NotImplementedError)):
        x[0] = 1.0
