"""use_deterministic_algorithms and torch.utils.deterministic.fill_uninitialized_memory:
under the mode, empty and its relatives fill as torch's do, on every device; with the switch
off (or the mode off) they do not; and the scatter-style ops that torch refuses on CUDA run
here (our kernels are deterministic) and give identical results run to run."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib import _global_flags

torch = pytest.importorskip("torch")


@pytest.fixture
def deterministic():
    saved = (_global_flags._deterministic, _global_flags._warn_only,
             tl.utils.deterministic.fill_uninitialized_memory)
    tl.use_deterministic_algorithms(True)
    torch_saved = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    yield
    tl.use_deterministic_algorithms(saved[0], warn_only=saved[1])     # tells the backends
    tl.utils.deterministic.fill_uninitialized_memory = saved[2]
    torch.use_deterministic_algorithms(torch_saved)


DTYPES = ["float32", "float64", "int64", "int32", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_family_fills_as_torch(device, deterministic, dtype):
    lt, tt = getattr(tl, dtype), getattr(torch, dtype)
    ref = tl.ones(2, 3, dtype=lt, device=device)
    made = [tl.empty(2, 3, dtype=lt, device=device), tl.empty_like(ref), ref.new_empty(4),
            tl.empty_strided((2, 2), (1, 2), dtype=lt, device=device),
            tl.empty(1, 2, 2, 2, dtype=lt, device=device, memory_format=tl.channels_last)]
    want = torch.empty(3, dtype=tt).numpy()[0]
    for t in made:
        np.testing.assert_array_equal(t.cpu().numpy(), np.full(t.shape, want))
    assert tl.utils.deterministic.fill_uninitialized_memory is \
        torch.utils.deterministic.fill_uninitialized_memory


def test_complex_empty_is_nan_and_the_switch_turns_filling_off(deterministic):
    assert np.isnan(tl.empty(2, dtype=tl.complex64).numpy()).all()
    tl.utils.deterministic.fill_uninitialized_memory = False
    tl.empty(3, dtype=tl.int64)                        # not filled: any values
    tl.use_deterministic_algorithms(False)
    tl.utils.deterministic.fill_uninitialized_memory = True
    assert tl.zeros(3).new_empty(3).shape == (3,)


def test_accumulating_ops_run_and_repeat_exactly(device, deterministic):
    rng = np.random.default_rng(0)
    src = tl.tensor(rng.standard_normal(4000).astype(np.float32), device=device)
    index = tl.tensor(rng.integers(0, 7, 4000), device=device)
    runs = [(tl.zeros(7, device=device).scatter_add_(0, index, src).cpu().numpy(),
             tl.zeros(7, device=device).index_add_(0, index, src).cpu().numpy(),
             tl.zeros(7, device=device).index_put_((index,), src, accumulate=True).cpu().numpy())
            for _ in range(2)]
    for first, second in zip(*runs):
        np.testing.assert_array_equal(first, second)
    want = np.zeros(7)
    np.add.at(want, index.cpu().numpy(), src.cpu().numpy().astype(np.float64))
    np.testing.assert_allclose(runs[0][0], want, rtol=1e-4, atol=1e-4)
