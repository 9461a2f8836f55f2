"""The quantized dtypes (`qint8`, `quint8`, `qint32`) and the quantization schemes
(`per_tensor_affine`, ...). Python objects beside the Cython dtypes: quantized tensors are not
strided tensors of a backend, so no kernel table is keyed by these dtypes."""
import numpy as np


class QuantizedDtype:
    """A quantized element type: an integer storage dtype plus the range it may hold."""

    is_floating_point = False
    is_complex = False

    def __init__(self, name, storage_name, qmin, qmax):
        self.name, self.storage_name = name, storage_name
        self.quant_min, self.quant_max = qmin, qmax
        self.np = np.dtype(storage_name)
        self.itemsize = self.np.itemsize
        self.is_signed = qmin < 0

    @property
    def storage(self):
        """The tensorlib dtype of int_repr()."""
        import tensorlib
        return getattr(tensorlib, self.storage_name)

    def __repr__(self):
        return "tensorlib." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


class QScheme:
    """How a quantized tensor's scale and zero point apply (torch.qscheme)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "tensorlib." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


qint8 = QuantizedDtype("qint8", "int8", -128, 127)
quint8 = QuantizedDtype("quint8", "uint8", 0, 255)
qint32 = QuantizedDtype("qint32", "int32", -2 ** 31, 2 ** 31 - 1)
per_tensor_affine = QScheme("per_tensor_affine")
per_channel_affine = QScheme("per_channel_affine")
per_tensor_symmetric = QScheme("per_tensor_symmetric")
per_channel_symmetric = QScheme("per_channel_symmetric")
per_channel_affine_float_qparams = QScheme("per_channel_affine_float_qparams")
QDTYPES = (qint8, quint8, qint32)
QSCHEMES = (per_tensor_affine, per_channel_affine, per_tensor_symmetric, per_channel_symmetric,
            per_channel_affine_float_qparams)


def _by_name(name):
    return globals()[name]
