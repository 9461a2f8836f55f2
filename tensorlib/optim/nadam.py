r"""NAdam (torch.optim.NAdam): Adam with Nesterov momentum and momentum decay."""
from tensorlib.optim import _functional as F
from tensorlib.optim.adam import _check_betas, _check_lr, _closure_loss
from tensorlib.optim.optimizer import (Optimizer, _default_foreach, _differentiable_doc,
                                       _foreach_doc, _maximize_doc, _to_scalar,
                                       _use_grad_for_differentiable)
from tensorlib.optim.sgd import _resolve_foreach

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model
                and returns the loss.
        """
        loss = _closure_loss(closure)
        for group in self.param_groups:
            foreach = _resolve_foreach(group, group["params"])
            params, grads, s = F.collect(self, group, {"exp_avg": 0, "exp_avg_sq": 0},
                                         {"step": 0.0, "mu_product": 1.0}, foreach)
            beta1, beta2 = group["betas"]
            nadam(params, grads, s["exp_avg"], s["exp_avg_sq"], s["mu_product"], s["step"],
                  beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  maximize=group["maximize"], foreach=foreach)
        return loss


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
        params (iterable): iterable of parameters or named_parameters to optimize
            or iterable of dicts defining parameter groups
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
        capturable (bool, optional): accepted for PyTorch compatibility (no effect)
        {_differentiable_doc}
    """


def _nadam_update(param, grad, exp_avg, exp_avg_sq, *, key, beta1, beta2, lr, weight_decay,
                  momentum_decay, eps, decoupled_weight_decay, maximize):
    step, mu_product = key
    if maximize:
        grad = -grad
    bias_correction2 = 1 - beta2 ** step
    if weight_decay != 0:
        if decoupled_weight_decay:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad + param * weight_decay
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    F.lerp_(exp_avg, grad, 1 - beta1)
    exp_avg_sq.mul_(beta2)
    F.addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
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
    if foreach is None:
        foreach = _default_foreach(params, differentiable)
    steps = F.bump_steps(state_steps)
    keys = []
    for step, mu_product in zip(steps, mu_products):
        # mu_product (a 0-dim tensor, as in PyTorch) accumulates the product of the mu_t
        mu_product.mul_(beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay))))
        keys.append((step, mu_product.item()))
    run = F.run_foreach if foreach else F.run_single
    run(_nadam_update, params, grads, [exp_avgs, exp_avg_sqs], keys, beta1=beta1,
        beta2=beta2, lr=_to_scalar(lr), weight_decay=weight_decay,
        momentum_decay=momentum_decay, eps=eps,
        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
