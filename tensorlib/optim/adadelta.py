r"""Adadelta (torch.optim.Adadelta)."""
from tensorlib.optim import _functional as F
from tensorlib.optim.adam import _check_lr, _closure_loss
from tensorlib.optim.optimizer import (Optimizer, _default_foreach, _differentiable_doc,
                                       _foreach_doc, _maximize_doc, _to_scalar,
                                       _use_grad_for_differentiable)
from tensorlib.optim.sgd import _resolve_foreach

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)

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
            params, grads, s = F.collect(self, group, {"square_avg": 0, "acc_delta": 0},
                                         {"step": 0.0}, foreach)
            adadelta(params, grads, s["square_avg"], s["acc_delta"], s["step"],
                     lr=group["lr"], rho=group["rho"], eps=group["eps"],
                     weight_decay=group["weight_decay"], maximize=group["maximize"],
                     foreach=foreach)
        return loss


Adadelta.__doc__ = rf"""Implements the Adadelta algorithm.

    .. math::
        v_t = \rho v_{{t-1}} + (1 - \rho) g_t^2, \quad
        \Delta x_t = \frac{{\sqrt{{u_{{t-1}} + \epsilon}}}}{{\sqrt{{v_t + \epsilon}}}} g_t

        u_t = \rho u_{{t-1}} + (1 - \rho) \Delta x_t^2, \quad
        \theta_t = \theta_{{t-1}} - \gamma \Delta x_t

    Args:
        params (iterable): iterable of parameters or named_parameters to optimize
            or iterable of dicts defining parameter groups
        lr (float, Tensor, optional): coefficient that scale delta before it is applied
            to the parameters (default: 1.0)
        rho (float, optional): coefficient used for computing a running average
            of squared gradients (default: 0.9)
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-6)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        {_foreach_doc}
        capturable (bool, optional): accepted for PyTorch compatibility (no effect)
        {_maximize_doc}
        {_differentiable_doc}
    """


def _adadelta_update(param, grad, square_avg, acc_delta, *, key, lr, rho, eps, weight_decay,
                     maximize):
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + param * weight_decay
    square_avg.mul_(rho)
    F.addcmul_(square_avg, grad, grad, 1 - rho)
    std = (square_avg + eps).sqrt()
    delta = (acc_delta + eps).sqrt()
    delta.div_(std).mul_(grad)
    acc_delta.mul_(rho)
    F.addcmul_(acc_delta, delta, delta, 1 - rho)
    F.add_scaled_(param, delta, -lr)


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize):
    r"""Functional API that performs the Adadelta algorithm computation (see `Adadelta`)."""
    if foreach is None:
        foreach = _default_foreach(params, differentiable)
    F.bump_steps(state_steps)
    run = F.run_foreach if foreach else F.run_single
    run(_adadelta_update, params, grads, [square_avgs, acc_deltas], None, lr=_to_scalar(lr),
        rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
