r"""Adafactor (torch.optim.Adafactor; Shazeer & Stern, 2018): second moments of a matrix
kept as a row and a column factor (memory O(m + n), not O(mn)), relative step sizes and
update clipping. PyTorch's update rule, step for step."""
import tensorlib
from tensorlib.optim.optimizer import Optimizer, _params_doc, _to_scalar

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    _group_defaults = {"foreach": None}

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, tensorlib.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize})

    def _step_group(self, group):
        eps1, eps2 = group["eps"]
        lr = _to_scalar(group["lr"])
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            if p.grad.is_sparse:
                raise RuntimeError("Adafactor does not support sparse gradients")
            state = self.state[p]
            if len(state) == 0:
                state["step"] = tensorlib.tensor(0.0)
                if p.grad.dim() > 1:
                    state["row_var"] = p.grad.new_zeros(tuple(p.grad.shape[:-1]) + (1,))
                    state["col_var"] = p.grad.new_zeros(
                        tuple(p.grad.shape[:-2]) + (1, p.grad.shape[-1]))
                else:
                    state["variance"] = tensorlib.zeros_like(p.grad)
            if eps1 is None:        # as PyTorch: the first parameter's dtype sets it
                eps1 = tensorlib.finfo(p.dtype).eps
            _adafactor_update(p, -p.grad if group["maximize"] else p.grad, state, lr=lr,
                              beta2_decay=group["beta2_decay"], eps1=eps1, eps2=eps2,
                              d=group["d"], weight_decay=group["weight_decay"])


def _adafactor_update(param, grad, state, *, lr, beta2_decay, eps1, eps2, d, weight_decay):
    state["step"] += 1
    step = state["step"].item()
    one_minus_beta2 = step ** beta2_decay
    rho = min(lr, 1 / step ** 0.5)
    alpha = max(eps2, param.norm(2).item() / param.numel() ** 0.5) * rho
    if weight_decay != 0:
        param.mul_(1 - lr * weight_decay)
    if grad.dim() > 1:
        row_var, col_var = state["row_var"], state["col_var"]
        row_var.lerp_(grad.norm(dim=-1, keepdim=True).square() / grad.size(-1), one_minus_beta2)
        col_var.lerp_(grad.norm(dim=-2, keepdim=True).square() / grad.size(-2), one_minus_beta2)
        var_estimate = (row_var @ col_var) / row_var.mean(dim=-2, keepdim=True).clamp(min=eps1)
    else:
        state["variance"].lerp_(grad * grad, one_minus_beta2)
        var_estimate = state["variance"]
    update = var_estimate.clamp(min=eps1 * eps1).rsqrt() * grad
    denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
    param.add_(update, alpha=-alpha / denom)


Adafactor.__doc__ = rf"""Implements Adafactor algorithm (PyTorch's variant).

    Args:
        {_params_doc}
        lr (float, Tensor, optional): unlike other optimizers, Adafactor does not require a
            learning rate, and Noam Shazeer and Mitchell Stern do not use lr at all; it is
            the maximum relative step size (default: 1e-2)
        beta2_decay (float, optional): the decay rate of beta2: beta2 = 1 - step^beta2_decay
            (default: -0.8)
        eps (Tuple[float, float], optional): epsilon1 is added to the denominators (None:
            the smallest value of the parameter's dtype), epsilon2 keeps the relative step
            from vanishing for parameters near 0 (default: (None, 1e-3))
        d (float, optional): the clipping threshold of the update's RMS (default: 1.0)
        weight_decay (float, optional): weight decay coefficient (default: 0.0)
        foreach (bool, optional): accepted as PyTorch; the update is the same either way
        maximize (bool, optional): maximize the objective with respect to the params,
            instead of minimizing (default: False)
    """
