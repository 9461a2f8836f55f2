"""The check the CPU convolution kernels' tests share: an nn.Conv2d(cin, cout, 3, padding=1)
forward and all three gradients against torch's, on whatever kernel the case reaches."""
import numpy as np

import tensorlib as tl


def assert_conv_module_matches_torch(cin, cout, x_shape, dtype, grad_factor):
    """Values to 1e-5 (float32) or 1e-12 (float64), gradients to grad_factor times that."""
    import torch                  # the callers' modules skip without it
    tl.manual_seed(0)
    conv = tl.nn.Conv2d(cin, cout, 3, padding=1).to(dtype)
    x = tl.randn(*x_shape, dtype=dtype, requires_grad=True)
    ref = torch.nn.Conv2d(cin, cout, 3, padding=1).to(getattr(torch, dtype.name))
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(conv.weight.detach().numpy()))
        ref.bias.copy_(torch.tensor(conv.bias.detach().numpy()))
    rx = torch.tensor(x.detach().numpy(), requires_grad=True)
    y, ry = conv(x), ref(rx)
    tol = 1e-5 if dtype == tl.float32 else 1e-12
    np.testing.assert_allclose(y.detach().numpy(), ry.detach().numpy(), rtol=tol, atol=tol)
    g = np.random.default_rng(1).standard_normal(tuple(ry.shape))
    y.backward(tl.tensor(g, dtype=dtype))
    ry.backward(torch.tensor(g, dtype=ry.dtype))
    for a, r in ((x.grad, rx.grad), (conv.weight.grad, ref.weight.grad),
                 (conv.bias.grad, ref.bias.grad)):
        np.testing.assert_allclose(a.numpy(), r.numpy(), rtol=grad_factor * tol,
                                   atol=grad_factor * tol)
