"""Which namespace functions bind as methods when kept as a class attribute (`conv =
torch.conv2d`, then `self.conv(x, w)`): PyTorch's builtin functions do not, its Python
functions (torch.functional's, most of nn.functional's) do. tensorlib's ops are AliasedOps,
which bind (Tensor's methods need it); the ones that are builtins in PyTorch are replaced in
their namespaces by AliasedFunctions, the same ops without binding."""
from tensorlib._C.opdef import AliasedOp, as_function

# the public tensorlib ops that PyTorch writes in Python (torch/functional.py, torch/random.py
# and a few others): they bind, as there
_TOPLEVEL_PYTHON = frozenset({
    "atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_tensors",
    "cartesian_prod", "cdist", "chain_matmul", "einsum", "from_dlpack", "get_rng_state",
    "initial_seed", "lu", "manual_seed", "matrix_rank", "meshgrid", "norm", "pca_lowrank",
    "seed", "set_rng_state", "split", "svd_lowrank", "tensordot", "unique",
    "unique_consecutive", "unravel_index"})

# nn.functional's builtins (the rest of nn.functional is Python)
_FUNCTIONAL_BUILTIN = frozenset({
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_",
    "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "elu_", "gelu", "hardshrink",
    "hardtanh_", "leaky_relu_", "linear", "logsigmoid", "native_channel_shuffle", "one_hot",
    "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_",
    "rrelu_", "scaled_dot_product_attention", "selu_", "softplus", "softshrink",
    "threshold_"})


def _unbind(namespace, is_builtin):
    """Replace the public ops of `namespace` (a dict) that is_builtin(name) picks."""
    for name, value in list(namespace.items()):
        if type(value) is AliasedOp and not name.startswith("_") and is_builtin(name):
            namespace[name] = as_function(value)


def unbind_builtins(toplevel, functional, builtin_namespaces):
    """torch's, nn.functional's and (all of) linalg's and special's builtins as functions
    that do not bind."""
    _unbind(toplevel, lambda name: name not in _TOPLEVEL_PYTHON)
    _unbind(vars(functional), _FUNCTIONAL_BUILTIN.__contains__)
    for namespace in builtin_namespaces:
        _unbind(vars(namespace), lambda name: True)
