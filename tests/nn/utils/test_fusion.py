"""nn.utils.fusion against PyTorch with the same weights and running statistics: the fused
conv / conv-transpose / linear layer gives the unfused pair's output and torch's fused
weights; PyTorch's errors; the deprecated stateless.functional_call; on every device."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(21)


def npy(t):
    return t.detach().cpu().numpy()


def same(tm, m, device):
    state = {k: tensorlib.tensor(v.numpy()) for k, v in tm.state_dict().items()}
    m.load_state_dict(state)
    return m.to(device).eval()


def trained_bn(lib_bn, n):
    with torch.no_grad():
        lib_bn.running_mean.copy_(torch.tensor(RNG.standard_normal(n)))
        lib_bn.running_var.copy_(torch.tensor(RNG.random(n) + 0.5))
        lib_bn.weight.copy_(torch.tensor(RNG.standard_normal(n)))
        lib_bn.bias.copy_(torch.tensor(RNG.standard_normal(n)))
    return lib_bn.eval()


@pytest.mark.parametrize("kind", ["conv", "conv_transpose", "linear"])
def test_fused_layer_matches_the_pair_and_torch(device, kind):
    torch.manual_seed(0)
    if kind == "linear":
        tlayer, layer, shape = torch.nn.Linear(3, 4).double(), nn.Linear(3, 4).double(), (2, 3)
    elif kind == "conv":
        tlayer, layer, shape = torch.nn.Conv2d(2, 4, 3).double(), nn.Conv2d(2, 4, 3).double(), \
            (1, 2, 5, 5)
    else:
        tlayer, layer, shape = torch.nn.ConvTranspose1d(2, 4, 3).double(), \
            nn.ConvTranspose1d(2, 4, 3).double(), (1, 2, 5)
    tbn = trained_bn(torch.nn.BatchNorm1d(4).double(), 4)
    bn = same(tbn, nn.BatchNorm1d(4).double(), device)
    tlayer.eval()
    layer = same(tlayer, layer, device)
    if kind == "linear":
        tfused = torch.nn.utils.fuse_linear_bn_eval(tlayer, tbn)
        fused = nn.utils.fuse_linear_bn_eval(layer, bn)
    else:
        transpose = kind == "conv_transpose"
        tfused = torch.nn.utils.fuse_conv_bn_eval(tlayer, tbn, transpose=transpose)
        fused = nn.utils.fuse_conv_bn_eval(layer, bn, transpose=transpose)
    assert isinstance(fused.weight, nn.Parameter) and fused.weight.requires_grad
    np.testing.assert_allclose(npy(fused.weight), tfused.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(npy(fused.bias), tfused.bias.detach().numpy(), rtol=1e-12)
    x = tensorlib.tensor(RNG.standard_normal(shape), device=device)
    pair = layer(x)
    pair = bn(pair if kind != "conv" else pair.flatten(2)).reshape(pair.shape)
    np.testing.assert_allclose(npy(fused(x)), npy(pair), rtol=1e-10, atol=1e-12)


def test_errors_and_stateless():
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(2, 3), nn.BatchNorm1d(3))
    with pytest.raises(AssertionError, match="linear.out_features=3 and bn.num_features=2"):
        nn.utils.fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(2).eval())
    lin = nn.Linear(2, 1)
    weights = {"weight": tensorlib.ones(1, 2), "bias": tensorlib.zeros(1)}
    with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
        out = nn.utils.stateless.functional_call(lin, weights, (tensorlib.ones(3, 2),))
    np.testing.assert_array_equal(npy(out), np.full((3, 1), 2.0))
