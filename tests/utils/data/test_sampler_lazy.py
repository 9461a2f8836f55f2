"""Samplers with replacement draw lazily, a chunk at a time, as PyTorch's do: a sampler asked
for 10**10 indices (minGPT's and makemore's endless loaders) starts at once and holds only
what has been consumed."""
import itertools
import tracemalloc

import pytest

import tensorlib
from tensorlib.utils.data import (BatchSampler, DataLoader, RandomSampler, TensorDataset,
                                  WeightedRandomSampler)

HUGE = 10 ** 10


def peak_bytes(make_and_take):
    tracemalloc.start()
    try:
        make_and_take()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("make", [
    lambda: RandomSampler(range(7), replacement=True, num_samples=HUGE),
    lambda: WeightedRandomSampler([0.1, 0.5, 0.4], num_samples=HUGE),
    lambda: BatchSampler(RandomSampler(range(7), replacement=True, num_samples=HUGE), 4, False),
])
def test_huge_num_samples_is_drawn_lazily(make):
    next(iter(make()))          # first-use costs (generator setup, imports) are not the draw
    sampler = make()
    assert len(sampler) >= HUGE // 4
    taken = []
    peak = peak_bytes(lambda: taken.extend(itertools.islice(iter(sampler), 100)))
    assert len(taken) == 100
    assert peak < 2 ** 20, f"{peak} bytes held to take 100 of {HUGE} samples"


def test_lazy_draws_stay_in_range_and_reproducible():
    def draw(seed):
        g = tensorlib.Generator().manual_seed(seed)
        return list(itertools.islice(RandomSampler(range(5), True, HUGE, generator=g), 200))
    first = draw(3)
    assert first == draw(3) and first != draw(4)
    assert set(first) == set(range(5))


def test_counts_are_exact_across_chunks():
    assert len(list(RandomSampler(range(3), replacement=True, num_samples=70))) == 70
    weighted = list(WeightedRandomSampler([0.0, 1.0, 3.0], num_samples=65))
    assert len(weighted) == 65 and 0 not in weighted


def test_endless_loader_over_a_small_dataset():
    data = TensorDataset(tensorlib.arange(10.0))
    loader = DataLoader(data, batch_size=4,
                        sampler=RandomSampler(data, replacement=True, num_samples=HUGE))
    batches = list(itertools.islice(iter(loader), 3))
    assert [b[0].shape[0] for b in batches] == [4, 4, 4]
