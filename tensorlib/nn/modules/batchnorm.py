"""BatchNorm1d/2d/3d: per-channel normalization with learned affine and running statistics.
The state (weight, bias, running_mean, running_var, num_batches_tracked) lives here, the math
in nn.functional.batch_norm."""
import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module
from tensorlib.nn.modules.normalization import _register_affine, _reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class _NormBase(Module):
    """Common base of BatchNorm and InstanceNorm: affine parameters and running stats."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _register_affine(self, num_features, affine, bias, device, dtype)
        if self.track_running_stats:
            self.register_buffer("running_mean",
                                 tensorlib.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var",
                                 tensorlib.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 tensorlib.tensor(0, dtype=tensorlib.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            _reset_affine(self.weight, self.bias)

    def _check_input_dim(self, input):  # noqa: A002
        raise NotImplementedError(f"{type(self).__name__} must implement _check_input_dim()")

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            # version 2 added num_batches_tracked; older checkpoints start it at 0
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (self.num_batches_tracked
                                   if self.num_batches_tracked is not None
                                   else tensorlib.tensor(0, dtype=tensorlib.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):  # noqa: A002
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with tensorlib.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:       # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        if self.training:
            bn_training = True
        else:
            bn_training = self.running_mean is None and self.running_var is None
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input,
                            self.running_mean if use_running else None,
                            self.running_var if use_running else None,
                            self.weight, self.bias, bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    r"""Batch normalization over a 2D (N, C) or 3D (N, C, L) input.

    y = (x - E[x]) / sqrt(Var[x] + eps) * gamma + beta, statistics per channel over the
    batch (and length). In training the running statistics are updated with `momentum`
    (``None``: cumulative average); in eval mode they are used instead of batch statistics.

    Args:
        num_features: C
        eps: added to the variance. Default: 1e-5
        momentum: running-stat factor, or None for a cumulative average. Default: 0.1
        affine: learnable gamma (ones) and beta (zeros). Default: True
        bias (keyword-only): with affine, whether beta exists. Default: True
        track_running_stats: keep running_mean/running_var. Default: True
    """

    def _check_input_dim(self, input):  # noqa: A002
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    r"""Batch normalization over a 4D (N, C, H, W) input (see BatchNorm1d)."""

    def _check_input_dim(self, input):  # noqa: A002
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    r"""Batch normalization over a 5D (N, C, D, H, W) input (see BatchNorm1d)."""

    def _check_input_dim(self, input):  # noqa: A002
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


# defined in their own modules, which build on _BatchNorm here; PyTorch's batchnorm module
# holds them, and libraries look them up there (timm's freeze utilities:
# `torch.nn.modules.batchnorm.SyncBatchNorm`)
_ELSEWHERE = {"SyncBatchNorm": "syncbatchnorm", "LazyBatchNorm1d": "lazy",
              "LazyBatchNorm2d": "lazy", "LazyBatchNorm3d": "lazy", "_LazyNormBase": "lazy"}


def __getattr__(name):
    if name in _ELSEWHERE:
        import importlib
        module = importlib.import_module(f"tensorlib.nn.modules.{_ELSEWHERE[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
