"""Tensor creation: from data, constant fills, ranges, identity, and seeded random numbers."""
from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op, shape_arg as _shape_arg
from pijit._state import runtime_state

_seed = [0]


def _dtype_or(dtype, default):
    return default if dtype is None else _dt.as_dtype(dtype)


def tensor(data, dtype=None):
    """A new tensor holding a copy of `data` (numbers, nested sequences, buffers, tensors)."""
    from pijit.tensor import Tensor
    return Tensor(data, dtype)


def full(shape, fill_value, dtype=None):
    if dtype is None:
        dtype = (_dt.bool_ if isinstance(fill_value, bool) else
                 _dt.int64 if isinstance(fill_value, int) else _dt.float32)
    return _op("full", (), shape=_shape_arg((shape,)), value=fill_value, dtype=_dt.as_dtype(dtype))


def ones(*shape, dtype=None):
    return _op("full", (), shape=_shape_arg(shape), value=1, dtype=_dtype_or(dtype, _dt.float32))


def zeros(*shape, dtype=None):
    return _op("full", (), shape=_shape_arg(shape), value=0, dtype=_dtype_or(dtype, _dt.float32))


def empty(*shape, dtype=None):
    return zeros(*shape, dtype=dtype)


def ones_like(input, dtype=None):
    return ones(input.shape, dtype=_dtype_or(dtype, input.dtype))


def zeros_like(input, dtype=None):
    return zeros(input.shape, dtype=_dtype_or(dtype, input.dtype))


def full_like(input, fill_value, dtype=None):
    return full(input.shape, fill_value, dtype=_dtype_or(dtype, input.dtype))


def arange(start=0, end=None, step=1, dtype=None):
    """numpy.arange: int64 when start, end and step are ints, else float32."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        ints = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end, step))
        dtype = _dt.int64 if ints else _dt.float32
    return _op("arange", (), start=float(start), stop=float(end), step=float(step),
               dtype=_dt.as_dtype(dtype))


def linspace(start, end, steps, dtype=None):
    return _op("linspace", (), start=float(start), stop=float(end), num=int(steps),
               dtype=_dtype_or(dtype, _dt.float32))


def eye(n, m=None, dtype=None):
    return _op("eye", (), n=int(n), m=int(n if m is None else m), dtype=_dtype_or(dtype, _dt.float32))


@runtime_state("reseeds the random generator")
def set_seed(seed):
    """Seeds pijit's random generator (rand, randn, randint, dropout, initialisers)."""
    if not isinstance(seed, int) or seed < 0:
        raise ValueError("set_seed: seed must be a non-negative int, got %r" % (seed,))
    _seed[0] = seed
    _C.set_seed(seed)


@runtime_state("reads the random seed")
def get_seed():
    return _seed[0]


def rand(*shape, dtype=None):
    """Uniform samples in [0, 1)."""
    return _op("rand", (), shape=_shape_arg(shape), dtype=_dtype_or(dtype, _dt.float32))


def randn(*shape, dtype=None):
    """Standard normal samples."""
    return _op("randn", (), shape=_shape_arg(shape), dtype=_dtype_or(dtype, _dt.float32))


def randint(low, high, size, dtype=None):
    """Integers in [low, high)."""
    return _op("randint", (), low=int(low), high=int(high), shape=_shape_arg((size,)),
               dtype=_dtype_or(dtype, _dt.int64))
