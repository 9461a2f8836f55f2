"""A view made before an in-place write through another view of the same base (or into the
base itself) must see the base's new history, as PyTorch regenerates a view's grad_fn when its
base's version moved on; otherwise the write's gradient is lost."""
import numpy as np
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

VIEWS = {
    "select": lambda b: b[:, 0],
    "slice": lambda b: b[1:, :2],
    "as_strided": lambda b: b.as_strided((2, 2), (1, 3), 1),
    "transpose": lambda b: b.t(),
    "view": lambda b: b.view(6),
    "diagonal": lambda b: b.diagonal(),
}


def _grad(lib, make_view, write, device=None):
    kwargs = {} if device is None else {"device": device}
    a = lib.tensor(np.arange(6.0).reshape(2, 3) + 1.0, requires_grad=True, **kwargs)
    b = a.clone()
    v1 = b[0]
    v2 = make_view(b)
    write(v1, b)
    (v2 * lib.arange(1.0, v2.numel() + 1, **kwargs).view(v2.shape)).sum().backward()
    return a.grad.tolist()


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_write_through_another_view(device, view):
    def write(v1, b):
        v1.mul_(2)
    assert _grad(tl, VIEWS[view], write, device) == _grad(torch, VIEWS[view], write)


@pytest.mark.parametrize("view", ["select", "transpose"])
def test_overwrite_through_another_view(device, view):
    def write(v1, b):
        v1.copy_(v1.detach() * 0 + 5)
    assert _grad(tl, VIEWS[view], write, device) == _grad(torch, VIEWS[view], write)


@pytest.mark.parametrize("view", ["slice", "view"])
def test_write_into_the_base_itself(device, view):
    def write(v1, b):
        b.mul_(3)
    assert _grad(tl, VIEWS[view], write, device) == _grad(torch, VIEWS[view], write)


def test_grad_fn_reports_the_new_history():
    a = tl.ones(2, 3, requires_grad=True)
    b = a.clone()
    v2 = b[:, 1]
    before = v2.grad_fn
    b[0].mul_(2)
    assert v2.grad_fn is not before
    assert v2.grad_fn is v2.grad_fn     # made again once, not on every read


def test_two_writes_chain():
    def run(lib):
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = a * 1
        v0, v1, col = b[0], b[1], b[:, 1]
        v0.mul_(3)
        v1.add_(v0)
        (col * col).sum().backward()
        return a.grad.tolist()
    assert run(tl) == run(torch)
