"""torch.quasirandom.SobolEngine: Joe-Kuo's direction numbers, the Gray-code walk across
draws, fast_forward and reset, and (with PyTorch's random stream) scrambled points equal to
PyTorch's bit for bit."""
import numpy as np
import pytest

import tensorlib as tl
from tensorlib.quasirandom import SobolEngine

torch = pytest.importorskip("torch")


def test_first_points_are_the_van_der_corput_lattice():
    points = SobolEngine(3).draw(4)
    assert points.dtype == tl.float32
    assert points.tolist() == [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5],
                               [0.75, 0.25, 0.25], [0.25, 0.75, 0.75]]


def test_direction_numbers_equal_pytorchs_in_every_dimension():
    theirs = torch.zeros(SobolEngine.MAXDIM, SobolEngine.MAXBIT, dtype=torch.long)
    torch._sobol_engine_initialize_state_(theirs, SobolEngine.MAXDIM)
    ours = SobolEngine(SobolEngine.MAXDIM).sobolstate
    assert np.array_equal(ours.numpy(), theirs.numpy())


def _same_sequence(ours, theirs, dtype=None):
    tl_dtype = None if dtype is None else getattr(tl, str(dtype).split(".")[-1])
    for n in [1, 5, 0, 17, 64, 3]:
        x, y = ours.draw(n, dtype=tl_dtype), theirs.draw(n, dtype=dtype)
        assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
        assert np.array_equal(x.numpy(), y.numpy()), n
    ours.fast_forward(9)
    theirs.fast_forward(9)
    assert np.array_equal(ours.draw(10).numpy(), theirs.draw(10).numpy())
    ours.reset().fast_forward(4)
    theirs.reset().fast_forward(4)
    assert np.array_equal(ours.draw(8, dtype=tl_dtype).numpy(), theirs.draw(8, dtype=dtype).numpy())
    assert np.array_equal(ours.quasi.numpy(), theirs.quasi.numpy())


def test_unscrambled_sequence_equals_pytorchs_across_draws():
    _same_sequence(SobolEngine(11), torch.quasirandom.SobolEngine(11))
    _same_sequence(SobolEngine(4), torch.quasirandom.SobolEngine(4), torch.float64)


@pytest.mark.parametrize("dimension, seed, dtype", [(1, 12345, None), (7, 3, None),
                                                    (40, 0, "float64")])
def test_seeded_scrambled_sequence_equals_pytorchs(pytorch_stream, dimension, seed, dtype):
    dtype = None if dtype is None else getattr(torch, dtype)
    ours = SobolEngine(dimension, scramble=True, seed=seed)
    theirs = torch.quasirandom.SobolEngine(dimension, scramble=True, seed=seed)
    assert np.array_equal(ours.sobolstate.numpy(), theirs.sobolstate.numpy())
    assert np.array_equal(ours.shift.numpy(), theirs.shift.numpy())
    _same_sequence(ours, theirs, dtype)


def test_unseeded_scrambling_draws_from_the_default_generator(pytorch_stream):
    torch.manual_seed(5)
    tl.manual_seed(5)
    ours = SobolEngine(6, scramble=True).draw(33)
    assert np.array_equal(ours.numpy(), torch.quasirandom.SobolEngine(6, scramble=True).draw(33))


def test_out_and_draw_base2():
    engine = SobolEngine(2)
    out = tl.empty(0, dtype=tl.float64)
    assert engine.draw(3, out=out, dtype=tl.float64) is out and out.shape == (3, 2)
    with pytest.raises(ValueError, match="power of 2"):
        engine.draw_base2(2)
    engine.draw(1)
    assert engine.draw_base2(2).shape == (4, 2)
    assert repr(SobolEngine(2, scramble=True, seed=1)) == \
        "SobolEngine(dimension=2, scramble=True, seed=1)"


@pytest.mark.parametrize("dimension", [0, SobolEngine.MAXDIM + 1])
def test_dimension_out_of_range_is_refused(dimension):
    with pytest.raises(ValueError, match=r"\[1, 21201\]"):
        SobolEngine(dimension)
