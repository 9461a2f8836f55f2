r"""Adam (torch.optim.Adam), with L2 or decoupled (AdamW) weight decay and AMSGrad."""
from tensorlib.autograd.grad_mode import enable_grad
from tensorlib.optim import _functional as F
from tensorlib.optim.optimizer import (Optimizer, _default_foreach, _differentiable_doc,
                                       _foreach_doc, _fused_doc, _maximize_doc, _to_scalar,
                                       _use_grad_for_differentiable)
from tensorlib.optim.sgd import _resolve_foreach

__all__ = ["Adam", "adam"]


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _check_lr(lr):
    if hasattr(lr, "numel") and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _closure_loss(closure):
    if closure is None:
        return None
    with enable_grad():
        return closure()


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    max_exp_avg_sqs, state_steps):
        new = []
        for p in group["params"]:
            if p.grad is not None:
                params_with_grad.append(p)
                grads.append(p.grad)
                if len(self.state[p]) == 0:
                    new.append(p)
        spec = {"exp_avg": 0, "exp_avg_sq": 0}
        if group["amsgrad"]:
            spec["max_exp_avg_sq"] = 0
        for p in new:
            self.state[p]["step"] = F.scalar_tensor(0.0)
        F.init_state_flat(self, new, spec)
        if _resolve_foreach(group, params_with_grad):
            F.rehome_state(self, params_with_grad, tuple(spec))
        for p in params_with_grad:
            state = self.state[p]
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            state_steps.append(state["step"])
        return False

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model
                and returns the loss.
        """
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = [], [], [], [], [], []
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                             steps)
            beta1, beta2 = group["betas"]
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
                 amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], foreach=_resolve_foreach(group, params),
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


Adam.__doc__ = rf"""Implements the Adam algorithm.

    .. math::
        g_t \leftarrow g_t + \lambda \theta_{{t-1}} \text{{ (or, decoupled, }}
            \theta_{{t-1}} \leftarrow \theta_{{t-1}}(1 - \gamma\lambda))

        m_t = \beta_1 m_{{t-1}} + (1 - \beta_1) g_t, \quad
        v_t = \beta_2 v_{{t-1}} + (1 - \beta_2) g_t^2

        \hat v_t = \max(\hat v_{{t-1}}, v_t) \text{{ with amsgrad, else }} v_t

        \theta_t = \theta_{{t-1}} - \frac{{\gamma}}{{1 - \beta_1^t}}
            \frac{{m_t}}{{\sqrt{{\hat v_t}} / \sqrt{{1 - \beta_2^t}} + \epsilon}}

    Args:
        params (iterable): iterable of parameters or named_parameters to optimize
            or iterable of dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        amsgrad (bool, optional): whether to use the AMSGrad variant (default: False)
        {_foreach_doc}
        {_maximize_doc}
        capturable (bool, optional): accepted for PyTorch compatibility (no effect)
        {_differentiable_doc}
        {_fused_doc}
        decoupled_weight_decay (bool, optional): if True, this optimizer is equivalent to
            AdamW (default: False)
    """


def _adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, key, amsgrad, beta1,
                 beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay):
    step = key
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled_weight_decay:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad + param * weight_decay
    F.lerp_(exp_avg, grad, 1 - beta1)
    exp_avg_sq.mul_(beta2)
    F.addcmul_(exp_avg_sq, grad, grad, 1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2 ** 0.5
    if amsgrad:
        F.maximum_(max_exp_avg_sq, exp_avg_sq)
        denom = max_exp_avg_sq.sqrt()
    else:
        denom = exp_avg_sq.sqrt()
    denom.div_(bias_correction2_sqrt).add_(eps)
    F.addcdiv_(param, exp_avg, denom, -step_size)


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
         has_complex=False, decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize):
    r"""Functional API that performs the Adam algorithm computation (see `Adam`)."""
    if foreach is None and fused is None:
        foreach = _default_foreach(params, differentiable)
    steps = F.bump_steps(state_steps)
    run = F.run_foreach if (foreach or fused) else F.run_single
    run(_adam_update, params, grads,
        [exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else None], steps,
        amsgrad=amsgrad, beta1=_to_scalar(beta1), beta2=_to_scalar(beta2), lr=_to_scalar(lr),
        weight_decay=weight_decay, eps=eps, maximize=maximize,
        decoupled_weight_decay=decoupled_weight_decay)
