r"""RAdam (torch.optim.RAdam): Adam with a rectified adaptive learning rate."""
from tensorlib.optim import _functional as F
from tensorlib.optim._validation import check_hyperparameters
from tensorlib.optim.optimizer import (Optimizer, _capturable_doc, _differentiable_doc,
                                       _foreach_doc, _maximize_doc, _params_doc, _resolve_foreach,
                                       _to_scalar)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "decoupled_weight_decay": False, "capturable": False}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _step_group(self, group):
        foreach = _resolve_foreach(group, group["params"])
        params, grads, s = F.collect(self, group, {"exp_avg": 0, "exp_avg_sq": 0},
                                     {"step": 0.0}, foreach)
        beta1, beta2 = group["betas"]
        radam(params, grads, s["exp_avg"], s["exp_avg_sq"], s["step"], beta1=beta1,
              beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
              eps=group["eps"], maximize=group["maximize"], foreach=foreach,
              decoupled_weight_decay=group["decoupled_weight_decay"])


RAdam.__doc__ = rf"""Implements the RAdam algorithm.

    .. math::
        m_t = \beta_1 m_{{t-1}} + (1 - \beta_1) g_t, \quad
        v_t = \beta_2 v_{{t-1}} + (1 - \beta_2) g_t^2, \quad
        \hat m_t = m_t / (1 - \beta_1^t)

        \rho_\infty = 2 / (1 - \beta_2) - 1, \quad
        \rho_t = \rho_\infty - 2 t \beta_2^t / (1 - \beta_2^t)

        \text{{if }} \rho_t > 5: \;
        r_t = \sqrt{{\frac{{(\rho_t - 4)(\rho_t - 2)\rho_\infty}}
                           {{(\rho_\infty - 4)(\rho_\infty - 2)\rho_t}}}},
        \; \theta_t = \theta_{{t-1}} - \gamma \hat m_t r_t
            \frac{{\sqrt{{1 - \beta_2^t}}}}{{\sqrt{{v_t}} + \epsilon}}
        \quad \text{{else }} \theta_t = \theta_{{t-1}} - \gamma \hat m_t

    Args:
        {_params_doc}
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        decoupled_weight_decay (bool, optional): whether to decouple the weight
            decay as in AdamW to obtain RAdamW (default: False)
        {_foreach_doc}
        {_maximize_doc}
        {_capturable_doc}
        {_differentiable_doc}
    """


def _radam_update(param, grad, exp_avg, exp_avg_sq, *, key, beta1, beta2, lr, weight_decay,
                  eps, decoupled_weight_decay, maximize):
    step = key
    grad = F.decayed_grad(param, grad, maximize=maximize, weight_decay=weight_decay, lr=lr,
                          decoupled=decoupled_weight_decay)
    F.lerp_(exp_avg, grad, 1 - beta1)
    F.ema_square_(exp_avg_sq, grad, beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    if rho_t > 5.0:
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        denom = exp_avg_sq.sqrt().add_(eps)
        F.addcdiv_(param, exp_avg, denom,
                   -lr * rect * (bias_correction2 ** 0.5) / bias_correction1)
    else:
        F.add_scaled_(param, exp_avg, -lr / bias_correction1)


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False,
          foreach=None, differentiable=False, capturable=False, has_complex=False,
          maximize=False, *, beta1, beta2, lr, weight_decay, eps):
    r"""Functional API that performs the RAdam algorithm computation (see `RAdam`)."""
    run = F.driver(params, foreach, differentiable)
    steps = F.bump_steps(state_steps)
    run(_radam_update, params, grads, [exp_avgs, exp_avg_sqs], steps, beta1=beta1,
        beta2=beta2, lr=_to_scalar(lr), weight_decay=weight_decay, eps=eps,
        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
