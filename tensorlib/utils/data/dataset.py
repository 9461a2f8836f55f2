"""Datasets: map-style (`Dataset`) and iterable (`IterableDataset`), and the ways to combine
them (TensorDataset, ConcatDataset, ChainDataset, Subset, random_split), as in
torch.utils.data.dataset."""
import bisect
import collections.abc
import itertools
import math
import numbers
import typing
import warnings

from tensorlib.utils.data import _random

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

_T_co = typing.TypeVar("_T_co", covariant=True)


class Dataset(typing.Generic[_T_co]):
    """A map-style dataset: `__getitem__(index)` returns one sample; `__len__` its size.

    A subclass may also define `__getitems__(indices)` returning a list of samples, which the
    DataLoader then uses to fetch a whole batch in one call. Generic in the sample type, as
    PyTorch's (`class Images(Dataset[Tensor])`)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co]):
    """A dataset that is a stream: `__iter__` yields samples. With worker processes each worker
    iterates its own copy; use `get_worker_info()` in `__iter__` to give each a shard."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are `tuple(t[index] for t in tensors)`; every tensor has the same first size."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].size(0)
        if any(t.size(0) != n for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __getitems__(self, indices):
        """The samples at `indices`, gathered with one indexing per tensor (the DataLoader's
        fast path); a subclass that overrides __getitem__ gets its own __getitem__ called."""
        if type(self).__getitem__ is not TensorDataset.__getitem__:
            return [self[i] for i in indices]
        return GatheredBatch(tuple(_gather(t, indices) for t in self.tensors))

    def __len__(self):
        return self.tensors[0].size(0)


def _gather(t, indices):
    import tensorlib
    return t[tensorlib.tensor(indices, dtype=tensorlib.int64, device=t.device)]


class GatheredBatch(collections.abc.Sequence):
    """The samples of a batch, held as one tensor per field: `batch[i]` is the tuple of
    sample i (so any collate_fn sees a sequence of samples) and default_collate returns the
    fields as they are, without stacking again."""

    def __init__(self, columns):
        self.columns = columns

    def __len__(self):
        return self.columns[0].size(0)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return tuple(c[i] for c in self.columns)


class StackDataset(Dataset):
    """Samples assembled from several datasets of one length: `StackDataset(a, b)` gives
    `(a[i], b[i])`, `StackDataset(x=a, y=b)` gives `{"x": a[i], "y": b[i]}`."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The datasets one after another (map-style; negative indices count from the end)."""

    @staticmethod
    def cumsum(sequence):
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        if which >= len(self.datasets):
            raise IndexError(f"index {idx} is out of range for a dataset of length {len(self)}")
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets chained one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        inner = getattr(self.dataset, "__getitems__", None)
        if inner is not None:
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split `dataset` into non-overlapping random Subsets of the given `lengths`, or of the
    given fractions of its length when `lengths` sum to 1 (the remainder goes one at a time to
    the first subsets, as in PyTorch). `generator` seeds the permutation (see _random)."""
    n = len(dataset)
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if not isinstance(frac, numbers.Real) or frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * frac)))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              f"empty dataset.", stacklevel=2)
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _random.permutation(n, generator).tolist()
    return [Subset(dataset, order[end - length:end])
            for end, length in zip(itertools.accumulate(lengths), lengths)]
