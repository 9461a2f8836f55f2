"""Memory formats against torch: the strides that contiguous/clone/to/empty/*_like and
elementwise ops give for channels_last and channels_last_3d, is_contiguous(memory_format=),
torch's errors, nn.Module.to(memory_format=), and conv/pool on channels-last inputs."""
import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F

torch = pytest.importorskip("torch")


def _pair(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return x, tl.tensor(x), torch.tensor(x)


def _fmt(lib, name):
    return getattr(lib, name)


@pytest.mark.parametrize("shape,name", [((2, 3, 4, 5), "channels_last"),
                                        ((2, 3, 2, 4, 5), "channels_last_3d"),
                                        ((2, 1, 4, 5), "channels_last"),
                                        ((2, 3, 1, 1), "channels_last")])
def test_layouts_and_strides_match_torch(device, shape, name):
    _, a, b = _pair(shape)
    a = a.to(device)
    ca, cb = a.contiguous(memory_format=_fmt(tl, name)), b.contiguous(memory_format=_fmt(torch, name))
    assert ca.stride() == cb.stride()
    for fmt in ("contiguous_format", "channels_last", "channels_last_3d"):
        assert ca.is_contiguous(memory_format=_fmt(tl, fmt)) == \
            cb.is_contiguous(memory_format=_fmt(torch, fmt))
    assert ca.is_contiguous() == cb.is_contiguous()
    copies = [lambda lib, t: t.clone(), lambda lib, t: lib.empty_like(t),
              lambda lib, t: lib.zeros_like(t), lambda lib, t: lib.ones_like(t),
              lambda lib, t: lib.full_like(t, 2.0), lambda lib, t: lib.randn_like(t),
              lambda lib, t: lib.rand_like(t), lambda lib, t: t.to(lib.float64),
              lambda lib, t: t.to(memory_format=lib.contiguous_format),
              lambda lib, t: t.clone(memory_format=lib.contiguous_format),
              lambda lib, t: t.exp(), lambda lib, t: t + 1, lambda lib, t: t * t,
              lambda lib, t: t + t.contiguous(), lambda lib, t: t.contiguous() + t,
              lambda lib, t: t * t.new_ones(shape[1:]), lambda lib, t: t > 0,
              lambda lib, t: lib.where(t > 0, t, 0.0)]
    for i, make in enumerate(copies):
        assert make(tl, ca).stride() == make(torch, cb).stride(), i
    np.testing.assert_allclose((ca * ca + 1).cpu().numpy(), (cb * cb + 1).numpy(), rtol=1e-6)
    assert tl.empty(shape, memory_format=_fmt(tl, name), device=device).stride() == \
        torch.empty(shape, memory_format=_fmt(torch, name)).stride()


def test_transposed_and_sliced_inputs_still_give_contiguous_copies():
    a = tl.randn(3, 4).t()
    assert (a + 1).is_contiguous() and a.clone().is_contiguous()


def test_errors_as_torch():
    x = tl.randn(2, 3)
    for op in (lambda: x.contiguous(memory_format=tl.channels_last),
               lambda: x.to(memory_format=tl.channels_last),
               lambda: tl.empty(2, 3, memory_format=tl.channels_last),
               lambda: tl.randn(2, 3, 4, 5).contiguous(memory_format=tl.channels_last_3d),
               lambda: tl.empty(2, 3, 4, 5, memory_format=tl.preserve_format)):
        with pytest.raises(RuntimeError, match="rank|Preserve"):
            op()
    assert x.is_contiguous(memory_format=tl.channels_last) is False
    with pytest.raises(TypeError):
        x.is_contiguous(memory_format="channels_last")
    assert repr(tl.channels_last) == "tensorlib.channels_last"
    assert isinstance(tl.preserve_format, tl.memory_format)


def test_gradients_flow_through_layout_changes():
    x = tl.randn(2, 3, 4, 5, requires_grad=True)
    y = x.contiguous(memory_format=tl.channels_last)
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-6)
    z = tl.randn(2, 3, 4, 5, requires_grad=True)
    z.to(memory_format=tl.channels_last).exp().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), np.exp(z.detach().numpy()), rtol=1e-6)


def test_module_to_memory_format_converts_4d_parameters_only():
    m = tl.nn.Sequential(tl.nn.Conv2d(3, 4, 3), tl.nn.Linear(4, 2))
    t = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Linear(4, 2))
    m.to(memory_format=tl.channels_last)
    t.to(memory_format=torch.channels_last)
    for (name, p), (_, q) in zip(m.named_parameters(), t.named_parameters()):
        assert p.stride() == q.stride(), name
        assert p.is_leaf and isinstance(p, tl.nn.Parameter)


def test_conv_and_pools_on_channels_last_inputs_match_torch(device):
    x, a, b = _pair((2, 3, 9, 8), seed=1)
    w = np.random.default_rng(2).standard_normal((4, 3, 3, 3)).astype(np.float32)
    a = a.to(device).contiguous(memory_format=tl.channels_last).requires_grad_()
    b = b.contiguous(memory_format=torch.channels_last).requires_grad_()
    wa = tl.tensor(w, device=device).contiguous(memory_format=tl.channels_last)
    wb = torch.tensor(w).contiguous(memory_format=torch.channels_last)
    outs = []
    for lib, fn, inp, weight in ((tl, F, a, wa), (torch, torch.nn.functional, b, wb)):
        y = fn.conv2d(inp, weight, padding=1)
        y = fn.max_pool2d(y, 2) + fn.avg_pool2d(y, 2) + fn.adaptive_avg_pool2d(y, (4, 4))
        y.sum().backward()
        outs.append((y.detach().cpu().numpy(), inp.grad.cpu().numpy()))
    for got, want in zip(*outs):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


_LAYOUT_OPS = {
    "conv2d": lambda F, x, w: F.conv2d(x, w, padding=1),
    "conv2d_bias": lambda F, x, w: F.conv2d(x, w, w[:, 0, 0, 0] * 0 + 1, stride=2),
    "conv2d_1x1": lambda F, x, w: F.conv2d(x, w[:, :, 1:2, 1:2].contiguous()),
    "conv_transpose2d": lambda F, x, w: F.conv_transpose2d(x, w.transpose(0, 1)[:, :3] * 1),
    "max_pool2d": lambda F, x, w: F.max_pool2d(x, 2),
    "max_pool2d_indices": lambda F, x, w: F.max_pool2d(x, 2, return_indices=True)[1],
    "avg_pool2d": lambda F, x, w: F.avg_pool2d(x, 3, stride=2, padding=1),
    "adaptive_avg_pool2d": lambda F, x, w: F.adaptive_avg_pool2d(x, (4, 3)),
    "adaptive_max_pool2d": lambda F, x, w: F.adaptive_max_pool2d(x, (4, 3)),
    "lp_pool2d": lambda F, x, w: F.lp_pool2d(x, 2, 2),
}


@pytest.mark.parametrize("layout", ["input", "weight", "neither"])
@pytest.mark.parametrize("name", sorted(_LAYOUT_OPS))
def test_conv_and_pool_outputs_take_torch_layout(device, name, layout):
    """channels-last in (input, or conv's weight) gives channels-last out, as torch's."""
    x, a, b = _pair((2, 3, 9, 8), seed=3)
    w = np.random.default_rng(4).standard_normal((4, 3, 3, 3)).astype(np.float32)
    wa, wb = tl.tensor(w, device=device), torch.tensor(w)
    a = a.to(device)
    if layout == "input":
        a, b = a.contiguous(memory_format=tl.channels_last), b.contiguous(
            memory_format=torch.channels_last)
    elif layout == "weight":
        wa, wb = wa.contiguous(memory_format=tl.channels_last), wb.contiguous(
            memory_format=torch.channels_last)
    got, want = _LAYOUT_OPS[name](F, a, wa), _LAYOUT_OPS[name](torch.nn.functional, b, wb)
    assert got.is_contiguous(memory_format=tl.channels_last) == \
        want.is_contiguous(memory_format=torch.channels_last)
    assert got.is_contiguous() == want.is_contiguous()
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
