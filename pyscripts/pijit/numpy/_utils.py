"""Helpers shared by pijit.numpy's modules (mindspore.numpy): argument conversion as MindSpore's
numpy does it. Python numbers and lists become 32-bit tensors (int32, float32: MindSpore maps
numpy's 64-bit defaults to 32 bits); tensors keep their dtype. Nothing here reads tensor data."""
import builtins

from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def to_32(t):
    """float64 -> float32 and int64 -> int32 (what MindSpore's numpy does to Python data)."""
    if t.dtype is _dt.float64:
        return _op("cast", (t,), dtype=_dt.float32)
    if t.dtype is _dt.int64:
        return _op("cast", (t,), dtype=_dt.int32)
    return t


def tensor(x, who="mindspore.numpy"):
    """A Tensor as it is; a number, bool, list or tuple as a 32-bit tensor."""
    if isinstance(x, _C.TensorBase):
        return x
    if isinstance(x, (int, float, bool, list, tuple)):
        from pijit.tensor import Tensor
        return to_32(Tensor(x))
    raise TypeError("%s: expected a Tensor, a number, a bool, a list or a tuple, got %s"
                    % (who, type(x).__name__))


def operands(a, b):
    """Two operands for an elementwise op: tensors, with a Python number beside a tensor staying
    a weak scalar (it takes the tensor's dtype, as MindSpore's numpy does)."""
    if isinstance(a, _C.TensorBase) and isinstance(b, (int, float)):
        return a, _C.as_operand(b, a)
    if isinstance(b, _C.TensorBase) and isinstance(a, (int, float)):
        return _C.as_operand(a, b), b
    return tensor(a), tensor(b)


def dtype_or_none(dtype):
    return None if dtype is None else _dt.as_dtype(dtype)


def cast(x, dtype):
    """x converted to dtype when one is given."""
    if dtype is None:
        return x
    dtype = _dt.as_dtype(dtype)
    return x if x.dtype is dtype else _op("cast", (x,), dtype=dtype)


def float_of(x):
    """x as a float tensor: float dtypes stay, integers and bools become float32."""
    return x if x.dtype.is_floating_point else _op("cast", (x,), dtype=_dt.float32)


def check_axis(who, axis, ndim):
    """An int axis normalised into [0, ndim)."""
    if not is_int(axis):
        raise TypeError("%s: axis must be an int, got %r" % (who, axis))
    n = builtins.max(ndim, 1)
    if not -n <= axis < n:
        raise ValueError("%s: axis %d is out of bounds for array of dimension %d"
                         % (who, axis, ndim))
    return axis % n


def check_axes(who, axis, ndim):
    """None (every axis) stays None; an int or a tuple/list of ints becomes a sorted tuple of
    distinct non-negative axes."""
    if axis is None:
        return None
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(check_axis(who, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError("%s: repeated axis in %r" % (who, axis))
    return tuple(sorted(out))


def shape_of(who, shape):
    if is_int(shape):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not builtins.all(is_int(d) for d in shape):
        raise TypeError("%s: shape must be an int or a tuple/list of ints, got %r" % (who, shape))
    if builtins.any(d < 0 for d in shape):
        raise ValueError("%s: negative dimensions are not allowed, got %r" % (who, tuple(shape)))
    return tuple(shape)


def full(shape, value, dtype):
    return _op("full", (), shape=tuple(shape), value=value, dtype=dtype)


def prod(values):
    n = 1
    for v in values:
        n *= v
    return n
