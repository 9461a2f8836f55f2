r"""Stochastic gradient descent (torch.optim.SGD), optionally with momentum."""
import tensorlib
from tensorlib.ops._composites import optional_kernel
from tensorlib.optim import _functional as F
from tensorlib.optim._validation import check_fused, check_hyperparameters
from tensorlib.optim.optimizer import (Optimizer, _default_foreach, _differentiable_doc,
                                       _foreach_doc, _fused_doc, _maximize_doc, _params_doc,
                                       _resolve_foreach, _to_scalar)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    _group_defaults = {"nesterov": False, "maximize": False, "foreach": None,
                       "differentiable": False, "fused": False}

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        check_hyperparameters(lr=lr, momentum=momentum, weight_decay=weight_decay,
                              allow_nan=True)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def _step_group(self, group):
        """SGD's state is the momentum buffer alone, created by the update itself on the
        first step (so not through `F.collect`) and stored back here."""
        params, grads = F.params_with_grad(group)
        foreach = _resolve_foreach(group, params)
        momentum_buffer_list = []
        if group["momentum"] != 0:
            momentum_buffer_list = [self.state[p].get("momentum_buffer") for p in params]
            if foreach:
                F.rehome_state(self, params, ("momentum_buffer",))
                momentum_buffer_list = [self.state[p].get("momentum_buffer") for p in params]
        sgd(params, grads, momentum_buffer_list, weight_decay=group["weight_decay"],
            momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
            nesterov=group["nesterov"], maximize=group["maximize"], foreach=foreach)
        if group["momentum"] != 0:
            for p, buf in zip(params, momentum_buffer_list):
                self.state[p]["momentum_buffer"] = buf


SGD.__doc__ = rf"""Implements stochastic gradient descent (optionally with momentum).

    For each parameter, with gradient :math:`g_t` (negated when ``maximize``):

    .. math::
        g_t \leftarrow g_t + \lambda \theta_{{t-1}} \quad (\text{{weight decay }} \lambda)

        b_t = \mu b_{{t-1}} + (1 - \tau) g_t \quad (b_1 = g_1)

        g_t \leftarrow g_t + \mu b_t \text{{ if nesterov else }} b_t

        \theta_t = \theta_{{t-1}} - \gamma g_t

    Args:
        {_params_doc}
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        momentum (float, optional): momentum factor (default: 0)
        dampening (float, optional): dampening for momentum (default: 0)
        weight_decay (float, optional): weight decay (L2 penalty) (default: 0)
        nesterov (bool, optional): enables Nesterov momentum. Only applicable
            when momentum is non-zero. (default: False)
        {_maximize_doc}
        {_foreach_doc}
        {_differentiable_doc}
        {_fused_doc}

    Example:
        >>> optimizer = tensorlib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> optimizer.zero_grad()
        >>> loss_fn(model(input), target).backward()
        >>> optimizer.step()
    """


def _sgd_update(param, grad, buf, *, key, lr, weight_decay, momentum, dampening, nesterov,
                maximize):
    """One SGD update of `param` (a parameter or a flat bucket); returns the momentum buffer
    (a new one on the first step). A backend's fused "sgd_update" kernel does it in one pass
    when it takes these tensors."""
    fused = optional_kernel(param._device, "sgd_update")
    if fused is not None and grad._device is param._device and grad._dtype is param._dtype:
        first = momentum != 0 and buf is None
        new_buf = tensorlib.empty_like(param) if first else buf
        if fused(param, grad, new_buf if momentum != 0 else None, float(lr),
                 float(weight_decay), float(momentum), float(dampening), bool(nesterov),
                 bool(maximize), first):
            return new_buf
    grad = F.decayed_grad(param, grad, maximize=maximize, weight_decay=weight_decay)
    if momentum != 0:
        if buf is None:
            buf = grad.clone()
        else:
            buf.mul_(momentum)
            F.add_scaled_(buf, grad, 1 - dampening)
        grad = grad + buf * momentum if nesterov else buf
    F.add_scaled_(param, grad, -lr)
    return buf


def _sgd_multi(params, grads, bufs, *, lr, weight_decay, momentum, dampening, nesterov,
               maximize):
    """The whole list in one fused pass ("sgd_update_multi") when the device has it and takes
    these tensors; new momentum buffers are stored into `bufs`. Returns whether it ran."""
    kernel = F.multi_kernel("sgd_update_multi", params, grads)
    if kernel is None:
        return False
    first, new = [], []
    if momentum != 0:
        first = [b is None for b in bufs]
        new = [tensorlib.empty_like(p) if f else b for p, b, f in zip(params, bufs, first)]
    if not kernel(params, grads, new, float(lr), float(weight_decay), float(momentum),
                  float(dampening), bool(nesterov), bool(maximize), first):
        return False
    if momentum != 0:
        bufs[:] = new
    return True


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None,
        fused=None, grad_scale=None, found_inf=None, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize):
    r"""Functional API that performs the SGD algorithm computation (see `SGD`).
    `momentum_buffer_list` is updated in place: entries that were None get their new
    buffers."""
    if foreach is None and fused is None:
        foreach = _default_foreach(params)
    lr = _to_scalar(lr)
    kwargs = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, dampening=dampening,
                  nesterov=nesterov, maximize=maximize)
    if _sgd_multi(params, d_p_list, momentum_buffer_list, **kwargs):
        return
    if momentum == 0:
        momentum_buffer_list = [None] * len(params)
        write_back = False
    else:
        write_back = True
    if not (foreach or fused):
        for i, p in enumerate(params):
            buf = _sgd_update(p, d_p_list[i], momentum_buffer_list[i], key=None, **kwargs)
            if write_back:
                momentum_buffer_list[i] = buf
        return
    # foreach: buckets split parameters that already have a buffer from those that do not
    has_buf = [b is not None for b in momentum_buffer_list]
    for bucket in F.buckets(params, has_buf):
        p = bucket.operand(params)
        g = bucket.operand(d_p_list, writes=False)
        buf = bucket.operand(momentum_buffer_list) if bucket.key else None
        new_buf = _sgd_update(p, g, buf, key=None, **kwargs)
        bucket.finish()
        if write_back and not bucket.key:
            sub = [params[i] for i in bucket.indices]
            for i, view in zip(bucket.indices, F.split_flat(new_buf, sub)):
                momentum_buffer_list[i] = view
