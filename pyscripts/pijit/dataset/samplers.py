"""Samplers: which rows of a random-access source an epoch reads, in which order.

A sampler answers `_indices(n, rng)` for a source of n rows; rng is the run's random.Random
for this source and epoch (seeded from ds.config's seed), so a set seed repeats the order.
"""
import math

from pijit.dataset import _validators as _v

__all__ = ["Sampler", "BuiltinSampler", "SequentialSampler", "RandomSampler",
           "DistributedSampler", "SubsetRandomSampler", "SubsetSampler", "IterSampler"]


class BuiltinSampler:
    def __init__(self, num_samples=None):
        if num_samples is not None:
            _v.check_num_samples(num_samples)
        self.num_samples = num_samples
        self.child_sampler = None

    def add_child(self, sampler):
        self.child_sampler = sampler

    def get_num_samples(self):
        return self.num_samples

    def is_shuffled(self):
        return False

    def is_sharded(self):
        return False

    def _limit(self, idx):
        if self.num_samples:  # 0 and None mean all
            return idx[:self.num_samples]
        return idx

    def _count(self, n):
        return len(self._indices(n, None, count_only=True))

    def _indices(self, n, rng, count_only=False):
        raise NotImplementedError


class SequentialSampler(BuiltinSampler):
    def __init__(self, start_index=None, num_samples=None):
        super().__init__(num_samples)
        if start_index is not None:
            _v.type_check(start_index, (int,), "start_index")
            if start_index < 0:
                raise ValueError("start_index should be a non-negative int, but got %d."
                                 % start_index)
        self.start_index = start_index or 0

    def _indices(self, n, rng, count_only=False):
        if self.start_index >= n and n > 0:
            raise RuntimeError("Invalid input, start_index of SequentialSampler: %d should be "
                               "less than the number of rows: %d." % (self.start_index, n))
        return self._limit(list(range(self.start_index, n)))


class RandomSampler(BuiltinSampler):
    def __init__(self, replacement=False, num_samples=None):
        super().__init__(num_samples)
        _v.type_check(replacement, (bool,), "replacement")
        self.replacement = replacement

    def is_shuffled(self):
        return True

    def _indices(self, n, rng, count_only=False):
        if count_only:
            return range(min(n, self.num_samples) if self.num_samples and not self.replacement
                         else (self.num_samples or n))
        if self.replacement:
            return [rng.randrange(n) for _ in range(self.num_samples or n)]
        idx = list(range(n))
        rng.shuffle(idx)
        return self._limit(idx)


class DistributedSampler(BuiltinSampler):
    """Shard `shard_id` of `num_shards`: every shard gets ceil(n / num_shards) rows, the last
    ones wrapping around to the start (MindSpore pads shards to equal sizes the same way)."""

    def __init__(self, num_shards, shard_id, shuffle=True, num_samples=None, offset=-1):
        super().__init__(num_samples)
        _v.type_check(num_shards, (int,), "num_shards")
        _v.type_check(shard_id, (int,), "shard_id")
        _v.type_check(shuffle, (bool,), "shuffle")
        if num_shards <= 0:
            raise ValueError("num_shards exceeds the boundary between 1 and %d!" % _v.INT32_MAX)
        if shard_id < 0 or shard_id >= num_shards:
            raise ValueError("shard_id should be less than num_shards.")
        self.num_shards, self.shard_id, self.shuffle, self.offset = (num_shards, shard_id,
                                                                    shuffle, offset)

    def is_shuffled(self):
        return self.shuffle

    def is_sharded(self):
        return True

    def _indices(self, n, rng, count_only=False):
        if n == 0:
            return []
        per = int(math.ceil(n / self.num_shards))
        order = list(range(n))
        if self.shuffle and not count_only:
            rng.shuffle(order)
        return self._limit([order[(i * self.num_shards + self.shard_id) % n]
                            for i in range(per)])


class SubsetSampler(BuiltinSampler):
    def __init__(self, indices, num_samples=None):
        super().__init__(num_samples)
        if not isinstance(indices, (list, tuple, range)):
            try:
                indices = list(indices)
            except TypeError:
                raise TypeError("Unsupported indices type: %s." % type(indices)) from None
        for i, x in enumerate(indices):
            if isinstance(x, bool) or not isinstance(x, int):
                try:
                    x = int(x)
                except (TypeError, ValueError):
                    raise TypeError("SubsetSampler: Type of indices element must be int, but got "
                                    "list[%d]: %r, type: %s." % (i, x, type(x))) from None
        self.indices = [int(x) for x in indices]

    def _checked(self, n):
        for i in self.indices:
            if i < 0 or i >= n:
                raise RuntimeError("Invalid input, sample ID: %d should be in the range [0, %d)."
                                   % (i, n))
        return list(self.indices)

    def _indices(self, n, rng, count_only=False):
        return self._limit(list(self.indices) if count_only else self._checked(n))


class SubsetRandomSampler(SubsetSampler):
    def is_shuffled(self):
        return True

    def _indices(self, n, rng, count_only=False):
        if count_only:
            return self._limit(list(self.indices))
        idx = self._checked(n)
        rng.shuffle(idx)
        return self._limit(idx)


class IterSampler(BuiltinSampler):
    """A user's iterable of indices (or a Sampler subclass) as a sampler."""

    def __init__(self, sampler, num_samples=None):
        super().__init__(num_samples)
        self.sampler = sampler

    def _indices(self, n, rng, count_only=False):
        return self._limit([int(i) for i in self.sampler])


class Sampler(BuiltinSampler):
    """Base of a user-defined sampler: subclass it and define __iter__ (yielding row indices)."""

    def __init__(self, num_samples=None):
        super().__init__(num_samples)
        self.dataset_size = 0

    def __iter__(self):
        raise NotImplementedError("Sampler.__iter__ needs to be overridden")

    def _indices(self, n, rng, count_only=False):
        self.dataset_size = n
        return self._limit([int(i) for i in self])


def select_sampler(num_samples, sampler, shuffle, num_shards, shard_id):
    """The sampler a source's (sampler, shuffle, num_shards) arguments mean, as in MindSpore."""
    if sampler is not None:
        if isinstance(sampler, BuiltinSampler):
            return sampler
        try:
            iter(sampler)
        except TypeError:
            raise TypeError("sampler should be either iterable or from "
                            "mindspore.dataset.samplers.") from None
        return IterSampler(sampler, num_samples)
    if num_shards is not None:
        return DistributedSampler(num_shards, shard_id, shuffle=shuffle is not False,
                                  num_samples=num_samples)
    if shuffle is None or shuffle:
        return RandomSampler(num_samples=num_samples)
    return SequentialSampler(num_samples=num_samples)
