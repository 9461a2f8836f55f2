"""torch.finfo / torch.iinfo: the numeric limits of a tensorlib dtype (numpy's and
ml_dtypes' tables, in torch's attribute names)."""
import ml_dtypes
import numpy as np

from tensorlib._C import dtypes as _dt

__all__ = ["finfo", "iinfo"]

_REAL_OF_COMPLEX = {"complex64": "float32", "complex128": "float64"}


class finfo:  # noqa: N801 - torch's name
    """Limits of a floating dtype (the default dtype when none is given); a complex dtype
    gives its parts' limits."""

    def __init__(self, type=None):  # noqa: A002 - torch's argument name
        dtype = _dt.get_default_dtype() if type is None else type
        if not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        name = _REAL_OF_COMPLEX.get(dtype.name, dtype.name)
        info = ml_dtypes.finfo(getattr(_dt, name).np)
        self.dtype = name
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - torch's name
    """Limits of an integer dtype."""

    def __init__(self, type):  # noqa: A002 - torch's argument name
        if type.is_floating_point or type.is_complex or type is _dt.bool_:
            raise TypeError(f"{type} is not supported by torch.iinfo")
        info = np.iinfo(type.np)
        self.dtype = type.name
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)

    def __repr__(self):
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
