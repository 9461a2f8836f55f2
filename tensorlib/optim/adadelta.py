r"""Adadelta (torch.optim.Adadelta)."""
from tensorlib.optim import _functional as F
from tensorlib.optim._validation import check_hyperparameters
from tensorlib.optim.optimizer import (Optimizer, _capturable_doc, _differentiable_doc,
                                       _foreach_doc, _maximize_doc, _params_doc, _resolve_foreach,
                                       _to_scalar)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "capturable": False}

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_hyperparameters(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _step_group(self, group):
        foreach = _resolve_foreach(group, group["params"])
        params, grads, s = F.collect(self, group, {"square_avg": 0, "acc_delta": 0},
                                     {"step": 0.0}, foreach)
        adadelta(params, grads, s["square_avg"], s["acc_delta"], s["step"], lr=group["lr"],
                 rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"],
                 maximize=group["maximize"], foreach=foreach)


Adadelta.__doc__ = rf"""Implements the Adadelta algorithm.

    .. math::
        v_t = \rho v_{{t-1}} + (1 - \rho) g_t^2, \quad
        \Delta x_t = \frac{{\sqrt{{u_{{t-1}} + \epsilon}}}}{{\sqrt{{v_t + \epsilon}}}} g_t

        u_t = \rho u_{{t-1}} + (1 - \rho) \Delta x_t^2, \quad
        \theta_t = \theta_{{t-1}} - \gamma \Delta x_t

    Args:
        {_params_doc}
        lr (float, Tensor, optional): coefficient that scale delta before it is applied
            to the parameters (default: 1.0)
        rho (float, optional): coefficient used for computing a running average
            of squared gradients (default: 0.9)
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        {_foreach_doc}
        {_capturable_doc}
        {_maximize_doc}
        {_differentiable_doc}
    """


def _adadelta_update(param, grad, square_avg, acc_delta, *, key, lr, rho, eps, weight_decay,
                     maximize):
    grad = F.decayed_grad(param, grad, maximize=maximize, weight_decay=weight_decay)
    F.ema_square_(square_avg, grad, rho)
    std = (square_avg + eps).sqrt()
    delta = (acc_delta + eps).sqrt()
    delta.div_(std).mul_(grad)
    F.ema_square_(acc_delta, delta, rho)
    F.add_scaled_(param, delta, -lr)


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize):
    r"""Functional API that performs the Adadelta algorithm computation (see `Adadelta`)."""
    run = F.driver(params, foreach, differentiable)
    F.bump_steps(state_steps)
    run(_adadelta_update, params, grads, [square_avgs, acc_deltas], None, lr=_to_scalar(lr),
        rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
