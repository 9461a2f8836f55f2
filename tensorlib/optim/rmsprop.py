r"""RMSprop (torch.optim.RMSprop), optionally centered and with momentum."""
from tensorlib.optim import _functional as F
from tensorlib.optim._validation import check_hyperparameters
from tensorlib.optim.optimizer import (Optimizer, _capturable_doc, _differentiable_doc,
                                       _foreach_doc, _maximize_doc, _params_doc, _resolve_foreach,
                                       _to_scalar)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    _group_defaults = {"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                       "differentiable": False, "capturable": False}

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_hyperparameters(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                              alpha=alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _step_group(self, group):
        foreach = _resolve_foreach(group, group["params"])
        spec = {"square_avg": 0}
        if group["momentum"] > 0:
            spec["momentum_buffer"] = 0
        if group["centered"]:
            spec["grad_avg"] = 0
        params, grads, s = F.collect(self, group, spec, {"step": 0.0}, foreach)
        rmsprop(params, grads, s["square_avg"], s.get("grad_avg", []),
                s.get("momentum_buffer", []), s["step"], lr=group["lr"], alpha=group["alpha"],
                eps=group["eps"], weight_decay=group["weight_decay"],
                momentum=group["momentum"], centered=group["centered"],
                maximize=group["maximize"], foreach=foreach)


RMSprop.__doc__ = rf"""Implements the RMSprop algorithm.

    .. math::
        v_t = \alpha v_{{t-1}} + (1 - \alpha) g_t^2, \quad
        \tilde v_t = v_t - \bar g_t^2 \text{{ if centered }}
            (\bar g_t = \alpha \bar g_{{t-1}} + (1 - \alpha) g_t)

        b_t = \mu b_{{t-1}} + g_t / (\sqrt{{\tilde v_t}} + \epsilon), \quad
        \theta_t = \theta_{{t-1}} - \gamma b_t
        \text{{ (without momentum: }}
            \theta_{{t-1}} - \gamma g_t / (\sqrt{{\tilde v_t}} + \epsilon))

    Args:
        {_params_doc}
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        alpha (float, optional): smoothing constant (default: 0.99)
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        momentum (float, optional): momentum factor (default: 0)
        centered (bool, optional) : if ``True``, compute the centered RMSProp,
            the gradient is normalized by an estimation of its variance
        {_capturable_doc}
        {_foreach_doc}
        {_maximize_doc}
        {_differentiable_doc}
    """


def _rmsprop_update(param, grad, square_avg, grad_avg, momentum_buffer, *, key, lr, alpha,
                    eps, weight_decay, momentum, centered, maximize):
    grad = F.decayed_grad(param, grad, maximize=maximize, weight_decay=weight_decay)
    F.ema_square_(square_avg, grad, alpha)
    if centered:
        F.lerp_(grad_avg, grad, 1 - alpha)
        avg = (square_avg - grad_avg * grad_avg).sqrt()
    else:
        avg = square_avg.sqrt()
    avg.add_(eps)
    if momentum > 0:
        momentum_buffer.mul_(momentum)
        F.addcdiv_(momentum_buffer, grad, avg, 1)
        F.add_scaled_(param, momentum_buffer, -lr)
    else:
        F.addcdiv_(param, grad, avg, -lr)


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered):
    r"""Functional API that performs the RMSprop algorithm computation (see `RMSprop`)."""
    run = F.driver(params, foreach, differentiable)
    F.bump_steps(state_steps)
    run(_rmsprop_update, params, grads,
        [square_avgs, grad_avgs if centered else None,
         momentum_buffer_list if momentum > 0 else None], None,
        lr=_to_scalar(lr), alpha=alpha, eps=eps, weight_decay=weight_decay,
        momentum=momentum, centered=centered, maximize=maximize)
