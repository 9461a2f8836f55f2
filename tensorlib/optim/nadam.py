r"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum and momentum decay."""
from tensorlib.optim import _functional as F
from tensorlib.optim._validation import check_hyperparameters
from tensorlib.optim.optimizer import (Optimizer, _capturable_doc, _differentiable_doc,
                                       _foreach_doc, _maximize_doc, _params_doc, _resolve_foreach,
                                       _to_scalar)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    _group_defaults = {"maximize": False, "foreach": None, "capturable": False,
                       "differentiable": False, "decoupled_weight_decay": False}

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay,
                              momentum_decay=momentum_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _step_group(self, group):
        foreach = _resolve_foreach(group, group["params"])
        params, grads, s = F.collect(self, group, {"exp_avg": 0, "exp_avg_sq": 0},
                                     {"step": 0.0, "mu_product": 1.0}, foreach)
        beta1, beta2 = group["betas"]
        nadam(params, grads, s["exp_avg"], s["exp_avg_sq"], s["mu_product"], s["step"],
              beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
              momentum_decay=group["momentum_decay"], eps=group["eps"],
              decoupled_weight_decay=group["decoupled_weight_decay"],
              maximize=group["maximize"], foreach=foreach)


NAdam.__doc__ = rf"""Implements the NAdam algorithm.

    .. math::
        \mu_t = \beta_1 (1 - \tfrac12 0.96^{{t \psi}}), \quad
        \mu_{{t+1}} = \beta_1 (1 - \tfrac12 0.96^{{(t+1) \psi}})

        m_t = \beta_1 m_{{t-1}} + (1 - \beta_1) g_t, \quad
        v_t = \beta_2 v_{{t-1}} + (1 - \beta_2) g_t^2, \quad
        \hat v_t = v_t / (1 - \beta_2^t)

        \theta_t = \theta_{{t-1}}
            - \gamma \frac{{(1 - \mu_t) g_t}}
                          {{(1 - \prod_{{i \le t}} \mu_i)(\sqrt{{\hat v_t}} + \epsilon)}}
            - \gamma \frac{{\mu_{{t+1}} m_t}}
                          {{(1 - \prod_{{i \le t+1}} \mu_i)(\sqrt{{\hat v_t}} + \epsilon)}}

    Args:
        {_params_doc}
        lr (float, Tensor, optional): learning rate (default: 2e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum_decay (float, optional): momentum momentum_decay :math:`\psi` (default: 4e-3)
        decoupled_weight_decay (bool, optional): whether to decouple the weight
            decay as in AdamW to obtain NAdamW (default: False)
        {_foreach_doc}
        {_maximize_doc}
        {_capturable_doc}
        {_differentiable_doc}
    """


def _nadam_update(param, grad, exp_avg, exp_avg_sq, *, key, beta1, beta2, lr, weight_decay,
                  momentum_decay, eps, decoupled_weight_decay, maximize):
    step, mu_product = key
    grad = F.decayed_grad(param, grad, maximize=maximize, weight_decay=weight_decay, lr=lr,
                          decoupled=decoupled_weight_decay)
    bias_correction2 = 1 - beta2 ** step
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    F.lerp_(exp_avg, grad, 1 - beta1)
    F.ema_square_(exp_avg_sq, grad, beta2)
    denom = exp_avg_sq.div(bias_correction2).sqrt()
    denom.add_(eps)
    mu_product_next = mu_product * mu_next
    F.addcdiv_(param, grad, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
    F.addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next))


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False, maximize=False, *, beta1, beta2, lr, weight_decay,
          momentum_decay, eps):
    r"""Functional API that performs the NAdam algorithm computation (see `NAdam`)."""
    run = F.driver(params, foreach, differentiable)
    steps = F.bump_steps(state_steps)
    keys = []
    for step, mu_product in zip(steps, mu_products):
        # mu_product (a 0-dim tensor, as in PyTorch) accumulates the product of the mu_t
        mu_product.mul_(beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay))))
        keys.append((step, mu_product.item()))
    run(_nadam_update, params, grads, [exp_avgs, exp_avg_sqs], keys, beta1=beta1,
        beta2=beta2, lr=_to_scalar(lr), weight_decay=weight_decay,
        momentum_decay=momentum_decay, eps=eps,
        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
