"""The numpy the pipeline uses, and the conversions of user values into column arrays.

Column values are numpy arrays: the real numpy where it is installed, otherwise pijit's stand-in
(pijit.numpy_lite), the same module `import numpy` gives a script under `python -m pijit run`.
"""
try:
    import numpy as np
except ImportError:  # stdlib-only Python without pijit's import hook installed
    import pijit.numpy_lite as np

LITE = bool(getattr(np, "__pijit_numpy_lite__", False))


def _tensor_type():
    from pijit.tensor import Tensor
    return Tensor


def frombuffer(data, dtype, shape):
    """A writable array of `shape` over the bytes `data` (a bytearray or bytes), without a copy
    through Python objects (MNIST's 47 MB of pixels would be slow that way)."""
    if not LITE:
        return np.frombuffer(data, dtype=dtype).reshape(shape)
    from pijit import _C, dtype as pdt
    from pijit.numpy_lite import _array, _dtypes
    d = _dtypes.as_dtype(dtype)
    t = _C.tensor_from_bytes(bytes(data), getattr(pdt, d.name), tuple(shape))
    return _array.wrap(t, d)


def label_dtype():
    """MindSpore's uint32 label column; the stand-in has no uint32, so int32 there."""
    return np.int32 if LITE else np.uint32


def to_array(x, where):
    """One column value as numpy would hold it (int -> int64, float -> float64, bytes -> uint8)."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (bytes, bytearray)):
        return frombuffer(bytearray(x), np.uint8, (len(x),))
    if isinstance(x, _tensor_type()):  # (the stand-in takes a Tensor; asnumpy needs real numpy)
        return np.array(x) if LITE else x.asnumpy()
    if isinstance(x, dict):
        raise TypeError("%s is expected to be int, float, str, bytes, numpy.ndarray, Tensor or "
                        "list/tuple of them, but got dict." % where)
    try:
        a = np.array(x)
    except NotImplementedError as e:
        raise TypeError("%s: %s" % (where, e)) from None
    if a.dtype == object:
        raise TypeError("Data type of %s or its converted Numpy array is expected to be int or "
                        "float or str, but got object." % where)
    return a


def convert_row(row):
    """A source's row (a value, or a tuple/list of column values) as a tuple of arrays."""
    if isinstance(row, dict):
        raise TypeError("Input data is expected to be int, float, str, bytes, numpy.ndarray, "
                        "Tensor or list/tuple of them, but got dict.")
    if isinstance(row, (tuple, list)):
        return tuple(to_array(x, "the %s item of input data" % _nth(i + 1))
                     for i, x in enumerate(row))
    return (to_array(row, "the input data"),)


def as_output(value, where):
    """A map/per_batch_map operation's result as a tuple of arrays."""
    if isinstance(value, tuple):
        return tuple(to_array(v, where) for v in value)
    return (to_array(value, where),)


def _nth(i):
    return "%d%s" % (i, {1: "st", 2: "nd", 3: "rd"}.get(i if i < 20 else i % 10, "th"))


def shape_str(shape):
    """A shape as MindSpore's messages print it: <2,3>."""
    return "<" + ",".join(str(d) for d in shape) + ">"


def to_tensor(a):
    return _tensor_type()(a)
