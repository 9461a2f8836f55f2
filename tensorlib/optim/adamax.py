r"""Adamax (torch.optim.Adamax): Adam with the infinity norm."""
from tensorlib.optim import _functional as F
from tensorlib.optim._validation import check_hyperparameters
from tensorlib.optim.optimizer import (Optimizer, _capturable_doc, _differentiable_doc,
                                       _foreach_doc, _maximize_doc, _params_doc, _resolve_foreach,
                                       _to_scalar)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "capturable": False}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _step_group(self, group):
        foreach = _resolve_foreach(group, group["params"])
        params, grads, s = F.collect(self, group, {"exp_avg": 0, "exp_inf": 0},
                                     {"step": 0.0}, foreach)
        beta1, beta2 = group["betas"]
        adamax(params, grads, s["exp_avg"], s["exp_inf"], s["step"], eps=group["eps"],
               beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
               maximize=group["maximize"], foreach=foreach)


Adamax.__doc__ = rf"""Implements the Adamax algorithm (a variant of Adam based on infinity norm).

    .. math::
        m_t = \beta_1 m_{{t-1}} + (1 - \beta_1) g_t, \quad
        u_t = \max(\beta_2 u_{{t-1}}, |g_t| + \epsilon), \quad
        \theta_t = \theta_{{t-1}} - \frac{{\gamma m_t}}{{(1 - \beta_1^t) u_t}}

    Args:
        {_params_doc}
        lr (float, Tensor, optional): learning rate (default: 2e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        {_foreach_doc}
        {_maximize_doc}
        {_differentiable_doc}
        {_capturable_doc}
    """


def _adamax_update(param, grad, exp_avg, exp_inf, *, key, eps, beta1, beta2, lr,
                   weight_decay, maximize):
    step = key
    grad = F.decayed_grad(param, grad, maximize=maximize, weight_decay=weight_decay)
    F.lerp_(exp_avg, grad, 1 - beta1)
    exp_inf.mul_(beta2)
    F.maximum_(exp_inf, grad.abs().add_(eps))
    clr = lr / (1 - beta1 ** step)
    F.addcdiv_(param, exp_avg, exp_inf, -clr)


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2,
           lr, weight_decay):
    r"""Functional API that performs the Adamax algorithm computation (see `Adamax`)."""
    run = F.driver(params, foreach, differentiable)
    steps = F.bump_steps(state_steps)
    run(_adamax_update, params, grads, [exp_avgs, exp_infs], steps, eps=eps, beta1=beta1,
        beta2=beta2, lr=_to_scalar(lr), weight_decay=weight_decay, maximize=maximize)
