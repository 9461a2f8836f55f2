r"""ASGD (torch.optim.ASGD): SGD with a decaying step size eta_t = lr / (1 + lambd lr t)^alpha
and a running average `ax` of the iterates (Polyak averaging from step t0 on)."""
import tensorlib
from tensorlib.optim import _functional as F
from tensorlib.optim.optimizer import Optimizer, _to_scalar

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    r"""Averaged SGD: p <- p (1 - lambd eta) - eta g; ax <- ax + mu (p - ax) (ax = p while
    mu is 1); then eta = lr / (1 + lambd lr t)^alpha, mu = 1 / max(1, t - t0)."""
    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "capturable": False}

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, tensorlib.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                                  "weight_decay": weight_decay, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    def _step_group(self, group):
        params, grads = F.params_with_grad(group)
        lists = {"ax": [], "eta": [], "mu": [], "step": []}
        for p, g in zip(params, grads):
            if g.is_sparse:
                raise RuntimeError("ASGD does not support sparse gradients")
            state = self.state[p]
            if len(state) == 0:
                state["step"] = F.scalar_tensor(0.0)
                state["eta"] = F.scalar_tensor(_to_scalar(group["lr"]))
                state["mu"] = F.scalar_tensor(1.0)
                state["ax"] = tensorlib.zeros_like(p)
            for key, values in lists.items():
                values.append(state[key])
        asgd(params, grads, lists["ax"], lists["mu"], lists["eta"], lists["step"],
             lambd=group["lambd"], lr=_to_scalar(group["lr"]), t0=group["t0"],
             alpha=group["alpha"], weight_decay=group["weight_decay"],
             maximize=group["maximize"])


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False,
         differentiable=False, capturable=False, has_complex=False, *, lambd, lr, t0, alpha,
         weight_decay):
    r"""Functional API that performs the ASGD algorithm computation (see `ASGD`)."""
    for param, grad, ax, mu, eta, step_t in zip(params, grads, axs, mus, etas, state_steps):
        grad = -grad if maximize else grad
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu.item()))
        else:
            ax.copy_(param)
        step = step_t.item()
        eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
        mu.fill_(1 / max(1, step - t0))
