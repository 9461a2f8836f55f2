"""default_collate and default_convert: how samples become batches (as in
torch.utils.data._utils.collate). Tensors are stacked on a new first dimension, numpy arrays
and numbers become tensors, strings stay lists, and dicts, namedtuples and sequences are
collated field by field."""
import collections.abc
import numbers
import re

import numpy as np

__all__ = ["default_collate", "default_convert", "collate"]

_NP_STR = re.compile(r"[SaUO]")

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _tensor_type():
    from tensorlib._tensor import Tensor
    return Tensor


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _stack(batch):
    """tensorlib.stack(batch, 0) for a list of tensors of one shape; CPU tensors are stacked by
    numpy straight from their memory (one copy)."""
    import tensorlib
    first = batch[0]
    for i, t in enumerate(batch):
        if t._sizes != first._sizes:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(first._sizes)} at entry 0 and {list(t._sizes)} at entry "
                               f"{i}")
    if all(t._device.type == "cpu" for t in batch) and len({t._dtype for t in batch}) == 1:
        from tensorlib._C.tensor_impl import host_array
        return tensorlib.from_numpy(np.stack([host_array(t) for t in batch]))
    stack = getattr(tensorlib, "stack", None)
    if stack is not None:
        return stack([t.detach() for t in batch], 0)
    out = tensorlib.empty((len(batch),) + tuple(first._sizes), dtype=first._dtype,
                          device=first._device)
    for i, t in enumerate(batch):
        out[i] = t.detach()
    return out


def default_convert(data):
    """numpy arrays (not of strings/objects) and numpy scalars to tensors, inside any nesting
    of dicts, namedtuples and sequences; everything else unchanged. The DataLoader applies it
    when batch_size is None."""
    import tensorlib
    if isinstance(data, _tensor_type()):
        return data
    if isinstance(data, np.ndarray):
        if data.dtype.kind in "SaUOV":
            return data
        return tensorlib.as_tensor(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return tensorlib.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                out = type(data)(data)          # keeps the mapping's type and extra state
                out.update({k: default_convert(v) for k, v in data.items()})
                return out
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """default_collate, with `collate_fn_map` ({type or tuple of types: fn(batch, *,
    collate_fn_map)}) consulted first, by the type of the batch's first element."""
    import tensorlib
    from tensorlib.utils.data.dataset import GatheredBatch
    if type(batch) is GatheredBatch and not collate_fn_map and len(batch):
        return list(batch.columns)       # what collating its sample tuples would give
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for types, fn in collate_fn_map.items():
            if isinstance(elem, types):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, _tensor_type()):
        return _stack(batch)
    if isinstance(elem, np.ndarray) or (isinstance(elem, np.generic) and
                                        not isinstance(elem, (np.str_, np.bytes_))):
        if elem.dtype.kind in "SaUOV":
            raise TypeError(_ERR.format(elem.dtype))
        if isinstance(elem, np.ndarray) and elem.ndim:
            return _stack([tensorlib.as_tensor(b) for b in batch])
        return tensorlib.as_tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return tensorlib.tensor(batch, dtype=tensorlib.bool)
    if isinstance(elem, float):
        return tensorlib.tensor(batch, dtype=tensorlib.float64)
    if isinstance(elem, numbers.Integral):
        return tensorlib.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                  for key in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                out = type(elem)(elem)
                out.update(fields)
                return out
            return elem_type(fields)
        except TypeError:
            return fields
    if _is_namedtuple(elem):
        return elem_type(*(collate(list(s), collate_fn_map=collate_fn_map)
                           for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = [list(s) for s in zip(*batch)]
        columns = [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        if isinstance(elem, tuple):
            return columns                      # a list, as PyTorch returns for tuples
        try:
            return elem_type(columns)
        except TypeError:
            return columns
    raise TypeError(_ERR.format(elem_type))


def default_collate(batch):
    """Collate a list of samples into a batch: tensors are stacked (a new first dim); numpy
    arrays become stacked tensors; Python floats a float64 tensor, ints an int64 tensor, bools
    a bool tensor; strings stay a list; dicts map each key to the collated values;
    namedtuples stay namedtuples of collated fields; other sequences (tuples too) become lists
    of collated columns, as in PyTorch."""
    return collate(batch)
