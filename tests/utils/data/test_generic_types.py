"""Dataset, IterableDataset, Sampler and DataLoader are Generic, as PyTorch's: libraries
subclass `Dataset[T]` (torchvision's VisionDataset) and annotate with `DataLoader[T]`."""
import typing

import tensorlib
from tensorlib.utils.data import DataLoader, Dataset, IterableDataset, Sampler

T = typing.TypeVar("T")


class Squares(Dataset[int]):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return i * i


class Counting(IterableDataset[T]):
    def __iter__(self):
        return iter(range(3))


def test_subscripted_bases_work_as_the_plain_ones():
    assert list(DataLoader(Squares(), batch_size=2)) and \
        [b.tolist() for b in DataLoader(Squares(), batch_size=2)] == [[0, 1], [4, 9]]
    assert [b.tolist() for b in DataLoader(Counting[int](), batch_size=3)] == [[0, 1, 2]]
    assert isinstance(Squares(), Dataset) and issubclass(Counting, Dataset)
    hint: DataLoader[tensorlib.Tensor] = DataLoader(Squares())
    assert Sampler[int] is not None and hint.batch_size == 1
