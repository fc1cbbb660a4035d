"""mindspore.dataset.config: the pipeline's global settings (seed, workers, prefetch depth).

MindSpore's defaults: seed 5489 (std::mt19937's default seed), 8 parallel workers, prefetch 16.
As in MindSpore, a seed the user never set means a fresh random seed for every pipeline run
(shuffles differ between runs); set_seed makes every shuffle, split and random sampler repeat.
"""
import os
import random as _random

from pijit._state import runtime_state
from pijit.dataset import _validators as _v

__all__ = ["set_seed", "get_seed", "set_num_parallel_workers", "get_num_parallel_workers",
           "set_prefetch_size", "get_prefetch_size", "set_multiprocessing_timeout_interval",
           "get_multiprocessing_timeout_interval", "load"]

_DEFAULT_SEED = 5489
_state = {"seed": _DEFAULT_SEED, "seed_set": False, "workers": 8, "workers_set": False,
          "prefetch": 16, "mp_interval": 300}


@runtime_state("changes the dataset configuration")
def set_seed(seed):
    """Seeds the pipeline's random draws (shuffle, samplers, split, random transforms), and
    Python's `random` and numpy.random, as MindSpore does."""
    _v.type_check(seed, (int,), "seed")
    _v.check_value(seed, [0, _v.UINT32_MAX], "seed")
    _state["seed"] = seed
    _state["seed_set"] = True
    # counted, so random transforms restart their draws on a set_seed of the same value
    _state["seed_generation"] = _state.get("seed_generation", 0) + 1
    _random.seed(seed)
    from pijit.dataset._compat import np
    np.random.seed(seed)


@runtime_state("reads the dataset configuration")
def get_seed():
    return _state["seed"]


@runtime_state("changes the dataset configuration")
def set_num_parallel_workers(num):
    _v.type_check(num, (int,), "num_parallel_workers")
    if num <= 0 or num > _v.INT32_MAX:
        raise ValueError("Invalid num_parallel_workers, exceeds the boundary between 0 and %d."
                         % _v.INT32_MAX)
    _state["workers"] = num
    _state["workers_set"] = True


@runtime_state("reads the dataset configuration")
def get_num_parallel_workers():
    return _state["workers"]


def default_workers():
    """Workers for an operation given num_parallel_workers=None: 1 (run inline: Python work under
    the GIL gains nothing from threads) unless the user set a default with
    set_num_parallel_workers."""
    return _state["workers"] if _state["workers_set"] else 1


@runtime_state("changes the dataset configuration")
def set_prefetch_size(size):
    _v.type_check(size, (int,), "size")
    if size <= 0 or size > _v.INT32_MAX:
        raise ValueError("Prefetch size given is not within the required range (0, %d]."
                         % _v.INT32_MAX)
    _state["prefetch"] = size


@runtime_state("reads the dataset configuration")
def get_prefetch_size():
    return _state["prefetch"]


@runtime_state("changes the dataset configuration")
def set_multiprocessing_timeout_interval(interval):
    _v.type_check(interval, (int,), "interval")
    if interval <= 0 or interval > _v.INT32_MAX:
        raise ValueError("Invalid interval, exceeds the boundary between 0 and %d."
                         % _v.INT32_MAX)
    _state["mp_interval"] = interval


@runtime_state("reads the dataset configuration")
def get_multiprocessing_timeout_interval():
    return _state["mp_interval"]


@runtime_state("changes the dataset configuration")
def load(file):
    """Reads settings from a JSON file (keys: seed, numParallelWorkers, prefetchSize)."""
    import json
    with open(file) as f:
        cfg = json.load(f)
    if "seed" in cfg:
        set_seed(cfg["seed"])
    if "numParallelWorkers" in cfg:
        set_num_parallel_workers(cfg["numParallelWorkers"])
    if "prefetchSize" in cfg:
        set_prefetch_size(cfg["prefetchSize"])


def run_seed():
    """The base seed of one pipeline run: the user's, or a fresh one when none was set."""
    if _state["seed_set"]:
        return _state["seed"]
    return int.from_bytes(os.urandom(4), "little")


def _take_global_seed():
    # mindspore.set_seed seeds the pipeline too: a program that called it before the pipeline
    # was imported has its seed here (numpy and `random` were seeded by set_seed itself)
    from pijit import creation
    if creation._seed_set[0]:
        _state["seed"] = creation._seed[0] % (1 << 32)
        _state["seed_set"] = True


_take_global_seed()
