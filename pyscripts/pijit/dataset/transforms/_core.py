"""What every transform shares: the base classes, the random generator, the array helpers.

A transform is a callable taking a map's column values as positional arrays (real numpy where it
is installed, pijit.numpy_lite otherwise; the pipeline's `np` from pijit.dataset._compat) and
returning an array or a tuple of arrays; it also runs eagerly on one value, as MindSpore's do.

Randomness (MindSpore's GetSeed): every random transform owns a generator, seeded on first use
with mindspore.dataset.config's seed when set_seed was called, from the OS otherwise; a later
set_seed of another value reseeds it (so does the same value again where the config counts
set_seed calls in _state["seed_generation"]). A forked
worker process derives a stream of its own (from the seed and its pid) instead of
repeating its siblings' draws; those streams are not reproducible between runs.
"""
import os
import random as _random
import threading

from pijit.dataset import _validators as _v
from pijit.dataset import config as _config
from pijit.dataset._compat import np

__all__ = []


_IMPORT_PID = os.getpid()
_PID = [_IMPORT_PID]  # this process's pid, kept current across forks without a system call
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))


# A map run by several workers hands each row a generator of its own, seeded from the run's seed,
# the epoch and the row's position, so which worker takes which row cannot change the draws.
_ROW = threading.local()


def row_random(seed):
    """The context of one row's transforms in a parallel map: their draws come from Random(seed)."""
    return _RowRandom(seed)


_M64 = (1 << 64) - 1


class _SplitMix(object):
    """A row's generator: SplitMix64 with the random.Random methods the transforms call.
    Mersenne Twister's 624-word seeding for every row cost a parallel map 10-20% of its
    images/s; this one seeds for nothing, and a row draws only a few numbers."""

    __slots__ = ("_s",)

    def __init__(self, seed):
        self._s = seed & _M64

    def getrandbits(self, k):
        if 0 < k <= 64:  # one step (every draw of the transforms)
            s = (self._s + 0x9E3779B97F4A7C15) & _M64
            self._s = s
            s = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & _M64
            s = ((s ^ (s >> 27)) * 0x94D049BB133111EB) & _M64
            return (s ^ (s >> 31)) >> (64 - k)
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        out, n = 0, 0
        while n < k:
            s = (self._s + 0x9E3779B97F4A7C15) & _M64
            self._s = s
            s = ((s ^ (s >> 30)) * 0xBF58476D1CE4E5B9) & _M64
            s = ((s ^ (s >> 27)) * 0x94D049BB133111EB) & _M64
            out = (out << 64) | (s ^ (s >> 31))
            n += 64
        return out >> (n - k)

    def _below(self, n):  # uniform in [0, n), by rejection (no modulo bias)
        k = n.bit_length()
        r = self.getrandbits(k)
        while r >= n:
            r = self.getrandbits(k)
        return r

    def random(self):
        return self.getrandbits(53) * (1.0 / (1 << 53))

    def uniform(self, a, b):
        return a + (b - a) * self.random()

    def randrange(self, start, stop=None, step=1):
        if stop is None:
            start, stop = 0, start
        n = (stop - start + step - (1 if step > 0 else -1)) // step
        if n <= 0:
            raise ValueError("empty range for randrange() (%d, %d, %d)" % (start, stop, step))
        return start + step * self._below(n)

    def randint(self, a, b):
        if b < a:
            raise ValueError("empty range for randint() (%d, %d)" % (a, b))
        return a + self._below(b - a + 1)

    def choice(self, seq):
        return seq[self._below(len(seq))]

    def shuffle(self, x):
        for i in range(len(x) - 1, 0, -1):
            j = self._below(i + 1)
            x[i], x[j] = x[j], x[i]


class _RowRandom(object):
    __slots__ = ("seed",)

    def __init__(self, seed):
        self.seed = seed

    def __enter__(self):
        _ROW.rng = _SplitMix(self.seed)

    def __exit__(self, *exc):
        _ROW.rng = None


def _seed_state():
    st = getattr(_config, "_state", None) or {}
    # ("seed_generation": a count of set_seed calls, where the config keeps one, so that setting
    # the same seed again restarts the draws too)
    seed = st["seed"] if "seed" in st else _config.get_seed()
    return (st.get("seed_set", False), seed, st.get("seed_generation", 0))


class TensorOperation:
    """Base of the transforms: callable on column values (MindSpore's TensorOperation)."""
    random = False

    def __call__(self, *args):
        raise NotImplementedError("%s has no implementation" % type(self).__name__)

    def __repr__(self):
        return "%s()" % type(self).__name__


class RandomMixin:
    """A generator of its own, (re)seeded from the dataset config (see the module docstring)."""
    random = True
    _rng = None
    _rng_key = None

    def _random(self):
        rng = getattr(_ROW, "rng", None)
        if rng is not None:  # a map with workers: the row's own generator
            return rng
        key = _seed_state() + (_PID[0],)
        pid = key[-1]
        if self._rng is None or key != self._rng_key:
            seed = key[1] if key[0] else int.from_bytes(os.urandom(8), "little")
            if pid != _IMPORT_PID:
                # A forked worker (python_multiprocessing): the parent's seed would repeat the
                # sibling workers' draws; each worker takes a stream of its own.
                seed = "%d/%d" % (seed, pid)
            self._rng = _random.Random(seed)
            self._rng_key = key
        return self._rng


def is_array(x):
    return isinstance(x, np.ndarray)


def to_array(x, op):
    """A column value as an array (numbers and lists become arrays as MindSpore converts them)."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (bool, int, float, list, tuple)) or type(x).__module__ == "numpy":
        return np.array(x)
    from pijit.tensor import Tensor
    if isinstance(x, Tensor):
        return x.asnumpy()
    raise TypeError("%s: input should be a NumPy array, got %s." % (op, type(x)))


def np_dtype(data_type, name):
    """A numpy dtype from a mindspore dtype (mstype.float32) or a numpy dtype/type/string."""
    from pijit import dtype as _pdt
    if isinstance(data_type, _pdt.Type):
        nm = data_type.name
        if nm == "bool":
            nm = "bool_"
        try:
            return np.dtype(getattr(np, nm))
        except (AttributeError, TypeError, NotImplementedError):
            raise TypeError("%s: numpy has no dtype for %s" % (name, data_type)) from None
    try:
        return np.dtype(data_type)
    except (TypeError, NotImplementedError, AttributeError):
        raise TypeError("Argument data_type with value %s is not of type [<class "
                        "'mindspore._c_expression.typing.Type'>, <class 'numpy.dtype'>], but got %s."
                        % (data_type, type(data_type))) from None


check_type = _v.type_check
check_value = _v.check_value
INT32_MAX = _v.INT32_MAX
