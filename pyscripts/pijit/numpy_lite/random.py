"""numpy.random for pijit's numpy stand-in: the legacy RandomState (MT19937), draw for draw.

Python's random.Random is the same Mersenne Twister, and its random() is numpy's 53-bit double;
seeding follows numpy (init_genrand for an int seed, init_by_array for a sequence), so
np.random.seed(0); np.random.randn(3) gives numpy's numbers. Gaussians use numpy's legacy polar
method with its cached second value; randint numpy's masked rejection.
"""
import math
import operator
import os
import random as _pyrandom

from pijit._state import runtime_state
from pijit.numpy_lite import _dtypes as _d

_N = 624


def _init_genrand(seed):
    mt = [0] * _N
    mt[0] = seed & 0xffffffff
    for i in range(1, _N):
        prev = mt[i - 1]
        mt[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xffffffff
    return mt


def _init_by_array(key):
    mt = _init_genrand(19650218)
    i, j = 1, 0
    n = len(key)
    for _ in range(max(_N, n)):
        prev = mt[i - 1]
        mt[i] = ((mt[i] ^ ((prev ^ (prev >> 30)) * 1664525)) + key[j] + j) & 0xffffffff
        i += 1
        j += 1
        if i >= _N:
            mt[0] = mt[_N - 1]
            i = 1
        if j >= n:
            j = 0
    for _ in range(_N - 1):
        prev = mt[i - 1]
        mt[i] = ((mt[i] ^ ((prev ^ (prev >> 30)) * 1566083941)) - i) & 0xffffffff
        i += 1
        if i >= _N:
            mt[0] = mt[_N - 1]
            i = 1
    mt[0] = 0x80000000
    return mt


def _size_shape(size):
    if size is None:
        return None
    if isinstance(size, (tuple, list)):
        return tuple(operator.index(s) for s in size)
    return (operator.index(size),)


def _fill(shape, draw, d):
    """An array of `shape` filled in C order by calling draw(), or draw()'s value for None."""
    from pijit.numpy_lite import _array
    if shape is None:
        return draw()
    n = 1
    for s in shape:
        n *= s
    values = [draw() for _ in range(n)]
    return _array.array(values, dtype=d).reshape(shape)


class RandomState(object):
    """numpy.random.RandomState (the legacy generator behind np.random.*)."""

    def __init__(self, seed=None):
        self._rng = _pyrandom.Random()
        self.seed(seed)

    def seed(self, seed=None):
        if seed is None:
            key = [int.from_bytes(os.urandom(4), "little") for _ in range(_N)]
            mt = _init_by_array(key)
        elif isinstance(seed, (list, tuple)) or hasattr(seed, "tolist") and \
                getattr(seed, "ndim", 0) > 0:
            key = [int(k) for k in (seed.tolist() if hasattr(seed, "tolist") else seed)]
            if not key:
                raise ValueError("Seed must be non-empty")
            if any(k < 0 or k > 0xffffffff for k in key):
                raise ValueError("Seed must be between 0 and 2**32 - 1")
            mt = _init_by_array(key)
        else:
            s = operator.index(seed)
            if s < 0 or s > 0xffffffff:
                raise ValueError("Seed must be between 0 and 2**32 - 1")
            mt = _init_genrand(s)
        self._rng.setstate((3, tuple(mt) + (_N,), None))
        self._gauss = None

    # ---- the bit stream --------------------------------------------------------------------------
    def _next32(self):
        return self._rng.getrandbits(32)

    def _next64(self):
        hi = self._rng.getrandbits(32)
        return (hi << 32) | self._rng.getrandbits(32)

    def _double(self):
        return self._rng.random()

    def _gaussian(self):
        if self._gauss is not None:
            g, self._gauss = self._gauss, None
            return g
        while True:
            x1 = 2.0 * self._double() - 1.0
            x2 = 2.0 * self._double() - 1.0
            r2 = x1 * x1 + x2 * x2
            if r2 < 1.0 and r2 != 0.0:
                break
        f = math.sqrt(-2.0 * math.log(r2) / r2)
        self._gauss = f * x1
        return f * x2

    def _bounded(self, rng):
        """A uniform int in [0, rng] by numpy's masked rejection."""
        if rng == 0:
            return 0
        mask = rng
        for shift in (1, 2, 4, 8, 16, 32):
            mask |= mask >> shift
        if rng <= 0xffffffff:
            if rng == 0xffffffff:
                return self._next32()
            while True:
                v = self._next32() & mask
                if v <= rng:
                    return v
        if rng == 0xffffffffffffffff:
            return self._next64()
        while True:
            v = self._next64() & mask
            if v <= rng:
                return v

    # ---- distributions ---------------------------------------------------------------------------
    def random_sample(self, size=None):
        return _fill(_size_shape(size), self._double, _d.FLOAT64)

    random = random_sample
    sample = random_sample
    ranf = random_sample

    def rand(self, *args):
        return _fill(tuple(operator.index(a) for a in args) if args else None, self._double,
                     _d.FLOAT64)

    def standard_normal(self, size=None):
        return _fill(_size_shape(size), self._gaussian, _d.FLOAT64)

    def randn(self, *args):
        return _fill(tuple(operator.index(a) for a in args) if args else None, self._gaussian,
                     _d.FLOAT64)

    def normal(self, loc=0.0, scale=1.0, size=None):
        loc, scale = _scalar_arg("normal", loc), _scalar_arg("normal", scale)
        if scale < 0:
            raise ValueError("scale < 0")
        return _fill(_size_shape(size), lambda: loc + scale * self._gaussian(), _d.FLOAT64)

    def uniform(self, low=0.0, high=1.0, size=None):
        low, high = _scalar_arg("uniform", low), _scalar_arg("uniform", high)
        span = high - low
        if not math.isfinite(span):
            raise OverflowError("Range exceeds valid bounds")
        return _fill(_size_shape(size), lambda: low + span * self._double(), _d.FLOAT64)

    def randint(self, low, high=None, size=None, dtype=int):
        d = _d.as_dtype(dtype)
        if d not in (_d.INT64, _d.INT32):
            raise _d.unsupported("randint(dtype=%s) (int32 and int64 only)" % d.name)
        low = operator.index(low)
        if high is None:
            low, high = 0, low
        high = operator.index(high)
        if low >= high:
            raise ValueError("low >= high")
        info = (-(1 << (d._bits - 1)), (1 << (d._bits - 1)))
        if low < info[0]:
            raise ValueError("low is out of bounds for %s" % d.name)
        if high > info[1]:
            raise ValueError("high is out of bounds for %s" % d.name)
        rng = high - low - 1
        shape = _size_shape(size)
        if shape is None:
            return low + self._bounded(rng)
        return _fill(shape, lambda: low + self._bounded(rng), d)

    def random_integers(self, low, high=None, size=None):
        if high is None:
            low, high = 1, low
        return self.randint(low, high + 1, size)

    def shuffle(self, x):
        """Shuffles a list or an ndarray along its first axis, in place (numpy's Fisher-Yates)."""
        n = len(x)
        from pijit.numpy_lite import _array
        if isinstance(x, _array.ndarray):
            rows = [x[i].copy() if x.ndim > 1 else x[i] for i in range(n)]
        else:
            rows = x
        perm = list(range(n))
        for i in reversed(range(1, n)):
            j = self._bounded(i)
            perm[i], perm[j] = perm[j], perm[i]
        if isinstance(x, _array.ndarray):
            for i, p in enumerate(perm):
                x[i] = rows[p]
        else:
            items = list(rows)
            for i, p in enumerate(perm):
                x[i] = items[p]

    def permutation(self, x):
        from pijit.numpy_lite import _array, _creation
        if isinstance(x, int) or (hasattr(x, "__index__") and not hasattr(x, "__len__")):
            arr = _creation.arange(operator.index(x))
        else:
            arr = _array.array(x)
        if arr.ndim == 1:
            self.shuffle(arr)
            return arr
        idx = _creation.arange(arr.shape[0])
        self.shuffle(idx)
        return arr[idx]

    def choice(self, a, size=None, replace=True, p=None):
        from pijit.numpy_lite import _array
        if p is not None:
            raise _d.unsupported("random.choice(p=...)")
        pool = None
        if isinstance(a, int) or (hasattr(a, "__index__") and not hasattr(a, "__len__")):
            n = operator.index(a)
        else:
            pool = _array.array(a)
            if pool.ndim != 1:
                raise ValueError("a must be 1-dimensional")
            n = pool.shape[0]
        if n == 0:
            raise ValueError("a cannot be empty unless no samples are taken")
        shape = _size_shape(size)
        if replace:
            idx = self.randint(0, n, size=shape)
        else:
            count = 1
            for s in shape or ():
                count *= s
            if count > n:
                raise ValueError("Cannot take a larger sample than population when "
                                 "'replace=False'")
            perm = self.permutation(n)
            idx = perm[:count].reshape(shape) if shape is not None else perm[0]
        if pool is None:
            return idx
        return pool[idx]

    def get_state(self, legacy=True):
        raise _d.unsupported("numpy.random.get_state")

    def set_state(self, state):
        raise _d.unsupported("numpy.random.set_state")

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError("'RandomState' object has no attribute '%s' (%s)"
                             % (name, _d.not_provided("numpy.random.RandomState.%s" % name)))


def _scalar_arg(name, v):
    if hasattr(v, "ndim") and getattr(v, "ndim", 0) > 0:
        raise _d.unsupported("random.%s with array parameters" % name)
    return float(v)


RandomState.__module__ = "numpy.random"
# A generator's state changes with every draw: capture must run these, never trace them once.
for _name in ("seed", "random_sample", "rand", "standard_normal", "randn", "normal", "uniform",
              "randint", "random_integers", "shuffle", "permutation", "choice"):
    runtime_state("uses a numpy RandomState")(getattr(RandomState, _name))

_global = RandomState()


def _draws(what):
    """A module-level function drawing from the global RandomState (capture must not trace it:
    it would draw once and freeze the numbers)."""
    def make(name):
        method = getattr(RandomState, name)

        @runtime_state(what)
        def f(*args, **kwargs):
            return method(_global, *args, **kwargs)
        f.__name__ = f.__qualname__ = name
        f.__doc__ = method.__doc__
        return f
    return make


_draw = _draws("draws from numpy's global random generator")
seed = _draws("reseeds numpy's global random generator")("seed")
rand = _draw("rand")
randn = _draw("randn")
random = _draw("random_sample")
random_sample = _draw("random_sample")
sample = _draw("random_sample")
ranf = _draw("random_sample")
standard_normal = _draw("standard_normal")
normal = _draw("normal")
uniform = _draw("uniform")
randint = _draw("randint")
random_integers = _draw("random_integers")
shuffle = _draw("shuffle")
permutation = _draw("permutation")
choice = _draw("choice")


def __getattr__(name):
    raise AttributeError("module 'numpy.random' has no attribute '%s' (%s)"
                         % (name, _d.not_provided("numpy.random.%s" % name)))
