"""tensorlib.utils.data: datasets, samplers and the DataLoader (torch.utils.data's API).

    from tensorlib.utils.data import DataLoader, TensorDataset
    loader = DataLoader(TensorDataset(x, y), batch_size=128, shuffle=True, num_workers=2)
    for xb, yb in loader:
        ...
"""
from tensorlib.utils.data._collate import collate, default_collate, default_convert
from tensorlib.utils.data._worker import WorkerInfo, get_worker_info
from tensorlib.utils.data.dataloader import DataLoader
from tensorlib.utils.data.dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,
                                          StackDataset, Subset, TensorDataset, random_split)
from tensorlib.utils.data.distributed import DistributedSampler
from tensorlib.utils.data.sampler import (BatchSampler, RandomSampler, Sampler,
                                          SequentialSampler, SubsetRandomSampler,
                                          WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "collate", "default_collate",
           "default_convert", "get_worker_info", "random_split"]
