"""The cache of 0-dim operand tensors for Python scalars (`_C/factory.scalar_tensor`)."""
import tensorlib
from tensorlib._C.factory import scalar_tensor


def test_a_recent_scalar_stays_cached_while_others_come_and_go():
    # 4 rounds of 301 new scalars pass the cache's size (512) at least twice: clearing the
    # whole cache when full would drop some round's first scalar within that round (a compiled
    # call then recorded a new fill each time and replayed calls later)
    probe = tensorlib.zeros(1)
    dev, dt = probe._device, probe._dtype
    for r in range(4):
        first = scalar_tensor(1e6 + r + 0.5, dt, dev)
        for i in range(300):
            scalar_tensor(2e6 + r * 1000 + i + 0.25, dt, dev)
        assert scalar_tensor(1e6 + r + 0.5, dt, dev) is first
        assert first.item() == 1e6 + r + 0.5


def test_a_scalar_in_use_survives_a_full_cache():
    # the cache full of others first (as after many tests): a scalar used between every
    # new one is the most recently used, so it is never the one evicted
    probe = tensorlib.zeros(1)
    dev, dt = probe._device, probe._dtype
    for i in range(600):
        scalar_tensor(3e6 + i + 0.25, dt, dev)
    kept = scalar_tensor(4e6 + 0.5, dt, dev)
    for i in range(1200):
        scalar_tensor(5e6 + i + 0.25, dt, dev)
        assert scalar_tensor(4e6 + 0.5, dt, dev) is kept


def test_a_scalar_first_met_while_a_capture_records_is_made_outside_it(device):
    """The capture's kernels record without running (a backward trace never runs them): a
    scalar first met there is filled at once with the real kernel and cached, so later
    eager ops read its value, and every compiled call sees the same constant."""
    value = 0.6180339 + len(device) * 1e-7
    f = tensorlib.compile(lambda x: x * value)
    x = tensorlib.ones(2, device=device)
    assert f(x).tolist() == [tensorlib.tensor(value).item()] * 2
    cached = scalar_tensor(value, x._dtype, x._device)
    assert cached.item() == tensorlib.tensor(value).item()
    assert scalar_tensor(value, x._dtype, x._device) is cached
