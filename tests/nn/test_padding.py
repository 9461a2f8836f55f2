"""F.pad in every mode and the padding modules: forward against PyTorch on each device,
padding of more trailing dims than PyTorch allows against numpy, gradcheck in float64."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(13)
NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}

CASES = [  # (shape, pad) combinations PyTorch accepts in every mode, negative pads included
    ((2, 5), (2, 1)), ((2, 3, 5), (0, 3)), ((2, 3, 5), (-1, 2)), ((3, 4, 5), (1, 2, 3, 0)),
    ((2, 3, 4, 5), (2, 0, 1, 1)), ((2, 3, 4, 5), (1, 1, 2, 2, 0, 1)),
    ((1, 2, 3, 4, 5), (1, 2, -1, 1, 2, 0)),
]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pads", CASES)
def test_pad_matches_torch(device, mode, shape, pads):
    a = RNG.standard_normal(shape).astype(np.float32)
    ours = F.pad(tensorlib.tensor(a, device=device), pads, mode=mode)
    ref = TF.pad(torch.tensor(a), pads, mode=mode)
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(ours.cpu().numpy(), ref.numpy())


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_any_number_of_dims(mode):
    """Beyond PyTorch's 1-3 trailing dims: a 1-D input and all four dims of a 4-D one."""
    for shape, pads in [((6,), (2, 3)), ((3, 4, 5, 6), (1, 2, 2, 1, 0, 2, 1, 1))]:
        a = RNG.standard_normal(shape)
        width = [(0, 0)] * len(shape)
        for i in range(len(pads) // 2):
            width[len(shape) - 1 - i] = (pads[2 * i], pads[2 * i + 1])
        ours = F.pad(tensorlib.tensor(a), pads, mode=mode)
        np.testing.assert_array_equal(ours.numpy(), np.pad(a, width, mode=NP_MODE[mode]))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradcheck(mode):
    x = tensorlib.tensor(RNG.standard_normal((2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda t: F.pad(t, (2, 1, -1, 2), mode=mode), (x,))
    assert gradcheck(lambda t: F.pad(t, (3, 3), mode=mode), (x,))


def test_pad_errors_match_torch():
    x, tx = tensorlib.ones(2, 3, 4), torch.ones(2, 3, 4)
    for args, kw in [(((1,),), {}), (((1, 1, 1, 1, 1, 1, 1, 1),), {}),
                     (((4, 0),), {"mode": "reflect"}), (((5, 0),), {"mode": "circular"}),
                     (((1, 1),), {"mode": "reflect", "value": 1.0}),
                     (((-3, -2),), {}), (((1, 1),), {"mode": "wrap"})]:
        with pytest.raises(Exception) as ref:
            TF.pad(tx, *args, **kw)
        with pytest.raises(ref.type):
            F.pad(x, *args, **kw)


MODULES = [("ConstantPad1d", (2, 3.5), (2, 3, 4)), ("ConstantPad2d", ((1, 0, 2, 1), -1.0),
                                                     (2, 3, 4)),
           ("ConstantPad3d", (1, 2.0), (1, 2, 3, 4)), ("ZeroPad1d", ((2, 1),), (3, 4)),
           ("ZeroPad2d", (1,), (2, 3, 4)), ("ZeroPad3d", ((1, 0, 0, 1, 1, 1),), (2, 3, 3, 4)),
           ("ReflectionPad1d", (2,), (2, 3, 4)), ("ReflectionPad2d", ((1, 2, 0, 1),), (3, 4, 5)),
           ("ReflectionPad3d", (1,), (1, 2, 3, 4, 5)), ("ReplicationPad1d", ((3, 1),), (3, 4)),
           ("ReplicationPad2d", (2,), (1, 2, 3, 4)), ("ReplicationPad3d", (1,), (2, 3, 4, 5)),
           ("CircularPad1d", ((1, 3),), (2, 4)), ("CircularPad2d", (1,), (1, 2, 3, 4)),
           ("CircularPad3d", ((1, 0, 1, 2, 0, 1),), (2, 3, 4, 5))]


@pytest.mark.parametrize("name,args,shape", MODULES)
def test_padding_modules_match_torch(device, name, args, shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    ours, ref = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(ref)
    assert ours.padding == ref.padding
    out = ours(tensorlib.tensor(a, device=device))
    np.testing.assert_array_equal(out.cpu().numpy(), ref(torch.tensor(a)).numpy())
    assert nn.modules.padding.__name__ == "tensorlib.nn.modules.padding"


def test_circular_pad_checks_rank():
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        nn.CircularPad2d(1)(tensorlib.ones(4, 4))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        torch.nn.CircularPad1d(1)(torch.ones(4))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.CircularPad1d(1)(tensorlib.ones(4))
