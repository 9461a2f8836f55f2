"""Tensor methods PyTorch spells two ways or adds an in-place form to (arccos_ is acos_,
greater_ is gt_, unsafe_split is split, digamma_ computes digamma into self), and the small tensor queries
(get_device, itemsize, nbytes, H). The alias resolves its target per call, so it is the
target, with the same autograd and errors."""
import warnings

from tensorlib.ops._inplace import inplace_composite

__all__ = ["arccos_", "arcsin_", "arctan_", "i0_", "sinc_", "unsafe_chunk", "unsafe_split",
           "unsafe_split_with_sizes"]

_ALIASES = {"arccos_": "acos_", "arcsin_": "asin_", "arctan_": "atan_", "arctan2_": "atan2_",
            "greater_": "gt_", "greater_equal_": "ge_", "less_": "lt_", "less_equal_": "le_",
            "not_equal_": "ne_", "unsafe_chunk": "chunk", "unsafe_split": "split",
            "unsafe_split_with_sizes": "split_with_sizes"}
_COMPOSITES = ("bitwise_not", "digamma", "erfinv", "i0", "lgamma", "sinc", "polygamma",
               "mvlgamma")


def _alias(name, target):
    def method(self, *args, **kwargs):
        return getattr(self, target)(*args, **kwargs)
    method.__name__ = method.__qualname__ = name
    return method


def _composite(name):
    def out_of_place(self, *args, **kwargs):
        return getattr(type(self), name)(self, *args, **kwargs)
    method = inplace_composite(out_of_place)
    method.__name__ = method.__qualname__ = name + "_"
    return method


def get_device(self):
    """-1 for a tensor in host memory, else the device's index (PyTorch's answer)."""
    return -1 if self._device.type == "cpu" else (self._device.index or 0)


def _itemsize(self):
    return self._dtype.itemsize


def _nbytes(self):
    return self.numel() * self._dtype.itemsize


def _H(self):  # noqa: N802 - PyTorch's name
    if self.dim() == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return self.conj()
    if self.dim() != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.dim()}-D tensor.")
    return self.mH


TENSOR_METHODS = {**{name: _alias(name, target) for name, target in _ALIASES.items()},
                  **{name + "_": _composite(name) for name in _COMPOSITES},
                  "get_device": get_device, "itemsize": property(_itemsize),
                  "nbytes": property(_nbytes), "H": property(_H)}
arccos_, arcsin_, arctan_ = (TENSOR_METHODS[n] for n in ("arccos_", "arcsin_", "arctan_"))
i0_, sinc_ = TENSOR_METHODS["i0_"], TENSOR_METHODS["sinc_"]
# PyTorch's unsafe_ forms skip the view bookkeeping; here they are the views themselves
unsafe_chunk, unsafe_split, unsafe_split_with_sizes = (
    TENSOR_METHODS[n] for n in ("unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes"))
