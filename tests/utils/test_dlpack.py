"""torch.utils.dlpack: the DLPack exchange under its utils name, and the device codes."""
import numpy as np
import pytest

import tensorlib
from tensorlib.utils import dlpack


def test_from_and_to_dlpack_share_memory():
    x = tensorlib.arange(4.0)
    y = dlpack.from_dlpack(dlpack.to_dlpack(x))
    y[0] = 7.0
    assert x.tolist() == [7.0, 1.0, 2.0, 3.0]
    assert dlpack.from_dlpack(np.arange(3)).tolist() == [0, 1, 2]


def test_device_codes_are_dlpacks():
    torch = pytest.importorskip("torch")
    import torch.utils.dlpack as theirs
    assert {k: int(v) for k, v in dlpack.DLDeviceType.__members__.items()} == \
        {k: int(v) for k, v in theirs.DLDeviceType.__members__.items()}
    assert tensorlib.ones(2).__dlpack_device__() == (dlpack.DLDeviceType.kDLCPU, 0)
