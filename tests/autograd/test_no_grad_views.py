"""Views made under no_grad, as PyTorch treats them (CreationMeta::NO_GRAD_MODE): such a view
of a tensor that requires grad reports requires_grad=True and is a leaf without a gradient
of its own; ops on it record nodes whose edge to it is empty, so no gradient reaches its base;
an in-place write into it (or into a view of it) while recording is refused, and so is using
it after its base was written in place."""
import pytest

import tensorlib as tl

torch = pytest.importorskip("torch")

VIEWS = {
    "slice": lambda x: x[0:2],
    "select": lambda x: x[1],
    "view": lambda x: x.view(6),
    "t": lambda x: x.t(),
    "expand": lambda x: x.expand(2, 3, 2),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "reshape": lambda x: x.reshape(6),
    "diagonal": lambda x: x.diagonal(),
    "as_strided": lambda x: x.as_strided((2,), (1,)),
    "split": lambda x: x.split(1)[1],
    "unbind": lambda x: x.unbind(1)[0],
    "ellipsis_none": lambda x: x[..., None],
    "movedim": lambda x: x.movedim(0, 1),
}
NOT_VIEWS = {
    "detach": lambda x: x.detach(),
    "data": lambda x: x.data,
    "clone": lambda x: x.clone(),
    "advanced_index": lambda x: x[[0, 1]],
    "mul": lambda x: x * 2,
}


def _no_grad_view(lib, make, base_kind="leaf"):
    """x requires grad; the view is made under no_grad from x, from x * 1 ("nonleaf"), or
    from x where x is itself a view of a tensor that does not ("view_leaf": PyTorch asks the
    root, so that view does not require grad)."""
    if base_kind == "view_leaf":
        x = lib.arange(6.0).reshape(3, 2).requires_grad_()
    else:
        x = lib.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], requires_grad=True)
    base = x * 1 if base_kind == "nonleaf" else x
    with lib.no_grad():
        v = make(base)
    return x, v


def _error(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e)
    return None


@pytest.mark.parametrize("base_kind", ["leaf", "nonleaf", "view_leaf"])
@pytest.mark.parametrize("name", sorted(VIEWS) + sorted(NOT_VIEWS))
def test_flags_match_torch(name, base_kind):
    make = {**VIEWS, **NOT_VIEWS}[name]
    got = [(v.requires_grad, v.is_leaf, v.grad_fn is None)
           for _, v in (_no_grad_view(lib, make, base_kind) for lib in (tl, torch))]
    assert got[0] == got[1]
    if base_kind != "view_leaf" and name in VIEWS:
        assert got[0] == (True, True, True)


@pytest.mark.parametrize("base_kind", ["leaf", "nonleaf"])
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_no_gradient_flows_to_the_base(name, base_kind):
    for lib in (tl, torch):
        x, v = _no_grad_view(lib, VIEWS[name], base_kind)
        out = (v * v).sum()
        assert out.requires_grad and out.grad_fn is not None
        out.backward()
        assert x.grad is None and v.grad is None
        with pytest.raises(RuntimeError, match="index 0 appears to not have been used"):
            lib.autograd.grad((v * v).sum(), x)


def test_requires_grad_flag_of_the_view():
    for lib in (tl, torch):
        x, v = _no_grad_view(lib, VIEWS["slice"])
        v.requires_grad_(False)
        assert v.requires_grad                  # its base's shows through
        v.requires_grad_(True)                  # now it keeps a gradient of its own
        (v * 3).sum().backward()
        assert v.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]] and x.grad is None


@pytest.mark.parametrize("write", ["mul_", "copy_", "fill_", "setitem", "add_other"])
@pytest.mark.parametrize("name", ["slice", "view", "split"])
def test_inplace_while_recording_is_refused(name, write):
    writes = {"mul_": lambda v, lib: v.mul_(2),
              "copy_": lambda v, lib: v.copy_(lib.ones_like(v)),
              "fill_": lambda v, lib: v.fill_(1.0),
              "setitem": lambda v, lib: v.__setitem__(0, 1.0),
              "add_other": lambda v, lib: v.add_(lib.ones(v.shape, requires_grad=True))}
    for lib in (tl, torch):
        x, v = _no_grad_view(lib, VIEWS[name])
        message = _error(lambda: writes[write](v, lib))
        assert message is not None and "created in no_grad mode and is being modified " \
            "inplace with grad mode enabled" in message, (lib.__name__, message)
        with lib.no_grad():                     # both under no_grad: allowed
            writes["mul_"](v, lib)


def test_view_of_a_no_grad_view():
    for lib in (tl, torch):
        x, v = _no_grad_view(lib, VIEWS["slice"])
        w = v[0:1]                              # made while recording: it has a grad_fn
        assert w.requires_grad and not w.is_leaf and w.grad_fn is not None
        w.sum().backward()
        assert x.grad is None
        message = _error(lambda: w.add_(1))
        assert message.startswith("Output 0 of ") and "is a view of a view which was created " \
            "in no_grad mode and is being modified inplace" in message


def test_view_of_a_plain_tensor_made_under_no_grad():
    for lib in (tl, torch):
        a = lib.zeros(3)
        with lib.no_grad():
            v = a[0:2]
        assert not v.requires_grad
        v.add_(1)                               # nothing requires grad: allowed
        message = _error(lambda: v.add_(lib.ones(2, requires_grad=True)))
        assert "created in no_grad mode and is being modified inplace" in message


@pytest.mark.parametrize("target", ["base", "view"])
def test_use_after_a_write_into_its_base_is_refused(target):
    for lib in (tl, torch):
        x, v = _no_grad_view(lib, VIEWS["slice"])
        with lib.no_grad():
            (x if target == "base" else v).add_(1)
        for use in (lambda: v * 2, lambda: v.grad_fn):
            message = _error(use)
            assert message is not None and "A view was created in no_grad mode and its base " \
                "or another view of its base has been modified inplace" in message


@pytest.mark.parametrize("factory", ["randn", "rand"])
def test_complex_random_leaf_is_not_a_view(factory):
    """Complex draws were views of float pairs: their no-grad views asked that root."""
    for lib in (tl, torch):
        z = getattr(lib, factory)(3, dtype=lib.complex64, requires_grad=True)
        assert z._base is None
        with lib.no_grad():
            parts = (z.real, lib.view_as_real(z), z[1:])
        assert [p.requires_grad for p in parts] == [True, True, True]
