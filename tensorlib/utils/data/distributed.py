"""DistributedSampler: each of `num_replicas` processes gets its own share of the dataset,
as in torch.utils.data.distributed. The shares are padded (or trimmed) exactly as PyTorch does
it, so together the ranks see every index and each sees the same count."""
import math

import tensorlib
from tensorlib.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


def _world():
    """(world size, rank) from tensorlib.distributed when it exists and is initialised."""
    try:
        import tensorlib.distributed as dist
    except ImportError:
        dist = None
    if dist is None or not getattr(dist, "is_available", lambda: False)() or \
            not dist.is_initialized():
        raise RuntimeError("Requires distributed package to be available (or pass "
                           "num_replicas and rank explicitly)")
    return dist.get_world_size(), dist.get_rank()


class DistributedSampler(Sampler):
    """Indices `rank, rank + num_replicas, ...` of the (optionally shuffled, seeded by
    `seed + epoch`) index list, padded by repeating its start so every rank gets
    ceil(len / num_replicas) indices, or trimmed to floor when `drop_last`. Call
    `set_epoch(epoch)` before each epoch so the shuffle differs between epochs (and agrees
    across ranks)."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            world, me = _world()
            num_replicas = world if num_replicas is None else num_replicas
            rank = me if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = tensorlib.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = tensorlib.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank:self.total_size:self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch seeds the shuffle (with `seed`): call it at the start of each epoch."""
        self.epoch = epoch
