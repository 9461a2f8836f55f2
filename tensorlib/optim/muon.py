r"""Muon (torch.optim.Muon, PyTorch 2.9+): momentum SGD for 2-D parameters whose update is
orthogonalized by a quintic Newton-Schulz iteration in bfloat16 (Keller Jordan's), with
decoupled weight decay and a learning rate scaled to the matrix's shape. PyTorch's update
rule, step for step."""
import math

import tensorlib
from tensorlib.optim.optimizer import Optimizer, _to_scalar

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


class Muon(Optimizer):
    """Muon for 2-D parameters only (biases and embeddings belong to another optimizer).

    Args: lr (1e-3), weight_decay (0.1, decoupled), momentum (0.95), nesterov (True),
    ns_coefficients ((3.4445, -4.7750, 2.0315)), eps (1e-7), ns_steps (5), adjust_lr_fn
    (None or "original": lr * sqrt(max(1, rows / cols)); "match_rms_adamw":
    0.2 * lr * sqrt(max(rows, cols))).
    """

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, tensorlib.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                                  "nesterov": nesterov, "ns_coefficients": ns_coefficients,
                                  "eps": eps, "ns_steps": ns_steps,
                                  "adjust_lr_fn": adjust_lr_fn})
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _step_group(self, group):
        lr = _to_scalar(group["lr"])
        momentum = group["momentum"]
        for p in group["params"]:
            if p.grad is None:
                continue
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
            if p.grad.is_sparse:
                raise RuntimeError("Muon does not support sparse gradients")
            grad = p.grad
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = tensorlib.zeros_like(grad)
            buf = state["momentum_buffer"]
            buf.lerp_(grad, 1 - momentum)
            update = grad.lerp(buf, momentum) if group["nesterov"] else buf
            update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                 group["ns_steps"], group["eps"])
            p.mul_(1 - lr * group["weight_decay"])
            p.add_(update, alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """An approximate orthogonalization U S' V^T of grad = U S V^T (S' near 1), computed in
    bfloat16 on the wider orientation, as PyTorch's."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    ortho = grad.bfloat16()
    if tall:
        ortho = ortho.T
    ortho = ortho / ortho.norm().clamp(min=eps)
    # each product accumulates in float32 and rounds to bfloat16 once, as PyTorch's bfloat16
    # addmm does (beta * M + alpha * A @ B before the rounding)
    for _ in range(ns_steps):
        wide = ortho.float()
        gram = (wide @ wide.T).bfloat16().float()
        gram_update = (b * gram + c * (gram @ gram)).bfloat16().float()
        ortho = (a * wide + gram_update @ wide).bfloat16()
    return ortho.T if tall else ortho


def _adjust_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    return lr * 0.2 * math.sqrt(max(rows, cols))
