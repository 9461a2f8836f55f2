"""Joining and rearranging ops against numpy in float64 over layouts and devices, hypothesis
for shapes and dims, PyTorch's errors, views from the splits, and gradcheck for every
differentiable op (contiguous and non-contiguous inputs)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
from tensorlib.autograd import gradcheck, gradgradcheck
from tensorlib.ops.joining import pad
from tests.ops.layouts import LAYOUTS, make

rng = np.random.default_rng(7)


def _np(t):
    return t.detach().cpu().numpy()


def _same(got, expected):
    """Compare a tensor (or tuple of them) with numpy arrays: shape, then values."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _same(g, e)
        return
    assert tuple(got.shape) == np.shape(expected)
    np.testing.assert_allclose(_np(got), expected, rtol=1e-12, atol=1e-12)


def _pad_np(a, pads, mode="constant", value=0.0):
    """torch's last-dim-first pads as numpy's per-axis pairs."""
    width = [(0, 0)] * a.ndim
    for i in range(len(pads) // 2):
        width[a.ndim - 1 - i] = (pads[2 * i], pads[2 * i + 1])
    np_mode = {"replicate": "edge", "circular": "wrap"}.get(mode, mode)
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(a, width, mode=np_mode, **kw)


def _diag_embed_np(a, offset):
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n))
    i = np.arange(a.shape[-1])
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    out[..., rows, cols] = a
    return out


# op name -> (tensorlib on a (3, 4) tensor x, numpy on its float64 values a)
CASES = {
    "cat0": (lambda x: tl.cat([x, x * 2], 0), lambda a: np.concatenate([a, a * 2], 0)),
    "cat-1": (lambda x: tl.cat((x, x[:, :1]), -1), lambda a: np.concatenate([a, a[:, :1]], -1)),
    "concat": (lambda x: tl.concat([x, x], dim=1), lambda a: np.concatenate([a, a], 1)),
    "concatenate": (lambda x: tl.concatenate([x, x], axis=0), lambda a: np.concatenate([a, a])),
    "stack0": (lambda x: tl.stack([x, -x]), lambda a: np.stack([a, -a])),
    "stack2": (lambda x: tl.stack([x, -x], dim=2), lambda a: np.stack([a, -a], 2)),
    "stack-1": (lambda x: tl.stack([x, x], -1), lambda a: np.stack([a, a], -1)),
    "hstack": (lambda x: tl.hstack([x, x]), lambda a: np.hstack([a, a])),
    "hstack1d": (lambda x: tl.hstack([x[0], x[1]]), lambda a: np.hstack([a[0], a[1]])),
    "vstack": (lambda x: tl.vstack([x, x[0]]), lambda a: np.vstack([a, a[0]])),
    "row_stack": (lambda x: tl.row_stack([x[0], x[1]]), lambda a: np.vstack([a[0], a[1]])),
    "dstack": (lambda x: tl.dstack([x, x]), lambda a: np.dstack([a, a])),
    "column_stack": (lambda x: tl.column_stack([x[:, 0], x]),
                     lambda a: np.column_stack([a[:, 0], a])),
    "split2": (lambda x: x.split(3, 1), lambda a: (a[:, :3], a[:, 3:])),
    "split_sizes": (lambda x: tl.split(x, [1, 2], 0), lambda a: (a[:1], a[1:])),
    "split_with_sizes": (lambda x: x.split_with_sizes([3, 1], 1), lambda a: (a[:, :3], a[:, 3:])),
    "chunk": (lambda x: x.chunk(2, 0), lambda a: (a[:2], a[2:])),
    "chunk3": (lambda x: tl.chunk(x, 3, 1), lambda a: (a[:, :2], a[:, 2:])),
    "tensor_split_n": (lambda x: x.tensor_split(3, 1), lambda a: tuple(np.array_split(a, 3, 1))),
    "tensor_split_idx": (lambda x: tl.tensor_split(x, [1, -1, 9], dim=1),
                         lambda a: tuple(np.split(a, [1, -1, 9], 1))),
    "unbind": (lambda x: x.unbind(1), lambda a: tuple(a[:, i] for i in range(4))),
    "movedim": (lambda x: tl.movedim(x.unsqueeze(0), 0, -1), lambda a: a[None].transpose(1, 2, 0)),
    "moveaxis": (lambda x: x.unsqueeze(0).moveaxis((0, 1), (2, 0)),
                 lambda a: np.moveaxis(a[None], (0, 1), (2, 0))),
    "unflatten": (lambda x: x.unflatten(1, (2, -1)), lambda a: a.reshape(3, 2, 2)),
    "flip0": (lambda x: x.flip(0), lambda a: a[::-1]),
    "flip01": (lambda x: tl.flip(x, (0, 1)), lambda a: a[::-1, ::-1]),
    "flip_kw": (lambda x: tl.flip(x, dims=[-1]), lambda a: a[:, ::-1]),
    "fliplr": (lambda x: x.fliplr(), np.fliplr),
    "flipud": (lambda x: tl.flipud(x), np.flipud),
    "rot90": (lambda x: x.rot90(), np.rot90),
    "rot90_2": (lambda x: tl.rot90(x, 2), lambda a: np.rot90(a, 2)),
    "rot90_-1": (lambda x: tl.rot90(x, -1, [1, 0]), lambda a: np.rot90(a, -1, (1, 0))),
    "rot90_0": (lambda x: tl.rot90(x, 4), lambda a: a),
    "roll": (lambda x: x.roll(1, 0), lambda a: np.roll(a, 1, 0)),
    "roll2": (lambda x: tl.roll(x, (-5, 2), (1, 0)), lambda a: np.roll(a, (-5, 2), (1, 0))),
    "roll_flat": (lambda x: tl.roll(x, 5), lambda a: np.roll(a, 5)),
    "repeat": (lambda x: x.repeat(2, 1, 3), lambda a: np.tile(a, (2, 1, 3))),
    "repeat0": (lambda x: x.repeat(0, 2), lambda a: np.tile(a, (0, 2))),
    "tile": (lambda x: x.tile(2), lambda a: np.tile(a, 2)),
    "tile3": (lambda x: tl.tile(x, (2, 1, 2)), lambda a: np.tile(a, (2, 1, 2))),
    "repeat_interleave": (lambda x: tl.repeat_interleave(x, 2, 1), lambda a: np.repeat(a, 2, 1)),
    "repeat_interleave_t": (
        lambda x: x.repeat_interleave(tl.tensor([1, 0, 3], device=x.device), dim=0),
        lambda a: np.repeat(a, [1, 0, 3], 0)),
    "repeat_interleave_flat": (lambda x: x.repeat_interleave(2), lambda a: np.repeat(a, 2)),
    "tril": (lambda x: x.tril(), np.tril),
    "tril1": (lambda x: tl.tril(x, 1), lambda a: np.tril(a, 1)),
    "triu": (lambda x: tl.triu(x), np.triu),
    "triu-1": (lambda x: x.triu(diagonal=-1), lambda a: np.triu(a, -1)),
    "diag": (lambda x: tl.diag(x), np.diag),
    "diag1": (lambda x: x.diag(1), lambda a: np.diag(a, 1)),
    "diag-2": (lambda x: tl.diag(x, -2), lambda a: np.diag(a, -2)),
    "diag_vec": (lambda x: tl.diag(x[1], -1), lambda a: np.diag(a[1], -1)),
    "diag_embed": (lambda x: tl.diag_embed(x), lambda a: _diag_embed_np(a, 0)),
    "diag_embed1": (lambda x: x.diag_embed(1), lambda a: _diag_embed_np(a, 1)),
    "diag_embed_dims": (lambda x: tl.diag_embed(x, -1, 0, 2),
                        lambda a: np.moveaxis(_diag_embed_np(a, -1), (1, 2), (0, 2))),
    "trace": (lambda x: x.trace(), np.trace),
    "pad": (lambda x: pad(x, (1, 2)), lambda a: _pad_np(a, (1, 2))),
    "pad_value": (lambda x: pad(x, [1, 2, 0, 1], value=1.5),
                  lambda a: _pad_np(a, (1, 2, 0, 1), value=1.5)),
    "pad_crop": (lambda x: pad(x, (-1, 1, 1, -1)), lambda a: _pad_np(a[:-1, 1:], (0, 1, 1, 0))),
    "constant_pad_nd": (lambda x: tl.constant_pad_nd(x, (0, 0, 2, 0), 3.0),
                        lambda a: _pad_np(a, (0, 0, 2, 0), value=3.0)),
    "pad_reflect": (lambda x: pad(x, (3, 1), mode="reflect"),
                    lambda a: _pad_np(a, (3, 1), "reflect")),
    "pad_reflect2d": (lambda x: pad(x[None], (1, 2, 2, 1), "reflect"),
                      lambda a: _pad_np(a[None], (1, 2, 2, 1), "reflect")),
    "pad_replicate": (lambda x: pad(x[None], (2, 3, 1, 0), "replicate"),
                      lambda a: _pad_np(a[None], (2, 3, 1, 0), "replicate")),
    "pad_circular": (lambda x: pad(x, (4, 2), "circular"),
                     lambda a: _pad_np(a, (4, 2), "circular")),
    "pad_circular2d": (lambda x: pad(x[None], (1, 3, 3, 2), "circular"),
                       lambda a: _pad_np(a[None], (1, 3, 3, 2), "circular")),
    "meshgrid_ij": (lambda x: tl.meshgrid(x[0], x[:, 1], indexing="ij"),
                    lambda a: tuple(np.meshgrid(a[0], a[:, 1], indexing="ij"))),
    "meshgrid_xy": (lambda x: tl.meshgrid([x[0], x[:, 1], x[1, :2]], indexing="xy"),
                    lambda a: tuple(np.meshgrid(a[0], a[:, 1], a[1, :2], indexing="xy"))),
    "broadcast_to": (lambda x: x.broadcast_to((2, 3, 4)), lambda a: np.broadcast_to(a, (2, 3, 4))),
    "broadcast_tensors": (lambda x: tl.broadcast_tensors(x, x[:1, :, None][..., 0], x[0, 0]),
                          lambda a: tuple(np.broadcast_arrays(a, a[:1], a[0, 0]))),
    "atleast_1d": (lambda x: tl.atleast_1d(x[0, 0]), lambda a: np.atleast_1d(a[0, 0])),
    "atleast_2d": (lambda x: tl.atleast_2d(x[0], x), lambda a: tuple(np.atleast_2d(a[0], a))),
    "atleast_3d": (lambda x: tl.atleast_3d([x, x[0], x[0, 0]]),
                   lambda a: tuple(np.atleast_3d(a, a[0], a[0, 0]))),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", sorted(CASES))
def test_matches_numpy(op, layout, device):
    x = make(rng.standard_normal((3, 4)), layout, device)
    fn, ref = CASES[op]
    got = fn(x)
    _same(got, ref(_np(x)))
    for t in got if isinstance(got, tuple) else (got,):
        assert t.dtype is tl.float64 and t.device == x.device


# ------------------------------------------------------------------------- hypothesis

shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4)


def _tensor(a, strided):
    """a as a contiguous tensor, or as a step-2 view of a wider buffer."""
    if not strided or a.ndim == 0:
        return tl.tensor(a)
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],))
    wide[..., ::2] = a
    return tl.tensor(wide)[..., ::2]


@given(shapes, st.data(), st.booleans())
def test_cat_random(shape, data, strided):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    pieces = []
    for _ in range(data.draw(st.integers(1, 3))):
        s = list(shape)
        s[dim] = data.draw(st.integers(0, 3))
        pieces.append(rng.standard_normal(s))
    got = tl.cat([_tensor(p, strided) for p in pieces], dim)
    _same(got, np.concatenate(pieces, dim))
    _same(tl.stack([_tensor(p, strided) for p in pieces[:1] * 2], dim),
          np.stack(pieces[:1] * 2, dim))


@given(shapes, st.data(), st.booleans())
def test_splits_random(shape, data, strided):
    a = rng.standard_normal(shape)
    x = _tensor(a, strided)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    size = data.draw(st.integers(1, 5))
    _same(x.split(size, dim), tuple(np.split(a, range(size, n, size), dim)) if n else (a,))
    sections = data.draw(st.integers(1, 5))
    _same(x.tensor_split(sections, dim), tuple(np.array_split(a, sections, dim)))
    cuts = data.draw(st.lists(st.integers(-5, 5), max_size=3))
    _same(x.tensor_split(cuts, dim), tuple(np.split(a, cuts, dim)))
    chunks = x.chunk(sections, dim)
    assert sum(c.shape[dim % len(shape)] for c in chunks) == n
    _same(tl.cat(chunks, dim), a)
    _same(x.unbind(dim), tuple(np.moveaxis(a, dim, 0)))


@given(shapes, st.data(), st.booleans())
def test_rearrange_random(shape, data, strided):
    a = rng.standard_normal(shape)
    x = _tensor(a, strided)
    nd = len(shape)
    dims = data.draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
    _same(x.flip(dims), np.flip(a, dims) if dims else a)
    shifts = data.draw(st.lists(st.integers(-6, 6), min_size=len(dims), max_size=len(dims)))
    if dims:
        _same(x.roll(shifts, dims), np.roll(a, shifts, dims))
    _same(x.roll(3), np.roll(a, 3))
    dst = data.draw(st.permutations(range(nd)))[:len(dims)]
    _same(tl.movedim(x, dims, dst), np.moveaxis(a, dims, dst))
    reps = data.draw(st.lists(st.integers(0, 3), min_size=nd, max_size=nd + 1))
    _same(x.repeat(reps), np.tile(a, reps))
    _same(x.tile(reps[:1]), np.tile(a, reps[:1]))
    counts = data.draw(st.lists(st.integers(0, 3), min_size=shape[0], max_size=shape[0]))
    _same(x.repeat_interleave(tl.tensor(counts, dtype=tl.int64), 0), np.repeat(a, counts, 0))


@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.integers(-4, 4),
       st.booleans())
def test_triangles_random(shape, k, strided):
    a = rng.standard_normal(shape)
    x = _tensor(a, strided)
    _same(x.tril(k), np.tril(a, k))
    _same(x.triu(k), np.triu(a, k))
    _same(x.diag_embed(k), _diag_embed_np(a, k))


@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.data(),
       st.sampled_from(["constant", "reflect", "replicate", "circular"]), st.booleans())
def test_pad_random(shape, data, mode, strided):
    a = rng.standard_normal(shape)
    nd = len(shape)
    low, high = (max(1, nd - 2), min(3, nd - 1)) if mode != "constant" else (1, nd)
    n_dims = data.draw(st.integers(low, high))      # torch's non-constant modes: batch dims
    pads = []
    for i in range(n_dims):
        size = shape[nd - 1 - i]
        hi = {"reflect": size - 1, "circular": size}.get(mode, 3)
        pads += [data.draw(st.integers(0, hi)), data.draw(st.integers(0, hi))]
    _same(pad(_tensor(a, strided), pads, mode), _pad_np(a, pads, mode))


# ------------------------------------------------------------------------ dtypes, views

def test_cat_promotes_and_skips_legacy_empty(device):
    i32 = tl.tensor([[1, 2]], dtype=tl.int32, device=device)
    f16 = tl.tensor([[0.5, 1.5]], dtype=tl.float16, device=device)
    assert tl.cat([i32, f16]).dtype is tl.float16
    assert tl.cat([i32, tl.tensor([[True, False]], device=device)]).dtype is tl.int32
    assert tl.stack([i32[0], f16[0].double()]).dtype is tl.float64
    empty = tl.tensor([], device=device)                    # 1-D float32, skipped
    got = tl.cat([empty, i32.long(), empty], dim=1)
    assert got.dtype is tl.float32 and got.tolist() == [[1.0, 2.0]]
    assert tl.cat([empty, empty]).shape == (0,)
    assert tl.cat([tl.zeros(0, 2, device=device), i32]).tolist() == [[1, 2]]
    assert tl.cat([i32, i32], -1).dtype is tl.int32


def test_integer_and_bool_data(device):
    x = tl.arange(6, device=device).reshape(2, 3)
    assert x.flip(1).tolist() == [[2, 1, 0], [5, 4, 3]]
    assert x.tril().dtype is tl.int64 and x.triu(1).tolist() == [[0, 1, 2], [0, 0, 5]]
    assert x.trace().item() == 4 and x.trace().dtype is tl.int64
    b = x.gt(2)
    assert b.tril().dtype is tl.bool and b.roll(1, 1).tolist() == [[False, False, False],
                                                                    [True, True, True]]
    assert pad(x, (1, 0), value=-1).tolist() == [[-1, 0, 1, 2], [-1, 3, 4, 5]]
    assert pad(x, (0, 1), value=0.7).dtype is tl.int64
    assert tl.repeat_interleave(tl.tensor([2, 0, 1], device=device)).tolist() == [0, 0, 2]
    assert tl.repeat_interleave(x, tl.tensor(2, device=device), 0).shape == (4, 3)


def test_splits_are_views(device):
    x = tl.zeros(4, 6, device=device)
    a, b = x.split([2, 4], 1)
    b.fill_(1.0)
    x.unbind(0)[0].fill_(2.0)
    x.chunk(2)[1][:, 0].fill_(3.0)
    x.tensor_split([5], 1)[1].fill_(4.0)
    expected = np.zeros((4, 6))
    expected[:, 2:] = 1
    expected[0] = 2
    expected[2:, 0] = 3
    expected[:, 5] = 4
    np.testing.assert_array_equal(_np(x), expected)
    assert a._base is x and tl.movedim(x, 0, 1)._base is x
    assert x.chunk(3, 0)[0].shape == (2, 6) and len(x.chunk(3, 0)) == 2
    assert len(tl.zeros(0).chunk(3)) == 3 and len(tl.zeros(0).split(2)) == 1


def test_copies_do_not_alias(device):
    x = tl.ones(2, 3, device=device)
    for y in (x.flip(0), x.roll(1, 0), x.repeat(1, 1), x.tril(), tl.cat([x]), x.rot90(4),
              pad(x, (0, 0)), x.diag()):
        y.fill_(5.0)
    assert _np(x).tolist() == [[1.0] * 3] * 2


def test_inplace_triangles(device):
    x = tl.ones(3, 3, device=device)
    before = x._version
    assert x.tril_(-1) is x and x._version > before
    np.testing.assert_array_equal(_np(x), np.tril(np.ones((3, 3)), -1))
    y = tl.ones(2, 3, dtype=tl.float64, requires_grad=True)
    z = y * 2
    z.triu_()
    z.sum().backward()
    np.testing.assert_array_equal(_np(y.grad), 2 * np.triu(np.ones((2, 3))))


# ------------------------------------------------------------------------------- errors

def test_errors_like_pytorch():
    x = tl.zeros(2, 3)
    cases = [
        (RuntimeError, "Sizes of tensors must match except in dimension 0. Expected size 3 "
                       "but got size 4 for tensor number 1 in the list",
         lambda: tl.cat([x, tl.zeros(2, 4)])),
        (RuntimeError, "Tensors must have same number of dimensions: got 2 and 3",
         lambda: tl.cat([x, tl.zeros(1, 2, 3)])),
        (RuntimeError, r"zero-dimensional tensor \(at position 1\) cannot be concatenated",
         lambda: tl.cat([x, tl.tensor(1.0)])),
        (RuntimeError, "expected a non-empty list of Tensors", lambda: tl.cat([])),
        (IndexError, "Dimension out of range", lambda: tl.cat([x, x], 2)),
        (TypeError, "expected Tensor as element 1", lambda: tl.cat([x, 1])),
        (TypeError, "must be tuple of Tensors", lambda: tl.cat(x)),
        (RuntimeError, r"stack expects each tensor to be equal size, but got \[2, 3\] at "
                       r"entry 0 and \[3, 2\] at entry 1", lambda: tl.stack([x, x.t()])),
        (RuntimeError, "stack expects a non-empty TensorList", lambda: tl.stack([])),
        (IndexError, "Dimension out of range", lambda: tl.stack([x], 3)),
        (RuntimeError, r"split_with_sizes expects split_sizes to sum exactly to 3 \(input "
                       r"tensor's size at dimension 1\), but got split_sizes=\[1, 1\]",
         lambda: x.split([1, 1], 1)),
        (RuntimeError, "split_size can only be 0 if dimension size is 0",
         lambda: x.split(0)),
        (RuntimeError, "split expects split_size be non-negative", lambda: x.split(-1)),
        (RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0",
         lambda: x.chunk(0)),
        (RuntimeError, "number of sections must be larger than 0, got 0",
         lambda: x.tensor_split(0)),
        (RuntimeError, "tensor_split expected at least a 1-dimensional tensor",
         lambda: tl.tensor(1.0).tensor_split(2)),
        (IndexError, "Dimension out of range", lambda: x.unbind(2)),
        (RuntimeError, r"movedim: repeated dim in `source` \(\[0, 0\]\)",
         lambda: tl.movedim(x, [0, 0], [0, 1])),
        (RuntimeError, "should contain the same number of dims as destination",
         lambda: tl.movedim(x, [0, 1], [0])),
        (RuntimeError, r"unflatten: Provided sizes \[2, 2\] don't multiply up to the size of "
                       r"dim 1 \(3\)", lambda: x.unflatten(1, (2, 2))),
        (RuntimeError, "dim 0 appears multiple times in the list of dims",
         lambda: x.flip(0, -2)),
        (IndexError, "Dimension out of range", lambda: x.flip(2)),
        (RuntimeError, "Input must be >= 2-d", lambda: tl.zeros(3).fliplr()),
        (RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1",
         lambda: x.roll((1, 2), 0)),
        (RuntimeError, "Number of dimensions of repeat dims can not be smaller",
         lambda: x.repeat(2)),
        (RuntimeError, "Trying to create tensor with negative dimension -1",
         lambda: x.repeat(-1, 1)),
        (RuntimeError, r"repeats must have the same size as input along dim, but got "
                       r"repeats.size\(0\) = 2 and input.size\(1\) = 3",
         lambda: x.repeat_interleave(tl.tensor([1, 2]), 1)),
        (RuntimeError, "repeats can not be negative",
         lambda: x.repeat_interleave(tl.tensor([1, -2]), 0)),
        (RuntimeError, "repeats can not be negative", lambda: x.repeat_interleave(-1)),
        (RuntimeError, "repeats has to be Long or Int tensor",
         lambda: x.repeat_interleave(tl.tensor([1.0, 2.0]), 0)),
        (RuntimeError, "tril: input tensor must have at least 2 dimensions",
         lambda: tl.zeros(3).tril()),
        (RuntimeError, "triu: input tensor must have at least 2 dimensions",
         lambda: tl.zeros(3).triu()),
        (RuntimeError, r"diag\(\): Supports 1D or 2D tensors. Got 3D",
         lambda: tl.zeros(1, 2, 3).diag()),
        (RuntimeError, "diagonal dimensions cannot be identical",
         lambda: tl.diag_embed(x, 0, 1, -2)),
        (RuntimeError, "trace: expected a matrix, but got tensor with dim 1",
         lambda: tl.zeros(3).trace()),
        (RuntimeError, "Padding length must be divisible by 2", lambda: pad(x, (1,))),
        (RuntimeError, "Padding length should be less than or equal to two times the input "
                       "dimension but got padding length 6 and input of dimension 2",
         lambda: pad(x, (1,) * 6)),
        (RuntimeError, r"Padding size should be less than the corresponding input dimension, "
                       r"but got: padding \(3, 0\) at dimension 1",
         lambda: pad(x, (3, 0), "reflect")),
        (RuntimeError, "Padding value causes wrapping around more than once",
         lambda: pad(x, (0, 4), "circular")),
        (NotImplementedError, "Unrecognised padding mode wrap", lambda: pad(x, (1, 1), "wrap")),
        (RuntimeError, 'Padding mode "reflect" doesn\'t take in value argument',
         lambda: pad(x, (1, 1), "reflect", 2.0)),
        (RuntimeError, "resulted in a negative output size", lambda: pad(x, (-2, -2))),
        (RuntimeError, "Expected 0D or 1D tensor in the tensor list",
         lambda: tl.meshgrid(x, x[0])),
        (RuntimeError, 'indexing must be one of "xy" or "ij", but received: ji',
         lambda: tl.meshgrid(x[0], indexing="ji")),
        (RuntimeError, "expected rotation dims to be different, but got dim0 = 1 and dim1 = 1",
         lambda: x.rot90(1, (1, -1))),
        (RuntimeError, "expected total rotation dims == 2, but got dims = 1",
         lambda: x.rot90(1, (1,))),
        (RuntimeError, "expected total dims >= 2, but got total dims = 1",
         lambda: x[0].rot90()),
        (RuntimeError, r"The expanded size of the tensor \(4\) must match",
         lambda: x.broadcast_to((2, 4))),
    ]
    for kind, message, fn in cases:
        with pytest.raises(kind, match=message):
            fn()


# -------------------------------------------------------------------------- autograd

def _leaf(shape, layout="contiguous"):
    a = rng.standard_normal(shape)
    return make(a, layout).detach().requires_grad_() if len(shape) == 2 else \
        tl.tensor(a, requires_grad=True)


GRAD = {
    "cat": lambda x: tl.cat([x, x * 2, x[:, :1]], 1),
    "cat_single": lambda x: tl.cat([x]),
    "stack": lambda x: tl.stack([x, x.exp()], 1),
    "hstack": lambda x: tl.hstack([x, x[:, 1:2]]),
    "vstack": lambda x: tl.vstack([x[0], x]),
    "dstack": lambda x: tl.dstack([x, x]),
    "column_stack": lambda x: tl.column_stack([x[:, 0], x]),
    "split": lambda x: x.split([1, 3], 1),
    "chunk": lambda x: tl.chunk(x * 1, 2, 0),
    "tensor_split": lambda x: x.tensor_split([1, 3], 1),
    "unbind": lambda x: x.unbind(0),
    "movedim": lambda x: tl.movedim(x[None], 0, 2),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "flip": lambda x: x.flip(0, 1),
    "fliplr": lambda x: x.fliplr(),
    "rot90": lambda x: x.rot90(3),
    "roll": lambda x: x.roll((1, -3), (0, 1)),
    "roll_flat": lambda x: x.roll(-2),
    "repeat": lambda x: x.repeat(2, 1, 2),
    "tile": lambda x: x.tile(3),
    "repeat_interleave": lambda x: x.repeat_interleave(tl.tensor([2, 0, 1]), 0),
    "repeat_interleave_flat": lambda x: x.repeat_interleave(3),
    "tril": lambda x: x.tril(1),
    "triu": lambda x: tl.triu(x, -1),
    "diag": lambda x: x.diag(1),
    "diag_vec": lambda x: tl.diag(x[1], -1),
    "diag_embed": lambda x: x.diag_embed(1, 0, 2),
    "trace": lambda x: x.trace(),
    "pad_constant": lambda x: pad(x, (1, -1, 2, 0), value=3.0),
    "pad_reflect": lambda x: pad(x, (3, 2), "reflect"),
    "pad_reflect2d": lambda x: pad(x[None], (2, 1, 1, 2), "reflect"),
    "pad_replicate": lambda x: pad(x[None], (2, 3, 1, 1), "replicate"),
    "pad_circular": lambda x: pad(x[None], (4, 1, 2, 3), "circular"),
    "meshgrid": lambda x: tl.meshgrid(x[0], x[:, 1], indexing="xy"),
    "broadcast_tensors": lambda x: tl.broadcast_tensors(x[None], x[:1]),
    "atleast_3d": lambda x: tl.atleast_3d(x[0]),
}


@pytest.mark.parametrize("layout", ["contiguous", "strided", "transposed", "offset"])
@pytest.mark.parametrize("op", sorted(GRAD))
def test_gradcheck(op, layout):
    assert gradcheck(GRAD[op], (_leaf((3, 4), layout),))


@pytest.mark.parametrize("op", ["cat", "stack", "flip", "roll", "repeat", "repeat_interleave",
                                "tril", "diag", "diag_embed", "trace", "pad_constant",
                                "pad_reflect", "pad_circular"])
def test_gradgradcheck(op):
    x = _leaf((3, 4), "strided")
    assert gradgradcheck(lambda t: GRAD[op](t * t), (x,))


def test_gradcheck_two_inputs_and_batched():
    x, y = _leaf((2, 3)), _leaf((2, 2))
    assert gradcheck(lambda a, b: tl.cat([a, b], -1), (x, y))
    assert gradcheck(lambda a, b: tl.stack([a[:, :2], b]), (x, y))
    z = _leaf((2, 3, 3))
    assert gradcheck(lambda t: t.tril(-1), (z,))
    assert gradcheck(lambda t: tl.diag_embed(t, -1), (z,))
    assert gradcheck(lambda t: pad(t, (1, 1, 1, 1, 1, 0), "replicate"), (_leaf((2, 2, 2, 3)),))


def test_cat_gradient_routing():
    x = tl.ones(2, 3, dtype=tl.float64, requires_grad=True)
    y = tl.ones(2, 1, dtype=tl.float64)
    e = tl.zeros(0, dtype=tl.float64, requires_grad=True)
    out = tl.cat([x, y, e], 1)
    assert type(out.grad_fn).__name__ == "CatBackward0"
    (out * tl.arange(4.0)).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 2.0]] * 2
    assert y.grad is None and e.grad.shape == (0,)
    w = tl.ones(3, dtype=tl.float64, requires_grad=True)
    (tl.stack([w, w]) * tl.tensor([[1.0], [2.0]], dtype=tl.float64)).sum().backward()
    assert w.grad.tolist() == [3.0] * 3


def test_split_keyword_names_match_torch():
    """Tensor.split names its size split_size; torch.split names it split_size_or_sections
    (torchsde calls `ys.split(split_size=(n - 1, 1), dim=2)`, BoTorch
    `X.split(split_size=batch_limit, dim=0)`)."""
    torch = pytest.importorskip("torch")
    data = np.arange(12.0).reshape(2, 6)
    ours, theirs = tl.tensor(data), torch.tensor(data)
    for sizes in ((4, 2), 4, [1, 2, 3]):
        want = [t.numpy() for t in theirs.split(split_size=sizes, dim=1)]
        _same(ours.split(split_size=sizes, dim=1), want)
        _same(tl.split(ours, split_size_or_sections=sizes, dim=1), want)
    with pytest.raises(TypeError):
        theirs.split(split_size_or_sections=2)
    with pytest.raises(TypeError):
        ours.split(split_size_or_sections=2)
    with pytest.raises(TypeError):
        tl.split(ours, split_size=2)
