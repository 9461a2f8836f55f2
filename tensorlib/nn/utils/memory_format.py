"""Convert the weights of a model's convolutions (only those) to a memory format, so that
convolutions can take channels-last kernels without permuting every other layer's weight."""
import tensorlib


def _convert(module, memory_format, types):
    if isinstance(module, types):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, types)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    r"""The weights of every Conv2d / ConvTranspose2d in `module` (recursively), converted to
    `memory_format`; returns `module`."""
    return _convert(module, memory_format,
                    (tensorlib.nn.Conv2d, tensorlib.nn.ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    r"""As convert_conv2d_weight_memory_format, for Conv3d / ConvTranspose3d."""
    return _convert(module, memory_format,
                    (tensorlib.nn.Conv3d, tensorlib.nn.ConvTranspose3d))
