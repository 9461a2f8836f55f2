"""torch.embedding_bag: the native op behind nn.functional.embedding_bag, with its native
signature (weight first, offsets required, mode an int: 0 sum, 1 mean, 2 max) and its
4-tuple (output, offset2bag, bag_size, max_indices) as PyTorch's CPU kernel fills it: sum
without padding_idx leaves offset2bag empty and bag_size zero; mean and max give each index's
bag and each bag's size (mean repeats bag_size as max_indices); max gives, per bag and
column, the index whose row held the maximum. The output's gradient is nn.functional's."""
import tensorlib
from tensorlib.nn import functional as F

__all__ = ["embedding_bag"]

_MODES = {0: "sum", 1: "mean", 2: "max"}


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    if not isinstance(offsets, tensorlib.Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, "
                        f"not {type(offsets).__name__}")
    if mode not in _MODES:
        raise RuntimeError(f"embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got "
                           f"{mode}")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    output = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                             mode=_MODES[mode], sparse=sparse,
                             per_sample_weights=per_sample_weights,
                             include_last_offset=include_last_offset, padding_idx=padding_idx)
    n_bags = output.shape[0]
    device = weight.device
    flat = indices.reshape(-1).to(tensorlib.int64)
    if mode == 0 and padding_idx is None:
        zeros = tensorlib.zeros(n_bags, dtype=tensorlib.int64, device=device)
        return (output, tensorlib.empty(0, dtype=tensorlib.int64, device=device), zeros,
                zeros.clone())
    bag = _offset2bag(flat.numel(), offsets.to(tensorlib.int64), n_bags, device)
    if mode == 0:
        zeros = tensorlib.zeros(n_bags, dtype=tensorlib.int64, device=device)
        return output, bag, zeros, zeros.clone()
    counted = flat != padding_idx if padding_idx is not None else None
    ones = (tensorlib.ones(flat.numel(), dtype=tensorlib.int64, device=device)
            if counted is None else counted.to(tensorlib.int64))
    bag_size = tensorlib.zeros(n_bags, dtype=tensorlib.int64, device=device).index_add(
        0, bag, ones)
    if mode == 1:
        return output, bag, bag_size, bag_size.clone()
    return output, bag, bag_size, _max_indices(weight, flat, bag, counted, output)


def _offset2bag(count, offsets, n_bags, device):
    """The bag of each of count indices; the last bag runs to the end, as PyTorch's kernel
    (with include_last_offset too, whose final offset it does not read)."""
    positions = tensorlib.arange(count, device=device)
    bag = tensorlib.searchsorted(offsets[:n_bags].contiguous(), positions, right=True) - 1
    return bag.clamp_min(0)


def _max_indices(weight, flat, bag, counted, output):
    """Per bag and column, the first index (in bag order) whose row holds the bag's maximum;
    0 for an empty bag."""
    n_bags, dim = output.shape
    device = weight.device
    with tensorlib.no_grad():
        rows = weight.detach().index_select(0, flat)
        hit = rows == output.detach().index_select(0, bag)
        if counted is not None:
            hit = hit & counted.unsqueeze(1)
        positions = tensorlib.arange(flat.numel(), device=device).unsqueeze(1).expand(-1, dim)
        never = flat.numel()
        first = tensorlib.where(hit, positions, tensorlib.full_like(positions, never))
        best = tensorlib.full((n_bags, dim), never, dtype=tensorlib.int64, device=device)
        best = best.scatter_reduce(0, bag.unsqueeze(1).expand(-1, dim).contiguous(), first,
                                   "amin")
        found = best < never
        padded = tensorlib.cat([flat, tensorlib.zeros(1, dtype=tensorlib.int64, device=device)])
        return tensorlib.where(found, padded[best.clamp_max(never)], tensorlib.zeros_like(best))
