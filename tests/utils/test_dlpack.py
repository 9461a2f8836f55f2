"""torch.utils.dlpack: the exchange functions under the path programs import them from
(PyG's map_index: `from torch.utils.dlpack import from_dlpack`), and DLPack's device codes."""
import numpy as np
import pytest

import tensorlib
from tensorlib.utils import dlpack

torch = pytest.importorskip("torch")


def test_device_codes_match_torch():
    import torch.utils.dlpack as theirs
    assert {k: int(v) for k, v in dlpack.DLDeviceType.__members__.items()} == \
        {k: int(v) for k, v in theirs.DLDeviceType.__members__.items()}


def test_round_trip_shares_memory():
    x = tensorlib.arange(6.0).view(2, 3)
    y = dlpack.from_dlpack(dlpack.to_dlpack(x))
    y[0, 0] = 7.0
    assert x[0, 0].item() == 7.0 and y.shape == (2, 3)
    z = dlpack.from_dlpack(np.arange(4, dtype=np.int32))
    assert z.dtype == tensorlib.int32 and z.tolist() == [0, 1, 2, 3]


def test_a_cpu_tensor_reports_dlpacks_cpu_code():
    assert tensorlib.ones(2).__dlpack_device__() == (dlpack.DLDeviceType.kDLCPU, 0)
