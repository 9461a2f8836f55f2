"""The gradcheck cases of the special functions (tensorlib/ops/special.py) and the matrix
decompositions (tensorlib/ops/decompositions.py), appended to op_cases.CASES."""
import numpy as np

import tensorlib as tl

from .op_cases import DOMAINS, NOT_COVERED, Case, add

DOMAINS["prob"] = lambda rng, shape, state: rng.uniform(0.1, 0.9, size=shape)
S = (3, 4)
_ELEMENTWISE = ("contiguous", "sliced")      # layouts matter little to an elementwise op


def _well_conditioned(rng, shapes, state):
    """Square matrices 2I + noise (far from singular), or plain noise for the others."""
    out = []
    for s in shapes:
        m = rng.uniform(-0.5, 0.5, size=s)
        if len(s) >= 2 and s[-1] == s[-2]:
            m = m + 2.0 * np.eye(s[-1])
        out.append(m)
    return out


def _spd(a):
    n = a.shape[-1]
    return a @ a.mT + 2.0 * tl.eye(n, dtype=a.dtype, device=a.device)


def _sym(a):
    return a + a.mT


def _sq(outs):
    """Elementwise squares of the factors: invariant to the sign of each singular/eigen
    vector, so the check does not depend on LAPACK's sign choice."""
    return tuple(o * o for o in outs)


SP = tl.special
for _name, _fn, _dom, _gg in [
        ("lgamma", tl.lgamma, "pos", True), ("digamma", tl.digamma, "pos", False),
        ("erfinv", tl.erfinv, "unit", False), ("ndtri", SP.ndtri, "prob", False),
        ("log_ndtr", SP.log_ndtr, "real", False), ("entr", SP.entr, "pos", False),
        ("sinc", SP.sinc, "nonzero", False), ("logit", tl.logit, "prob", False),
        ("i0", SP.i0, "real", False), ("i0e", SP.i0e, "nonzero", False),
        ("i1", SP.i1, "real", False), ("i1e", SP.i1e, "nonzero", False),
        ("bessel_j0", SP.bessel_j0, "real", False), ("bessel_j1", SP.bessel_j1, "real", False),
        ("special_erfcx", SP.erfcx, "real", True)]:
    add(Case(_name, _fn, [S], _dom, gradgrad=_gg, layouts=_ELEMENTWISE))
add(Case("polygamma", lambda x: tl.polygamma(1, x), [S], "pos", layouts=_ELEMENTWISE),
    Case("polygamma-3", lambda x: tl.polygamma(3, x), [S], "pos", covers=["polygamma"],
         layouts=("contiguous",)),
    Case("logit-eps", lambda x: tl.logit(x, eps=0.2), [S], "prob", covers=["logit"]),
    Case("zeta", lambda q: SP.zeta(3.0, q), [S], "pos"),
    Case("xlogy", tl.xlogy, [S, S], ("real", "pos"), gradgrad=True),
    Case("xlogy-bcast", tl.xlogy, [(3, 1), (1, 4)], ("real", "pos"), covers=["xlogy"]),
    Case("xlog1py", SP.xlog1py, [S, S], ("real", "pos")),
    Case("mvlgamma", lambda x: tl.mvlgamma(x + 2.0, 3), [S], "pos", covers=["lgamma"]))

_MAT = ("contiguous", "broadcast")     # batched: broadcast repeats a matrix
_MAT2 = ("contiguous", "transposed")                 # one matrix: broadcast makes it rank 1
LA = tl.linalg
add(Case("linalg_svd", lambda a: _sq(LA.svd(a, full_matrices=False)), [(2, 4, 3)],
         make=_well_conditioned, layouts=_MAT + ("transposed",)),
    Case("linalg_svd-wide", lambda a: _sq(LA.svd(a, full_matrices=False)), [(3, 5)],
         make=_well_conditioned, covers=["linalg_svd"], layouts=_MAT2),
    Case("linalg_svd-square-full", lambda a: _sq(LA.svd(a)), [(3, 3)],
         make=_well_conditioned, layouts=_MAT2, covers=["linalg_svd"]),
    Case("linalg_svd-tall-full", lambda a: (lambda u, s, vh: _sq((u[..., :3], s, vh)))(
        *LA.svd(a)), [(5, 3)], make=_well_conditioned, layouts=_MAT2, covers=["linalg_svd"]),
    Case("svdvals", LA.svdvals, [(2, 4, 3)], make=_well_conditioned,
         covers=["linalg_svd"], layouts=_MAT),
    Case("matrix_norm-nuc", lambda a: LA.matrix_norm(a, "nuc"), [(4, 3)],
         make=_well_conditioned, layouts=_MAT2, covers=["linalg_svd"]),
    Case("pinv", LA.pinv, [(2, 4, 3)], make=_well_conditioned, covers=["linalg_svd"],
         layouts=_MAT),
    Case("linalg_eigh", lambda a: _sq(LA.eigh(_sym(a))), [(2, 3, 3)],
         make=_well_conditioned, layouts=_MAT),
    Case("eigvalsh-upper", lambda a: LA.eigvalsh(_sym(a), UPLO="U"), [(3, 3)],
         make=_well_conditioned, layouts=_MAT2, covers=["linalg_eigh"]),
    Case("linalg_qr", LA.qr, [(2, 4, 3)], make=_well_conditioned, layouts=_MAT),
    Case("linalg_qr-square", lambda a: LA.qr(a, mode="complete"), [(3, 3)],
         make=_well_conditioned, layouts=_MAT2, covers=["linalg_qr"]),
    Case("linalg_cholesky", lambda a: LA.cholesky(_spd(a)), [(2, 3, 3)],
         make=_well_conditioned, layouts=_MAT),
    Case("linalg_cholesky-upper", lambda a: LA.cholesky(_spd(a), upper=True), [(3, 3)],
         make=_well_conditioned, layouts=_MAT2, covers=["linalg_cholesky"]),
    Case("linalg_inv", LA.inv, [(2, 3, 3)], make=_well_conditioned, layouts=_MAT),
    Case("linalg_solve", LA.solve, [(2, 3, 3), (2, 3, 2)], make=_well_conditioned,
         layouts=_MAT + ("transposed",)),
    Case("linalg_solve-vector", LA.solve, [(2, 3, 3), (2, 3)], make=_well_conditioned,
         covers=["linalg_solve"]),
    Case("linalg_solve-right", lambda a, b: LA.solve(a, b, left=False), [(3, 3), (2, 3)],
         make=_well_conditioned, layouts=_MAT2, covers=["linalg_solve"]),
    Case("linalg_solve_triangular",
         lambda a, b: LA.solve_triangular(a, b, upper=True), [(2, 3, 3), (2, 3, 2)],
         make=_well_conditioned, layouts=_MAT),
    # the factor comes from cholesky, as in PyTorch's own checks: cholesky_solve reads only
    # its triangle, and its gradient is the chain rule through A = L L^H
    Case("cholesky_solve", lambda b, a: tl.cholesky_solve(b, LA.cholesky(_spd(a))),
         [(2, 3, 2), (2, 3, 3)], make=_well_conditioned, layouts=_MAT,
         covers=["cholesky_solve", "linalg_cholesky"]),
    Case("cholesky_solve-upper-broadcast",
         lambda b, a: tl.cholesky_solve(b, LA.cholesky(_spd(a), upper=True), upper=True),
         [(2, 3, 2), (3, 3)], make=_well_conditioned, layouts=_MAT2,
         covers=["cholesky_solve", "linalg_cholesky"]),
    Case("linalg_solve_triangular-right-unit",
         lambda a, b: LA.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
         [(3, 3), (2, 3)], make=_well_conditioned, layouts=_MAT2,
         covers=["linalg_solve_triangular"]),
    Case("linalg_det", LA.det, [(2, 3, 3)], make=_well_conditioned, layouts=_MAT,
         gradgrad=True),
    Case("linalg_slogdet", lambda a: LA.slogdet(a).logabsdet, [(2, 3, 3)],
         make=_well_conditioned, layouts=_MAT),
    Case("lstsq", lambda a, b: LA.lstsq(a, b).solution, [(4, 3), (4, 2)],
         make=_well_conditioned, layouts=_MAT2, covers=["linalg_svd"]),
    Case("matrix_power", lambda a: LA.matrix_power(a, -2), [(3, 3)],
         make=_well_conditioned, layouts=_MAT2, covers=["linalg_inv"]))

# the inverse hyperbolics (ops/pointwise_math.py) and composites built on existing formulas
add(Case("asinh", tl.asinh, [S], layouts=_ELEMENTWISE, gradgrad=True),
    Case("acosh", lambda x: tl.acosh(x + 1.0), [S], "pos", layouts=_ELEMENTWISE,
         gradgrad=True),
    Case("atanh", tl.atanh, [S], "unit", layouts=_ELEMENTWISE, gradgrad=True),
    Case("asinh-complex", lambda a, b: tl.asinh(tl.complex(a, b)), [S, S],
         covers=["asinh", "complex"], layouts=("contiguous",), cpu_only=True),
    Case("acosh-complex", lambda a, b: tl.acosh(tl.complex(a + 2.0, b)), [S, S], "pos",
         covers=["acosh", "complex"], layouts=("contiguous",), cpu_only=True),
    Case("atanh-complex", lambda a, b: tl.atanh(tl.complex(a, b)), [S, S], "unit",
         covers=["atanh", "complex"], layouts=("contiguous",), cpu_only=True),
    Case("quantile", lambda x: tl.quantile(x, tl.tensor([0.2, 0.5, 0.9], dtype=x.dtype,
                                                        device=x.device), dim=1),
         [S], "distinct", covers=["sort", "gather"], layouts=_ELEMENTWISE),
    Case("cov-corrcoef", lambda x: (tl.cov(x), tl.corrcoef(x)), [(3, 6)],
         covers=["matmul"], layouts=_ELEMENTWISE),
    Case("renorm", lambda x: tl.renorm(x, 2, 0, 1.0), [(3, 4)], covers=["vector_norm"],
         layouts=_ELEMENTWISE),
    Case("trapezoid-diff", lambda y, x: (tl.trapezoid(y, x), tl.cumulative_trapezoid(y, dx=0.5),
                                         tl.diff(y, 2, prepend=x[:, :1])),
         [S, S], covers=["narrow", "cumsum"], layouts=_ELEMENTWISE),
    Case("block_diag-vander", lambda a, v: (tl.block_diag(a, v), tl.vander(v[0], 3)),
         [S, (2, 3)], covers=["pad", "cumprod"], layouts=("contiguous",)),
    Case("frexp-ldexp", lambda x, e: (tl.frexp(x).mantissa, tl.ldexp(x, e)), [S, S], "nonzero",
         covers=["mul", "pow"], layouts=_ELEMENTWISE))
