r"""Rprop (torch.optim.Rprop): resilient backpropagation, a per-element step size grown
while the gradient keeps its sign and shrunk when it flips, the update using only the sign."""
import tensorlib
from tensorlib.optim import _functional as F
from tensorlib.optim.optimizer import Optimizer, _to_scalar

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    r"""Rprop: step_size *= etaplus (same sign as the previous gradient), etaminus (opposite
    sign: that element is not moved and its gradient forgotten) or 1, clamped to step_sizes;
    p -= sign(g) step_size."""
    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False,
                       "capturable": False}

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if isinstance(lr, tensorlib.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes,
                                  "foreach": foreach, "maximize": maximize,
                                  "differentiable": differentiable, "capturable": capturable})

    def _step_group(self, group):
        params, grads = F.params_with_grad(group)
        prevs, step_sizes, steps = [], [], []
        for p, g in zip(params, grads):
            if g.is_sparse:
                raise RuntimeError("Rprop does not support sparse gradients")
            state = self.state[p]
            if len(state) == 0:
                state["step"] = F.scalar_tensor(0.0)
                state["prev"] = tensorlib.zeros_like(p)
                state["step_size"] = tensorlib.full_like(g, _to_scalar(group["lr"]))
            prevs.append(state["prev"])
            step_sizes.append(state["step_size"])
            steps.append(state["step"])
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        rprop(params, grads, prevs, step_sizes, steps, step_size_min=step_size_min,
              step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus,
              maximize=group["maximize"])


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False,
          maximize=False, differentiable=False, has_complex=False, *, step_size_min,
          step_size_max, etaminus, etaplus):
    r"""Functional API that performs the Rprop algorithm computation (see `Rprop`)."""
    for param, grad, prev, step_size, step in zip(params, grads, prevs, step_sizes,
                                                  state_steps):
        grad = -grad if maximize else grad
        step.add_(1)
        agree = (grad * prev).sign()
        factor = tensorlib.ones_like(step_size)
        factor.masked_fill_(agree > 0, etaplus).masked_fill_(agree < 0, etaminus)
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        grad = tensorlib.where(agree < 0, tensorlib.zeros_like(grad), grad)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
