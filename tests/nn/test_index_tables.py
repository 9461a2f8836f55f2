"""The index tables of pooling and resampling (nn/_functional/_index_tables.py): device
tensors made by ops, cached per geometry and device, usable by a later graph even when first
made under inference_mode; the fused kernels take them as tensors, never numpy arrays."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.nn._functional import _index_tables as T


def _dev(device):
    """The canonical device object the tables are keyed by (a tensor's `_device`)."""
    return tensorlib.empty(0, device=device)._device


def _windows_by_hand(size, out, k, s, p, d):
    return [[o * s - p + j * d if 0 <= o * s - p + j * d < size else -1 for j in range(k)]
            for o in range(out)]


@pytest.mark.parametrize("size,out,k,s,p,d", [(7, 4, 3, 2, 1, 1), (9, 3, 2, 2, 1, 3),
                                              (5, 5, 1, 1, 0, 1), (6, 2, 2, 4, 1, 1)])
def test_regular_windows_on_the_device_and_cached(device, size, out, k, s, p, d):
    dev = _dev(device)
    w = T.regular_windows(size, out, k, s, p, d, dev)
    assert w.positions._device is dev and w.positions.dtype == tensorlib.int64
    expected = _windows_by_hand(size, out, k, s, p, d)
    assert w.positions.tolist() == expected
    assert w.all_valid == all(v >= 0 for row in expected for v in row)
    assert w.any_empty == any(all(v < 0 for v in row) for row in expected)
    assert T.regular_windows(size, out, k, s, p, d, dev) is w


@pytest.mark.parametrize("size,out", [(10, 4), (3, 7), (9, 9), (1, 3)])
def test_adaptive_windows(device, size, out):
    w = T.adaptive_windows(size, out, _dev(device))
    rows = [[v for v in row if v >= 0] for row in w.positions.tolist()]
    assert rows == [list(range((o * size) // out, -(-(o + 1) * size // out)))
                    for o in range(out)]


@pytest.mark.parametrize("geometry", [(7, 4, 3, 2, 1, 1), (9, 3, 2, 2, 1, 3), (8, 8, 3, 1, 1, 1)])
def test_cover_lists_the_windows_of_each_input_position(device, geometry):
    w = T.regular_windows(*geometry, _dev(device))
    offsets, outputs = (t.tolist() for t in w.cover())
    table = w.positions.tolist()
    for p in range(w.size):
        holding = [o for o, row in enumerate(table) if p in row]
        assert outputs[offsets[p]:offsets[p + 1]] == holding


def test_tables_first_made_under_inference_mode_serve_a_later_graph(device):
    # an odd geometry no other test uses, so that the tables are made right here
    shape, kw = (1, 2, 13, 17), dict(kernel_size=(3, 2), stride=(3, 2), padding=1)
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with tensorlib.inference_mode():
        F.max_pool3d(tensorlib.tensor(a, device=device).unsqueeze(2), (1, 3, 2), (1, 3, 2),
                     (0, 1, 1))
        F.interpolate(tensorlib.tensor(a, device=device), size=(11, 19), mode="bilinear")
    x = tensorlib.tensor(a, device=device, requires_grad=True)
    F.max_pool3d(x.unsqueeze(2), (1, 3, 2), (1, 3, 2), (0, 1, 1)).sum().backward()
    assert x.grad.sum().item() == pytest.approx(5 * 9 * 2)     # one winner per window
    x.grad = None
    F.interpolate(x, size=(11, 19), mode="bilinear").sum().backward()
    assert x.grad is not None
    torch = pytest.importorskip("torch")
    ref = torch.tensor(a, requires_grad=True)
    torch.nn.functional.interpolate(ref, size=(11, 19), mode="bilinear").sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), ref.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_cpu_max_pool_kernel_takes_tensors_not_numpy():
    from tensorlib._C.device import canonical
    kernel = canonical("cpu")._kernels["max_pool"]
    x = tensorlib.randn(1, 1, 4, 4)
    values = tensorlib.empty((1, 1, 2, 2))
    indices = tensorlib.empty((1, 1, 2, 2), dtype=tensorlib.int64)
    w = T.regular_windows(4, 2, 2, 2, 0, 1, x._device)
    assert kernel(values, indices, x, (w.positions, w.positions))
    np.testing.assert_array_equal(values.numpy(), F.max_pool2d(x, 2).numpy())
    with pytest.raises(TypeError):
        kernel(values, indices, x, (w.positions.numpy(), w.positions.numpy()))
