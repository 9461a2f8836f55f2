"""Samplers: iterables of dataset indices (or, for BatchSampler, of index lists), as in
torch.utils.data.sampler. Random samplers draw one seed from their `generator` per epoch and
make the choices with tensorlib's random ops from it (see _random), so a seeded generator is
reproducible.
Draws with replacement come in chunks of _CHUNK as the iterator advances (as PyTorch's do),
so num_samples may be far larger than memory."""
import numbers
import typing

import tensorlib
from tensorlib.utils.data import _random

_CHUNK = 32
_T_co = typing.TypeVar("_T_co", covariant=True)

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler(typing.Generic[_T_co]):
    """Base class: `__iter__` yields indices; `__len__` (optional) counts them. Generic in
    the index type, as PyTorch's (`Sampler[int]`)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__()")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")
    return int(value)


class RandomSampler(Sampler):
    """A random permutation of the indices; with `replacement`, `num_samples` independent
    draws. Without replacement, `num_samples` above len(data_source) chains permutations."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        _positive_int(self.num_samples, "num_samples")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = _random.rng(self.generator)
        if self.replacement:
            for count in _chunks(self.num_samples):
                yield from tensorlib.randint(0, n, (count,), generator=g).tolist()
            return
        full, rest = divmod(self.num_samples, n)
        for _ in range(full):
            yield from tensorlib.randperm(n, generator=g).tolist()
        if rest:
            yield from tensorlib.randperm(n, generator=g)[:rest].tolist()

    def __len__(self):
        return self.num_samples


def _chunks(total):
    """Sizes of the draws that make `total` samples: _CHUNK each, the remainder last."""
    full, rest = divmod(total, _CHUNK)
    for _ in range(full):
        yield _CHUNK
    if rest:
        yield rest


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _random.permutation(len(self.indices), self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices in range(len(weights)), index i with probability proportional to
    weights[i] (without replacement: each index at most once)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _positive_int(num_samples, "num_samples")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = tensorlib.as_tensor(weights.tolist() if hasattr(weights, "tolist") else weights,
                                dtype=tensorlib.float64)
        if w.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        if not bool(tensorlib.isfinite(w).all()) or bool((w < 0).any()) or float(w.sum()) <= 0:
            raise RuntimeError("invalid multinomial distribution (weights must be finite, "
                               "non-negative and not all zero)")
        if not replacement and num_samples > int(tensorlib.count_nonzero(w)):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        self.weights = w
        self.num_samples = int(num_samples)
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        g = _random.rng(self.generator)
        if not self.replacement:                  # at most len(weights) indices
            yield from tensorlib.multinomial(self.weights, self.num_samples, False,
                                             generator=g).tolist()
            return
        for count in _chunks(self.num_samples):
            yield from tensorlib.multinomial(self.weights, count, True, generator=g).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler`; the last one shorter unless
    `drop_last`."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or \
                batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = int(batch_size)
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
