"""mindspore.dataset: data pipelines (issue 43).

Sources (GeneratorDataset, NumpySlicesDataset, MnistDataset, Cifar10Dataset) and operations
(batch, shuffle, map, repeat, take, skip, split, zip, concat, project, rename) with MindSpore's
names, defaults and errors; rows are numpy arrays, iterators give mindspore Tensors unless
output_numpy=True. Work runs in the consumer's thread unless an operation asks for
num_parallel_workers > 1: then a worker pool (threads, or forked processes with
python_multiprocessing=True) computes ahead in order and the iterator prefetches whole batches.
"""
from pijit.dataset import config
from pijit.dataset.config import (set_seed, get_seed, set_num_parallel_workers,
                                  get_num_parallel_workers, set_prefetch_size, get_prefetch_size)
from pijit.dataset.engine import Dataset, TupleIterator, DictIterator
from pijit.dataset.ops import BatchInfo
from pijit.dataset.samplers import (Sampler, SequentialSampler, RandomSampler,
                                    DistributedSampler, SubsetRandomSampler, SubsetSampler)
from pijit.dataset.sources import GeneratorDataset, NumpySlicesDataset
from pijit.dataset.standard import MnistDataset, Cifar10Dataset
from pijit.dataset import transforms, vision  # noqa: F401  (ds.transforms / ds.vision)

__all__ = ["config", "set_seed", "get_seed", "set_num_parallel_workers",
           "get_num_parallel_workers", "set_prefetch_size", "get_prefetch_size", "Dataset",
           "TupleIterator", "DictIterator", "BatchInfo", "Sampler", "SequentialSampler",
           "RandomSampler", "DistributedSampler", "SubsetRandomSampler", "SubsetSampler",
           "GeneratorDataset", "NumpySlicesDataset", "MnistDataset", "Cifar10Dataset"]
