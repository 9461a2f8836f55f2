"""tensorlib.nn.utils: gradient clipping, parameter/vector conversion, sequence packing,
parametrizations, the hook-based weight_norm/spectral_norm, conv/linear + batch norm
fusion, conv weights' memory format."""
# prune is not imported here, as in torch: `import tensorlib.nn.utils.prune`
from tensorlib.nn.utils import parametrizations, parametrize, rnn, stateless
from tensorlib.nn.utils.clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,
                                          clip_grads_with_norm_, get_total_norm)
from tensorlib.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from tensorlib.nn.utils.init import skip_init
from tensorlib.nn.utils import memory_format  # noqa: F401 - torch.nn.utils.memory_format
from tensorlib.nn.utils.memory_format import (convert_conv2d_weight_memory_format,
                                              convert_conv3d_weight_memory_format)
from tensorlib.nn.utils.fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights,
                                       fuse_linear_bn_eval, fuse_linear_bn_weights)
from tensorlib.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from tensorlib.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters", "rnn",
           "parametrizations", "parametrize", "remove_spectral_norm",
           "remove_weight_norm", "spectral_norm", "weight_norm", "stateless",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "skip_init", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format"]
