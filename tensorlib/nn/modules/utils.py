"""torch.nn.modules.utils: the argument helpers libraries import from PyTorch's module folder
(`_pair(3)` is `(3, 3)`, an iterable is kept as a tuple) and the state-dict prefix stripper."""
import collections.abc
import itertools

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(itertools.repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """t reversed, each element n times: a Conv's padding as F.pad wants it."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with its None entries taken from the input's sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip `prefix` from the keys of state_dict (and of its `_metadata`) in place: a
    DataParallel/DDP model's "module." keys loaded into the bare model."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        for key in list(metadata.keys()):
            if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
                metadata[key[len(prefix):]] = metadata.pop(key)
