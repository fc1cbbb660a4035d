"""Tensor creation: from data, constant fills, ranges, identity, and seeded random numbers."""
from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op, shape_arg as _shape_arg
from pijit._state import runtime_state
from pijit._validate import check_int, check_tensor

_seed = [0]
_seed_set = [False]  # whether the program called set_seed (the dataset pipeline, imported later, takes it)
_MAX_SEED = 2 ** 64 - 1  # the generator's seed is a uint64 (kernels/random.h)


def _dtype_or(dtype, default):
    return default if dtype is None else _dt.as_dtype(dtype)


def tensor(input_data=None, dtype=None, shape=None, init=None, internal=False, const_arg=False):
    """MindSpore's mindspore.tensor: a new tensor holding a copy of `input_data` (numbers, nested
    sequences, buffers, tensors), or of `shape` and `dtype` filled by the initializer `init`.
    internal and const_arg are MindSpore compiler hints with no effect in pijit."""
    from pijit.tensor import Tensor
    return Tensor(input_data, dtype, shape, init)


def full(size, fill_value, *, dtype=None):
    """MindSpore's ops.full(size, fill_value, *, dtype=None); the dtype follows fill_value
    (bool, int64, float32) unless given."""
    fill_value = _scalar("full", fill_value)
    if dtype is None:
        dtype = (_dt.bool_ if isinstance(fill_value, bool) else
                 _dt.int64 if isinstance(fill_value, int) else _dt.float32)
    return _op("full", (), shape=_size("full", size), value=fill_value, dtype=_dt.as_dtype(dtype))


def _size_and_dtype(name, args, dtype, kw_name, kw_shape):
    """MindSpore's call, ops.ones((2, 3), mindspore.float32) or ops.zeros(size=(2, 3)), and, as a
    PyTorch convenience that no MindSpore call can mean otherwise, ones(2, 3, dtype=...): ints
    after the first argument are more dimensions, anything else there is the dtype."""
    if kw_shape is not None:
        if args:
            raise TypeError("%s() got multiple values for argument '%s'" % (name, kw_name))
        args = (kw_shape,)
    if not args:
        raise TypeError("%s() missing required argument: '%s'" % (name, kw_name))
    if len(args) == 2 and not _is_dim(args[1]):
        if dtype is not None:
            raise TypeError("%s() got multiple values for argument 'dtype'" % name)
        return _size(name, args[0]), args[1]
    if len(args) == 1:
        return _size(name, args[0]), dtype
    if not all(_is_dim(a) for a in args):
        raise TypeError("%s() takes (%s, dtype=None); got %d positional arguments"
                        % (name, kw_name, len(args)))
    return _size(name, args), dtype


def _is_dim(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _size(name, shape):
    """A shape given as an int, a tuple/list of ints, or a 0-D/1-D integer tensor."""
    if isinstance(shape, _C.TensorBase):
        if shape.ndim > 1 or shape.dtype not in (_dt.int32, _dt.int64):
            raise TypeError("%s(): a shape tensor must be a 0-D or 1-D int32/int64 tensor, got "
                            "shape %s and dtype %s" % (name, shape.shape, shape.dtype))
        shape = shape.tolist()
    if _is_dim(shape):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(_is_dim(d) for d in shape):
        raise TypeError("%s(): shape must be an int or a tuple/list of ints, got %r"
                        % (name, shape))
    if any(d < 0 for d in shape):
        raise ValueError("%s(): shape must not have negative dimensions, got %s"
                         % (name, tuple(shape)))
    return tuple(shape)


def ones(*args, shape=None, dtype=None):
    """ones(shape, dtype=None): MindSpore's ops.ones; float32 unless dtype says otherwise.
    ones(2, 3) is also accepted."""
    shape, dtype = _size_and_dtype("ones", args, dtype, "shape", shape)
    return _op("full", (), shape=shape, value=1, dtype=_dtype_or(dtype, _dt.float32))


def zeros(*args, size=None, dtype=None):
    """zeros(size, dtype=None): MindSpore's ops.zeros; float32 unless dtype says otherwise.
    zeros(2, 3) is also accepted."""
    size, dtype = _size_and_dtype("zeros", args, dtype, "size", size)
    return _op("full", (), shape=size, value=0, dtype=_dtype_or(dtype, _dt.float32))


def empty(*args, size=None, dtype=None):
    """empty(size, dtype=None): zero-filled (pijit never hands out uninitialised memory)."""
    return zeros(*args, size=size, dtype=dtype)


def fill(type, shape, value):
    """MindSpore's ops.fill(type, shape, value): a tensor of `shape` filled with `value`."""
    if type is None:
        raise TypeError("fill(): type must be a dtype, got None")
    return _op("full", (), shape=_size("fill", shape), value=_scalar("fill", value),
               dtype=_dt.as_dtype(type))


def _scalar(name, value):
    if isinstance(value, _C.TensorBase):
        if value.size != 1:
            raise ValueError("%s(): value must be a number or a 1-element tensor, got shape %s"
                             % (name, value.shape))
        return value.item()
    if not isinstance(value, (bool, int, float)):
        raise TypeError("%s(): value must be a bool, int, float or 1-element tensor, got %s"
                        % (name, type(value).__name__))
    return value


def ones_like(input, dtype=None):
    check_tensor("ones_like", "input", input)
    return ones(input.shape, dtype=_dtype_or(dtype, input.dtype))


def zeros_like(input, dtype=None):
    check_tensor("zeros_like", "input", input)
    return zeros(input.shape, dtype=_dtype_or(dtype, input.dtype))


def full_like(input, fill_value, dtype=None):
    check_tensor("full_like", "input", input)
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
    """Seeds pijit's random generator (rand, randn, randint, dropout) and, as MindSpore's
    set_seed does, numpy's global generator (where initialisers take their seeds) and the dataset
    pipeline. numpy and the pipeline take 32-bit seeds: a larger one reaches them modulo 2**32."""
    check_int("set_seed", "seed", seed, 0, _MAX_SEED)
    _seed[0] = seed
    _seed_set[0] = True
    _C.set_seed(seed)
    from pijit.common.initializer import _numpy
    _numpy().random.seed(seed % (1 << 32))
    import sys
    config = sys.modules.get("pijit.dataset.config")
    if config is not None:  # (not imported yet: it reads pijit's seed when it is)
        config.set_seed(seed % (1 << 32))


@runtime_state("reads the random seed")
def get_seed():
    return _seed[0]


def rand(*size, dtype=None, seed=None):
    """MindSpore's ops.rand(*size, dtype=None, seed=None): uniform samples in [0, 1); size as
    ints or one tuple/list. seed None draws from (and advances) the global generator; an int
    >= 0 goes to the registry op, which draws from that seed alone, so the call is reproducible
    and leaves the global generator untouched (likewise randn and randint)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise TypeError("rand(): seed must be a non-negative int or None, got %r" % (seed,))
    return _op("rand", (), shape=_shape_arg(size), dtype=_dtype_or(dtype, _dt.float32), seed=seed)


def randn(*size, dtype=None, seed=None):
    """MindSpore's ops.randn(*size, dtype=None, seed=None): standard normal samples."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise TypeError("randn(): seed must be a non-negative int or None, got %r" % (seed,))
    return _op("randn", (), shape=_shape_arg(size), dtype=_dtype_or(dtype, _dt.float32), seed=seed)


def randint(low, high, size, seed=None, *, dtype=None):
    """MindSpore's ops.randint(low, high, size, seed=None, *, dtype=None): integers in
    [low, high), int64 unless dtype says otherwise. pijit's earlier randint(low, high, size,
    dtype) still works: a dtype is never a seed."""
    if isinstance(seed, _dt.Type):
        if dtype is not None:
            raise TypeError("randint() got a dtype both as its 4th argument and as dtype=")
        seed, dtype = None, seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise TypeError("randint(): seed must be a non-negative int or None, got %r" % (seed,))
    return _op("randint", (), low=int(low), high=int(high), shape=_shape_arg((size,)),
               dtype=_dtype_or(dtype, _dt.int64), seed=seed)
