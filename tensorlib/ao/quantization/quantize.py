"""quantize_dynamic: swap the float modules a qconfig names for their dynamically quantized
versions. Static quantization (prepare/convert) is not built: they raise."""
import copy

from tensorlib import nn
from tensorlib.ao.nn.quantized import dynamic as nnqd
from tensorlib.ao.quantization import _qtypes as qt
from tensorlib.ao.quantization.qconfig import default_dynamic_qconfig

DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS = {nn.Linear: nnqd.Linear, nn.LSTM: nnqd.LSTM}


def _spec_to_dict(qconfig_spec, dtype):
    if dtype is not qt.qint8:
        raise ValueError(f"Don't know how to quantize with default settings for {dtype}. "
                         "Provide full qconfig please")
    if qconfig_spec is None:
        qconfig_spec = {nn.Linear, nn.LSTM}
    if isinstance(qconfig_spec, (set, list, tuple)):
        return {key: default_dynamic_qconfig for key in qconfig_spec}
    return dict(qconfig_spec)


def _qconfig_for(name, module, spec):
    """A module's qconfig: its own name, then its type (as PyTorch's propagate_qconfig_)."""
    if name in spec:
        return spec[name]
    return spec.get(type(module))


def _swap(module, spec, mapping, prefix):
    for name, child in list(module.named_children()):
        full = prefix + name
        qconfig = _qconfig_for(full, child, spec)
        target = mapping.get(type(child))
        if qconfig is not None and target is not None:
            child.qconfig = qconfig
            setattr(module, name, target.from_float(child))
        else:
            _swap(child, spec, mapping, full + ".")


def quantize_dynamic(model, qconfig_spec=None, dtype=qt.qint8, mapping=None, inplace=False):
    """The model with its Linear and LSTM layers (or those named in qconfig_spec, by type or by
    submodule name) replaced by dynamically quantized ones; a copy unless inplace."""
    spec = _spec_to_dict(qconfig_spec, dtype)
    mapping = DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS if mapping is None else mapping
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    _swap(model, spec, mapping, "")
    return model


def _static(name):
    def refused(*args, **kwargs):
        raise NotImplementedError(f"torch.ao.quantization.{name}: static quantization "
                                  "(observers inserted by prepare, modules swapped by convert) "
                                  "is not built in tensorlib; use quantize_dynamic")
    refused.__name__ = name
    return refused


prepare = _static("prepare")
convert = _static("convert")
quantize = _static("quantize")
prepare_qat = _static("prepare_qat")
