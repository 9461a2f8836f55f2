"""`torch.return_types`: the named tuples ops return, so `isinstance(x.max(0),
torch.return_types.max)` holds. Each name is the type the op already returns (defined beside
the op); PyTorch's `<name>_out` spellings (all but histogramdd's) are the same types."""
from tensorlib.ops.decompositions import (cholesky_ex_result, eig_result, eigh_result,
                                          inv_ex_result, lstsq_result, qr_result,
                                          slogdet_result, svd_result, torch_svd_result)
from tensorlib.ops.factorizations import (lu_factor_ex_result, lu_factor_result, lu_result,
                                          solve_ex_result)
from tensorlib.ops.linalg_legacy import triangular_solve_result
from tensorlib.ops.pointwise_math import frexp_result
from tensorlib.ops.reduction import (aminmax_out, cummax_out, cummin_out, max_out, median_out,
                                     min_out, mode_out, nanmedian_out)
from tensorlib.ops.sorting import kthvalue_result, sort_result, topk_result
from tensorlib.ops.statistics import histogram_result, histogramdd_result

_TYPES = {
    "aminmax": aminmax_out, "cummax": cummax_out, "cummin": cummin_out, "frexp": frexp_result,
    "histogram": histogram_result, "histogramdd": histogramdd_result,
    "kthvalue": kthvalue_result, "max": max_out, "median": median_out, "min": min_out,
    "mode": mode_out, "nanmedian": nanmedian_out, "qr": qr_result, "slogdet": slogdet_result,
    "sort": sort_result, "svd": torch_svd_result, "topk": topk_result,
    "triangular_solve": triangular_solve_result,
    "linalg_cholesky_ex": cholesky_ex_result, "linalg_eig": eig_result,
    "linalg_eigh": eigh_result, "linalg_inv_ex": inv_ex_result, "linalg_lstsq": lstsq_result,
    "linalg_lu": lu_result, "linalg_lu_factor": lu_factor_result,
    "linalg_lu_factor_ex": lu_factor_ex_result, "linalg_qr": qr_result,
    "linalg_slogdet": slogdet_result, "linalg_solve_ex": solve_ex_result,
    "linalg_svd": svd_result,
}
globals().update(_TYPES)
_OUTS = {name + "_out": tp for name, tp in _TYPES.items() if name != "histogramdd"}
globals().update(_OUTS)
all_return_types = list(dict.fromkeys(_TYPES.values()))
__all__ = sorted([*_TYPES, *_OUTS, "all_return_types"])
