"""Names PyTorch gives ops tensorlib already has, and small ops built directly on them:
igamma/igammac (special.gammainc/gammaincc), torch.fill (fill_ on a copy), addmv_,
as_strided_ (self re-viewed in place), empty_permuted, nonzero_static, is_inference, and the
top-level get_device."""
from tensorlib.ops.method_aliases_inplace import get_device
from tensorlib.ops._inplace import inplace_composite

__all__ = ["addmv_", "as_strided_", "empty_permuted", "fill", "get_device", "igamma",
           "igammac", "is_inference", "nonzero_static"]


def igamma(input, other):  # noqa: A002 - PyTorch's name
    from tensorlib import special
    return special.gammainc(input, other)


def igammac(input, other):  # noqa: A002
    from tensorlib import special
    return special.gammaincc(input, other)


def fill(input, value):  # noqa: A002
    """A copy of input with every element `value` (a number or a 0-d tensor)."""
    from tensorlib._C.tensor_impl import TensorImpl
    if isinstance(value, TensorImpl) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    return input.clone().fill_(value)


def addmv_(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


def as_strided_(input, size, stride, storage_offset=None):  # noqa: A002
    """Give input itself the sizes, strides and offset (over its storage) of the view
    as_strided would return."""
    from tensorlib.autograd.grad_mode import is_grad_enabled
    if is_grad_enabled() and input.requires_grad:
        if input.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        raise RuntimeError("as_strided_(): tensorlib does not record the in-place re-view of "
                           "a tensor in a graph; use as_strided()")
    offset = input.storage_offset() if storage_offset is None else storage_offset
    view = input.as_strided(size, stride, offset)          # checks the bounds
    input._sizes, input._strides, input._offset = view._sizes, view._strides, view._offset
    input._cache = None
    return input


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of `size` whose memory holds the dims in the order
    `physical_layout` (outermost first)."""
    from tensorlib.ops.creation import empty
    size, order = tuple(size), tuple(physical_layout)
    if len(order) != len(size):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    if sorted(order) != list(range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    storage = empty(tuple(size[d] for d in order), dtype=dtype, device=device,
                    pin_memory=pin_memory)
    inverse = [order.index(d) for d in range(len(size))]
    return storage.permute(inverse).requires_grad_(requires_grad)


def nonzero_static(input, *, size, fill_value=-1):  # noqa: A002
    """nonzero's (n, ndim) indices cut or padded with fill_value to exactly `size` rows."""
    from tensorlib.ops.creation import full
    from tensorlib.ops.joining import cat
    if not isinstance(size, int) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = input.nonzero()
    if found.shape[0] >= size:
        return found[:size].contiguous()
    pad = full((size - found.shape[0], found.shape[1]), fill_value, dtype=found.dtype,
               device=found.device)
    return cat([found, pad])


def is_inference(input):  # noqa: A002
    """Whether the tensor was made under inference_mode."""
    return bool(input._is_inference)


igamma_ = inplace_composite(igamma)
igammac_ = inplace_composite(igammac)
TENSOR_METHODS = {"igamma": igamma, "igammac": igammac, "igamma_": igamma_,
                  "igammac_": igammac_, "as_strided_": as_strided_,
                  "is_inference": is_inference, "nonzero_static": nonzero_static}
