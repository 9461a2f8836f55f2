r"""Adam (torch.optim.Adam), with L2 or decoupled (AdamW) weight decay and AMSGrad."""
from tensorlib.optim import _functional as F
from tensorlib.optim._validation import check_fused, check_hyperparameters
from tensorlib.optim.optimizer import (Optimizer, _capturable_doc, _differentiable_doc,
                                       _foreach_doc, _fused_doc, _maximize_doc, _params_doc,
                                       _resolve_foreach, _to_scalar)

__all__ = ["Adam", "adam"]


class Adam(Optimizer):
    _group_defaults = {"amsgrad": False, "maximize": False, "foreach": None,
                       "capturable": False, "differentiable": False,
                       "decoupled_weight_decay": False, "fused": None}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        check_hyperparameters(lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def _step_group(self, group):
        spec = {"exp_avg": 0, "exp_avg_sq": 0}
        if group["amsgrad"]:
            spec["max_exp_avg_sq"] = 0
        params, grads, s = F.collect(self, group, spec, {"step": 0.0})
        beta1, beta2 = group["betas"]
        adam(params, grads, s["exp_avg"], s["exp_avg_sq"], s.get("max_exp_avg_sq", []),
             s["step"], amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
             weight_decay=group["weight_decay"], eps=group["eps"],
             maximize=group["maximize"], foreach=_resolve_foreach(group, params),
             decoupled_weight_decay=group["decoupled_weight_decay"])


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
        {_params_doc}
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (Tuple[float, float], optional): coefficients used for computing
            running averages of gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-8)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        amsgrad (bool, optional): whether to use the AMSGrad variant (default: False)
        {_foreach_doc}
        {_maximize_doc}
        {_capturable_doc}
        {_differentiable_doc}
        {_fused_doc}
        decoupled_weight_decay (bool, optional): if True, this optimizer is equivalent to
            AdamW (default: False)
    """


def _adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, key, amsgrad, beta1,
                 beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay):
    step = key
    grad = F.decayed_grad(param, grad, maximize=maximize, weight_decay=weight_decay, lr=lr,
                          decoupled=decoupled_weight_decay)
    F.lerp_(exp_avg, grad, 1 - beta1)
    F.ema_square_(exp_avg_sq, grad, beta2)
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


def _adam_multi(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *,
                amsgrad, beta1, beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay):
    """The whole list in one fused pass when the device has a multi-tensor Adam kernel that
    takes these tensors: "adam_update_multi_capturable" reads the (already advanced) step
    tensors itself, so no step count goes through Python (a compiled step replays);
    "adam_update_multi" takes each parameter's bias corrections computed here, as
    `_adam_update` does. Returns whether one ran."""
    lists = (params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else [])
    flags = (float(beta1), float(beta2), float(weight_decay), float(lr), float(eps),
             bool(amsgrad), bool(maximize), bool(decoupled_weight_decay))
    kernel = F.multi_kernel("adam_update_multi_capturable", params, grads)
    if kernel is not None:
        return kernel(*lists, list(state_steps), *flags)
    kernel = F.multi_kernel("adam_update_multi", params, grads)
    if kernel is None:
        return False
    steps = F.step_values(state_steps)
    step_sizes = [lr / (1 - beta1 ** step) for step in steps]
    bias_correction2_sqrts = [(1 - beta2 ** step) ** 0.5 for step in steps]
    return kernel(*lists, step_sizes, bias_correction2_sqrts, *flags)


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
         has_complex=False, decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize):
    r"""Functional API that performs the Adam algorithm computation (see `Adam`)."""
    run = F.driver(params, foreach, differentiable, fused)
    F.advance_steps(state_steps)
    if not differentiable and _adam_multi(
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad=amsgrad,
            beta1=_to_scalar(beta1), beta2=_to_scalar(beta2), lr=_to_scalar(lr),
            weight_decay=weight_decay, eps=eps, maximize=maximize,
            decoupled_weight_decay=decoupled_weight_decay):
        return
    steps = F.step_values(state_steps)
    run(_adam_update, params, grads,
        [exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else None], steps,
        amsgrad=amsgrad, beta1=_to_scalar(beta1), beta2=_to_scalar(beta2), lr=_to_scalar(lr),
        weight_decay=weight_decay, eps=eps, maximize=maximize,
        decoupled_weight_decay=decoupled_weight_decay)
