"""DistributedDataParallel (torch.nn.parallel.distributed's names): one model replica per
rank, parameters and buffers broadcast from the group's first rank at construction, and
gradients averaged over the ranks during backward by the bucketed, overlapped reducer
(_reducer.py). Training on N ranks with local batches equals training one process on
their concatenation."""
import contextlib

import tensorlib.distributed as dist
from tensorlib.autograd.grad_mode import is_grad_enabled
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parallel._reducer import Reducer

__all__ = ["DistributedDataParallel"]


def _broadcast_all(tensors, src, group):
    works = [dist.broadcast(t.detach(), src=src, group=group, async_op=True)
             for t in tensors]
    for w in works:
        if w is not None:
            w.wait()


class DistributedDataParallel(Module):
    """device_ids: None or one device (the module's); gradient_as_bucket_view and
    static_graph are accepted for compatibility and change nothing here."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None):
        super().__init__()
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if device_mesh is not None or mixed_precision is not None:
            raise NotImplementedError("DistributedDataParallel: device_mesh and "
                                      "mixed_precision are not supported")
        self.module = module
        self.process_group = dist.group.WORLD if process_group is None else process_group
        if self.process_group is None:
            raise ValueError("Default process group has not been initialized, please make "
                             "sure to call init_process_group.")
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap_mb = 25 if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * 1024 * 1024)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._check_same_model(module)
        self._src = dist.get_global_rank(self.process_group, 0)
        _broadcast_all(list(module.parameters()) + list(module.buffers()), self._src,
                       self.process_group)
        self.reducer = Reducer([p for _, p in named], [n for n, _ in named],
                               self.process_group, dist._DEFAULT_FIRST_BUCKET_BYTES,
                               self.bucket_bytes_cap, find_unused_parameters)

    def _check_same_model(self, module):
        """Every rank must wrap the same architecture (else the buckets would not match)."""
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in module.named_parameters()]
        everyone = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(everyone, mine, group=self.process_group)
        for r, theirs in enumerate(everyone):
            if theirs != mine:
                raise RuntimeError(f"DistributedDataParallel: the module on group rank {r} "
                                   f"has different parameters (names, shapes, dtypes) than "
                                   f"on rank {dist.get_rank(self.process_group)}")

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                _broadcast_all(buffers, self._src, self.process_group)
        outputs = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(outputs)
        return outputs

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside only accumulate local gradients; the first synchronised
        backward after it averages the accumulated sum."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("DistributedDataParallel.register_comm_hook is not "
                                  "implemented in tensorlib: buckets are always averaged "
                                  "with an all_reduce")

    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        raise NotImplementedError("DistributedDataParallel.join (uneven inputs) is not "
                                  "implemented in tensorlib: give every rank the same number "
                                  "of batches (DistributedSampler does)")
