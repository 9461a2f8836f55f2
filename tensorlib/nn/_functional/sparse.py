r"""nn.functional: embeddings (lookup tables) and one_hot.

``embedding`` is an ``index_select`` of the weight's rows; ``embedding_bag`` adds an
``index_add`` (sum/mean) or a ``scatter_reduce`` (max) of the looked-up rows into their bags,
so autograd comes from those ops. Dense gradients only (``sparse=True`` is not supported).

NOTE [ Gradient scaling of looked-up rows ]
padding_idx (no gradient) and scale_grad_by_freq (gradient divided by the index's count in
the batch) are written as ``rows.detach() + (rows - rows.detach()) * s``: its value is exactly
``rows`` (the second term is an exact zero) and its gradient is ``s * grad``.
"""
import tensorlib
import tensorlib._C.dtypes as dt
from tensorlib._C.dispatch import lookup
from tensorlib.ops.sorting import one_hot

__all__ = ["embedding", "embedding_bag", "one_hot"]

_INDEX_DTYPES = (dt.int64, dt.int32)


def _check_indices(input, name):  # noqa: A002
    if input.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{input.type()} instead (while checking arguments for {name})")


def _check_sparse(sparse):
    if sparse:
        raise NotImplementedError("tensorlib does not support sparse gradients: use "
                                  "sparse=False")


def _padding_idx(padding_idx, num):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < num, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
        padding_idx = num + padding_idx
    return padding_idx


def _check_bag_range(flat, num):
    """embedding_bag names the offending entry, with a RuntimeError (embedding's is an
    IndexError)."""
    bad = ((flat < 0) | (flat >= num)).reshape(-1)
    if flat.numel() and bad.any().item():
        i = int(tensorlib.nonzero(bad)[0].item())
        raise RuntimeError(f"Index {i} of input takes value {flat.reshape(-1)[i].item()} "
                           f"which is not in the valid range [0, {num})")


def _check_range(flat, num):
    if flat.numel() and ((flat < 0) | (flat >= num)).any().item():
        raise IndexError("index out of range in self")


@tensorlib.no_grad()
def _renorm_(weight, flat, max_norm, norm_type):
    """Rescale, in place, the rows of weight referenced by flat whose norm exceeds
    max_norm to norm max_norm (PyTorch's embedding_renorm_)."""
    rows = tensorlib.unique(flat)
    if rows.numel() == 0:
        return
    picked = weight.index_select(0, rows)
    norms = tensorlib.linalg.vector_norm(picked, norm_type, 1, keepdim=True)
    scale = tensorlib.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    weight.index_copy_(0, rows, picked * scale.to(weight.dtype))


def _scaled_rows(rows, scale):
    """rows with its gradient multiplied by scale (NOTE [ Gradient scaling ... ])."""
    const = rows.detach()
    return const + (rows - const) * scale


def _grad_scale(flat, num, padding_idx, scale_grad_by_freq, dtype):
    """Per-lookup gradient factor (flat.shape + (1,)), or None when it is 1 everywhere."""
    scale = None
    if scale_grad_by_freq:
        counts = tensorlib.bincount(flat, minlength=num)
        scale = 1.0 / counts.index_select(0, flat).to(dtype)
    if padding_idx is not None:
        keep = (flat != padding_idx).to(dtype)
        scale = keep if scale is None else scale * keep
    return None if scale is None else scale.unsqueeze(1)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,  # noqa: A002
              scale_grad_by_freq=False, sparse=False):
    r"""Looks up rows of weight: out[..., :] = weight[input[...], :].

    Args:
        input: integer tensor of any shape (int64 or int32)
        weight: (num_embeddings, embedding_dim)
        padding_idx: the row at this index gets no gradient
        max_norm: rows referenced by input with a larger norm_type-norm are renormalized in
            place to max_norm before the lookup
        scale_grad_by_freq: divide each row's gradient by its index's count in the batch
    """
    _check_indices(input, "embedding")
    _check_sparse(sparse)
    if weight.dim() != 2:
        raise RuntimeError(f"'weight' must be 2-D (got {weight.dim()}D)")
    num = weight.shape[0]
    padding_idx = _padding_idx(padding_idx, num)
    flat = input.reshape(-1).to(tensorlib.int64)
    # a kernel that checks its indices as it reads them saves the check's five ops
    checked = getattr(lookup("index_select", weight._device), "checks_bounds", False) and \
        max_norm is None
    if not checked:
        _check_range(flat, num)
    if max_norm is not None:
        _renorm_(weight, flat, max_norm, norm_type)
    try:
        rows = weight.index_select(0, flat)
    except IndexError:
        raise IndexError("index out of range in self") from None
    scale = None
    if tensorlib.is_grad_enabled() and weight.requires_grad:
        scale = _grad_scale(flat, num, padding_idx, scale_grad_by_freq, weight.dtype)
    if scale is not None:
        rows = _scaled_rows(rows, scale)
    return rows.reshape(tuple(input.shape) + (weight.shape[1],))


def _bag_ids(flat_len, offsets, include_last_offset):
    """The bag of each of flat_len entries, and the number of bags."""
    n_bags = offsets.numel() - 1 if include_last_offset else offsets.numel()
    positions = tensorlib.arange(flat_len, device=offsets.device)
    ids = tensorlib.searchsorted(offsets, positions, right=True) - 1
    return ids, max(n_bags, 0)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,  # noqa: A002
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    r"""Sums, averages or takes the max of bags of embeddings, without materializing the
    (entries, dim) lookups per bag.

    Args:
        input: (B, N) bags of fixed length N, or 1-D with ``offsets`` giving each bag's start
        offsets: 1-D starts of the bags in a 1-D input (the first is 0); with
            include_last_offset the last entry is the end of the last bag
        mode: 'sum', 'mean' or 'max'; empty bags give zeros
        per_sample_weights: weights of the entries, input's shape (mode='sum' only)
        padding_idx: entries equal to it are left out of their bag (not counted by 'mean')

    Shape: output (B, embedding_dim).
    """
    _check_sparse(sparse)
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if not (input.dtype in _INDEX_DTYPES):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.type()} "
                           f"instead (while checking arguments for embedding_bag)")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is "
                             f"treated is a mini-batch of fixed length sequences. However, "
                             f"found offsets of type {type(offsets).__name__}")
        batch, length = input.shape
        offsets = tensorlib.arange(0, batch * length, max(length, 1), device=input.device)
        if length == 0:
            offsets = tensorlib.zeros(batch, dtype=tensorlib.int64, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if offsets.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"Expected tensor for argument #2 'offsets' to have one of the "
                           f"following scalar types: Long, Int; but got {offsets.type()} "
                           f"instead (while checking arguments for embedding_bag)")
    offsets = offsets.to(tensorlib.int64)
    if offsets.numel() and offsets[0].item() != 0:
        raise ValueError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                         f"mini-batch has to start from position 0. However, got "
                         f"{offsets[0].item()}")
    num, dim = weight.shape
    padding_idx = _padding_idx(padding_idx, num)
    flat = input.to(tensorlib.int64)
    _check_bag_range(flat, num)
    if max_norm is not None:
        _renorm_(weight, flat, max_norm, norm_type)
    bag, n_bags = _bag_ids(flat.numel(), offsets, include_last_offset)
    if include_last_offset and offsets.numel():
        # entries past the last offset belong to no bag
        inside = tensorlib.arange(flat.numel(), device=flat.device) < offsets[-1]
    else:
        inside = None
    keep = None if padding_idx is None else flat != padding_idx
    if inside is not None:
        keep = inside if keep is None else keep & inside
    if keep is not None:
        picked = tensorlib.nonzero(keep).reshape(-1)
        flat, bag = flat.index_select(0, picked), bag.index_select(0, picked)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.index_select(0, picked)
    rows = weight.index_select(0, flat)
    if scale_grad_by_freq and tensorlib.is_grad_enabled() and weight.requires_grad:
        rows = _scaled_rows(rows, _grad_scale(flat, num, None, True, weight.dtype))
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    out = tensorlib.zeros((n_bags, dim), dtype=rows.dtype, device=weight.device)
    if mode == "max":
        index = bag.unsqueeze(1).expand(bag.numel(), dim)
        return out.scatter_reduce(0, index, rows, "amax", include_self=False)
    out = out.index_add(0, bag, rows)
    if mode == "mean":
        counts = tensorlib.bincount(bag, minlength=n_bags)
        out = out / counts.clamp_min(1).to(out.dtype).unsqueeze(1)
    return out
