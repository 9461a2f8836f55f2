"""Flatten and Unflatten: reshapes of a range of dims."""
from tensorlib.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    r"""Flattens dims start_dim..end_dim of the input into one (by default all but the batch
    dim).

    Shape:
        - Input: (*, S_start, ..., S_end, *)
        - Output: (*, prod(S_start..S_end), *)
    """

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Expands dim `dim` of the input into the shape `unflattened_size` (which may hold
    one -1).

    Shape:
        - Input: (*, S_dim, *)
        - Output: (*, U_1, ..., U_n, *) with prod(U) = S_dim
    """

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)) or \
                    not all(isinstance(s, int) for s in unflattened_size):
                raise TypeError(f"unflattened_size must be tuple of ints, but found type "
                                f"{type(unflattened_size).__name__}")
        elif isinstance(dim, str):
            raise TypeError("named tensors are not supported by tensorlib: dim must be an int")
        else:
            raise TypeError("invalid argument type for dim parameter")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):  # noqa: A002
        return unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def unflatten(input, dim, sizes):  # noqa: A002
    """input with dim `dim` replaced by `sizes` (a view when the strides allow)."""
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    nd = input.dim()
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dim})")
    dim = dim % nd
    shape = tuple(input.shape)
    sizes = tuple(sizes)
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if (-1 not in sizes and known != shape[dim]) or (-1 in sizes and
                                                     (known == 0 or shape[dim] % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({shape[dim]}) in the input tensor")
    return input.reshape(shape[:dim] + sizes + shape[dim + 1:])
