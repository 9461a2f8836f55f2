"""What every masked op shares: the canonical mask (broadcast to the input, bool), the
canonical reduction dims, each op's identity (the value a masked-out element takes so it
leaves the result unchanged) and the input with its masked-out elements replaced by it.
Written on tensorlib.where, so the gradient reaches only the masked-in elements."""
import tensorlib

_SMALL_INTS = ("uint8", "bool", "int8", "int16", "int32")


def check_strided(name, input):  # noqa: A002
    """Only dense tensors: the sparse layouts' masked ops are not implemented here."""
    if input.layout != tensorlib.strided:
        raise NotImplementedError(f"masked {name} of a {input.layout} tensor is not "
                                  "supported by tensorlib (strided tensors only)")


def sum_dtype(input, dtype):  # noqa: A002
    """sum's and prod's default result dtype: integers and bool accumulate in int64."""
    if dtype is not None:
        return dtype
    if str(input.dtype).rsplit(".", 1)[-1] in _SMALL_INTS:
        return tensorlib.int64
    return input.dtype


def canonical_dim(dim, ndim):
    """`dim` as a sorted tuple of non-negative dims; None and () are all dims."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def input_mask(input, mask):  # noqa: A002
    """The mask broadcast to the input's shape, as bool."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask "
                             "dimensionality higher than of the input)")
        mask = tensorlib.broadcast_to(mask, input.shape)
    return mask.to(dtype=tensorlib.bool)


def _identity(op_name, input, ord=None):  # noqa: A002
    dtype, device = input.dtype, input.device
    floating = input.is_floating_point()
    if op_name == "sum":
        return tensorlib.tensor(0, dtype=dtype, device=device)
    if op_name == "prod":
        return tensorlib.tensor(1, dtype=dtype, device=device)
    if op_name in ("amax", "amin"):
        sign = 1 if op_name == "amin" else -1
        if floating or input.is_complex():
            return tensorlib.tensor(sign * float("inf"), dtype=dtype, device=device)
        if tensorlib.is_signed(input) or dtype == tensorlib.uint8:
            info = tensorlib.iinfo(dtype)
            return tensorlib.tensor(info.max if sign > 0 else info.min, dtype=dtype,
                                    device=device)
    if op_name == "norm":
        if ord == float("-inf"):
            if not floating:
                raise AssertionError(f"input must be floating point, got {dtype}")
            return tensorlib.tensor(float("inf"), dtype=dtype, device=device)
        return tensorlib.tensor(0, dtype=dtype, device=device)
    if op_name == "median":
        return tensorlib.tensor(float("nan"), dtype=dtype if floating else tensorlib.float32,
                                device=device)
    raise NotImplementedError(f"identity of {op_name} on {dtype} input")


def fill_masked(op_name, input, mask, ord=None):  # noqa: A002
    """`input` with the masked-out elements set to op_name's identity (max-like ops take
    -inf, min-like +inf, sums 0, products 1); the input itself when there is no mask."""
    if mask is None:
        return input
    return tensorlib.where(input_mask(input, mask), input, _identity(op_name, input, ord))
