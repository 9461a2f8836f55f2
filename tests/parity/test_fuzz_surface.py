"""Differential fuzzer, part 5: the rest of the public surface (test_fuzz_coverage lists
what is left): the special functions, nn functionals (activations, norms, pools,
convolutions, losses, resampling), the fused linear-algebra ops (addmm and family),
decompositions (compared by what is unique about them), fft, joining and indexing ops,
Tensor's conversion and query methods. Entries are grouped by signature family: one
strategy serves every op of a family. Fewer examples per op than part 2 (these ops share
their kernels with ops fuzzed there)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.parity import fuzz_inputs as fi
from tests.parity import spellings
from tests.parity.compare import check
from tests.parity.test_fuzz_ops import (ALL, FLOATS, FUZZ, _conv_args, _dim, _dtype_kw,
                                        _solve_args,
                                        _index_values, _loss_input, _class_target,
                                        _matrix_operand, _shape, _sizes, _tensor,
                                        registrar)

torch = pytest.importorskip("torch")

EXAMPLES = 6
FUZZ_SURFACE = settings(FUZZ, max_examples=EXAMPLES)
OPS, SPELLED = {}, {}
op = registrar(OPS, SPELLED)
NUMERIC = ("uint8", "int64", "float32", "float64")


def family(names, strategy, **options):
    """Register one strategy for several ops."""
    for name in names:
        op(name, **options)(strategy)


# ---- elementwise: one tensor, maybe a parameter ------------------------------------------
def _any_unary(draw):
    return (_tensor(draw),), {}


def _float_unary(draw):
    return (_tensor(draw, dtypes=FLOATS + ("int64", "bool")),), {}


family(["digamma", "erfinv", "i0", "lgamma", "sinc", "special.bessel_j0", "special.bessel_j1",
        "special.entr", "special.i0e", "special.i1", "special.i1e", "special.log_ndtr",
        "special.ndtr", "special.ndtri", "special.spherical_bessel_j0",
        "special.modified_bessel_i0", "special.modified_bessel_i1", "special.erfcx",
        "special.airy_ai", "special.bessel_y0", "special.bessel_y1",
        "special.modified_bessel_k0", "special.modified_bessel_k1",
        "special.scaled_modified_bessel_k0", "special.scaled_modified_bessel_k1", "conj",
        "conj_physical", "resolve_conj", "detach",
        "Tensor.contiguous", "Tensor.cpu", "Tensor.double", "Tensor.float", "Tensor.half",
        "Tensor.bfloat16", "Tensor.bool", "Tensor.char", "Tensor.short",
        "Tensor.int", "Tensor.long", "Tensor.cfloat", "Tensor.cdouble", "Tensor.tolist",
        "Tensor.item", "Tensor.dim", "Tensor.ndimension", "Tensor.nelement", "numel",
        "Tensor.element_size", "is_complex", "is_floating_point", "is_signed", "is_conj",
        "Tensor.is_contiguous", "Tensor.size",
        "is_nonzero", "t", "adjoint", "argwhere", "nonzero", "fliplr", "flipud", "atleast_1d",
        "atleast_2d", "atleast_3d", "real", "ones_like", "nn.functional.logsigmoid",
        "nn.functional.hardsigmoid", "nn.functional.hardswish", "nn.functional.mish",
        "nn.functional.relu6", "nn.functional.selu", "nn.functional.softsign",
        "nn.functional.tanhshrink", "Tensor.zero_", "Tensor.detach_"], _any_unary)


def _nonempty_layout(draw):
    """(no 0-size dims: the strides and offset torch.tensor gives an empty tensor are
    numpy's, an artifact of how the operands are built)"""
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    return (_tensor(draw, shape=shape),), {}


family(["Tensor.storage_offset", "Tensor.stride"], _nonempty_layout)


@op("logit")
def _logit_args(draw):
    x, _ = _float_unary(draw)
    return x, {"eps": draw(st.sampled_from([None, 1e-6, 0.1]))}


@op("polygamma", method=False, scale=100)
def _polygamma_args(draw):
    return (draw(st.integers(-1, 3)), _tensor(draw, dtypes=FLOATS + ("int64",))), {}


@op("mvlgamma")
def _mvlgamma_args(draw):
    x = fi.Operand(values=(np.abs(np.random.default_rng(draw(st.integers(0, 99)))
                                  .standard_normal(draw(st.integers(0, 3)))) + 2).tolist(),
                   dtype=draw(st.sampled_from(FLOATS + ("int64",))))
    return (x, draw(st.integers(0, 3))), {}


@op("special.zeta")
def _zeta_args(draw):
    x = _tensor(draw, dtypes=FLOATS + ("int64",))
    other = draw(st.one_of(st.sampled_from([1.5, 2]), st.just(None)))
    if other is None:
        other = _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))), dtypes=FLOATS)
    return (x, other), {}


family(["special.xlog1py", "special.gammainc", "special.gammaincc"], _zeta_args)


def _polynomial_args(draw):
    """x (often in [-1, 1], where the closed forms apply, with the boundary values) and a
    degree tensor or number, some negative, some past the closed-form switch."""
    x = _tensor(draw, dtypes=FLOATS + ("int64",))
    shape = _shape(x)
    if draw(st.booleans()):
        values = np.round(np.random.default_rng(draw(st.integers(0, 999))).uniform(
            -1, 1, draw(st.integers(0, 4))), 2)
        values[:2] = [1.0, -1.0][:len(values[:2])]
        x = fi.Operand(values=values.tolist(), dtype=draw(st.sampled_from(FLOATS)),
                       shape=values.shape)
        shape = values.shape
    n = draw(st.one_of(st.integers(-1, 12), st.just(None)))
    if n is None:
        n = _tensor(draw, shape=draw(fi.broadcast_partner(tuple(shape))),
                    dtypes=FLOATS + ("int64",))
    return (x, n), {}


family([f"special.{name}" for name in (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w")], _polynomial_args, method=False,
    scale=100)


def _activation(params):
    def strategy(draw):
        x = _tensor(draw, dtypes=FLOATS + ("int64",))
        return (x,), {k: draw(st.sampled_from(v)) for k, v in params.items()}
    return strategy


for _name, _params in {
        "celu": {"alpha": [1.0, 0.5]}, "elu": {"alpha": [1.0, 0.5]},
        "hardshrink": {"lambd": [0.5, 1.0]}, "softshrink": {"lambd": [0.5, 1.0, -1.0]},
        "hardtanh": {"min_val": [-1.0, 0.5], "max_val": [1.0, 2.0]},
        "leaky_relu": {"negative_slope": [0.01, 0.2]},
        "rrelu": {"lower": [0.125, 0.2], "upper": [0.3, 0.5]},
        "softplus": {"beta": [1.0, 2.0], "threshold": [20.0, 1.0]}}.items():
    op("nn.functional." + _name)(_activation(_params))


@op("nn.functional.threshold")
def _threshold_args(draw):
    x = _tensor(draw, dtypes=FLOATS + ("int64",))
    return (x, draw(st.sampled_from([0.0, 0.5, 1])), draw(st.sampled_from([0.0, -2.0, 3]))), {}


def _with_dim(dtypes):
    def strategy(draw):
        x = _tensor(draw, dtypes=dtypes)
        return (x,), {"dim": _dim(draw, len(_shape(x)))}
    return strategy


op("nn.functional.softmin")(_with_dim(FLOATS))
op("nn.functional.glu")(_with_dim(FLOATS))
@op("cummax")
def _cum_args(draw):
    """(dims out of range only on non-empty tensors: torch's empty fast path skips the
    dim check)"""
    x = _tensor(draw, dtypes=("int64", "float32", "float64", "bool"))
    empty = 0 in _shape(x)
    return (x,), {"dim": _dim(draw, len(_shape(x)), valid_only=empty)}


family(["cummin", "logcumsumexp"], _cum_args)


@op("nn.functional.normalize")
def _normalize_args(draw):
    x = _tensor(draw, dtypes=FLOATS)
    return (x,), {"p": draw(st.sampled_from([2.0, 1.0, float("inf")])),
                  "dim": _dim(draw, len(_shape(x)), valid_only=True)}


# ---- clamp, lerp, addcmul and friends --------------------------------------------------
@op("clamp")
def _clamp_args(draw):
    x = _tensor(draw, dtypes=NUMERIC)
    bounds = []
    for _ in range(2):
        b = draw(st.one_of(st.none(), st.sampled_from([-1, 0.5, 2]), st.just("t")))
        if b == "t":
            b = _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))), dtypes=NUMERIC)
        bounds.append(b)
    return (x, *bounds), {}


@op("clamp_min")
def _clamp_min_args(draw):
    x = _tensor(draw, dtypes=NUMERIC)
    return (x, draw(st.sampled_from([-1, 0.5, 2]))), {}


op("clamp_max")(_clamp_min_args)


@op("lerp")
def _lerp_args(draw):
    x = _tensor(draw, dtypes=FLOATS)
    end = _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))), dtypes=(x.spec[1],))
    weight = draw(st.sampled_from([0.25, 0.5, 0.75]))
    if draw(st.booleans()):
        weight = _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))),
                         dtypes=(x.spec[1],))
    return (x, end, weight), {}


@op("addcmul")
def _addcmul_args(draw):
    x = _tensor(draw, dtypes=NUMERIC)
    t1 = _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))), dtypes=NUMERIC)
    t2 = _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))), dtypes=NUMERIC)
    return (x, t1, t2), {"value": draw(st.sampled_from([1, 0.5, -2]))}


op("addcdiv")(_addcmul_args)


@op("rsub", method=False)
def _rsub_args(draw):
    x = _tensor(draw, dtypes=NUMERIC + ("bool",))
    other = draw(fi.numbers()) if draw(st.booleans()) else \
        _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))), dtypes=NUMERIC)
    return (x, other), {"alpha": draw(st.sampled_from([1, 2]))}


@op("isclose")
def _isclose_args(draw):
    x = _tensor(draw)
    y = _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))), dtypes=(x.spec[1],))
    return (x, y), {"rtol": draw(st.sampled_from([1e-5, 0.1])),
                    "equal_nan": draw(st.booleans())}


op("allclose")(_isclose_args)


@op("equal")
def _equal_args(draw):
    x = _tensor(draw)
    return (x, _tensor(draw, shape=draw(st.sampled_from([_shape(x), (2,)])))), {}


op("is_same_size")(_equal_args)


@op("complex", method=False)
def _complex_args(draw):
    """(float32/float64 parts: tensorlib has no complex32, torch's complex of float16)"""
    x = _tensor(draw, dtypes=FLOATS)
    dtype = draw(st.sampled_from([x.spec[1], x.spec[1], "float64"]))
    return (x, _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))), dtypes=(dtype,))), {}


op("polar", method=False)(_complex_args)


@op("view_as_real")
def _view_as_real_args(draw):
    """A float operand: the call makes the complex tensor from it."""
    return (_tensor(draw, dtypes=FLOATS),), {}


def _view_as_real_call(path):
    run = spellings.call(path)
    return lambda m, args, kwargs: run(m, (m.complex(args[0], args[0] * 2),), kwargs)


OPS["view_as_real"] = (OPS["view_as_real"][0], _view_as_real_call("view_as_real"), 1)
SPELLED.pop("view_as_real")


@op("view_as_complex")
def _view_as_complex_args(draw):
    # (no 0-size dims: torch checks the strides torch.tensor gives an empty tensor)
    shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2))) + (draw(st.sampled_from(
        [2, 2, 3])),)
    return (_tensor(draw, shape=shape, dtypes=FLOATS),), {}


# ---- linear algebra: the fused ops ------------------------------------------------------
def _mat(draw, shape, dtype):
    return _tensor(draw, shape=shape, dtypes=(dtype,))


def _coefficients(draw):
    return {"beta": draw(st.sampled_from([1, 0, 0.5])), "alpha": draw(st.sampled_from([1, 2]))}


def _dims(draw, n):
    return [draw(st.integers(0, 3)) for _ in range(n)]


def _fused(shapes_of):
    def strategy(draw):
        dtype = draw(st.sampled_from(FLOATS))
        shapes = shapes_of(draw)
        return tuple(_mat(draw, s, dtype) for s in shapes), _coefficients(draw)
    return strategy


def _addmm_shapes(draw):
    n, k, m = _dims(draw, 3)
    return [draw(st.sampled_from([(n, m), (m,), (1, m)])), (n, k), (k, m)]


def _addmv_shapes(draw):
    """(input broadcasting from (1,) only when the product is not empty: torch's empty fast
    path returns input's shape then)"""
    n, k = _dims(draw, 2)
    return [draw(st.sampled_from([(n,), (1,)])) if n and k else (n,), (n, k),
            (k if draw(st.integers(0, 5)) else k + 1,)]


def _addr_shapes(draw):
    n, m = _dims(draw, 2)
    return [(n, m), (n,), (m,)]


def _baddbmm_shapes(draw):
    b, n, k, m = _dims(draw, 4)
    return [(b, n, m), (b, n, k), (b, k, m)]


def _addbmm_shapes(draw):
    b, n, k, m = _dims(draw, 4)
    return [(n, m), (b, n, k), (b, k, m)]


op("addmm", scale=10)(_fused(_addmm_shapes))
op("addmv", scale=10)(_fused(_addmv_shapes))
op("addr", scale=10)(_fused(_addr_shapes))
op("baddbmm", scale=10)(_fused(_baddbmm_shapes))
op("addbmm", scale=10)(_fused(_addbmm_shapes))


@op("mv", scale=10)
def _mv_args(draw):
    n, k = _dims(draw, 2)
    dtype = draw(st.sampled_from(FLOATS + ("int64",)))
    return (_mat(draw, (n, k), dtype), _mat(draw, (k if draw(st.integers(0, 5)) else k + 1,),
                                            dtype)), {}


@op("vdot", scale=10)
def _vdot_args(draw):
    n = draw(st.integers(0, 4))
    dtype = draw(st.sampled_from(FLOATS + ("int64",)))
    return (_mat(draw, (n,), dtype), _mat(draw, (n if draw(st.integers(0, 5)) else n + 1,),
                                          dtype)), {}


@op("inner", scale=10)
def _inner_args(draw):
    k = draw(st.integers(0, 3))
    dtype = draw(st.sampled_from(FLOATS + ("int64",)))
    lead_a = tuple(draw(st.lists(st.integers(0, 2), max_size=2)))
    lead_b = tuple(draw(st.lists(st.integers(0, 2), max_size=1)))
    return (_mat(draw, lead_a + (k,), dtype), _mat(draw, lead_b + (k,), dtype)), {}


@op("kron")
def _kron_args(draw):
    a = _tensor(draw, max_dims=2)
    return (a, _tensor(draw, max_dims=3, dtypes=(a.spec[1], "float64"))), {}


@op("tensordot", scale=10)
def _tensordot_args(draw):
    k = draw(st.integers(0, 3))
    a = _mat(draw, (draw(st.integers(0, 2)), k), "float64")
    b = _mat(draw, (k, draw(st.integers(0, 2))), "float64")
    return (a, b), {"dims": draw(st.sampled_from([1, 0, ([1], [0])]))}


@op("einsum", method=False, scale=10)
def _einsum_args(draw):
    n, k, m = _dims(draw, 3)
    equation, shapes = draw(st.sampled_from([
        ("ij,jk->ik", [(n, k), (k, m)]), ("ii->i", [(n, n)]), ("ij->ji", [(n, k)]),
        ("bij,bjk->bik", [(2, n, k), (2, k, m)]), ("i,i->", [(n,), (n,)]),
        ("ij->", [(n, k)]), ("...j,j->...", [(m, k), (k,)])]))
    return (equation, *(_mat(draw, s, "float64") for s in shapes)), {}


@op("matrix_power", scale=100)
def _matrix_power_args(draw):
    n = draw(st.integers(0, 3))
    batch = tuple(draw(st.lists(st.integers(0, 2), max_size=1)))
    return (_matrix_operand(draw, batch, n, conditioned=True), draw(st.integers(-2, 3))), {}


@op("trace")
def _trace_args(draw):
    """Mostly matrices, sometimes another rank."""
    rank = draw(st.sampled_from([2, 2, 2, 1, 3]))
    return (_tensor(draw, shape=tuple(draw(st.integers(0, 3)) for _ in range(rank))),), {}


@op("cross")
def _cross_args(draw):
    lead = tuple(draw(st.lists(st.integers(1, 2), max_size=1)))
    size = draw(st.sampled_from([3, 3, 2]))
    a = _tensor(draw, shape=lead + (size,), dtypes=FLOATS + ("int64",))
    kwargs = {"dim": -1} if draw(st.booleans()) else {}
    return (a, _tensor(draw, shape=(size,) if draw(st.booleans()) else lead + (size,),
                       dtypes=(a.spec[1],))), kwargs


op("linalg.cross")(_cross_args)


@op("linalg.vecdot")
def _vecdot_args(draw):
    a = _tensor(draw, min_dims=1, dtypes=FLOATS)
    return (a, _tensor(draw, shape=draw(fi.broadcast_partner(_shape(a))),
                       dtypes=(a.spec[1],))), {"dim": -1}


@op("linalg.multi_dot", method=False, scale=10)
def _multi_dot_args(draw):
    sizes = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(3, 5)))]
    mats = [_mat(draw, (sizes[i], sizes[i + 1]), "float64") for i in range(len(sizes) - 1)]
    return (mats,), {}


@op("linalg.vander")
def _vander_args(draw):
    """(not an expanded x: torch's vander writes into a copy with x's strides and raises
    for the overlap)"""
    x = _tensor(draw, shape=(draw(st.integers(0, 4)),), dtypes=FLOATS + ("int64",))
    if x.spec[2] == "expanded":
        x = fi.Operand(spec=(x.spec[0], x.spec[1], "contiguous", x.spec[3]))
    return (x,), \
        {"N": draw(st.sampled_from([None, 0, 2, 4]))}


# ---- decompositions: compared by what is unique about them --------------------------------
def _square(draw, conditioned=True, symmetric=False, spd=False):
    n = draw(st.integers(0, 3))
    batch = tuple(draw(st.lists(st.integers(0, 2), max_size=1)))
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    a = np.round(rng.standard_normal(batch + (n, n)), 2)
    if symmetric or spd:
        a = a + np.swapaxes(a, -1, -2)
    if spd:
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    elif conditioned:
        a = a + 3 * n * np.eye(n)
    return fi.Operand(values=a.tolist(), dtype=draw(st.sampled_from(FLOATS)), shape=a.shape)


family(["linalg.slogdet", "logdet", "linalg.inv_ex", "linalg.eigvals", "linalg.matrix_rank",
        "linalg.svdvals", "linalg.pinv"],
       lambda draw: ((_square(draw),), {}), scale=100)
family(["linalg.matrix_exp", "linalg.cond", "linalg.diagonal", "linalg.lu_factor",
        "linalg.lu_factor_ex", "linalg.lu"], lambda draw: ((_square(draw),), {}), scale=100)
op("linalg.solve_ex", scale=100)(_solve_args)


@op("linalg.lu_solve", method=False, scale=100)
def _lu_solve_args(draw):
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=1)))
    n = draw(st.integers(1, 3))
    a = _matrix_operand(draw, batch, n, conditioned=True, dtypes=("float64",))
    b = _matrix_operand(draw, batch, n, draw(st.integers(1, 2)), dtypes=("float64",))
    return (a, b), {"left": True, "adjoint": draw(st.booleans())}


def _lu_solve_call(path):
    """lu_solve of lu_factor's (LU, pivots) in each library."""
    run = spellings.call(path)
    return lambda m, args, kwargs: run(m, tuple(m.linalg.lu_factor(args[0])) + (args[1],),
                                       kwargs)


OPS["linalg.lu_solve"] = (OPS["linalg.lu_solve"][0], _lu_solve_call("linalg.lu_solve"), 100)
SPELLED["linalg.lu_solve"] = (SPELLED["linalg.lu_solve"][0], _lu_solve_call)


op("lu_unpack", method=False, scale=100)(lambda draw: ((_square(draw),), {}))
op("lu", scale=100)(lambda draw: ((_square(draw),), {}))


def _lu_unpack_call(path):
    """lu_unpack of linalg.lu_factor's (LU, pivots) in each library."""
    run = spellings.call(path)
    return lambda m, args, kwargs: run(m, tuple(m.linalg.lu_factor(args[0])), kwargs)


OPS["lu_unpack"] = (OPS["lu_unpack"][0], _lu_unpack_call("lu_unpack"), 100)
SPELLED["lu_unpack"] = (SPELLED["lu_unpack"][0], _lu_unpack_call)


@op("lu_solve", scale=100)
def _legacy_lu_solve_args(draw):
    (a, b), _ = _lu_solve_args(draw)
    return (b, a), {}


def _legacy_lu_solve_call(path):
    """b.lu_solve(LU, pivots) with linalg.lu_factor's (LU, pivots) of A in each library."""
    run = spellings.call(path)
    return lambda m, args, kwargs: run(m, (args[0],) + tuple(m.linalg.lu_factor(args[1])),
                                       kwargs)


OPS["lu_solve"] = (OPS["lu_solve"][0], _legacy_lu_solve_call("lu_solve"), 100)
SPELLED["lu_solve"] = (SPELLED["lu_solve"][0], _legacy_lu_solve_call)


family(["linalg.ldl_factor", "linalg.ldl_factor_ex"],
       lambda draw: ((_square(draw, symmetric=True),), {}), scale=100)


@op("linalg.ldl_solve", method=False, scale=100)
def _ldl_solve_args(draw):
    a = _square(draw, symmetric=True)
    shape = tuple(a.shape)
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    b = np.round(rng.standard_normal(shape[:-1] + (draw(st.integers(1, 2)),)), 2)
    return (a, fi.Operand(values=b.tolist(), dtype=a.dtype, shape=b.shape)), {}


def _ldl_solve_call(path):
    """ldl_solve of ldl_factor's (LD, pivots) in each library."""
    run = spellings.call(path)
    return lambda m, args, kwargs: run(m, tuple(m.linalg.ldl_factor(args[0])) + (args[1],),
                                       kwargs)


OPS["linalg.ldl_solve"] = (OPS["linalg.ldl_solve"][0], _ldl_solve_call("linalg.ldl_solve"),
                           100)
SPELLED["linalg.ldl_solve"] = (SPELLED["linalg.ldl_solve"][0], _ldl_solve_call)


@op("linalg.householder_product", method=False, scale=100)
def _householder_args(draw):
    batch = tuple(draw(st.lists(st.integers(1, 2), max_size=1)))
    n = draw(st.integers(1, 3))
    m = n + draw(st.integers(0, 2))
    dtype = draw(st.sampled_from(FLOATS))
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    a = np.round(rng.standard_normal(batch + (m, n)), 2)
    tau = np.round(rng.uniform(0, 2, batch + (draw(st.integers(0, n)),)), 2)
    return (fi.Operand(values=a.tolist(), dtype=dtype, shape=a.shape),
            fi.Operand(values=tau.tolist(), dtype=dtype, shape=tau.shape)), {}


@op("linalg.tensorinv", method=False, scale=100)
def _tensorinv_args(draw):
    n = draw(st.integers(1, 3))
    a = _matrix_operand(draw, (), n, conditioned=True, dtypes=FLOATS)
    return (a,), {"ind": draw(st.integers(0, 1))}


@op("linalg.tensorsolve", method=False, scale=100)
def _tensorsolve_args(draw):
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    a = np.round(rng.standard_normal((2, 3, 6)), 2) + 4 * np.eye(6).reshape(2, 3, 6)
    b = np.round(rng.standard_normal((2, 3)), 2)
    return (fi.Operand(values=a.tolist(), dtype="float64", shape=a.shape),
            fi.Operand(values=b.tolist(), dtype="float64", shape=b.shape)), {}


family(["linalg.eigvalsh"], lambda draw: ((_square(draw, symmetric=True),), {}), scale=100)
family(["linalg.cholesky", "linalg.cholesky_ex", "cholesky"],
       lambda draw: ((_square(draw, spd=True),), {"upper": draw(st.booleans())}), scale=100)


@op("cholesky_inverse", scale=100)
def _cholesky_inverse_args(draw):
    a = _square(draw, spd=True)
    return (a,), {"upper": draw(st.booleans())}


def _cholesky_inverse_call(path):
    run = spellings.call(path)
    return lambda m, args, kwargs: run(m, (m.linalg.cholesky(args[0], upper=kwargs["upper"]),),
                                       kwargs)


OPS["cholesky_inverse"] = (OPS["cholesky_inverse"][0], _cholesky_inverse_call(
    "cholesky_inverse"), 100)
SPELLED["cholesky_inverse"] = (SPELLED["cholesky_inverse"][0], _cholesky_inverse_call)


def _eigh_call(path):
    """Eigenvalues, and the matrix the eigenvectors rebuild (their signs are free)."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        values, vectors = run(m, args, kwargs)
        return values, vectors @ m.diag_embed(values) @ vectors.mT
    return call


op("linalg.eigh", via=_eigh_call, scale=100)(
    lambda draw: ((_square(draw, symmetric=True),), {"UPLO": draw(st.sampled_from("LU"))}))


def _eig_call(path):
    """Eigenvalues sorted (their order is free) and A V = V diag(L) (vectors' phases are)."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        values, vectors = run(m, args, kwargs)
        residual = args[0].to(vectors.dtype) @ vectors - vectors @ m.diag_embed(values)
        key = values.real * 1000 + values.imag
        return m.sort(key, dim=-1).values, residual.abs().amax() < 1e-3 if residual.numel() \
            else True
    return call


op("linalg.eig", via=_eig_call, scale=100)(lambda draw: ((_square(draw),), {}))


def _svd_call(path, full_default=True):
    """Singular values and the matrix U S Vh rebuilds (the vectors' signs are free)."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        u, s, v = run(m, args, kwargs)
        if path == "svd":                       # torch.svd gives V, linalg.svd gives Vh
            v = v.mT
        k = s.shape[-1]
        return s, u[..., :k] @ m.diag_embed(s) @ v[..., :k, :], tuple(u.shape), tuple(v.shape)
    return call


def _rectangular(draw):
    n, k = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    batch = tuple(draw(st.lists(st.integers(0, 2), max_size=1)))
    return _matrix_operand(draw, batch, n, k)


op("linalg.svd", via=_svd_call, scale=100)(
    lambda draw: ((_rectangular(draw),), {"full_matrices": draw(st.booleans())}))
op("svd", via=_svd_call, scale=100)(
    lambda draw: ((_rectangular(draw),), {"some": draw(st.booleans())}))


def _qr_call(path):
    """Q R, |R| and Q's shape (the signs of Q's columns and R's rows are free)."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        q, r = run(m, args, kwargs)
        if q.numel() == 0 or kwargs.get("mode") == "r":
            return tuple(q.shape), r.abs()
        return q @ r, r.abs(), tuple(q.shape)
    return call


op("linalg.qr", via=_qr_call, scale=100)(
    lambda draw: ((_rectangular(draw),), {"mode": draw(st.sampled_from(
        ["reduced", "complete", "r"]))}))
op("qr", via=_qr_call, scale=100)(
    lambda draw: ((_rectangular(draw),), {"some": draw(st.booleans())}))


@op("linalg.lstsq", scale=100)
def _lstsq_args(draw):
    n, k = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    a = _matrix_operand(draw, (), max(n, k), k, dtypes=("float64",))
    return (a, _matrix_operand(draw, (), max(n, k), draw(st.integers(1, 2)),
                               dtypes=("float64",))), {}


def _lstsq_call(path):
    run = spellings.call(path)
    return lambda m, args, kwargs: run(m, args, kwargs).solution


OPS["linalg.lstsq"] = (OPS["linalg.lstsq"][0], _lstsq_call("linalg.lstsq"), 100)
SPELLED["linalg.lstsq"] = (SPELLED["linalg.lstsq"][0], _lstsq_call)


@op("linalg.solve_triangular", method=False, scale=100)
def _solve_triangular_args(draw):
    n, k = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 999)))
    a = np.triu(np.round(rng.standard_normal((n, n)), 2)) + 3 * np.eye(n)
    upper, left = draw(st.booleans()), draw(st.booleans())
    b = _matrix_operand(draw, (), n if left else k, k if left else n, dtypes=("float64",))
    return (fi.Operand(values=(a if upper else a.T).tolist(), dtype="float64"), b), \
        {"upper": upper, "left": left, "unitriangular": draw(st.booleans())}


# ---- fft ---------------------------------------------------------------------------------
def _fft_args(draw):
    x = _tensor(draw, min_dims=1, dtypes=FLOATS + ("int64",))
    kwargs = {"norm": draw(st.sampled_from([None, "ortho", "forward", "backward"]))}
    if draw(st.booleans()):
        kwargs["n"] = draw(st.integers(1, 4))
    kwargs["dim"] = _dim(draw, len(_shape(x)), valid_only=True)
    return (x,), kwargs


def _fftn_args(draw):
    x = _tensor(draw, min_dims=2, dtypes=FLOATS)
    return (x,), {"norm": draw(st.sampled_from([None, "ortho", "forward"]))}


family(["fft.fft", "fft.ifft", "fft.rfft", "fft.ihfft"], _fft_args, scale=10)
family(["fft.fft2", "fft.ifft2", "fft.fftn", "fft.ifftn", "fft.rfft2", "fft.rfftn",
        "fft.ihfft2", "fft.ihfftn"], _fftn_args, scale=10)


def _complex_input(path, inverse_real=False):
    """irfft/hfft take a complex spectrum: built from the real operand in both libraries."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        x = args[0]
        return run(m, (m.complex(x, x * 0.5 + 1) if x.is_floating_point() else x,) +
                   tuple(args[1:]), kwargs)
    return call


family(["fft.irfft", "fft.hfft"], _fft_args, via=_complex_input, scale=10)
family(["fft.irfft2", "fft.irfftn", "fft.hfft2", "fft.hfftn"], _fftn_args, via=_complex_input,
       scale=10)


@op("fft.fftfreq", method=False)
def _fftfreq_args(draw):
    return (draw(st.integers(0, 6)), draw(st.sampled_from([1.0, 0.5, 2]))), \
        _dtype_kw(draw, FLOATS)


op("fft.rfftfreq", method=False)(_fftfreq_args)


@op("fft.fftshift")
def _fftshift_args(draw):
    x = _tensor(draw, min_dims=1)
    return (x,), ({"dim": _dim(draw, len(_shape(x)), valid_only=True)}
                  if draw(st.booleans()) else {})


op("fft.ifftshift")(_fftshift_args)


# ---- nn functionals: normalization -------------------------------------------------------
def _nc(draw, spatial_dims=(0, 1, 2), channels=(1, 2, 4), dtypes=FLOATS):
    """An (N, C, *spatial) float operand, its channel count."""
    c = draw(st.sampled_from(channels))
    spatial = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.sampled_from(spatial_dims))))
    return _tensor(draw, shape=(draw(st.integers(1, 2)), c) + spatial, dtypes=dtypes), c


def _positive(draw, shape, dtype):
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    return fi.Operand(values=(rng.random(shape) + 0.5).tolist(), dtype=dtype)


@op("nn.functional.batch_norm", scale=10)
def _batch_norm_args(draw):
    x, c = _nc(draw)
    dtype = x.spec[1]
    training = draw(st.booleans())
    stats = [_tensor(draw, shape=(c,), dtypes=(dtype,)), _positive(draw, (c,), dtype)] \
        if not training or draw(st.booleans()) else [None, None]
    affine = [_tensor(draw, shape=(c,), dtypes=(dtype,)) for _ in range(2)] \
        if draw(st.booleans()) else [None, None]
    return (x, *stats, *affine), {"training": training, "eps": 1e-5}


@op("nn.functional.instance_norm", scale=10)
def _instance_norm_args(draw):
    x, c = _nc(draw, spatial_dims=(1, 2))
    affine = {"weight": _tensor(draw, shape=(c,), dtypes=(x.spec[1],)),
              "bias": _tensor(draw, shape=(c,), dtypes=(x.spec[1],))} \
        if draw(st.booleans()) else {}
    return (x,), affine


@op("nn.functional.group_norm", scale=10)
def _group_norm_args(draw):
    x, c = _nc(draw)
    groups = draw(st.sampled_from([g for g in (1, 2, 3, 4) if c % g == 0] + [3]))
    affine = [_tensor(draw, shape=(c,), dtypes=(x.spec[1],)) for _ in range(2)] \
        if draw(st.booleans()) else []
    return (x, groups, *affine), {}


op("group_norm", scale=10)(_group_norm_args)


@op("nn.functional.local_response_norm", scale=10)
def _local_response_norm_args(draw):
    x, _ = _nc(draw, spatial_dims=(1, 2))
    return (x, draw(st.integers(1, 3))), {"alpha": 1e-2, "beta": 0.75, "k": 1.0}


@op("nn.functional.rms_norm", scale=10)
def _rms_norm_args(draw):
    x = _tensor(draw, min_dims=1, dtypes=FLOATS)
    shape = _shape(x)
    normalized = shape[-draw(st.integers(1, len(shape))):]
    weight = _tensor(draw, shape=normalized, dtypes=(x.spec[1],)) if draw(st.booleans()) \
        else None
    return (x, normalized, weight), {"eps": draw(st.sampled_from([None, 1e-3]))}


@op("nn.functional.prelu")
def _prelu_args(draw):
    x, c = _nc(draw)
    return (x, _tensor(draw, shape=draw(st.sampled_from([(1,), (c,)])),
                       dtypes=(x.spec[1],))), {}


# ---- nn functionals: embeddings, one_hot ---------------------------------------------------
@op("nn.functional.one_hot")
def _one_hot_args(draw):
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    index = _index_values(draw, shape, 4) if shape and 0 not in shape else \
        fi.Operand(values=np.zeros(shape, dtype=np.int64).tolist(), dtype="int64")
    return (index,), {"num_classes": draw(st.sampled_from([-1, 4, 5, 2]))}


@op("nn.functional.embedding")
def _embedding_args(draw):
    weight = _tensor(draw, shape=(4, draw(st.integers(1, 3))), dtypes=FLOATS)
    index = _index_values(draw, tuple(draw(st.lists(st.integers(1, 3), max_size=2))), 4)
    return (index, weight), {"padding_idx": draw(st.sampled_from([None, 0, -1]))}


@op("nn.functional.embedding_bag", scale=10)
def _embedding_bag_args(draw):
    weight = _tensor(draw, shape=(4, draw(st.integers(1, 3))), dtypes=FLOATS)
    index = _index_values(draw, (draw(st.integers(1, 2)), draw(st.integers(1, 3))), 4)
    return (index, weight), {"mode": draw(st.sampled_from(["mean", "sum", "max"]))}


# ---- nn functionals: pooling, resampling -------------------------------------------------
def _pool_nd(spatial, adaptive=False, with_dilation=False):
    def strategy(draw):
        c = draw(st.integers(1, 2))
        size = tuple(draw(st.integers(1, 5)) for _ in range(spatial))
        lead = (draw(st.integers(1, 2)), c) if draw(st.integers(0, 3)) else (c,)
        x = _tensor(draw, shape=lead + size, dtypes=FLOATS)
        if adaptive:
            return (x, draw(st.sampled_from([1, 2, 3]))), {}
        kernel = draw(st.integers(1, 3))
        kwargs = {"stride": draw(st.one_of(st.none(), st.integers(1, 2))),
                  "padding": draw(st.integers(0, kernel // 2)), "ceil_mode": draw(st.booleans())}
        if with_dilation:
            kwargs["dilation"] = draw(st.integers(1, 2))
        return (x, kernel), kwargs
    return strategy


def _defined_indices(path):
    """A window lying wholly in the padding has no element: its index is unspecified (torch
    leaves whatever it had), its value -inf in both."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        values, indices = run(m, args, kwargs)
        return values, m.where(values == float("-inf"), -1, indices)
    return call


for _n in (1, 2, 3):
    op(f"nn.functional.adaptive_avg_pool{_n}d", scale=10)(_pool_nd(_n, adaptive=True))
    op(f"nn.functional.adaptive_max_pool{_n}d")(_pool_nd(_n, adaptive=True))
    op(f"nn.functional.adaptive_max_pool{_n}d_with_indices")(_pool_nd(_n, adaptive=True))
    op(f"nn.functional.max_pool{_n}d_with_indices", via=_defined_indices)(
        _pool_nd(_n, with_dilation=True))
op("nn.functional.max_pool1d")(_pool_nd(1, with_dilation=True))
op("nn.functional.max_pool3d")(_pool_nd(3, with_dilation=True))
op("nn.functional.avg_pool1d", scale=10)(_pool_nd(1))
op("nn.functional.avg_pool3d", scale=10)(_pool_nd(3))


def _lp_pool(spatial):
    def strategy(draw):
        x = _tensor(draw, shape=(1, 2) + tuple(draw(st.integers(2, 5)) for _ in range(spatial)),
                    dtypes=FLOATS)
        return (x, draw(st.sampled_from([1.0, 2.0])), draw(st.integers(1, 2))), \
            {"stride": draw(st.one_of(st.none(), st.integers(1, 2)))}
    return strategy


op("nn.functional.lp_pool1d", scale=10)(_lp_pool(1))
op("nn.functional.lp_pool2d", scale=10)(_lp_pool(2))
op("nn.functional.lp_pool3d", scale=10)(_lp_pool(3))


def _unpool(spatial):
    """max_unpool of what max_pool gave (indices are the pool's in both libraries)."""
    def strategy(draw):
        size = tuple(draw(st.integers(2, 4)) for _ in range(spatial))
        return (_tensor(draw, shape=(1, 2) + size, dtypes=FLOATS), 2), {}
    return strategy


def _unpool_call(spatial):
    def via(path):
        run = spellings.call(path)

        def call(m, args, kwargs):
            pool = getattr(m.nn.functional, f"max_pool{spatial}d")
            values, indices = pool(args[0], 2, return_indices=True)
            return run(m, (values, indices, 2), kwargs)
        return call
    return via


for _n in (1, 2, 3):
    op(f"nn.functional.max_unpool{_n}d", via=_unpool_call(_n))(_unpool(_n))


@op("nn.functional.interpolate", scale=10)
def _interpolate_args(draw):
    spatial = draw(st.integers(1, 3))
    mode = draw(st.sampled_from({1: ["nearest", "linear", "nearest-exact", "area"],
                                 2: ["nearest", "bilinear", "bicubic", "area"],
                                 3: ["nearest", "trilinear"]}[spatial]))
    x = _tensor(draw, shape=(1, 2) + tuple(draw(st.integers(1, 4)) for _ in range(spatial)),
                dtypes=FLOATS)
    kwargs = {"mode": mode}
    if draw(st.booleans()):
        kwargs["size"] = draw(st.integers(1, 5))
    else:
        kwargs["scale_factor"] = draw(st.sampled_from([0.5, 2, 1.5]))
    if mode in ("linear", "bilinear", "bicubic", "trilinear"):
        kwargs["align_corners"] = draw(st.booleans())
    return (x,), kwargs


@op("nn.functional.upsample", scale=10)
def _upsample_args(draw):
    x = _tensor(draw, shape=(1, 2, draw(st.integers(1, 3)), draw(st.integers(1, 3))),
                dtypes=FLOATS)
    return (x,), {"scale_factor": 2}


op("nn.functional.upsample_nearest", scale=10)(_upsample_args)
op("nn.functional.upsample_bilinear", scale=10)(_upsample_args)


@op("nn.functional.affine_grid", scale=10)
def _affine_grid_args(draw):
    spatial = draw(st.sampled_from([2, 3]))
    theta = _tensor(draw, shape=(1, spatial, spatial + 1), dtypes=FLOATS)
    return (theta, (1, 1) + tuple(draw(st.integers(1, 3)) for _ in range(spatial))), \
        {"align_corners": draw(st.booleans())}


@op("nn.functional.grid_sample", scale=10)
def _grid_sample_args(draw):
    x = _tensor(draw, shape=(1, 2, draw(st.integers(1, 4)), draw(st.integers(1, 4))),
                dtypes=("float64",))
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    grid = fi.Operand(values=np.round(rng.uniform(-1.2, 1.2, (1, 2, 3, 2)), 3).tolist(),
                      dtype="float64")
    return (x, grid), {"mode": draw(st.sampled_from(["bilinear", "nearest", "bicubic"])),
                       "padding_mode": draw(st.sampled_from(["zeros", "border", "reflection"])),
                       "align_corners": draw(st.booleans())}


@op("nn.functional.pixel_shuffle")
def _pixel_shuffle_args(draw):
    r = draw(st.integers(1, 2))
    c = draw(st.sampled_from([1, 4, 8, 3]))
    return (_tensor(draw, shape=(1, c, 2, draw(st.integers(1, 2)))), r), {}


def _channel_shuffle_args(draw):
    shape = (draw(st.integers(0, 2)), draw(st.sampled_from([0, 2, 4, 6]))) + tuple(
        draw(st.lists(st.integers(1, 2), max_size=2)))
    return (_tensor(draw, shape=shape), draw(st.integers(-1, 3))), {}


family(["nn.functional.channel_shuffle", "nn.functional.native_channel_shuffle"],
       _channel_shuffle_args)


@op("nn.functional.pixel_unshuffle")
def _pixel_unshuffle_args(draw):
    r = draw(st.integers(1, 2))
    return (_tensor(draw, shape=(1, 1, draw(st.sampled_from([2, 4, 3])), 2)), r), {}


@op("nn.functional.unfold")
def _unfold_args(draw):
    x = _tensor(draw, shape=(1, 2, draw(st.integers(1, 4)), draw(st.integers(1, 4))),
                dtypes=FLOATS)
    return (x, draw(st.integers(1, 3))), {"padding": draw(st.integers(0, 1)),
                                          "stride": draw(st.integers(1, 2))}


@op("nn.functional.fold", scale=10)
def _fold_args(draw):
    k = draw(st.integers(1, 2))
    out = (draw(st.integers(2, 3)), draw(st.integers(2, 3)))
    blocks = (out[0] - k + 1) * (out[1] - k + 1)
    return (_tensor(draw, shape=(1, 2 * k * k, blocks), dtypes=FLOATS), out, k), {}


# ---- nn functionals: convolution, attention ----------------------------------------------
@op("nn.functional.conv3d", scale=10)
def _conv3d_args(draw):
    args, kwargs = _conv_args(draw, 3)
    return args, {**kwargs, "padding": 0 if kwargs["padding"] == "same" else kwargs["padding"]}


def _conv_transpose_args(spatial):
    def strategy(draw):
        groups = draw(st.sampled_from([1, 1, 2]))
        cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
        kernel = tuple(draw(st.integers(1, 3)) for _ in range(spatial))
        x = _tensor(draw, shape=(1, cin) + tuple(draw(st.integers(1, 4)) for _ in
                                                range(spatial)), dtypes=("float64",))
        w = _tensor(draw, shape=(cin, cout // groups) + kernel, dtypes=("float64",))
        bias = _tensor(draw, shape=(cout,), dtypes=("float64",)) if draw(st.booleans()) else None
        stride = draw(st.integers(1, 2))
        return (x, w, bias), {"stride": stride, "padding": draw(st.integers(0, 1)),
                              "output_padding": draw(st.integers(0, stride - 1)),
                              "groups": groups, "dilation": draw(st.integers(1, 2))}
    return strategy


for _n in (1, 2, 3):
    op(f"nn.functional.conv_transpose{_n}d", scale=10)(_conv_transpose_args(_n))


@op("nn.functional.bilinear", scale=10)
def _bilinear_args(draw):
    n, a, b, o = (draw(st.integers(1, 3)) for _ in range(4))
    bias = _tensor(draw, shape=(o,), dtypes=("float64",)) if draw(st.booleans()) else None
    return (_tensor(draw, shape=(n, a), dtypes=("float64",)),
            _tensor(draw, shape=(n, b), dtypes=("float64",)),
            _tensor(draw, shape=(o, a, b), dtypes=("float64",)), bias), {}


@op("nn.functional.scaled_dot_product_attention", scale=10)
def _sdpa_args(draw):
    b, h, length, source, e = 1, draw(st.sampled_from([1, 2])), *(draw(st.integers(1, 4))
                                                                    for _ in range(3))
    q = _tensor(draw, shape=(b, h, length, e), dtypes=("float64",))
    k = _tensor(draw, shape=(b, h, source, e), dtypes=("float64",))
    v = _tensor(draw, shape=(b, h, source, e), dtypes=("float64",))
    kwargs = {"is_causal": draw(st.booleans())}
    if not kwargs["is_causal"] and draw(st.booleans()):
        rng = np.random.default_rng(draw(st.integers(0, 99)))
        mask = rng.integers(0, 2, (length, source)).astype(bool)
        mask[:, 0] = True
        kwargs["attn_mask"] = fi.Operand(values=mask.tolist(), dtype="bool")
    if draw(st.booleans()):
        kwargs["scale"] = 0.5
    return (q, k, v), kwargs


@op("nn.functional.multi_head_attention_forward", method=False, scale=10)
def _mha_args(draw):
    length, source, batch = (draw(st.integers(1, 3)) for _ in range(3))
    heads = draw(st.sampled_from([1, 2]))
    e = 2 * heads
    f = ("float64",)
    q = _tensor(draw, shape=(length, batch, e), dtypes=f)
    kv = _tensor(draw, shape=(source, batch, e), dtypes=f)
    return (q, kv, kv, e, heads, _tensor(draw, shape=(3 * e, e), dtypes=f),
            _tensor(draw, shape=(3 * e,), dtypes=f), None, None, False, 0.0,
            _tensor(draw, shape=(e, e), dtypes=f), _tensor(draw, shape=(e,), dtypes=f)), \
        {"training": False, "need_weights": draw(st.booleans())}


# ---- nn functionals: distances and losses ------------------------------------------------
def _pair(draw, min_dims=1):
    x = _tensor(draw, min_dims=min_dims, dtypes=FLOATS)
    return x, _tensor(draw, shape=draw(fi.broadcast_partner(_shape(x))), dtypes=(x.spec[1],))


@op("nn.functional.cosine_similarity", scale=10)
def _cosine_similarity_args(draw):
    x, y = _pair(draw)
    return (x, y), {"dim": _dim(draw, len(_shape(x)), valid_only=True)}


op("cosine_similarity", scale=10)(_cosine_similarity_args)


@op("nn.functional.pairwise_distance", scale=10)
def _pairwise_distance_args(draw):
    x = _tensor(draw, shape=(draw(st.integers(1, 3)), draw(st.integers(1, 3))), dtypes=FLOATS)
    return (x, _tensor(draw, shape=_shape(x), dtypes=(x.spec[1],))), \
        {"p": draw(st.sampled_from([2.0, 1.0])), "keepdim": draw(st.booleans())}


op("pairwise_distance", scale=10)(_pairwise_distance_args)


@op("nn.functional.pdist", scale=10)
def _pdist_args(draw):
    return (_tensor(draw, shape=(draw(st.integers(0, 4)), draw(st.integers(1, 3))),
                    dtypes=FLOATS),), {"p": draw(st.sampled_from([2.0, 1.0, float("inf")]))}


op("pdist", scale=10)(_pdist_args)


@op("cdist", scale=10)
def _cdist_args(draw):
    d = draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(FLOATS))
    return (_tensor(draw, shape=(draw(st.integers(0, 3)), d), dtypes=(dtype,)),
            _tensor(draw, shape=(draw(st.integers(0, 3)), d), dtypes=(dtype,))), \
        {"p": draw(st.sampled_from([2.0, 1.0, 0.0, float("inf")]))}


def _reduction_kw(draw):
    return {"reduction": draw(st.sampled_from(["mean", "sum", "none"]))}


def _regression_loss(extra=None):
    def strategy(draw):
        x = _tensor(draw, dtypes=FLOATS)
        y = _tensor(draw, shape=_shape(x), dtypes=(x.spec[1],))
        kwargs = _reduction_kw(draw)
        for k, v in (extra or {}).items():
            kwargs[k] = draw(st.sampled_from(v))
        return (x, y), kwargs
    return strategy


op("nn.functional.l1_loss", scale=10)(_regression_loss())
op("nn.functional.smooth_l1_loss", scale=10)(_regression_loss({"beta": [1.0, 0.5]}))
op("nn.functional.huber_loss", scale=10)(_regression_loss({"delta": [1.0, 0.5]}))
op("nn.functional.soft_margin_loss", scale=10)(_regression_loss())
op("nn.functional.multilabel_soft_margin_loss", scale=10)(_regression_loss())
op("nn.functional.hinge_embedding_loss", scale=10)(_regression_loss({"margin": [1.0, 0.5]}))
op("nn.functional.poisson_nll_loss", scale=10)(_regression_loss({"log_input": [True, False],
                                                                "full": [False, True]}))
op("nn.functional.kl_div", scale=10)(_regression_loss({"log_target": [False, True]}))


def _probabilities(draw, shape, dtype):
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    return fi.Operand(values=np.clip(rng.random(shape), 0.05, 0.95).tolist(), dtype=dtype)


@op("nn.functional.binary_cross_entropy", scale=10)
def _bce_args(draw):
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    dtype = draw(st.sampled_from(FLOATS))
    kwargs = _reduction_kw(draw)
    if draw(st.booleans()):
        kwargs["weight"] = _probabilities(draw, shape, dtype)
    return (_probabilities(draw, shape, dtype), _probabilities(draw, shape, dtype)), kwargs


@op("nn.functional.binary_cross_entropy_with_logits", scale=10)
def _bce_logits_args(draw):
    (p, y), kwargs = _bce_args(draw)
    x = _tensor(draw, shape=np.array(p.values).shape, dtypes=(p.dtype,))
    if draw(st.booleans()):
        kwargs["pos_weight"] = _probabilities(draw, _shape(x)[-1:], x.spec[1])
    return (x, y), kwargs


@op("nn.functional.gaussian_nll_loss", scale=10)
def _gaussian_nll_args(draw):
    x = _tensor(draw, min_dims=1, dtypes=FLOATS)
    return (x, _tensor(draw, shape=_shape(x), dtypes=(x.spec[1],)),
            _probabilities(draw, _shape(x), x.spec[1])), \
        {**_reduction_kw(draw), "full": draw(st.booleans())}


@op("nn.functional.margin_ranking_loss", scale=10)
def _margin_ranking_args(draw):
    x = _tensor(draw, shape=(draw(st.integers(0, 3)),), dtypes=FLOATS)
    sign = fi.Operand(values=np.sign(np.random.default_rng(draw(st.integers(0, 99)))
                                     .standard_normal(_shape(x))).tolist(), dtype=x.spec[1])
    return (x, _tensor(draw, shape=_shape(x), dtypes=(x.spec[1],)), sign), \
        {**_reduction_kw(draw), "margin": draw(st.sampled_from([0.0, 0.5]))}


@op("nn.functional.cosine_embedding_loss", scale=10)
def _cosine_embedding_args(draw):
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    x = _tensor(draw, shape=(n, d), dtypes=FLOATS)
    sign = fi.Operand(values=np.sign(np.random.default_rng(draw(st.integers(0, 99)))
                                     .standard_normal(n)).tolist(), dtype="int64")
    return (x, _tensor(draw, shape=(n, d), dtypes=(x.spec[1],)), sign), \
        {**_reduction_kw(draw), "margin": draw(st.sampled_from([0.0, 0.5]))}


@op("nn.functional.triplet_margin_loss", scale=10)
def _triplet_args(draw):
    n, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    f = (draw(st.sampled_from(FLOATS)),)
    return tuple(_tensor(draw, shape=(n, d), dtypes=f) for _ in range(3)), \
        {**_reduction_kw(draw), "margin": draw(st.sampled_from([1.0, 0.5])),
         "swap": draw(st.booleans())}


op("nn.functional.triplet_margin_with_distance_loss", scale=10)(
    lambda draw: (_triplet_args(draw)[0], {**_reduction_kw(draw), "swap": draw(st.booleans())}))


@op("nn.functional.multi_margin_loss", scale=10)
def _multi_margin_args(draw):
    x, n, classes, extra, ignore, kwargs = _loss_input(draw)
    x = _tensor(draw, shape=(n, classes), dtypes=(x.spec[1],))
    return (x, _class_target(draw, n, classes, (), None)), \
        {"reduction": kwargs["reduction"], "p": draw(st.sampled_from([1, 2])),
         "margin": draw(st.sampled_from([1.0, 0.5]))}


@op("nn.functional.multilabel_margin_loss", scale=10)
def _multilabel_margin_args(draw):
    n, classes = draw(st.integers(1, 3)), draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    target = rng.integers(-1, classes, (n, classes))
    return (_tensor(draw, shape=(n, classes), dtypes=FLOATS),
            fi.Operand(values=target.tolist(), dtype="int64")), _reduction_kw(draw)


@op("nn.functional.ctc_loss", scale=10)
def _ctc_args(draw):
    t, n, c, s = draw(st.integers(2, 5)), draw(st.integers(1, 2)), draw(st.integers(2, 4)), \
        draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    logits = rng.standard_normal((t, n, c))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = rng.integers(1, c, (n, s))
    return (fi.Operand(values=log_probs.tolist(), dtype="float64"),
            fi.Operand(values=targets.tolist(), dtype="int64"),
            fi.Operand(values=[t] * n, dtype="int64"),
            fi.Operand(values=rng.integers(1, s + 1, n).tolist(), dtype="int64")), \
        {**_reduction_kw(draw), "zero_infinity": draw(st.booleans())}


def _inactive_dropout(draw):
    """Deterministic dropout calls: p=0 while training, any p outside training, invalid p."""
    x = _tensor(draw, dtypes=FLOATS, shape=(draw(st.integers(1, 2)), draw(st.integers(1, 3)),
                                            draw(st.integers(1, 3))))
    if draw(st.booleans()):
        return (x,), {"p": 0.0, "training": draw(st.booleans())}
    return (x,), {"p": draw(st.sampled_from([0.5, 1.5, -0.1])), "training": False}


family(["nn.functional.dropout1d", "nn.functional.dropout2d", "nn.functional.dropout3d",
        "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout"], _inactive_dropout)


@op("dropout")
def _top_dropout_args(draw):
    (x,), kwargs = _inactive_dropout(draw)
    return (x, kwargs["p"], kwargs["training"]), {}


family(["alpha_dropout", "feature_alpha_dropout"], _top_dropout_args)


# ---- joining, splitting, indexing --------------------------------------------------------
def _tensors(draw, rank=None):
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3))) if rank is None else \
        tuple(draw(st.integers(0, 3)) for _ in range(rank))
    dtype = draw(st.sampled_from(ALL))
    return [_tensor(draw, shape=shape if draw(st.integers(0, 5)) else shape[1:],
                    dtypes=(dtype, draw(st.sampled_from(ALL))))
            for _ in range(draw(st.integers(1, 3)))]


family(["hstack", "vstack", "dstack", "column_stack", "row_stack"],
       lambda draw: ((_tensors(draw),), {}), method=False)
op("broadcast_tensors", method=False)(lambda draw: (tuple(_tensors(draw)), {}))


def _vectors(draw):
    return [_tensor(draw, shape=(draw(st.integers(0, 3)),), dtypes=("int64", "float32"))
            for _ in range(draw(st.integers(1, 3)))]


op("cartesian_prod", method=False)(lambda draw: (tuple(_vectors(draw)), {}))
op("meshgrid", method=False)(lambda draw: (tuple(_vectors(draw)), {
    "indexing": draw(st.sampled_from(["ij", "xy"]))}))


@op("broadcast_shapes", method=False)
def _broadcast_shapes_args(draw):
    a = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    return (a, draw(st.one_of(fi.broadcast_partner(a), st.lists(st.integers(0, 3), max_size=3)
                              .map(tuple)))), {}


@op("combinations")
def _combinations_args(draw):
    return (_tensor(draw, shape=(draw(st.integers(0, 4)),)),), {
        "r": draw(st.integers(0, 3)), "with_replacement": draw(st.booleans())}


def _split_family(draw):
    """(mostly 3-d: dsplit needs 3 dims, vsplit 2)"""
    x = _tensor(draw, min_dims=draw(st.sampled_from([3, 3, 2, 0])), max_dims=3, max_size=4)
    return (x, draw(st.one_of(st.integers(1, 3), st.lists(st.integers(0, 4), max_size=2)))), {}


family(["hsplit", "vsplit", "dsplit"], _split_family)


@op("unbind")
def _unbind_args(draw):
    x = _tensor(draw)
    return (x, _dim(draw, len(_shape(x)))), {}


@op("select")
def _select_args(draw):
    x = _tensor(draw)
    n = len(_shape(x))
    dim = _dim(draw, n)
    size = _shape(x)[dim] if -n <= dim < n else 1
    return (x, dim, draw(st.integers(-size - 1, size))), {}


@op("diagonal")
def _diagonal_args(draw):
    x = _tensor(draw, min_dims=2)
    n = len(_shape(x))
    return (x,), {"offset": draw(st.integers(-2, 2)), "dim1": _dim(draw, n),
                  "dim2": _dim(draw, n)}


@op("diag")
def _diag_args(draw):
    return (_tensor(draw, max_dims=3), draw(st.integers(-2, 2))), {}


@op("diag_embed")
def _diag_embed_args(draw):
    x = _tensor(draw)
    return (x,), {"offset": draw(st.integers(-1, 1))}


@op("rot90")
def _rot90_args(draw):
    x = _tensor(draw, min_dims=draw(st.sampled_from([2, 2, 0])))
    n = len(_shape(x))
    dims = (0, 1) if n >= 2 and draw(st.booleans()) else (_dim(draw, n), _dim(draw, n))
    return (x, draw(st.integers(-3, 5)), dims), {}


@op("repeat_interleave")
def _repeat_interleave_args(draw):
    x = _tensor(draw)
    n = len(_shape(x))
    if draw(st.booleans()):
        return (x, draw(st.integers(0, 3))), ({"dim": _dim(draw, n)} if draw(st.booleans())
                                              else {})
    dim = _dim(draw, n, valid_only=True)
    size = _shape(x)[dim] if n else 1
    return (x, fi.Operand(values=np.random.default_rng(draw(st.integers(0, 9))).integers(
        0, 3, size).tolist(), dtype="int64")), {"dim": dim}


@op("histc")
def _histc_args(draw):
    x = _tensor(draw, dtypes=FLOATS)
    return (x,), {"bins": draw(st.integers(1, 5)), "min": draw(st.sampled_from([0, -2])),
                  "max": draw(st.sampled_from([0, 3]))}


@op("bincount")
def _bincount_args(draw):
    n = draw(st.integers(0, 5))
    index = fi.Operand(values=np.random.default_rng(draw(st.integers(0, 99))).integers(
        draw(st.sampled_from([0, 0, -1])), 5, n).tolist(), dtype="int64")
    kwargs = {"minlength": draw(st.integers(0, 6))}
    if draw(st.booleans()):
        kwargs["weights"] = _tensor(draw, shape=(n,), dtypes=FLOATS)
    return (index,), kwargs


@op("bucketize")
def _bucketize_args(draw):
    boundaries = fi.Operand(values=sorted(np.random.default_rng(draw(st.integers(0, 99)))
                                          .integers(-4, 5, draw(st.integers(0, 4))).tolist()),
                            dtype="float64")
    return (_tensor(draw, dtypes=("int64", "float64")), boundaries), {
        "right": draw(st.booleans()), "out_int32": draw(st.booleans())}


def _indexed(draw, with_source):
    x = _tensor(draw, min_dims=1)
    shape = _shape(x)
    dim = _dim(draw, len(shape), valid_only=True)
    rng = np.random.default_rng(draw(st.integers(0, 99)))
    n = draw(st.integers(0, shape[dim]))
    index = fi.Operand(values=rng.permutation(shape[dim])[:n].tolist(), dtype="int64")
    if not with_source:
        return x, dim, index
    source = tuple(n if i == dim else s for i, s in enumerate(shape))
    return x, dim, index, _tensor(draw, shape=source, dtypes=(x.spec[1],))


op("index_copy")(lambda draw: (_indexed(draw, True), {}))
op("index_fill")(lambda draw: (_indexed(draw, False) + (draw(fi.numbers()),), {}))


@op("index_put")
def _index_put_args(draw):
    x = _tensor(draw, min_dims=1)
    size = _shape(x)[0]
    index = _index_values(draw, (draw(st.integers(0, 3)),), size)
    values = _tensor(draw, shape=draw(st.sampled_from([(), (1,)])), dtypes=(x.spec[1],))
    return (x, (index,), values), {"accumulate": draw(st.booleans())}


def _mask_for(draw, shape):
    return fi.Operand(values=np.random.default_rng(draw(st.integers(0, 99))).integers(
        0, 2, draw(fi.broadcast_partner(shape))).astype(bool).tolist(), dtype="bool")


@op("masked_fill")
def _masked_fill_args(draw):
    x = _tensor(draw)
    value = draw(fi.numbers()) if draw(st.booleans()) else _tensor(draw, shape=())
    return (x, _mask_for(draw, _shape(x)), value), {}


@op("masked_scatter")
def _masked_scatter_args(draw):
    x = _tensor(draw)
    n = int(np.prod(_shape(x)))
    return (x, _mask_for(draw, _shape(x)), _tensor(draw, shape=(n + 1,), dtypes=(x.spec[1],))), {}


@op("scatter_reduce")
def _scatter_reduce_args(draw):
    x = _tensor(draw, min_dims=1, dtypes=("int64", "float32", "float64"))
    shape = _shape(x)
    dim = _dim(draw, len(shape), valid_only=True)
    index = _index_values(draw, tuple(draw(st.integers(0, s)) for s in shape), shape[dim])
    return (x, dim, index, _tensor(draw, shape=shape, dtypes=(x.spec[1],)),
            draw(st.sampled_from(["sum", "prod", "mean", "amax", "amin"]))), \
        {"include_self": draw(st.booleans())}


@op("where")
def _where_args(draw):
    cond = _mask_for(draw, tuple(draw(st.lists(st.integers(0, 3), max_size=3))))
    if draw(st.booleans()):
        return (cond,), {}
    return (cond, _tensor(draw, shape=()), draw(fi.numbers())), {}


@op("Tensor.where")
def _tensor_where_args(draw):
    x = _tensor(draw)
    return (x, _mask_for(draw, _shape(x)), draw(st.one_of(fi.numbers(), st.just(None)))
            or _tensor(draw, shape=(), dtypes=(x.spec[1],))), {}


@op("as_strided")
def _as_strided_args(draw):
    x = _tensor(draw, shape=(draw(st.integers(1, 6)),), dtypes=("float32", "int64"))
    n = len(draw(st.lists(st.just(0), max_size=2)))
    return (x, tuple(draw(st.integers(0, 2)) for _ in range(n)),
            tuple(draw(st.integers(0, 2)) for _ in range(n))), {"storage_offset": 0}


@op("broadcast_to")
def _broadcast_to_args(draw):
    x = _tensor(draw, shape=tuple(draw(st.lists(st.sampled_from([0, 1, 2]), max_size=2))))
    return (x, tuple(draw(st.lists(st.integers(-1, 3), max_size=3)))), {}


def _like_pair(draw):
    x = _tensor(draw)
    return (x, _tensor(draw, shape=draw(st.one_of(st.just(_shape(x)),
                                                  fi.broadcast_partner(_shape(x)))))), {}


family(["Tensor.expand_as", "Tensor.view_as", "Tensor.reshape_as", "Tensor.type_as",
        "Tensor.copy_"], _like_pair)


@op("Tensor.sum_to_size")
def _sum_to_size_args(draw):
    x = _tensor(draw)
    return (x, draw(fi.broadcast_partner(_shape(x)))), {}


@op("Tensor.unfold")
def _tensor_unfold_args(draw):
    x = _tensor(draw)
    n = len(_shape(x))
    return (x, _dim(draw, n), draw(st.integers(0, 3)), draw(st.integers(1, 2))), {}


@op("Tensor.fill_")
def _fill_args(draw):
    return (_tensor(draw), draw(fi.numbers())), {}


@op("Tensor.to")
def _to_args(draw):
    x = _tensor(draw)
    return (x, fi.Dtype(draw(st.sampled_from(ALL)))), {}


@op("Tensor.type")
def _type_args(draw):
    return (_tensor(draw), draw(st.sampled_from(["torch.FloatTensor", "torch.LongTensor"]))), {}


def _type_call(path):
    """Tensor.type(name): the name spells the library ("torch.FloatTensor")."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        return run(m, (args[0], args[1].replace("torch", m.__name__)), kwargs)
    return call


OPS["Tensor.type"] = (OPS["Tensor.type"][0], _type_call("Tensor.type"), 1)
SPELLED.pop("Tensor.type")


def _new_factory(draw):
    return (_tensor(draw), _sizes(draw)), _dtype_kw(draw)


family(["Tensor.new_zeros", "Tensor.new_ones"], _new_factory)


@op("Tensor.new_full")
def _new_full_args(draw):
    return (_tensor(draw), _sizes(draw), draw(fi.numbers())), _dtype_kw(draw)


@op("Tensor.new_tensor")
def _new_tensor_args(draw):
    return (_tensor(draw), draw(st.lists(fi.numbers(), max_size=3))), _dtype_kw(draw)


def _shape_dtype_only(path):
    """Factories of uninitialized memory: their shape and dtype."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        t = run(m, args, kwargs)
        return tuple(t.shape), str(t.dtype).split(".")[-1]
    return call


op("Tensor.new_empty", via=_shape_dtype_only)(_new_factory)
op("empty", via=_shape_dtype_only, method=False)(lambda draw: ((_sizes(draw),), _dtype_kw(draw)))


@op("empty_strided", via=_shape_dtype_only, method=False)
def _empty_strided_args(draw):
    sizes = _sizes(draw, 2)
    return (sizes, tuple(draw(st.integers(0, 3)) for _ in sizes)), _dtype_kw(draw)


@op("tensor", method=False)
def _tensor_factory_args(draw):
    data = draw(st.one_of(fi.numbers(), st.lists(fi.numbers(), max_size=3),
                          st.lists(st.lists(st.integers(-3, 3), min_size=2, max_size=2),
                                   max_size=2)))
    return (data,), _dtype_kw(draw)


op("as_tensor", method=False)(_tensor_factory_args)


@op("scalar_tensor", method=False)
def _scalar_tensor_args(draw):
    return (draw(fi.numbers()),), _dtype_kw(draw, FLOATS + ("int64", "bool"))


@op("tril_indices", method=False)
def _tril_indices_args(draw):
    return (draw(st.integers(0, 4)), draw(st.integers(0, 4)), draw(st.integers(-2, 2))), {}


op("triu_indices", method=False)(_tril_indices_args)


@op("constant_pad_nd")
def _constant_pad_nd_args(draw):
    x = _tensor(draw, min_dims=1)
    return (x, tuple(draw(st.lists(st.integers(-1, 2), min_size=2, max_size=2))),
            draw(st.sampled_from([0, 1.5]))), {}


# ---- reductions with a dim, statistics ---------------------------------------------------
def _dim_keepdim(dtypes=ALL):
    def strategy(draw):
        x = _tensor(draw, dtypes=dtypes)
        return (x, _dim(draw, len(_shape(x)))), {"keepdim": draw(st.booleans())}
    return strategy


family(["mode", "nanmedian", "nanmean"], _dim_keepdim(("int64", "float32", "float64")))
family(["std_mean", "var_mean"], _dim_keepdim(FLOATS))


# ---- dtypes and promotion ----------------------------------------------------------------
@op("promote_types", method=False)
def _promote_types_args(draw):
    return (fi.Dtype(draw(st.sampled_from(ALL))), fi.Dtype(draw(st.sampled_from(ALL)))), {}


op("can_cast", method=False)(_promote_types_args)


@op("result_type", method=False)
def _result_type_args(draw):
    x = _tensor(draw)
    return (x, draw(st.one_of(fi.numbers(), st.just(None))) or _tensor(draw)), {}


@op("is_tensor", method=False)
def _is_tensor_args(draw):
    return (draw(st.one_of(fi.numbers(), st.just(None))) or _tensor(draw),), {}


# ---- the rest: complex parts, resize, autograd flags, short-time Fourier transforms -----
# (torch's trigamma is off by ~8e-10 at x = 1; the method takes n second: no spellings)
@op("Tensor.polygamma", scale=100, spelled_too=False)
def _polygamma_method_args(draw):
    return (_tensor(draw, dtypes=FLOATS + ("int64",)), draw(st.integers(0, 3))), {}


@op("imag")
def _imag_args(draw):
    return (_tensor(draw, dtypes=FLOATS),), {}


def _complex_first(path):
    """imag of a real tensor raises in both; of the complex tensor built from it, its part."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        x = args[0]
        return run(m, (m.complex(x, x * 2 + 1) if x.dim() else x,), kwargs)
    return call


OPS["imag"] = (OPS["imag"][0], _complex_first("imag"), 1)
SPELLED.pop("imag")


@op("Tensor.resize_")
def _resize_args(draw):
    return (fi.Operand(spec=((draw(st.integers(0, 4)),), draw(st.sampled_from(ALL)),
                             "contiguous", draw(st.integers(0, 99)))),
            tuple(draw(st.lists(st.integers(0, 3), max_size=2)))), {}


def _resize_call(path):
    """resize_ to no more elements than it had: the kept elements are defined."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        had = args[0].numel()                 # before resize_ changes it
        n = int(np.prod(args[1]))
        result, written, same = run(m, args, kwargs)
        return tuple(written.shape), same, written.reshape(-1)[:n] if n <= had else None
    return call


OPS["Tensor.resize_"] = (OPS["Tensor.resize_"][0], _resize_call("Tensor.resize_"), 1)
SPELLED.pop("Tensor.resize_")


@op("Tensor.requires_grad_")
def _requires_grad_args(draw):
    return (_tensor(draw),), {"requires_grad": draw(st.booleans())}


def _stft_signal(draw):
    n = draw(st.integers(4, 12))
    return _tensor(draw, shape=tuple(draw(st.lists(st.just(2), max_size=1))) + (n,),
                   dtypes=FLOATS), n


@op("stft", scale=10)
def _stft_args(draw):
    x, n = _stft_signal(draw)
    n_fft = draw(st.sampled_from([2, 4]))
    return (x, n_fft), {"hop_length": draw(st.sampled_from([None, 1, 2])),
                        "center": draw(st.booleans()), "return_complex": True,
                        "onesided": draw(st.booleans()),
                        "normalized": draw(st.booleans())}


def _istft_call(path):
    """istft of stft's frames (the inverse, with one rectangular window both ways)."""
    run = spellings.call(path)

    def call(m, args, kwargs):
        x, n_fft = args
        window = m.ones(n_fft, dtype=x.dtype)
        spectrum = m.stft(x, n_fft, hop_length=1, window=window, return_complex=True)
        return run(m, (spectrum, n_fft), {**kwargs, "hop_length": 1, "window": window})
    return call


@op("istft", via=_istft_call, scale=10)
def _istft_args(draw):
    x, n = _stft_signal(draw)
    return (x, draw(st.sampled_from([2, 4]))), {"length": draw(st.sampled_from([None, n]))}


# ---- the test ----------------------------------------------------------------------------
# a negative or too large float cast to uint8 is undefined in torch (a C++ cast: its value
# depends on the code path), so byte() takes integers and bool
op("Tensor.byte")(lambda draw: ((_tensor(draw, dtypes=("bool", "uint8", "int8", "int64")),), {}))


# ---- the math names of #15's last round ------------------------------------------------
family(["acosh", "asinh", "atanh", "frexp", "diagflat", "is_neg", "resolve_neg"], _any_unary)


def _broadcast_pair(draw, dtypes=ALL):
    a = _tensor(draw, dtypes=dtypes)
    shape = _shape(a)
    other = shape[draw(st.integers(0, len(shape))):] if shape else shape
    return a, _tensor(draw, shape=other, dtypes=dtypes)


family(["gcd", "lcm", "ldexp", "nextafter", "heaviside", "isin"],
       lambda draw: (_broadcast_pair(draw), {}))


@op("diff")
def _diff_args(draw):
    x = _tensor(draw, min_dims=1)
    return (x,), {"n": draw(st.integers(0, 2)), "dim": _dim(draw, len(_shape(x)))}


family(["trapezoid", "trapz", "cumulative_trapezoid"],
       lambda draw: ((_tensor(draw, min_dims=1, dtypes=FLOATS + ("int64",)),),
                     {"dx": draw(st.sampled_from([1, 0.5]))}))
family(["cov", "corrcoef"], lambda draw: ((_tensor(draw, max_dims=2, dtypes=FLOATS),), {}),
       scale=10)


@op("quantile")
def _quantile_args(draw):
    x = _tensor(draw, min_dims=1, dtypes=("float32", "float64"))
    q = draw(st.sampled_from([0.5, 0.0, 1.0, [0.25, 0.75]]))
    return (x, q), {"dim": draw(st.sampled_from([None, 0])),
                    "interpolation": draw(st.sampled_from(["linear", "lower", "nearest",
                                                           "midpoint", "higher"]))}


op("nanquantile")(_quantile_args)


@op("histogram")
def _histogram_args(draw):
    return (_tensor(draw, dtypes=("float32", "float64")),), {
        "bins": draw(st.integers(1, 5))}


@op("histogramdd")
def _histogramdd_args(draw):
    n = draw(st.integers(1, 4))
    return (_tensor(draw, shape=(n, draw(st.integers(1, 2))), dtypes=("float32", "float64")),), \
        {"bins": draw(st.integers(1, 3))}


@op("block_diag")
def _block_diag_args(draw):
    return tuple(_tensor(draw, max_dims=2, dtypes=("float32", "int64"))
                 for _ in range(draw(st.integers(1, 3)))), {}


@op("renorm")
def _renorm_args(draw):
    x = _tensor(draw, min_dims=2, dtypes=FLOATS)
    return (x, draw(st.sampled_from([1, 2, 3.5])), _dim(draw, len(_shape(x))),
            draw(st.sampled_from([0.5, 1.0, 5.0]))), {}


@op("cholesky_solve", scale=100)
def _cholesky_solve_args(draw):
    a = _square(draw, spd=True)
    b = _tensor(draw, shape=a.shape[:-1] + (draw(st.integers(1, 2)),), dtypes=(a.dtype,))
    return (b, a), {"upper": draw(st.booleans())}


def _cholesky_solve_call(path):
    run = spellings.call(path)
    return lambda m, args, kwargs: run(
        m, (args[0], m.linalg.cholesky(args[1], upper=kwargs["upper"])), kwargs)


OPS["cholesky_solve"] = (OPS["cholesky_solve"][0], _cholesky_solve_call("cholesky_solve"), 100)
SPELLED["cholesky_solve"] = (SPELLED["cholesky_solve"][0], _cholesky_solve_call)


@pytest.mark.parametrize("name", sorted(OPS))
@FUZZ_SURFACE
@given(data=st.data())
def test_op(name, data):
    strategy, call, scale = OPS[name]
    args, kwargs = data.draw(strategy)
    check(lambda m, ak: call(m, *ak), lambda m: (fi.materialize(m, args),
                                                 fi.materialize(m, kwargs)),
          lambda: f"{name}(*{args}, **{kwargs})", scale=scale,
          has_number=any(type(a) in (int, float) for a in args))
