"""pijit.Tensor: the user-facing tensor.

The C base (`pijit._C.TensorBase`, pyext/tensor_object.cc) holds the data and implements the hot
paths: construction, operators, comparisons, indexing, the buffer protocol and conversions. This
class adds the long tail of methods; each one calls a registry op, so eager execution and (later)
capture see the same operation.
"""
from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op, axes as _axes, shape_arg as _shape_arg


class Tensor(_C.TensorBase):
    """Tensor(input_data=None, dtype=None, shape=None): an n-dimensional array.

    input_data may be a number, a nested list/tuple, another Tensor or any object with the buffer
    protocol (numpy arrays, array.array, memoryview); the data is copied. Python floats become
    float32 and ints int64 unless dtype says otherwise.
    """

    __array_priority__ = 1000  # numpy defers mixed operators to us

    # ---- printing ------------------------------------------------------------------------------
    def __str__(self):
        return _C.format_str(self)

    def __repr__(self):
        return _C.format_repr(self)

    def __format__(self, spec):
        if self.ndim == 0 and spec:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(self.shape[0]):
            yield self[i]

    def __contains__(self, value):
        return bool((self == value).any())

    def __reduce__(self):
        return (Tensor, (self.tolist(), self.dtype))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    # ---- conversion ----------------------------------------------------------------------------
    def asnumpy(self):
        """A numpy array with a copy of the data."""
        try:
            import numpy
        except ImportError:
            raise ImportError("Tensor.asnumpy() needs numpy, which is not installed for this "
                              "Python; use Tensor.tolist(), or memoryview(tensor) for zero-copy "
                              "access") from None
        return numpy.array(self, copy=True)

    def numpy(self):
        return self.asnumpy()

    def astype(self, dtype, copy=True):
        dtype = _dt.as_dtype(dtype)
        if dtype is self.dtype and not copy:
            return self
        return _op("cast", (self,), dtype=dtype)

    def to(self, dtype):
        return self.astype(dtype)

    def float(self):
        return self.astype(_dt.float32)

    def double(self):
        return self.astype(_dt.float64)

    def int(self):
        return self.astype(_dt.int32)

    def long(self):
        return self.astype(_dt.int64)

    def bool(self):
        return self.astype(_dt.bool_)

    def copy(self):
        return _op("copy", (self,))

    def clone(self):
        return _op("copy", (self,))

    def contiguous(self):
        return self if self.is_contiguous() else _op("copy", (self,))

    def dim(self):
        return self.ndim

    def numel(self):
        return self.size

    def nelement(self):
        return self.size

    def size_of(self, axis):
        return self.shape[axis]

    # ---- shape ---------------------------------------------------------------------------------
    def reshape(self, *shape):
        return _op("reshape", (self,), shape=_shape_arg(shape))

    def view(self, *shape):
        """A view with a new shape; raises if the data cannot be viewed without a copy."""
        out = _op("reshape", (self,), shape=_shape_arg(shape))
        if out._storage_ptr() != self._storage_ptr() and self.size:
            raise RuntimeError("view size is not compatible with input tensor's size and stride; "
                               "use .reshape(...) instead")
        return out

    def transpose(self, *axes):
        """numpy/MindSpore style: transpose() reverses, transpose(perm) permutes; with two axes on
        a tensor of another rank it swaps them (PyTorch style)."""
        if not axes or (len(axes) == 1 and axes[0] is None):
            perm = tuple(reversed(range(self.ndim)))
        elif len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            perm = tuple(axes[0])
        elif len(axes) == 2 and self.ndim != 2:
            perm = list(range(self.ndim))
            a, b = axes
            perm[a], perm[b] = perm[b], perm[a]
            perm = tuple(perm)
        else:
            perm = tuple(axes)
        return _op("transpose", (self,), perm=perm)

    def permute(self, *axes):
        return _op("transpose", (self,), perm=_shape_arg(axes) if axes else ())

    @property
    def T(self):
        return _op("transpose", (self,), perm=tuple(reversed(range(self.ndim))))

    @property
    def mT(self):
        perm = list(range(self.ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return _op("transpose", (self,), perm=tuple(perm))

    def squeeze(self, axis=None):
        return _op("squeeze", (self,), axis=_axes(axis))

    def unsqueeze(self, dim):
        return _op("expand_dims", (self,), axis=dim)

    def expand_dims(self, axis):
        return _op("expand_dims", (self,), axis=axis)

    def flatten(self, start_dim=0, end_dim=-1):
        return _op("flatten", (self,), start_dim=start_dim, end_dim=end_dim)

    def ravel(self):
        return self.flatten()

    def broadcast_to(self, shape):
        return _op("broadcast_to", (self,), shape=tuple(shape))

    def expand_as(self, other):
        return self.broadcast_to(other.shape)

    def tile(self, reps):
        return _op("tile", (self,), reps=_axes(reps))

    def swapaxes(self, a, b):
        perm = list(range(self.ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return _op("transpose", (self,), perm=tuple(perm))

    # ---- math ----------------------------------------------------------------------------------
    def abs(self):
        return _op("abs", (self,))

    def exp(self):
        return _op("exp", (self,))

    def log(self):
        return _op("log", (self,))

    def sqrt(self):
        return _op("sqrt", (self,))

    def square(self):
        return _op("square", (self,))

    def sigmoid(self):
        return _op("sigmoid", (self,))

    def tanh(self):
        return _op("tanh", (self,))

    def relu(self):
        return _op("relu", (self,))

    def floor(self):
        return _op("floor", (self,))

    def ceil(self):
        return _op("ceil", (self,))

    def round(self):
        return _op("round", (self,))

    def sign(self):
        return _op("sign", (self,))

    def neg(self):
        return -self

    def clamp(self, min=None, max=None):
        return _op("clamp", (self,), min=min, max=max)

    clip = clamp

    def matmul(self, other):
        return self @ other

    def pow(self, exponent):
        return self ** exponent

    def logical_not(self):
        return _op("logical_not", (self,))

    # ---- reductions ----------------------------------------------------------------------------
    def sum(self, axis=None, keepdims=False, dtype=None):
        out = _op("sum", (self,), axis=_axes(axis), keepdims=keepdims)
        return out if dtype is None else out.astype(dtype)

    def mean(self, axis=None, keep_dims=False, keepdims=None):
        return _op("mean", (self,), axis=_axes(axis), keepdims=_kd(keep_dims, keepdims))

    def prod(self, axis=None, keep_dims=False, keepdims=None):
        return _op("prod", (self,), axis=_axes(axis), keepdims=_kd(keep_dims, keepdims))

    def max(self, axis=None, keepdims=False):
        return _op("max", (self,), axis=_axes(axis), keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return _op("min", (self,), axis=_axes(axis), keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        return _op("argmax", (self,), axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return _op("argmin", (self,), axis=axis, keepdims=keepdims)

    def all(self, axis=None, keep_dims=False, keepdims=None):
        return _op("all", (self,), axis=_axes(axis), keepdims=_kd(keep_dims, keepdims))

    def any(self, axis=None, keep_dims=False, keepdims=None):
        return _op("any", (self,), axis=_axes(axis), keepdims=_kd(keep_dims, keepdims))

    def var(self, axis=None, ddof=0, keepdims=False):
        return _op("var", (self,), axis=_axes(axis), keepdims=keepdims, ddof=ddof)

    def std(self, axis=None, ddof=0, keepdims=False):
        return _op("std", (self,), axis=_axes(axis), keepdims=keepdims, ddof=ddof)

    def cumsum(self, axis=0):
        return _op("cumsum", (self,), axis=axis)

    def softmax(self, axis=-1):
        return _op("softmax", (self,), axis=axis)

    def sort(self, axis=-1, descending=False):
        return _op("sort", (self,), axis=axis, descending=descending)

    def topk(self, k, axis=-1, largest=True, sorted=True):
        return _op("topk", (self,), k=k, axis=axis, largest=largest, sorted=sorted)


def _kd(keep_dims, keepdims):
    return bool(keep_dims if keepdims is None else keepdims)


_C._register(Tensor, _dt._ALL)
