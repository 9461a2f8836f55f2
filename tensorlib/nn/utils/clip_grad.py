"""Gradient clipping: clip_grad_norm_ (scale all gradients so their total norm is at most
max_norm) and clip_grad_value_ (clamp each element). The norm stays a tensor on the device:
no host sync unless error_if_nonfinite asks for one."""
import tensorlib
from tensorlib._C.tensor_impl import TensorImpl

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _tensor_list(tensors):
    if isinstance(tensors, TensorImpl):
        return [tensors]
    return list(tensors)


def _vector_norm(x, norm_type):
    """The norm of x flattened, in tensorlib ops (a 0-d tensor of x's dtype)."""
    native = getattr(getattr(tensorlib, "linalg", None), "vector_norm", None)
    if native is not None:
        return native(x, norm_type)
    if x.numel() == 0:
        if norm_type == -float("inf"):
            raise RuntimeError("linalg.vector_norm cannot compute the -inf norm on an empty "
                               "tensor because the operation does not have an identity")
        return tensorlib.zeros((), dtype=x.dtype, device=x.device)
    a = tensorlib.abs(x)
    if norm_type == float("inf"):
        return tensorlib.amax(a)
    if norm_type == -float("inf"):
        return tensorlib.amin(a)
    if norm_type == 0:
        return (a != 0).sum().to(x.dtype)
    if norm_type == 2:
        return tensorlib.sqrt((x * x).sum())
    if norm_type == 1:
        return a.sum()
    return (a ** norm_type).sum() ** (1.0 / norm_type)


def _norm_of_norms(norms, norm_type):
    """The norm of the vector whose entries are `norms` (0-d tensors)."""
    stack = getattr(tensorlib, "stack", None)
    if stack is not None:
        return _vector_norm(stack(norms), norm_type)
    if norm_type in (float("inf"), -float("inf")):
        pick = tensorlib.maximum if norm_type > 0 else tensorlib.minimum
        total = norms[0]
        for n in norms[1:]:
            total = pick(total, n)
        return total
    if norm_type == 0:
        return sum(norms[1:], norms[0])
    total = norms[0] ** norm_type
    for n in norms[1:]:
        total = total + n ** norm_type
    return total ** (1.0 / norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    r"""The norm of the norms of `tensors`, as if they were concatenated into one vector."""
    tensors = _tensor_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return tensorlib.tensor(0.0)
    first_device = tensors[0].device
    with tensorlib.no_grad():
        norms = [_vector_norm(t, norm_type).to(first_device) for t in tensors]
        total_norm = _norm_of_norms(norms, norm_type)
    if error_if_nonfinite:
        value = total_norm.item()
        if value != value or value in (float("inf"), -float("inf")):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                               f"`parameters` is non-finite, so it cannot be clipped. To disable "
                               f"this error and scale the gradients by the non-finite norm "
                               f"anyway, set `error_if_nonfinite=False`")
    return total_norm


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    r"""Scale the gradients of `parameters` by min(1, max_norm / (total_norm + 1e-6))."""
    parameters = _tensor_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    with tensorlib.no_grad():
        clip_coef = max_norm / (total_norm + 1e-6)
        clip_coef_clamped = tensorlib.minimum(clip_coef, 1.0)
        for g in grads:
            g.mul_(clip_coef_clamped.to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    r"""Clip the gradient norm of an iterable of parameters, in place.

    The norm is computed over all gradients together, as if they were concatenated into a
    single vector.

    Args:
        parameters: a Tensor or an iterable of Tensors whose gradients are normalized
        max_norm: max norm of the gradients
        norm_type: type of the p-norm; ``'inf'`` for the infinity norm. Default: 2.0
        error_if_nonfinite: raise when the total norm is nan or inf. Default: False
        foreach: accepted for PyTorch compatibility (one path here)

    Returns:
        Total norm of the gradients (viewed as a single vector), a 0-d tensor.
    """
    parameters = _tensor_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated alias of clip_grad_norm_."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    r"""Clamp every gradient element to [-clip_value, clip_value], in place."""
    parameters = _tensor_list(parameters)
    clip_value = float(clip_value)
    with tensorlib.no_grad():
        for p in parameters:
            g = p.grad
            if g is None:
                continue
            g.copy_(tensorlib.minimum(tensorlib.maximum(g, -clip_value), clip_value))
