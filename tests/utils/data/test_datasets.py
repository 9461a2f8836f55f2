"""Datasets, random_split, default_collate/default_convert and the samplers."""
import collections
import math
import warnings

import numpy as np
import pytest

import tensorlib
from tensorlib.utils.data import (BatchSampler, ChainDataset, ConcatDataset, Dataset,
                                  DistributedSampler, IterableDataset, RandomSampler,
                                  SequentialSampler, StackDataset, Subset, SubsetRandomSampler,
                                  TensorDataset, WeightedRandomSampler, default_collate,
                                  default_convert, get_worker_info, random_split)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i


class Count(IterableDataset):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __iter__(self):
        return iter(range(self.lo, self.hi))

    def __len__(self):
        return self.hi - self.lo


# ---- datasets ---------------------------------------------------------------------------------
def test_tensor_dataset():
    x = tensorlib.arange(12.).view(4, 3)
    y = tensorlib.arange(4)
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6., 7., 8.] and b.item() == 2
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(x, tensorlib.arange(5))


def test_concat_chain_subset_stack():
    a, b = Squares(3), Squares(4)
    c = a + b
    assert isinstance(c, ConcatDataset) and len(c) == 7
    assert [c[i] for i in range(7)] == [0, 1, 4, 0, 1, 4, 9]
    assert c[-1] == 9 and c.cumulative_sizes == [3, 7]
    with pytest.raises(IndexError):
        c[7]
    with pytest.raises(AssertionError):
        ConcatDataset([Count(0, 2)])
    ch = Count(0, 2) + Count(5, 7)
    assert isinstance(ch, ChainDataset) and list(ch) == [0, 1, 5, 6] and len(ch) == 4
    s = Subset(Squares(10), [9, 2, 4])
    assert len(s) == 3 and [s[i] for i in range(3)] == [81, 4, 16]
    assert s.__getitems__([0, 2]) == [81, 16]
    st = StackDataset(x=Squares(3), y=Squares(3))
    assert st[2] == {"x": 4, "y": 4}
    assert StackDataset(Squares(2), Squares(2))[1] == (1, 1)
    with pytest.raises(NotImplementedError):
        Dataset()[0]
    assert get_worker_info() is None


def test_random_split_lengths_and_fractions():
    ds = Squares(10)
    parts = random_split(ds, [3, 7], generator=np.random.default_rng(0))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(ds, [3, 7], generator=np.random.default_rng(0))
    assert again[0].indices == parts[0].indices
    fr = random_split(Squares(11), [0.5, 0.3, 0.2], generator=np.random.default_rng(1))
    assert [len(p) for p in fr] == [6, 3, 2]          # floor(5.5, 3.3, 2.2) + remainder
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        random_split(Squares(2), [0.9, 0.1])
    assert any("Length of split at index 1 is 0" in str(x.message) for x in w)


@pytest.mark.skipif(not hasattr(tensorlib, "Generator"), reason="no tensorlib.Generator")
def test_random_split_tensorlib_generator():
    g1 = tensorlib.Generator().manual_seed(5)
    g2 = tensorlib.Generator().manual_seed(5)
    assert random_split(Squares(20), [0.5, 0.5], generator=g1)[0].indices == \
        random_split(Squares(20), [0.5, 0.5], generator=g2)[0].indices


# ---- collate ----------------------------------------------------------------------------------
Point = collections.namedtuple("Point", "x y")


def test_default_collate_types():
    t = default_collate([tensorlib.tensor([1., 2.]), tensorlib.tensor([3., 4.])])
    assert t.shape == (2, 2) and t.tolist() == [[1., 2.], [3., 4.]]
    a = default_collate([np.array([1, 2]), np.array([3, 4])])
    assert isinstance(a, tensorlib.Tensor) and a.dtype == tensorlib.int64 and a.shape == (2, 2)
    s = default_collate([np.float32(1.5), np.float32(2.5)])
    assert s.dtype == tensorlib.float32 and s.tolist() == [1.5, 2.5]
    f = default_collate([1.0, 2.0])
    assert f.dtype == tensorlib.float64
    i = default_collate([1, 2])
    assert i.dtype == tensorlib.int64
    b = default_collate([True, False])
    assert b.dtype == tensorlib.bool
    assert default_collate(["a", "b"]) == ["a", "b"]
    d = default_collate([{"x": 1, "y": "a"}, {"x": 2, "y": "b"}])
    assert d["x"].tolist() == [1, 2] and d["y"] == ["a", "b"]
    od = default_collate([collections.OrderedDict(k=1.0), collections.OrderedDict(k=2.0)])
    assert isinstance(od, collections.OrderedDict)
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(p, Point) and p.x.tolist() == [1, 3] and p.y.tolist() == [2.0, 4.0]
    tup = default_collate([(1, "a"), (2, "b")])
    assert isinstance(tup, list) and tup[0].tolist() == [1, 2] and tup[1] == ["a", "b"]
    nested = default_collate([{"a": [tensorlib.ones(2), 1]}, {"a": [tensorlib.zeros(2), 2]}])
    assert nested["a"][0].shape == (2, 2) and nested["a"][1].tolist() == [1, 2]
    bf = default_collate([tensorlib.ones(3, dtype=tensorlib.bfloat16)] * 2)
    assert bf.dtype == tensorlib.bfloat16 and bf.shape == (2, 3)


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([tensorlib.ones(2), tensorlib.ones(3)])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        default_collate([object(), object()])
    with pytest.raises(TypeError):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert():
    out = default_convert({"a": np.arange(3), "b": [np.float64(1.0), "s"],
                           "p": Point(np.ones(1), 2)})
    assert isinstance(out["a"], tensorlib.Tensor) and out["a"].tolist() == [0, 1, 2]
    assert isinstance(out["b"][0], tensorlib.Tensor) and out["b"][1] == "s"
    assert isinstance(out["p"], Point) and isinstance(out["p"].x, tensorlib.Tensor)
    arr = np.array(["x"])
    assert default_convert(arr) is arr
    x = np.arange(4.0)
    t = default_convert(x)
    t[0] = 7.0
    assert x[0] == 7.0                     # as_tensor shares the numpy memory


# ---- samplers ---------------------------------------------------------------------------------
def test_sequential_and_batch_sampler():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)
    assert list(bs) == [[0, 1, 2], [3, 4, 5]] and len(bs) == 2
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        BatchSampler(range(3), 2, 1)


def test_random_sampler():
    s = RandomSampler(range(20), generator=np.random.default_rng(3))
    first = list(s)
    assert sorted(first) == list(range(20)) and len(s) == 20
    assert list(RandomSampler(range(20), generator=np.random.default_rng(3))) == first
    assert list(s) != first                # the generator advanced: a new epoch order
    r = list(RandomSampler(range(5), replacement=True, num_samples=50,
                           generator=np.random.default_rng(0)))
    assert len(r) == 50 and set(r) <= set(range(5))
    long = list(RandomSampler(range(4), num_samples=10, generator=np.random.default_rng(0)))
    assert len(long) == 10
    assert sorted(long[:4]) == [0, 1, 2, 3] and sorted(long[4:8]) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        RandomSampler(range(0))
    with pytest.raises(TypeError):
        RandomSampler(range(3), replacement=1)


@pytest.mark.skipif(not hasattr(tensorlib, "manual_seed"), reason="no tensorlib.manual_seed")
def test_random_sampler_follows_manual_seed():
    tensorlib.manual_seed(123)
    a = list(RandomSampler(range(30)))
    tensorlib.manual_seed(123)
    assert list(RandomSampler(range(30))) == a


def test_subset_random_and_weighted_samplers():
    s = list(SubsetRandomSampler([10, 20, 30, 40], generator=np.random.default_rng(0)))
    assert sorted(s) == [10, 20, 30, 40]
    w = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 200, generator=np.random.default_rng(0))
    got = list(w)
    assert len(got) == 200 and set(got) <= {1, 3} and got.count(3) > got.count(1)
    nr = list(WeightedRandomSampler(tensorlib.tensor([1., 1., 1., 0.]), 3, replacement=False,
                                    generator=np.random.default_rng(0)))
    assert sorted(nr) == [0, 1, 2]
    with pytest.raises(RuntimeError):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(RuntimeError):
        WeightedRandomSampler([-1.0, 2.0], 2)
    with pytest.raises(ValueError):
        WeightedRandomSampler([[1.0]], 1)


def test_weighted_sampler_draws_by_tensorlib_generator():
    """Weights held as a float64 tensor (PyTorch's attribute); a seeded tensorlib.Generator
    repeats the draws, chunked draws follow the weights, and each epoch draws anew."""
    g = tensorlib.Generator()
    g.manual_seed(7)
    w = WeightedRandomSampler([1.0, 0.0, 3.0], 4000, generator=g)
    assert isinstance(w.weights, tensorlib.Tensor) and w.weights.dtype == tensorlib.float64
    first, second = list(w), list(w)
    assert first != second
    g.manual_seed(7)
    assert list(w) == first
    assert set(first) == {0, 2} and 0.7 < first.count(2) / len(first) < 0.8


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 4, False),
                                                  (12, 4, False), (7, 2, True), (1, 3, False)])
def test_distributed_sampler_partitions_like_pytorch(n, replicas, drop_last):
    shares = [list(DistributedSampler(range(n), replicas, r, shuffle=False, drop_last=drop_last))
              for r in range(replicas)]
    sizes = {len(s) for s in shares}
    assert len(sizes) == 1
    if drop_last:
        assert sizes == {n // replicas}
        flat = sorted(i for s in shares for i in s)
        assert len(set(flat)) == len(flat)
    else:
        assert sizes == {math.ceil(n / replicas)}
        assert set(i for s in shares for i in s) == set(range(n))
    torch = pytest.importorskip("torch")
    from torch.utils.data import DistributedSampler as TorchDS
    expected = [list(TorchDS(range(n), replicas, r, shuffle=False, drop_last=drop_last))
                for r in range(replicas)]
    assert shares == expected


def test_distributed_sampler_shuffle_and_epoch():
    def shares(epoch, seed=0):
        out = []
        for r in range(3):
            s = DistributedSampler(range(20), 3, r, shuffle=True, seed=seed)
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    e0 = shares(0)
    assert set(i for s in e0 for i in s) == set(range(20))   # ranks agree on the permutation
    assert e0 == shares(0)
    assert e0 != shares(1) and e0 != shares(0, seed=1)
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(range(4), 2, 2)
    with pytest.raises(RuntimeError, match="distributed"):
        DistributedSampler(range(4))


def test_tensor_dataset_batched_fetch_matches_per_sample():
    x = tensorlib.arange(30.).view(10, 3)
    y = tensorlib.arange(10)
    ds = TensorDataset(x, y)
    batch = ds.__getitems__([7, 2, 2, 9])
    assert len(batch) == 4 and batch[1][1].item() == 2
    fast = default_collate(batch)
    slow = default_collate([ds[i] for i in [7, 2, 2, 9]])
    assert isinstance(fast, list) and len(fast) == 2
    assert all(f.tolist() == s.tolist() and f.dtype == s.dtype for f, s in zip(fast, slow))
    fast[0][0, 0] = -1.0
    assert x[7, 0].item() == 21.0                      # a copy, not a view of the dataset

    class Doubled(TensorDataset):
        def __getitem__(self, i):
            return tuple(t[i] * 2 for t in self.tensors)
    d = Doubled(x, y)
    assert default_collate(d.__getitems__([1]))[1].tolist() == [2]


_HUGE = 10 ** 10


def _first_items_cheaply(sampler, count=5):
    """The first `count` items of `sampler` and the peak Python memory spent getting them."""
    import itertools
    import tracemalloc
    tracemalloc.start()
    try:
        items = list(itertools.islice(iter(sampler), count))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return items, peak


@pytest.mark.parametrize("make", [
    lambda: RandomSampler(range(7), replacement=True, num_samples=_HUGE),
    lambda: RandomSampler(range(7), num_samples=_HUGE),
    lambda: WeightedRandomSampler([0.0, 1.0, 2.0, 0.0], _HUGE),
    lambda: BatchSampler(RandomSampler(range(7), replacement=True, num_samples=_HUGE), 3, False),
], ids=["with replacement", "chained permutations", "weighted", "batches"])
def test_samplers_draw_lazily(make):
    sampler = make()
    items, peak = _first_items_cheaply(sampler)
    assert len(items) == 5 and peak < 2 * 2 ** 20
    flat = [i for item in items for i in (item if isinstance(item, list) else [item])]
    assert all(0 <= i < 7 for i in flat)
    assert len(sampler) in (_HUGE, -(-_HUGE // 3))


def test_lazy_draws_are_reproducible_and_follow_weights():
    g = lambda: np.random.default_rng(3)                      # noqa: E731
    a = list(RandomSampler(range(5), replacement=True, num_samples=100, generator=g()))
    b = list(RandomSampler(range(5), replacement=True, num_samples=100, generator=g()))
    assert a == b and len(a) == 100 and set(a) <= set(range(5))
    tensorlib.manual_seed(11)
    c = list(RandomSampler(range(5), replacement=True, num_samples=70))
    tensorlib.manual_seed(11)
    assert c == list(RandomSampler(range(5), replacement=True, num_samples=70))
    w = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 4000, generator=g()))
    assert set(w) == {1, 3} and 0.7 < w.count(3) / len(w) < 0.8 and len(w) == 4000
