"""The CPU backend's fused grid_sample kernels (grid_kernels.pyx) against torch: strided
inputs, one-sided gradients, non-finite coordinates, and a differentiable backward (through
the composite path) for double backward."""
import itertools

import numpy as np
import pytest

import tensorlib as tl
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

MODES = list(itertools.product(("bilinear", "nearest"), ("zeros", "border", "reflection"),
                               (False, True)))


def _layouts(lib, x, g, requires_grad):
    """input channels_last-strided, grid with its x/y components transposed in memory."""
    xt = lib.tensor(x.transpose(0, 2, 3, 1).copy()).permute(0, 3, 1, 2)
    gt = lib.tensor(g.transpose(3, 0, 1, 2).copy()).permute(1, 2, 3, 0)
    xt.requires_grad_(requires_grad[0])
    gt.requires_grad_(requires_grad[1])
    return xt, gt


@pytest.mark.parametrize("mode,pad,ac", MODES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_kernel_on_strided_inputs_matches_torch(mode, pad, ac, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 5, 7)).astype(dtype)
    g = rng.uniform(-1.3, 1.3, (2, 4, 6, 2)).astype(dtype)
    go = rng.standard_normal((2, 3, 4, 6)).astype(dtype)
    lx, lg = _layouts(tl, x, g, (True, True))
    tx, tg = _layouts(torch, x, g, (True, True))
    lo = F.grid_sample(lx, lg, mode=mode, padding_mode=pad, align_corners=ac)
    to = torch.nn.functional.grid_sample(tx, tg, mode=mode, padding_mode=pad, align_corners=ac)
    assert "Fused" in type(lo.grad_fn).__name__
    lo.backward(tl.tensor(go))
    to.backward(torch.tensor(go))
    tol = 1e-12 if dtype == "float64" else 2e-5
    for got, want in ((lo, to), (lx.grad, tx.grad), (lg.grad, tg.grad)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol,
                                   atol=tol)


@pytest.mark.parametrize("wants", [(True, False), (False, True)])
def test_one_sided_gradients(wants):
    rng = np.random.default_rng(1)
    x, g = rng.standard_normal((3, 2, 6, 5)), rng.uniform(-1.2, 1.2, (3, 4, 4, 2))
    lx, lg = tl.tensor(x, requires_grad=wants[0]), tl.tensor(g, requires_grad=wants[1])
    tx, tg = torch.tensor(x, requires_grad=wants[0]), torch.tensor(g, requires_grad=wants[1])
    F.grid_sample(lx, lg, align_corners=False).pow(2).sum().backward()
    torch.nn.functional.grid_sample(tx, tg, align_corners=False).pow(2).sum().backward()
    for mine, theirs, want in ((lx, tx, wants[0]), (lg, tg, wants[1])):
        if want:
            np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), atol=1e-12)
        else:
            assert mine.grad is None


@pytest.mark.parametrize("mode,pad,ac", MODES)
def test_non_finite_and_far_coordinates_as_torch(mode, pad, ac):
    inf, nan = float("inf"), float("nan")
    x = np.arange(12.0, dtype=np.float32).reshape(1, 1, 3, 4)
    g = np.array([[[[1e20, 0.0], [-1e20, 0.3], [inf, 0.0], [nan, 0.0], [0.2, -inf],
                    [0.3, nan], [0.1, -0.4]]]], dtype=np.float32)
    kw = dict(mode=mode, padding_mode=pad, align_corners=ac)
    got = F.grid_sample(tl.tensor(x), tl.tensor(g), **kw).numpy()
    want = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), **kw).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


def test_gradcheck_and_double_backward_through_the_composite_path():
    rng = np.random.default_rng(2)
    x = tl.tensor(rng.standard_normal((1, 2, 4, 4)), requires_grad=True)
    g = tl.tensor(rng.uniform(-0.9, 0.9, (1, 3, 2, 2)), requires_grad=True)

    def fn(a, b):
        return F.grid_sample(a, b, "bilinear", "reflection", True)
    assert gradcheck(fn, [x, g])
    assert gradgradcheck(fn, [x, g])


def test_empty_batch_and_empty_grid():
    x = tl.zeros((0, 2, 3, 3))
    assert F.grid_sample(x, tl.zeros((0, 2, 2, 2)), align_corners=False).shape == (0, 2, 2, 2)
    y = tl.ones((1, 2, 3, 3), requires_grad=True)
    out = F.grid_sample(y, tl.zeros((1, 0, 4, 2)), align_corners=False)
    assert out.shape == (1, 2, 0, 4)
    out.sum().backward()
    assert float(y.grad.abs().sum()) == 0.0


@pytest.mark.parametrize("grid_hw", [(1, 1), (3, 5), (9, 15), (16, 16), (13, 20)])
@pytest.mark.parametrize("pad,ac", [("zeros", False), ("zeros", True), ("border", False),
                                    ("border", True)])
def test_float32_blocks_and_lane_tails_match_torch(grid_hw, pad, ac):
    """Grids of 1 to 260 points: whole 64-point blocks, and 16-lane vectors with tails
    (the AVX-512 taps and gathers), on contiguous float32 tensors, some taps outside the
    input and some coordinates on the edges (-1, 1) where border padding clips."""
    rng = np.random.default_rng(sum(grid_hw))
    x = rng.standard_normal((2, 5, 11, 13)).astype(np.float32)
    g = rng.uniform(-1.2, 1.2, (2,) + grid_hw + (2,)).astype(np.float32)
    g.reshape(-1)[::7] = np.float32(1.0)
    g.reshape(-1)[3::11] = np.float32(-1.0)
    go = rng.standard_normal((2, 5) + grid_hw).astype(np.float32)
    lx, lg = tl.tensor(x, requires_grad=True), tl.tensor(g, requires_grad=True)
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    lo = F.grid_sample(lx, lg, padding_mode=pad, align_corners=ac)
    to = torch.nn.functional.grid_sample(tx, tg, padding_mode=pad, align_corners=ac)
    lo.backward(tl.tensor(go))
    to.backward(torch.tensor(go))
    for got, want in ((lo, to), (lx.grad, tx.grad), (lg.grad, tg.grad)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=2e-5,
                                   atol=2e-5)


def _channels_last_copy_cases():
    """(N, C, H, W, Ho, Wo): C a multiple of 16 or not, whole and partial 16x16 tiles, one
    batch or several (threads then own whole batches)."""
    return [(4, 16, 16, 32, 9, 15), (1, 20, 11, 33, 13, 20), (5, 8, 7, 40, 16, 16),
            (3, 35, 18, 17, 5, 7)]


@pytest.mark.parametrize("n,c,h,w,ho,wo", _channels_last_copy_cases())
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "w_strided"])
@pytest.mark.parametrize("pad,ac", [("zeros", False), ("zeros", True), ("border", False)])
@pytest.mark.parametrize("threads", [1, 2])
def test_float32_channels_last_copy_path_is_bit_identical(n, c, h, w, ho, wo, layout, pad, ac,
                                                          threads):
    """From 8 channels the float32 bilinear forward samples a channels-last copy of the
    input (or a channels-last input in place): each output is the same four products
    summed in the same order as the per-channel path (one channel at a time, as a
    1-channel input takes), so bit-identical to it, NaN and far coordinates included; and
    within torch's tolerance."""
    from tensorlib_cpu import fastreduce
    rng = np.random.default_rng(n * 1000 + c)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    g = rng.uniform(-1.2, 1.2, (n, ho, wo, 2)).astype(np.float32)
    g.reshape(-1)[::7] = np.float32(1.0)
    g.reshape(-1)[3::11] = np.float32(-1.0)
    g.reshape(-1)[5::37] = np.float32(np.nan)
    g.reshape(-1)[9::41] = np.float32(3e20)
    g.reshape(-1)[13::43] = np.float32(-np.inf)
    if layout == "channels_last":
        lx = tl.tensor(x.transpose(0, 2, 3, 1).copy()).permute(0, 3, 1, 2)
    elif layout == "w_strided":
        wide = np.repeat(x, 2, axis=3)
        lx = tl.tensor(wide)[..., ::2]
    else:
        lx = tl.tensor(x)
    lg = tl.tensor(g)
    before = tl.get_num_threads()
    pinned = fastreduce.use_adaptive_threads(False)
    tl.set_num_threads(threads)
    try:
        with tl.no_grad():
            got = F.grid_sample(lx, lg, padding_mode=pad, align_corners=ac).numpy()
            per_channel = np.concatenate(
                [F.grid_sample(lx[:, i:i + 1], lg, padding_mode=pad, align_corners=ac).numpy()
                 for i in range(c)], axis=1)
    finally:
        tl.set_num_threads(before)
        fastreduce.use_adaptive_threads(pinned)
    np.testing.assert_array_equal(got.view(np.uint32), per_channel.view(np.uint32))
    want = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g), padding_mode=pad,
                                           align_corners=ac).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, equal_nan=True)


def _vector_loop_cases():
    """(N, C, H, W, Ho, Wo): 8- and 16-lane tails, one point, several 64-point blocks, and
    from 8 channels (the AVX-512 channels-last copy)."""
    return [(2, 3, 5, 7, 3, 5), (1, 2, 11, 13, 9, 15), (3, 1, 4, 6, 1, 1), (2, 9, 6, 10, 7, 11)]


@pytest.mark.parametrize("isa", ["avx2", "avx512"])
@pytest.mark.parametrize("pad", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_float32_vector_loops_are_bit_identical_to_the_scalar_ones(isa, pad, ac, strided,
                                                                   threads):
    """The float32 bilinear taps, gathers and grid gradient on AVX2 (8 lanes) or AVX-512
    (16 lanes) do the scalar loops' operations in the same order: the output and both
    gradients equal the scalar loops' bit for bit, points outside the input, on its edges,
    far, NaN and infinite included, on contiguous and strided (channels-last input, grid
    components apart in memory) tensors, on 1-3 threads; and within torch's tolerance
    (zero and border padding; reflection takes the scalar taps)."""
    from tensorlib_cpu import fastreduce, grid_kernels
    if not getattr(grid_kernels, isa.upper()):
        pytest.skip(f"the CPU has no {isa}")
    before, pinned = tl.get_num_threads(), fastreduce.use_adaptive_threads(False)
    tl.set_num_threads(threads)
    try:
        for n, c, h, w, ho, wo in _vector_loop_cases():
            rng = np.random.default_rng(n * 100 + c * 10 + ho)
            x = rng.standard_normal((n, c, h, w)).astype(np.float32)
            g = rng.uniform(-1.3, 1.3, (n, ho, wo, 2)).astype(np.float32)
            g.reshape(-1)[::7] = np.float32(1.0)
            g.reshape(-1)[3::11] = np.float32(-1.0)
            g.reshape(-1)[5::37] = np.float32(np.nan)
            g.reshape(-1)[9::41] = np.float32(3e20)
            g.reshape(-1)[13::43] = np.float32(-np.inf)
            go = rng.standard_normal((n, c, ho, wo)).astype(np.float32)
            runs = {}
            for loops in ("scalar", isa):
                previous = grid_kernels.use_vector_loops(loops)
                try:
                    if strided:
                        lx, lg = _layouts(tl, x, g, (True, True))
                    else:
                        lx, lg = tl.tensor(x, requires_grad=True), tl.tensor(g, requires_grad=True)
                    out = F.grid_sample(lx, lg, padding_mode=pad, align_corners=ac)
                    out.backward(tl.tensor(go))
                finally:
                    grid_kernels.use_vector_loops(previous)
                runs[loops] = [a.detach().numpy() for a in (out, lx.grad, lg.grad)]
            for got, want in zip(runs[isa], runs["scalar"]):
                np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
            if pad == "reflection":     # reflecting 3e20 in float32 is rounding, not torch's
                continue
            want = torch.nn.functional.grid_sample(torch.tensor(x), torch.tensor(g),
                                                   padding_mode=pad, align_corners=ac)
            np.testing.assert_allclose(runs[isa][0], want.numpy(), rtol=2e-5, atol=2e-5,
                                       equal_nan=True)
    finally:
        tl.set_num_threads(before)
        fastreduce.use_adaptive_threads(pinned)
