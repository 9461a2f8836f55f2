"""SyncBatchNorm: batch normalization whose batch statistics are those of the whole
distributed batch. Each rank all-reduces its per-channel sum, sum of squares and count; the
all-reduce is differentiable (its backward all-reduces the gradient), so the gradients are
those of one batch norm over every rank's data. On one process, or in eval, or when
tensorlib.distributed is not initialised, it is BatchNorm."""
import tensorlib
from tensorlib.autograd.function import Function
from tensorlib.nn.modules.batchnorm import _BatchNorm

__all__ = ["SyncBatchNorm"]


def _dist():
    import tensorlib.distributed as dist
    return dist if dist.is_available() and dist.is_initialized() else None


class _AllReduceSum(Function):
    """y = sum over ranks of x, on every rank; dL/dx = sum over ranks of dL/dy."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        out = x.clone()
        _dist().all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        _dist().all_reduce(grad, group=ctx.group)
        return grad, None


class SyncBatchNorm(_BatchNorm):
    r"""Batch normalization over (N, C, *) with statistics synchronised across the ranks of
    `process_group` (default: the world) in training."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):  # noqa: A002
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):  # noqa: A002
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        dist = _dist() if self.training else None
        group = self.process_group if self.process_group is not None else (
            dist.group.WORLD if dist is not None else None)
        if dist is None or dist.get_world_size(group) == 1:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats:
            with tensorlib.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        return self._synced(input, group, factor)

    def _synced(self, input, group, factor):  # noqa: A002
        dims = [0] + list(range(2, input.dim()))
        count = tensorlib.full((1,), input.numel() // input.size(1), dtype=input.dtype,
                               device=input.device)
        stats = tensorlib.cat([input.sum(dims), (input * input).sum(dims), count])
        stats = _AllReduceSum.apply(stats, group)
        c = input.size(1)
        total = stats[2 * c]
        mean = stats[:c] / total
        var = stats[c:2 * c] / total - mean * mean
        if self.track_running_stats:
            n = float(total.item())
            with tensorlib.no_grad():
                self.running_mean.mul_(1 - factor).add_(mean.detach() * factor)
                unbiased = var.detach() * (n / (n - 1)) if n > 1 else var.detach()
                self.running_var.mul_(1 - factor).add_(unbiased * factor)
        shape = (1, c) + (1,) * (input.dim() - 2)
        out = (input - mean.reshape(shape)) * tensorlib.rsqrt(var + self.eps).reshape(shape)
        if self.weight is not None:
            out = out * self.weight.reshape(shape)
        if self.bias is not None:
            out = out + self.bias.reshape(shape)
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        r"""`module` with every BatchNorm*d in it (recursively) replaced by a SyncBatchNorm
        sharing its parameters and running statistics."""
        output = module
        if isinstance(module, _BatchNorm) and not isinstance(module, cls):
            output = cls(module.num_features, module.eps, module.momentum, module.affine,
                         module.track_running_stats, process_group,
                         bias=module.bias is not None)
            if module.affine:
                with tensorlib.no_grad():
                    output.weight = module.weight
                    output.bias = module.bias
            output.running_mean = module.running_mean
            output.running_var = module.running_var
            output.num_batches_tracked = module.num_batches_tracked
            output.training = module.training
            if hasattr(module, "qconfig"):
                output.qconfig = module.qconfig
        for name, child in module.named_children():
            output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return output
