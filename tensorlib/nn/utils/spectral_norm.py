r"""The hook-based spectral normalization (PyTorch's older API): ``<name>_orig`` is the
parameter, ``<name>_u``/``<name>_v`` the power-iteration buffers, and a forward pre-hook sets
``<name> = <name>_orig / sigma`` before every call (one more power iteration per call in
training mode). State dicts record the format version in their metadata, as PyTorch's do."""
import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn.parameter import Parameter, UninitializedParameter
from tensorlib.nn.utils.parametrizations import _default_spectral_dim

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook; version 1 stores ``<name>_orig``, ``_u`` and ``_v``."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        weight_mat = weight
        if self.dim != 0:
            weight_mat = weight_mat.permute(
                self.dim, *[d for d in range(weight_mat.dim()) if d != self.dim])
        return weight_mat.reshape(weight_mat.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with tensorlib.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(tensorlib.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(tensorlib.mv(weight_mat, v), dim=0, eps=self.eps))
                if self.n_power_iterations > 0:
                    u, v = u.clone(), v.clone()
        sigma = tensorlib.dot(u, tensorlib.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module):
        with tensorlib.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        """The v with u = normalize(W v) and u^T W v = target_sigma (old checkpoints)."""
        v = tensorlib.linalg.multi_dot([tensorlib.pinverse(weight_mat.t().mm(weight_mat)),
                                        weight_mat.t(), u.unsqueeze(1)]).squeeze(1)
        return v * (target_sigma / tensorlib.dot(u, tensorlib.mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with tensorlib.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            kw = {"dtype": weight.dtype, "device": weight.device}
            u = F.normalize(tensorlib.randn(h, **kw), dim=0, eps=fn.eps)
            v = F.normalize(tensorlib.randn(w, **kw), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute, so code that reads module.weight before a forward still works
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module.register_state_dict_post_hook(SpectralNormStateDictHook(fn))
        module.register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Turns a version-0 state dict (``<name>``, ``_orig``, ``_u``) into version 1 by solving
    for ``_v``."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and weight_key not in state_dict and \
                all(weight_key + s in state_dict for s in ("_orig", "_u", "_v")):
            return  # a current state dict without its metadata
        missing = [weight_key + s for s in ("_orig", "", "_u") if weight_key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with tensorlib.no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records ``spectral_norm.<name>.version`` in the state dict's metadata."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    r"""Normalize ``module.<name>`` by its largest singular value before every forward
    (dim: 1 for ConvTranspose, else 0). Returns the module."""
    if dim is None:
        dim = _default_spectral_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    r"""Undo spectral_norm: ``<name>`` becomes a parameter holding the normalized weight."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in list(hooks.items()):
            if isinstance(hook, kind) and hook.fn.name == name:
                del hooks[k]
                break
    return module
