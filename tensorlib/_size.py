"""tensorlib.Size: the tuple subclass that `tensor.shape` returns (torch.Size)."""


class Size(tuple):
    __module__ = "tensorlib"

    def __repr__(self):
        return f"tensorlib.Size({list(self)})"

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
