"""Helpers shared by the distributions (torch.distributions.utils)."""
import functools
import numbers

import numpy as np

import tensorlib


def finfo(dtype):
    """numpy's finfo for a tensorlib floating dtype (eps, tiny, max)."""
    return np.finfo(np.dtype(dtype.name))


def _tensor_like(v):
    """A tensor, or an object that takes part in ops through __torch_function__ (an fx Proxy
    while tracing, a tensor subclass)."""
    return isinstance(v, tensorlib.Tensor) or hasattr(type(v), "__torch_function__")


def broadcast_all(*values):
    """Tensors and numbers broadcast to one shape; numbers become tensors of the default
    dtype on the tensors' device (torch.distributions.utils.broadcast_all)."""
    for v in values:
        if not (_tensor_like(v) or isinstance(v, numbers.Number)):
            raise ValueError("Input arguments must all be instances of numbers.Number, "
                             "torch.Tensor or objects implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, tensorlib.Tensor)]
    if not tensors and not any(_tensor_like(v) for v in values):
        dtype = tensorlib.get_default_dtype()
        return tuple(tensorlib.tensor(float(v), dtype=dtype) for v in values)
    options = {"dtype": tensorlib.get_default_dtype()}
    if tensors:
        like = tensors[0]
        options = {"dtype": like.dtype if like.dtype.is_floating_point else options["dtype"],
                   "device": like.device}
    made = [v if _tensor_like(v) else tensorlib.tensor(float(v), **options) for v in values]
    out = tensorlib.broadcast_tensors(*made)
    return tuple(out[i] for i in range(len(made)))     # a traced result has no length


def _sum_rightmost(value, dim):
    """Sum out the `dim` rightmost dims of value."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:value.dim() - dim] + (-1,)).sum(-1)


def clamp_probs(probs):
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return tensorlib.sigmoid(logits)
    return tensorlib.softmax(logits, -1)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


class lazy_property:
    """Computed on first access, then cached on the instance (torch's lazy_property)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def tril_matrix_to_vec(mat, diag=0):
    n = mat.shape[-1]
    rows, cols = tensorlib.tril_indices(n, n, offset=diag, device=mat.device)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    n = int((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1]) ** 0.5) / 2)
    rows, cols = tensorlib.tril_indices(n, n, offset=diag, device=vec.device)
    mat = tensorlib.zeros(vec.shape[:-1] + (n, n), dtype=vec.dtype, device=vec.device)
    mat[..., rows, cols] = vec
    return mat


euler_constant = 0.57721566490153286060  # Euler-Mascheroni, as torch.distributions.utils


def _standard_normal(shape, dtype, device):
    """Standard normals of `shape` (the sampler distributions share; libraries built on
    torch.distributions call it by this private name)."""
    return tensorlib.empty(shape, dtype=dtype, device=device).normal_()
