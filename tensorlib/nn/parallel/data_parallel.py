"""DataParallel (torch.nn.parallel.data_parallel's names). With one device (or none, on the
CPU) PyTorch's DataParallel just runs the module, and so does this; the wrapper keeps the
`module` attribute and the `module.`-prefixed state_dict keys scripts rely on. Splitting a
batch across several devices of one process is not implemented: use
DistributedDataParallel with one rank per device."""
from tensorlib.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if device_ids is not None and len(set(str(d) for d in device_ids)) > 1:
            raise NotImplementedError(
                f"DataParallel over {len(device_ids)} devices is not implemented in "
                f"tensorlib: use DistributedDataParallel with one rank per device "
                f"(tensorlib-run --nproc-per-node {len(device_ids)})")
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """Functional DataParallel: module(*inputs) on the one device."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return DataParallel(module, device_ids, output_device, dim)(*inputs,
                                                                **(module_kwargs or {}))
