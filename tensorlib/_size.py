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
