r"""SparseAdam (torch.optim.SparseAdam): Adam that updates only the entries a sparse (COO)
gradient names, for embedding tables whose rows are touched a few at a time."""
import math

import tensorlib
from tensorlib.optim.optimizer import Optimizer, _params_doc, _to_scalar

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, tensorlib.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        sparse, complex_ = [], []
        for index, group in enumerate(self.param_groups):
            for p_index, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse.append([index, p_index])
                if p.is_complex():
                    complex_.append([index, p_index])
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense "
                             f"parameter tensors")
        if complex_:
            raise ValueError(f"Complex params at indices {complex_}: SparseAdam does not "
                             f"support complex parameters")

    def _step_group(self, group):
        beta1, beta2 = group["betas"]
        lr, eps = _to_scalar(group["lr"]), group["eps"]
        for p in group["params"]:
            if p.grad is None:
                continue
            if not p.grad.is_sparse:
                raise RuntimeError("SparseAdam does not support dense gradients, please "
                                   "consider Adam instead")
            state = self.state[p]
            if len(state) == 0:
                state["step"] = 0
                state["exp_avg"] = tensorlib.zeros_like(p)
                state["exp_avg_sq"] = tensorlib.zeros_like(p)
            state["step"] += 1
            _sparse_adam_update(p, p.grad, state["exp_avg"], state["exp_avg_sq"],
                                state["step"], lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                                maximize=group["maximize"])


def _sparse_adam_update(param, grad, exp_avg, exp_avg_sq, step, *, lr, beta1, beta2, eps,
                        maximize):
    """The moments move toward the gradient only at its (coalesced, so unique) indices; the
    step uses the bias-corrected moments there."""
    grad = grad.coalesce()
    values = -grad._values() if maximize else grad._values()
    if values.numel() == 0:
        return
    index = tuple(grad._indices())
    old_avg, old_sq = exp_avg[index], exp_avg_sq[index]
    avg_update = (values - old_avg) * (1 - beta1)
    sq_update = (values * values - old_sq) * (1 - beta2)
    exp_avg.index_put_(index, avg_update, accumulate=True)
    exp_avg_sq.index_put_(index, sq_update, accumulate=True)
    step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    update = (avg_update + old_avg) / ((sq_update + old_sq).sqrt() + eps)
    param.index_put_(index, -step_size * update, accumulate=True)


SparseAdam.__doc__ = rf"""SparseAdam implements a masked version of the Adam algorithm suitable
    for sparse gradients: only the moments and parameters at the gradient's indices are
    updated. Dense gradients raise RuntimeError (use Adam).

    Args:
        {_params_doc}
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        maximize (bool, optional): maximize the objective with respect to the
            params, instead of minimizing (default: False)
    """
