"""Differential fuzzer, part 7: what #32 added beside the strided layout, on
hypothesis-drawn arguments run through tensorlib and torch (compare.check: the same values
within the dtype's tolerance, or the same error class). Sparse COO, CSR and CSC tensors (random
shapes, densities, duplicate and out-of-range indices, hybrid dense dims, dtypes): their
construction, to_dense/to_sparse/coalesce/_nnz and the accessors, torch.sparse's
mm/addmm/sum/softmax, spmm/dsmm/hsmm/smm, sparse_mask, sparse + sparse, transpose. Quantized tensors
(quantize_per_tensor/per_channel with random scales and zero points, qint8/quint8/qint32,
values that clip and that fall on rounding ties): int_repr, dequantize and the q_*
accessors. tensorlib.masked's reductions and normalizations under random masks. The
AveragedModel update arithmetic of optim.swa_utils (SWA, EMA, per-parameter and
multi-tensor functions, buffers). A sparse or quantized result is compared through its
components (dense values, indices, values), which compare.py knows how to read.

COVERED names the public paths fuzzed here (test_fuzz_coverage counts them)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorlib
from tests.parity.compare import check
from tests.parity.test_fuzz_ops import FUZZ

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
              pytest.mark.filterwarnings("ignore:.*deprecated"),
              pytest.mark.filterwarnings("ignore:.*prototype")]

LAYOUT_FUZZ = settings(FUZZ, max_examples=25)
SPARSE_NAMES = ("sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor", "spmm", "dsmm",
                "hsmm", "smm", "Tensor.ccol_indices", "Tensor.row_indices",
                "Tensor.to_sparse_csc",
                "Tensor.sparse_mask", "Tensor.coalesce",
                "Tensor.col_indices", "Tensor.crow_indices", "Tensor.dense_dim",
                "Tensor.indices", "Tensor.is_coalesced", "Tensor.sparse_dim", "Tensor.to_dense",
                "Tensor.to_sparse", "Tensor.to_sparse_coo", "Tensor.to_sparse_csr",
                "Tensor.values")
QUANTIZED_NAMES = ("quantize_per_tensor", "quantize_per_channel", "dequantize",
                   "Tensor.dequantize", "Tensor.int_repr", "Tensor.q_per_channel_axis",
                   "Tensor.q_per_channel_scales", "Tensor.q_per_channel_zero_points",
                   "Tensor.q_scale", "Tensor.q_zero_point", "Tensor.qscheme")
COVERED = frozenset(SPARSE_NAMES + QUANTIZED_NAMES)


def _fuzz(body):
    """Run body(data) -> bool on LAYOUT_FUZZ's examples; at least one must be compared
    (not both raising), else the test claims coverage it does not have."""
    returned = []
    LAYOUT_FUZZ(given(data=st.data())(lambda data: returned.append(body(data))))()
    assert any(returned), "torch raised on every example: nothing was compared"


def _dense(t):
    return t.to_dense() if t.layout != _lib(t).strided else t


def _lib(t):
    return torch if isinstance(t, torch.Tensor) else tensorlib


# ---- sparse operands --------------------------------------------------------------------
@st.composite
def coo_specs(draw, sparse_dims=None, dense_dims=None, dtypes=("float32", "float64", "int64"),
              invalid=False):
    """(shape, sparse dims, indices, values, dtype): indices drawn from a few positions, so
    duplicates are common; with `invalid`, sometimes one index out of range or negative."""
    sd = draw(st.integers(1, 2)) if sparse_dims is None else sparse_dims
    dd = draw(st.integers(0, 1)) if dense_dims is None else dense_dims
    shape = tuple(draw(st.integers(0, 4)) for _ in range(sd + dd))
    nnz = draw(st.integers(0, 7)) if all(shape[:sd]) else 0
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    pool = rng.integers(0, [max(s, 1) for s in shape[:sd]], (max(nnz // 2, 1), sd))
    indices = pool[rng.integers(0, len(pool), nnz)].T.reshape(sd, nnz)
    if invalid and nnz and draw(st.booleans()):
        indices[rng.integers(0, sd), rng.integers(0, nnz)] = draw(
            st.sampled_from([-1, shape[0] + 1]))
    values = np.round(rng.standard_normal((nnz,) + shape[sd:]) * 3, 1)
    return shape, sd, indices.tolist(), values, draw(st.sampled_from(dtypes))


def coo(m, spec, infer_size=False, check_invariants=None):
    """The COO tensor of a spec. An index out of range is undefined behaviour in torch
    unless its invariants are checked (it accepts the tensor and to_dense drops the entry):
    `check_invariants` asks both libraries to check."""
    shape, sd, indices, values, dtype = spec
    idx = m.tensor(indices, dtype=m.int64).reshape(sd, -1)
    vals = m.tensor(values).to(getattr(m, dtype))
    kwargs = {} if check_invariants is None else {"check_invariants": check_invariants}
    if infer_size:
        return m.sparse_coo_tensor(idx, vals, **kwargs)
    return m.sparse_coo_tensor(idx, vals, shape, **kwargs)


def _describe(name, *parts):
    return lambda: f"{name}{parts}"


def test_coo_construction_and_coalesce():
    def body(data):
        spec = data.draw(coo_specs(invalid=True))
        infer = data.draw(st.booleans()) and spec[3].size > 0
        idx = np.array(spec[2]).reshape(spec[1], -1)
        invalid = bool(idx.size) and bool((idx < 0).any()
                                          or (idx.max(axis=1) >= spec[0][:spec[1]]).any())

        def call(m, s):
            c = s.coalesce()
            return (s.to_dense(), s.sparse_dim(), s.dense_dim(), s._nnz(), s.is_coalesced(),
                    c.indices(), c.values(), c._nnz(), c.is_coalesced(), c.to_dense(),
                    list(s.shape), s.dtype)
        return check(call, lambda m: coo(m, spec, infer, True if invalid else None),
                     _describe("sparse_coo_tensor", spec, infer))
    _fuzz(body)


def test_uncoalesced_accessors():
    """indices()/values() of an uncoalesced tensor: both refuse or both answer alike."""
    def body(data):
        spec = data.draw(coo_specs())
        name = data.draw(st.sampled_from(["indices", "values", "_values", "_indices"]))
        return check(lambda m, s: getattr(s, name)(), lambda m: coo(m, spec),
                     _describe(name, spec))
    _fuzz(body)


@st.composite
def _dense_with_zeros(draw, min_dims=1, max_dims=3, dtypes=("float32", "float64", "int64")):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=min_dims, max_size=max_dims)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    density = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    values = np.round(rng.standard_normal(shape) * 3, 1) * (rng.random(shape) < density)
    return values, draw(st.sampled_from(dtypes))


def _tensor(m, spec):
    values, dtype = spec
    return m.tensor(values).to(getattr(m, dtype))


def test_to_sparse_and_back():
    def body(data):
        how = data.draw(st.sampled_from(["to_sparse", "to_sparse_dim", "to_sparse_coo",
                                         "to_sparse_csr", "to_sparse_csc"]))
        # CSR: matrices only (torch's batched CSR is not built; its 1-D refusal is an
        # IndexError from inside select())
        compressed = how in ("to_sparse_csr", "to_sparse_csc")
        spec = data.draw(_dense_with_zeros(min_dims=2, max_dims=2) if compressed
                         else _dense_with_zeros())
        ndim = spec[0].ndim
        sparse_dim = data.draw(st.integers(0, ndim + 1))

        def call(m, x):
            if how == "to_sparse_csr":
                s = x.to_sparse_csr()
                return (s.crow_indices(), s.col_indices(), s.values(), s._nnz(), s.to_dense(),
                        s.to_sparse_coo().coalesce().to_dense())
            if how == "to_sparse_csc":
                s = x.to_sparse_csc()
                return (s.ccol_indices(), s.row_indices(), s.values(), s._nnz(), s.to_dense(),
                        s.to_sparse_coo().coalesce().to_dense(), s.t().to_dense())
            s = (x.to_sparse(sparse_dim) if how == "to_sparse_dim" else getattr(x, how)())
            return (s.indices(), s.values(), s._nnz(), s.is_coalesced(), s.sparse_dim(),
                    s.dense_dim(), s.to_dense(), x.to_dense())
        return check(call, lambda m: _tensor(m, spec), _describe(how, spec, sparse_dim))
    _fuzz(body)


def test_csr_construction():
    def body(data):
        values, dtype = data.draw(_dense_with_zeros(min_dims=2, max_dims=2))
        rows, cols = np.nonzero(values)
        crow = np.searchsorted(rows, np.arange(values.shape[0] + 1)).tolist()
        given_size = data.draw(st.booleans())

        def args(m):
            vals = m.tensor(values[rows, cols]).to(getattr(m, dtype))
            c, k = m.tensor(crow, dtype=m.int64), m.tensor(cols.tolist(), dtype=m.int64)
            return (m.sparse_csr_tensor(c, k, vals, values.shape) if given_size
                    else m.sparse_csr_tensor(c, k, vals))

        def call(m, s):
            return (s.to_dense(), s.crow_indices(), s.col_indices(), s.values(), s._nnz(),
                    list(s.shape), s.to_sparse_coo().to_dense())
        return check(call, args, _describe("sparse_csr_tensor", values.shape, dtype,
                                           given_size))
    _fuzz(body)


def test_csc_construction():
    def body(data):
        values, dtype = data.draw(_dense_with_zeros(min_dims=2, max_dims=2))
        cols, rows = np.nonzero(values.T)                    # column-major entries
        ccol = np.searchsorted(cols, np.arange(values.shape[1] + 1)).tolist()
        given_size = data.draw(st.booleans())

        def args(m):
            vals = m.tensor(values[rows, cols]).to(getattr(m, dtype))
            c, r = m.tensor(ccol, dtype=m.int64), m.tensor(rows.tolist(), dtype=m.int64)
            return (m.sparse_csc_tensor(c, r, vals, values.shape) if given_size
                    else m.sparse_csc_tensor(c, r, vals))

        def call(m, s):
            return (s.to_dense(), s.ccol_indices(), s.row_indices(), s.values(), s._nnz(),
                    list(s.shape), s.to_sparse_coo().to_dense(), s.to_sparse_csr().to_dense())
        return check(call, args, _describe("sparse_csc_tensor", values.shape, dtype,
                                           given_size))
    _fuzz(body)


def _matrix(m, shape, seed, dtype):
    values = np.round(np.random.default_rng(seed).standard_normal(shape) * 2, 1)
    return m.tensor(values).to(getattr(m, dtype))


def test_sparse_products():
    def body(data):
        dtype = data.draw(st.sampled_from(["float32", "float64"]))
        spec = data.draw(coo_specs(sparse_dims=2, dense_dims=0, dtypes=(dtype,)))
        n, k = spec[0]
        inner = k if data.draw(st.integers(0, 5)) else k + 1          # sometimes mismatched
        p = data.draw(st.integers(0, 3))
        seed = data.draw(st.integers(0, 999))
        how = data.draw(st.sampled_from(["spmm", "sparse.mm", "mm", "matmul", "sparse.addmm",
                                         "sparse.mm_sparse", "dsmm", "hsmm", "smm"]))
        beta, alpha = data.draw(st.sampled_from([(1.0, 1.0), (0.5, 2.0), (0.0, -1.0)]))

        def args(m):
            return coo(m, spec), _matrix(m, (inner, p), seed, dtype), _matrix(m, (n, p), seed,
                                                                               dtype)

        def call(m, a):
            s, d, c = a
            if how == "spmm":
                return m.spmm(s, d)
            if how == "dsmm":
                return m.dsmm(s, d)
            if how in ("hsmm", "smm"):
                return getattr(m, how)(s, d).to_dense()
            if how == "sparse.mm":
                return m.sparse.mm(s, d)
            if how == "mm":
                return m.mm(s, d)
            if how == "matmul":
                return s @ d
            if how == "sparse.addmm":
                return m.sparse.addmm(c, s, d, beta=beta, alpha=alpha)
            return m.sparse.mm(s, d.to_sparse()).to_dense()
        return check(call, args, _describe(how, spec, inner, p, seed), scale=10)
    _fuzz(body)


def test_sparse_mask():
    def body(data):
        spec = data.draw(coo_specs(dtypes=("float32", "float64")))
        seed = data.draw(st.integers(0, 999))

        def args(m):
            return _matrix(m, spec[0], seed, spec[4]), coo(m, spec)

        def call(m, a):
            dense, mask = a
            out = dense.sparse_mask(mask.coalesce())
            return out.to_dense(), out._nnz()
        return check(call, args, lambda: f"sparse_mask of {spec}, seed {seed}")
    _fuzz(body)


def test_sparse_sum_and_softmax():
    def body(data):
        how = data.draw(st.sampled_from(["sum", "sum_dim", "softmax", "log_softmax"]))
        # softmax over a hybrid tensor (dense dims) is not built in tensorlib
        spec = data.draw(coo_specs(dtypes=("float32", "float64"),
                                   dense_dims=0 if "softmax" in how else None))
        ndim = len(spec[0])
        dim = data.draw(st.integers(-ndim - 1, ndim))

        def call(m, s):
            if how == "sum":
                return m.sparse.sum(s)
            if how == "sum_dim":
                return _dense(m.sparse.sum(s, dim))
            return getattr(m.sparse, how)(s, dim).to_dense()
        return check(call, lambda m: coo(m, spec), _describe(how, spec, dim), any_exception=True)
    _fuzz(body)


def test_sparse_add_and_transpose():
    def body(data):
        spec = data.draw(coo_specs(dtypes=("float32", "float64", "int64")))
        other = data.draw(coo_specs(sparse_dims=spec[1], dense_dims=len(spec[0]) - spec[1],
                                    dtypes=(spec[4],)))
        other = (spec[0],) + other[1:] if data.draw(st.integers(0, 4)) else other
        other = _fit(other)
        ndim = len(spec[0])
        how = data.draw(st.sampled_from(["add", "add_alpha", "sub", "t", "transpose"]))
        dims = (data.draw(st.integers(-ndim, ndim - 1)), data.draw(st.integers(-ndim, ndim - 1)))

        def call(m, a):
            s, o = a
            if how == "add":
                return (s + o).to_dense()
            if how == "add_alpha":
                return m.add(s, o, alpha=2).to_dense()
            if how == "sub":
                return (s - o).to_dense()
            if how == "t":
                return s.t().to_dense()
            return s.transpose(*dims).to_dense()
        return check(call, lambda m: (coo(m, spec), coo(m, other)),
                     _describe(how, spec, other, dims))
    _fuzz(body)


def _fit(spec):
    """A COO spec with its indices clipped into its (possibly new) shape."""
    shape, sd, indices, values, dtype = spec
    idx = np.array(indices, dtype=np.int64).reshape(sd, -1)
    if not all(shape[:sd]):
        idx = idx[:, :0]
    elif idx.size:
        idx = np.minimum(idx, np.array(shape[:sd])[:, None] - 1)
    dense_shape = tuple(shape[sd:])
    values = np.resize(values, (idx.shape[1],) + dense_shape) if values.size else \
        np.zeros((idx.shape[1],) + dense_shape)
    return shape, sd, idx.tolist(), values, dtype


# ---- quantized tensors ------------------------------------------------------------------
_QRANGE = {"qint8": (-128, 127), "quint8": (0, 255), "qint32": (-2**31, 2**31 - 1)}


@st.composite
def _quant_values(draw, shape, scale, zero_point):
    """Floats that hit the clip at both ends and the rounding ties (k + 0.5) * scale."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    base = rng.standard_normal(shape) * scale * draw(st.sampled_from([1, 30, 300]))
    ties = (rng.integers(-200, 200, shape) + 0.5) * scale
    pick = rng.random(shape)
    values = np.where(pick < 0.3, ties, base)
    values = np.where(pick > 0.95, np.sign(base) * 1e6, values)
    return values.astype(np.float32)


def _qscheme_name(q):
    return str(q.qscheme()).split(".")[-1]


def test_quantize_per_tensor():
    def body(data):
        dtype = data.draw(st.sampled_from(sorted(_QRANGE)))
        lo, hi = _QRANGE[dtype]
        scale = float(np.float32(10 ** data.draw(st.floats(-3, 1))))
        zero_point = data.draw(st.one_of(st.integers(max(lo, -300), min(hi, 300)),
                                         st.sampled_from([lo, hi, lo - 1, hi + 1])))
        shape = tuple(data.draw(st.lists(st.integers(0, 4), max_size=3)))
        x = data.draw(_quant_values(shape, scale, zero_point))

        def call(m, t):
            q = m.quantize_per_tensor(t, scale, zero_point, getattr(m, dtype))
            return (q.int_repr(), q.dequantize(), m.dequantize(q), q.q_scale(),
                    q.q_zero_point(), _qscheme_name(q), str(q.dtype).split(".")[-1],
                    list(q.shape))
        return check(call, lambda m: m.tensor(x), _describe("quantize_per_tensor", dtype, scale,
                                                             zero_point, x.tolist()))
    _fuzz(body)


def test_quantize_per_channel():
    def body(data):
        dtype = data.draw(st.sampled_from(sorted(_QRANGE)))
        lo, hi = _QRANGE[dtype]
        shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
        axis = data.draw(st.integers(0, len(shape) - 1))
        channels = shape[axis] if data.draw(st.integers(0, 5)) else shape[axis] + 1
        scales = (10 ** np.array(data.draw(st.lists(st.floats(-3, 1), min_size=channels,
                                                    max_size=channels)))).astype(np.float32)
        zps = data.draw(st.lists(st.integers(max(lo, -100), min(hi, 100)), min_size=channels,
                                 max_size=channels))
        x = data.draw(_quant_values(shape, float(scales.min()), 0))

        def args(m):
            return (m.tensor(x), m.tensor(scales.astype(np.float64)),
                    m.tensor(zps, dtype=m.int64))

        def call(m, a):
            q = m.quantize_per_channel(a[0], a[1], a[2], axis, getattr(m, dtype))
            return (q.int_repr(), q.dequantize(), q.q_per_channel_scales(),
                    q.q_per_channel_zero_points(), q.q_per_channel_axis(), _qscheme_name(q))
        return check(call, args, _describe("quantize_per_channel", dtype, axis, scales.tolist(),
                                           zps, x.tolist()), tolerance=1e-6)
    _fuzz(body)


def test_quantized_accessors_of_the_wrong_kind():
    """A per-tensor tensor's per-channel accessors and the reverse, and the quantized
    accessors of a dense tensor: both refuse alike; a dense tensor's dequantize() is
    itself."""
    def body(data):
        name = data.draw(st.sampled_from(["int_repr", "q_scale", "q_zero_point",
                                          "q_per_channel_scales", "q_per_channel_zero_points",
                                          "q_per_channel_axis", "qscheme", "dequantize"]))
        kind = data.draw(st.sampled_from(["dense", "per_tensor", "per_channel"]))
        x = np.round(np.random.default_rng(data.draw(st.integers(0, 99))).standard_normal(
            (2, 3)), 2).astype(np.float32)

        def args(m):
            t = m.tensor(x)
            if kind == "per_tensor":
                return m.quantize_per_tensor(t, 0.1, 3, m.quint8)
            if kind == "per_channel":
                return m.quantize_per_channel(t, m.tensor([0.1, 0.2], dtype=m.float64),
                                              m.tensor([0, 1]), 0, m.qint8)
            return t

        def call(m, t):
            out = getattr(t, name)()
            return _qscheme_name(t) if name == "qscheme" else out
        return check(call, args, _describe(name, kind, x.tolist()))
    returned = []
    LAYOUT_FUZZ(given(data=st.data())(lambda data: returned.append(body(data))))()
    assert any(returned) and not all(returned)      # some compared, some refused


# ---- masked reductions --------------------------------------------------------------------
_MASKED_REDUCTIONS = ("sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "norm", "var",
                      "std", "logsumexp")
_MASKED_NORMALIZATIONS = ("softmax", "log_softmax", "softmin", "cumsum", "cumprod",
                          "normalize")


def test_masked_reductions():
    def body(data):
        op = data.draw(st.sampled_from(_MASKED_REDUCTIONS + _MASKED_NORMALIZATIONS))
        shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
        rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
        x = np.round(rng.standard_normal(shape) * 2, 2)
        density = data.draw(st.sampled_from([0.0, 0.5, 0.9, 1.0]))
        mask = (rng.random(shape) < density).tolist()
        dtype = data.draw(st.sampled_from(["float32", "float64"]))
        ndim = len(shape)
        dim = data.draw(st.integers(-ndim, ndim - 1))
        keepdim = data.draw(st.booleans())
        whole = op in _MASKED_REDUCTIONS and op not in ("argmax", "argmin") and \
            data.draw(st.booleans())

        def args(m):
            return m.tensor(x).to(getattr(m, dtype)), m.tensor(mask)

        def call(m, a):
            t, mk = a
            fn = getattr(m.masked, op)
            if op == "normalize":
                return fn(t, 2.0, dim, mask=mk)
            if op in _MASKED_NORMALIZATIONS:
                return fn(t, dim, mask=mk)
            if op == "norm":
                return fn(t, 2.0, None if whole else dim, keepdim=keepdim, mask=mk)
            if whole:
                return fn(t, mask=mk)
            return fn(t, dim, keepdim=keepdim, mask=mk)
        return check(call, args, _describe(f"masked.{op}", x.tolist(), mask, dtype, dim,
                                           keepdim, whole), scale=10)
    _fuzz(body)


# ---- swa_utils.AveragedModel ------------------------------------------------------------------
def _models(m, sizes, seed):
    layers = [m.nn.Linear(sizes[0], sizes[1]), m.nn.BatchNorm1d(sizes[1])]
    model = m.nn.Sequential(*layers)
    rng = np.random.default_rng(seed)
    with m.no_grad():
        for _, t in sorted(model.state_dict().items()):
            if t.dtype == m.float32:
                t.copy_(m.tensor(rng.standard_normal(tuple(t.shape)).astype(np.float32)))
    return model


def test_averaged_model_updates():
    def body(data):
        sizes = (data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)))
        kind = data.draw(st.sampled_from(["swa", "ema", "ema_multi", "swa_multi"]))
        decay = data.draw(st.sampled_from([0.0, 0.5, 0.9, 0.999]))
        use_buffers = data.draw(st.booleans())
        steps = data.draw(st.integers(1, 4))
        seed = data.draw(st.integers(0, 999))

        def call(m, _):
            swa = m.optim.swa_utils
            model = _models(m, sizes, seed)
            kwargs = {"swa": {}, "ema": {"avg_fn": swa.get_ema_avg_fn(decay)},
                      "ema_multi": {"multi_avg_fn": swa.get_ema_multi_avg_fn(decay)},
                      "swa_multi": {"multi_avg_fn": swa.get_swa_multi_avg_fn()}}[kind]
            averaged = swa.AveragedModel(model, use_buffers=use_buffers, **kwargs)
            for step in range(steps):
                fresh = _models(m, sizes, seed + step + 1)
                with m.no_grad():
                    for (_, p), (_, q) in zip(sorted(model.state_dict().items()),
                                              sorted(fresh.state_dict().items())):
                        p.copy_(q)
                averaged.update_parameters(model)
            state = averaged.state_dict()
            return [state[k] for k in sorted(state)] + [sorted(state)]
        return check(call, lambda m: None, _describe("AveragedModel", sizes, kind, decay,
                                                     use_buffers, steps, seed), scale=10)
    _fuzz(body)
