r"""The parametrizations PyTorch ships, on top of nn.utils.parametrize: orthogonal (matrix
exponential, Cayley or Householder map), spectral_norm (power iteration) and weight_norm
(magnitude and direction)."""
from enum import Enum, auto

import tensorlib
from tensorlib._C.tensor_impl import TensorImpl
from tensorlib.nn import functional as F
from tensorlib.nn.modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from tensorlib.nn.modules.module import Module
from tensorlib.nn.utils import parametrize
from tensorlib.nn.utils._matrix_functions import geqrf, householder_product, matrix_exp

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _mH(x):
    return x.mT.conj() if x.is_complex() else x.mT


def _eps(dtype):
    return tensorlib.finfo(dtype).eps


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eye = tensorlib.eye(k, dtype=Q.dtype, device=Q.device)
    return bool(tensorlib.allclose(tensorlib.matmul(_mH(Q), Q), eye,
                                   atol=10.0 * n * _eps(Q.dtype)))


def _make_orthogonal(A):
    """The Q of A = QR (A tall) with diag(R) made non-negative."""
    Q, R = tensorlib.linalg.qr(A)
    diagonal = R.diagonal(dim1=-2, dim2=-1)
    if diagonal.is_complex():
        signs = diagonal / tensorlib.where(diagonal.abs() == 0, 1.0, diagonal.abs())
    else:
        signs = diagonal.sign()
    return Q * signs.unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                pad = tensorlib.zeros(n, n - k, dtype=X.dtype, device=X.device)
                X = tensorlib.cat([X, pad.expand(X.shape[:-2] + (n, n - k))], dim=-1)
            A = X - _mH(X)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                eye = tensorlib.eye(n, dtype=A.dtype, device=A.device)
                Q = tensorlib.linalg.solve(eye - A * 0.5, eye + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = tensorlib.matmul(self.base, Q)
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with tensorlib.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            A, tau = geqrf(Q)
            diagonal = A.diagonal(dim1=-2, dim2=-1)
            signs = diagonal.sign() * tensorlib.where(tau == 0.0, -1.0, 1.0).to(A.dtype)
            diagonal.copy_(signs)
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            completion = tensorlib.randn(*(Q.shape[:-2] + (n, n - k)), dtype=Q.dtype,
                                         device=Q.device)
            Q = _make_orthogonal(tensorlib.cat([Q, completion], dim=-1))
        self.base = Q
        neg_eye = tensorlib.zeros_like(Q_init)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    r"""Parametrize ``module.<name>`` (a matrix or batch of matrices) to be orthogonal (or
    unitary): Q = B @ map(X), map one of ``"matrix_exp"``, ``"cayley"`` (square, or
    complex, default) or ``"householder"`` (other real matrices' default), B the initial
    orthogonal matrix when use_trivialization. Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, TensorImpl):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] or \
            weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


def _norm_except_dim(v, dim):
    """The 2-norm of v over every dim but `dim`, kept as size-1 dims (dim -1: over all)."""
    if dim == -1:
        return v.norm()
    dim = dim % v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    if not others:
        return v.abs()
    return v.norm(dim=others, keepdim=True)


def _weight_norm(v, g, dim):
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    r"""Parametrize ``module.<name>`` as g * v / ||v|| (the norm over every dim but `dim`;
    over all when dim is None): ``parametrizations.<name>.original0`` is g, ``original1``
    is v. State dicts of the old ``nn.utils.weight_norm`` (``<name>_g``/``<name>_v``) load.
    Returns the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_old_keys(mod, state_dict, prefix, local_metadata, strict, missing_keys,
                      unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.register_load_state_dict_pre_hook(load_old_keys)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            kw = {"dtype": weight.dtype, "device": weight.device}
            self.register_buffer("_u", F.normalize(tensorlib.randn(h, **kw), dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(tensorlib.randn(w, **kw), dim=0, eps=eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with tensorlib.no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(tensorlib.mv(weight_mat, self._v), dim=0,
                                          eps=self.eps))
                self._v.copy_(F.normalize(tensorlib.mv(_mH(weight_mat), self._u), dim=0,
                                          eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = tensorlib.vdot(u, tensorlib.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _default_spectral_dim(module):
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Parametrize ``module.<name>`` as W / sigma(W), sigma the largest singular value of W
    flattened to a matrix along `dim` (1 for ConvTranspose, else 0), estimated by power
    iteration in training mode (buffers ``_u``/``_v`` of the parametrization). Returns the
    module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, TensorImpl):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_spectral_dim(module)
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
