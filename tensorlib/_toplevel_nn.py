"""The nn ops PyTorch also has at the top level (torch.conv2d, torch.layer_norm, ...): the
functions of nn.functional where torch's top-level signature is the same, and small adapters
where it differs (torch.dropout(input, p, train) takes `train`, positionally required)."""
from tensorlib.nn import functional as F
from tensorlib.nn.functional import (  # noqa: F401 - re-exported
    adaptive_avg_pool1d, avg_pool1d, bilinear, celu, celu_, conv1d, conv2d, conv3d,
    conv_transpose1d, conv_transpose2d, conv_transpose3d, cosine_similarity, hardshrink, layer_norm, pairwise_distance, pdist, pixel_shuffle, pixel_unshuffle, prelu,
    rms_norm, selu, selu_, threshold, threshold_)

__all__ = ["adaptive_avg_pool1d", "alpha_dropout", "alpha_dropout_", "avg_pool1d", "bilinear",
           "celu", "celu_", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "dropout", "dropout_",
           "feature_alpha_dropout", "feature_alpha_dropout_", "group_norm", "hardshrink",
           "layer_norm", "max_pool1d", "max_pool2d", "max_pool3d", "pairwise_distance", "pdist",
           "pixel_shuffle", "pixel_unshuffle", "prelu", "rms_norm", "selu", "selu_",
           "threshold", "threshold_"]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5,  # noqa: A002
               cudnn_enabled=True):
    """torch.group_norm: no check that each group holds more than one value."""
    from tensorlib.nn._functional.normalization import group_norm_op
    return group_norm_op(input, num_groups, weight, bias, eps)


def _pool(name):
    def pool(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):  # noqa
        return getattr(F, name)(input, kernel_size, stride or None, padding, dilation,
                                ceil_mode)
    pool.__name__ = pool.__qualname__ = name
    pool.__doc__ = f"torch.{name}: nn.functional.{name} without return_indices."
    return pool


max_pool1d, max_pool2d, max_pool3d = (_pool(f"max_pool{n}d") for n in (1, 2, 3))


def _dropout(name, inplace):
    def dropout(input, p, train):  # noqa: A002
        if not 0 <= p <= 1:                  # (nn.functional's raises ValueError)
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        return getattr(F, name)(input, p, train, inplace)
    dropout.__name__ = dropout.__qualname__ = name + ("_" if inplace else "")
    dropout.__doc__ = f"torch.{dropout.__name__}(input, p, train): nn.functional.{name}."
    return dropout


dropout, dropout_ = _dropout("dropout", False), _dropout("dropout", True)
alpha_dropout, alpha_dropout_ = (_dropout("alpha_dropout", False),
                                 _dropout("alpha_dropout", True))
feature_alpha_dropout, feature_alpha_dropout_ = (_dropout("feature_alpha_dropout", False),
                                                 _dropout("feature_alpha_dropout", True))
