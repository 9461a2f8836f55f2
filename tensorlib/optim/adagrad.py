r"""Adagrad (torch.optim.Adagrad)."""
from tensorlib.optim import _functional as F
from tensorlib.optim._validation import check_fused, check_hyperparameters
from tensorlib.optim.optimizer import (Optimizer, _differentiable_doc, _foreach_doc, _fused_doc,
                                       _maximize_doc, _params_doc, _resolve_foreach, _to_scalar)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "fused": None}

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        check_hyperparameters(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                              initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "fused": fused}
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)
        # as in PyTorch, Adagrad's state exists from construction (the accumulator starts at
        # initial_accumulator_value); one flat buffer per group and (device, dtype)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["step"] = F.scalar_tensor(0.0)
            F.init_state_flat(self, group["params"], {"sum": initial_accumulator_value})

    def share_memory(self):
        """No-op kept for PyTorch compatibility (tensorlib has no shared-memory tensors)."""

    def _step_group(self, group):
        foreach = _resolve_foreach(group, group["params"])
        params, grads, s = F.collect(self, group,
                                     {"sum": self.defaults["initial_accumulator_value"]},
                                     {"step": 0.0}, foreach)
        adagrad(params, grads, s["sum"], s["step"], lr=group["lr"],
                weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                eps=group["eps"], maximize=group["maximize"], foreach=foreach)


Adagrad.__doc__ = rf"""Implements the Adagrad algorithm.

    .. math::
        \tilde\gamma = \gamma / (1 + (t - 1) \eta), \quad
        s_t = s_{{t-1}} + g_t^2, \quad
        \theta_t = \theta_{{t-1}} - \tilde\gamma \frac{{g_t}}{{\sqrt{{s_t}} + \epsilon}}

    Args:
        {_params_doc}
        lr (float, Tensor, optional): learning rate (default: 1e-2)
        lr_decay (float, optional): learning rate decay (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        initial_accumulator_value (float, optional): initial value of the
            sum of squares of gradients (default: 0)
        eps (float, optional): term added to the denominator to improve
            numerical stability (default: 1e-10)
        {_foreach_doc}
        {_maximize_doc}
        {_differentiable_doc}
        {_fused_doc}
    """


def _adagrad_update(param, grad, state_sum, *, key, lr, weight_decay, lr_decay, eps,
                    maximize):
    step = key
    grad = F.decayed_grad(param, grad, maximize=maximize, weight_decay=weight_decay)
    clr = lr / (1 + (step - 1) * lr_decay)
    F.addcmul_(state_sum, grad, grad, 1)
    std = state_sum.sqrt().add_(eps)
    F.addcdiv_(param, grad, std, -clr)


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None,
            found_inf=None, has_sparse_grad=False, foreach=None, differentiable=False,
            has_complex=False, *, lr, weight_decay, lr_decay, eps, maximize):
    r"""Functional API that performs the Adagrad algorithm computation (see `Adagrad`)."""
    run = F.driver(params, foreach, differentiable, fused)
    steps = F.bump_steps(state_steps)
    run(_adagrad_update, params, grads, [state_sums], steps, lr=_to_scalar(lr),
        weight_decay=weight_decay, lr_decay=lr_decay, eps=eps, maximize=maximize)
