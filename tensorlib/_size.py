"""tensorlib.Size: the tuple subclass that `tensor.shape` returns (torch.Size)."""
from tensorlib._C.dtypes import package_name


class Size(tuple):
    __module__ = "tensorlib"

    def __new__(cls, sizes=()):
        """Each size as a Python int, as torch.Size makes it: a 0-dim integer tensor (a
        mask's count) or a numpy integer becomes its int."""
        out = tuple.__new__(cls, sizes)
        for v in out:
            if type(v) is not int:
                return tuple.__new__(cls, [_as_size(v, i) for i, v in enumerate(out)])
        return out

    def __repr__(self):
        return f"{package_name()}.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, key):
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    # sizes built from sizes stay sizes, as torch.Size's: shape[:-1] + (n,), (1,) + shape
    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        out = tuple.__mul__(self, n)
        return out if out is NotImplemented else Size(out)

    __rmul__ = __mul__


def _as_size(v, i):
    if isinstance(v, (float, complex)) or not hasattr(v, "__index__"):
        raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                        f"'{type(v).__name__}')")
    return v.__index__()


def from_sizes(sizes):
    """A Size of a tensor's own sizes (ints already): no per-item check."""
    return tuple.__new__(Size, sizes)
