"""pijit.Tensor: the user-facing tensor.

The C base (`pijit._C.TensorBase`, pyext/tensor_object.cc) holds the data and implements the hot
paths: construction, operators, comparisons, indexing, the buffer protocol and conversions. This
class adds the long tail of methods; each one calls registry ops (one where one does the work),
so eager execution and capture see the same operations. MindSpore's signatures throughout.
"""
from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op, axes as _axes, shape_arg as _shape_arg


class _NotAMatrixError(ValueError, AttributeError):
    """Tensor.mT of a tensor with fewer than 2 dims. A ValueError, as MindSpore's x.mT
    (x.swapaxes(-2, -1)) raises, and an AttributeError, so hasattr(t, "mT") answers False."""


class Tensor(_C.TensorBase):
    """Tensor(input_data=None, dtype=None, shape=None): an n-dimensional array.

    input_data may be a number, a nested list/tuple, another Tensor or any object with the buffer
    protocol (numpy arrays, array.array, memoryview); the data is copied. Python floats become
    float32 and ints int64 unless dtype says otherwise.

    `x += y` (and -=, *=, /=, //=, %=, **=, @=) is MindSpore's `x = x + y`: a new tensor, other
    names of x keep the old one. MindSpore's switch JIT_ENABLE_AUGASSIGN_INPLACE (in
    pijit._extends.parse.compile_config, or MS_JIT=JIT_ENABLE_AUGASSIGN_INPLACE:1) makes += -= *=
    /= //= write into x; add_(), sub_(), mul_(), div_(), copy_(), fill_(), zero_() always do.
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
    def init_data(self, slice_index=None, shape=None, opt_shard_group=None):
        """MindSpore materialises lazily initialised tensors here; pijit's are made at once."""
        return self

    @staticmethod
    def from_numpy(array):
        """MindSpore's Tensor.from_numpy(array): a tensor of a numpy array's data and dtype.
        pijit copies the data (MindSpore shares a C-contiguous array's memory)."""
        if not hasattr(array, "__array_interface__"):
            raise TypeError("Tensor.from_numpy expects a numpy.ndarray, got %s"
                            % type(array).__name__)
        return Tensor(array)

    def asnumpy(self):
        """A numpy array with a copy of the data."""
        try:
            import numpy
        except ImportError:
            raise ImportError("Tensor.asnumpy() needs numpy, which is not installed for this "
                              "Python; use Tensor.tolist(), or memoryview(tensor) for zero-copy "
                              "access") from None
        if self.dtype is _dt.bfloat16:  # numpy has no bfloat16 (MindSpore refuses the same way)
            raise TypeError("Tensor.asnumpy(): numpy has no bfloat16; convert the tensor with "
                            ".astype(mindspore.float32) first")
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

    def half(self):
        return self.astype(_dt.float16)

    def bfloat16(self):
        return self.astype(_dt.bfloat16)

    def copy(self):
        return _op("copy", (self,))

    def clone(self):
        return _op("copy", (self,))

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

    # Its int arguments become the op's shape attribute and nothing else: under capture, a Python
    # int there that changes between calls is a symbol (a plan per value), not a constant.
    reshape.__pijit_shape_args__ = True

    def view(self, *shape):
        """MindSpore's Tensor.view: the same as reshape (a non-contiguous tensor is copied, not
        refused as PyTorch's view refuses it)."""
        return _op("reshape", (self,), shape=_shape_arg(shape))

    view.__pijit_shape_args__ = True

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
    def real(self):
        return _op("real", (self,))

    @property
    def imag(self):
        return _op("imag", (self,))

    def conj(self):
        return _op("conj", (self,))

    def is_complex(self):
        return self.dtype in (_dt.complex64, _dt.complex128)

    @property
    def mT(self):
        if self.ndim < 2:
            raise _NotAMatrixError("Tensor.mT swaps the last two dims and needs at least 2, got a "
                                   "%d-D tensor" % self.ndim)
        perm = list(range(self.ndim))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return _op("transpose", (self,), perm=tuple(perm))

    def squeeze(self, axis=None):
        return _op("squeeze", (self,), axis=_axes(axis))

    def unsqueeze(self, dim):
        return _op("expand_dims", (self,), axis=dim)

    def expand_dims(self, axis):
        return _op("expand_dims", (self,), axis=axis)

    def flatten(self, order="C", *more, start_dim=0, end_dim=-1):
        """MindSpore's Tensor.flatten(order='C', *, start_dim=0, end_dim=-1); the newer overload
        flatten(start_dim=0, end_dim=-1), with the dims positional, is accepted too."""
        from pijit.ops import functional as F
        return F._flatten("Tensor.flatten", self, order, more, start_dim, end_dim)

    def ravel(self):
        return self.flatten()

    def broadcast_to(self, shape):
        return _op("broadcast_to", (self,), shape=tuple(shape))

    def expand_as(self, other):
        return self.broadcast_to(other.shape)

    def tile(self, reps):
        return _op("tile", (self,), reps=_axes(reps))

    def repeat(self, repeats, axis=None):
        """MindSpore's Tensor.repeat(repeats, axis=None), numpy.repeat's meaning: each element
        repeated `repeats` times along `axis` (None: of the flattened tensor, giving 1-D); a
        tuple/list gives one count per element."""
        from pijit.ops import functional as F
        x = self
        if axis is None:
            x, axis = _op("flatten", (x,), start_dim=0, end_dim=-1), 0
        F._check_dim("Tensor.repeat", "axis", axis, x.ndim)
        if x.ndim == 0:
            x = _op("reshape", (x,), shape=(1,))
        axis %= x.ndim
        n = x.shape[axis]
        if isinstance(repeats, (list, tuple)) and len(repeats) == 1:
            repeats = repeats[0]
        if F._is_int(repeats):
            if repeats < 0:
                raise ValueError("Tensor.repeat: repeats must be non-negative, got %d" % repeats)
            # (.., n, ..) -> (.., n, 1, ..) -> broadcast (.., n, r, ..) -> (.., n*r, ..)
            y = _op("expand_dims", (x,), axis=axis + 1)
            shape = list(y.shape)
            shape[axis + 1] = repeats
            y = _op("broadcast_to", (y,), shape=tuple(shape))
            return _op("flatten", (y,), start_dim=axis, end_dim=axis + 1)
        if not isinstance(repeats, (list, tuple)) or not all(F._is_int(r) for r in repeats):
            raise TypeError("Tensor.repeat: repeats must be an int or a tuple/list of ints, got %r"
                            % (repeats,))
        if len(repeats) != n or any(r < 0 for r in repeats):
            raise ValueError("Tensor.repeat: repeats %r must hold %d non-negative counts (one per "
                             "element along axis %d)" % (tuple(repeats), n, axis))
        parts = []
        for piece, r in zip(F.split(x, 1, axis), repeats):
            if r:
                shape = list(piece.shape)
                shape[axis] = r
                parts.append(_op("broadcast_to", (piece,), shape=tuple(shape)))
        if not parts:  # every count 0: the empty slice along axis
            return _op("split", (x,), indices=(0,), axis=axis)[0]
        return parts[0] if len(parts) == 1 else _op("concat", tuple(parts), axis=axis)

    def split(self, split_size_or_sections, axis=0):
        """MindSpore's Tensor.split; see ops.split."""
        from pijit.ops import functional as F
        return F.split(self, split_size_or_sections, axis)

    def swapaxes(self, a, b):
        perm = list(range(self.ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return _op("transpose", (self,), perm=tuple(perm))

    # ---- in place ------------------------------------------------------------------------------
    # MindSpore's methods ending in `_` write into the tensor (every name of it sees the change)
    # and return it, whatever JIT_ENABLE_AUGASSIGN_INPLACE says (that decides only `x += y`,
    # pijit/_extends/parse/compile_config.py). Each eager method writes what its `__pijit_inplace__`
    # twin computes; capture traces the twin and makes the write (capture/sim_effects.cc).
    def add_(self, other, *, alpha=1):
        """self = self + alpha * other, written in place; returns self."""
        self[...] = _add_value(self, other, alpha=alpha)
        return self

    def sub_(self, other, *, alpha=1):
        """self = self - alpha * other, written in place; returns self."""
        self[...] = _sub_value(self, other, alpha=alpha)
        return self

    def mul_(self, other):
        """self = self * other, written in place; returns self."""
        self[...] = _mul_value(self, other)
        return self

    def div_(self, other, *, rounding_mode=None):
        """self = ops.div(self, other, rounding_mode=...), written in place; returns self."""
        self[...] = _div_value(self, other, rounding_mode=rounding_mode)
        return self

    def floor_divide_(self, other):
        """self = self // other, written in place; returns self."""
        self[...] = _floor_divide_value(self, other)
        return self

    def copy_(self, src, non_blocking=False):
        """Writes src (broadcast to self's shape, cast to its dtype) into self; returns self."""
        self[...] = _copy_value(self, src, non_blocking)
        return self

    def fill_(self, value):
        """Writes value (a number or a 0-d Tensor) into every element; returns self."""
        self[...] = _fill_value(self, value)
        return self

    def zero_(self):
        """Writes zeros into every element; returns self."""
        self[...] = _zero_value(self)
        return self

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

    def round(self, decimals=0):
        """MindSpore's Tensor.round(decimals=0); see ops.round."""
        if decimals == 0 and not isinstance(decimals, bool):
            return _op("round", (self,))
        from pijit.ops import functional as F
        return F.round(self, decimals=decimals)

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
    def sum(self, axis=None, dtype=None, keepdims=False, initial=None, *, dim=None, keepdim=None):
        """MindSpore's Tensor.sum(axis=None, dtype=None, keepdims=False, initial=None), and its
        newer overload sum(dim=None, keepdim=False, *, dtype=None): a bool second argument is
        keepdim (it can never be a dtype). dtype converts the input first; initial is added."""
        if dtype is None and initial is None and dim is None and keepdim is None and \
                keepdims.__class__ is bool:  # the common call, without the argument juggling
            return _op("sum", (self,), axis=_axes(axis), keepdims=keepdims)
        if isinstance(dtype, bool):
            if keepdims is not False:
                raise TypeError("Tensor.sum() got keepdim both as the second argument and as "
                                "keepdims")
            dtype, keepdims = None, dtype
        from pijit.ops import functional as F
        axis = F._either("Tensor.sum", "axis", axis, "dim", dim, None)
        keepdims = F._either("Tensor.sum", "keepdims", keepdims, "keepdim", keepdim, False)
        x = F._with_dtype(self, dtype)
        out = _op("sum", (x,), axis=_axes(axis), keepdims=F._check_bool("Tensor.sum", "keepdims",
                                                                      keepdims))
        return out if initial is None else out + initial

    def mean(self, axis=None, keep_dims=False, keepdims=None):
        return _op("mean", (self,), axis=_axes(axis), keepdims=_kd(keep_dims, keepdims))

    def prod(self, axis=None, keep_dims=False, dtype=None, *, keepdims=None, dim=None,
             keepdim=None):
        """MindSpore's Tensor.prod(axis=None, keep_dims=False, dtype=None); keepdims= and the
        newer dim=/keepdim= are accepted as the same arguments."""
        from pijit.ops import functional as F
        axis = F._either("Tensor.prod", "axis", axis, "dim", dim, None)
        keep_dims = F._either("Tensor.prod", "keep_dims", keep_dims, "keepdims", keepdims, False)
        keep_dims = F._either("Tensor.prod", "keep_dims", keep_dims, "keepdim", keepdim, False)
        return F.prod(self, axis, keep_dims, dtype)

    def max(self, axis=None, keepdims=False, *, initial=None, where=True, return_indices=False):
        """MindSpore's Tensor.max: the maximum (not a tuple, unlike ops.max) over `axis`: None
        (every element; keepdims, initial and where then have no effect, as MindSpore
        documents), an int, or a tuple/list of ints. return_indices=True (one int axis, or None)
        returns (values, indices) as ops.max does."""
        return _max_min(self, "max", axis, keepdims, initial, where, return_indices)

    def min(self, axis=None, keepdims=False, *, initial=None, where=True, return_indices=False):
        """MindSpore's Tensor.min; as Tensor.max."""
        return _max_min(self, "min", axis, keepdims, initial, where, return_indices)

    def amax(self, axis=None, keepdims=False, *, initial=None, where=None):
        """MindSpore's Tensor.amax: the maximum over `axis` (None: every axis, an int or a tuple);
        initial and where as Tensor.max."""
        return _max_min(self, "max", axis, keepdims, initial, True if where is None else where, False)

    def amin(self, axis=None, keepdims=False, *, initial=None, where=None):
        """MindSpore's Tensor.amin; as Tensor.amax."""
        return _max_min(self, "min", axis, keepdims, initial, True if where is None else where, False)

    def maximum(self, other):
        """MindSpore's Tensor.maximum: the elementwise larger of self and other (broadcast)."""
        from pijit.ops import functional as F
        return F.maximum(self, other)

    def minimum(self, other):
        """MindSpore's Tensor.minimum: the elementwise smaller of self and other (broadcast)."""
        from pijit.ops import functional as F
        return F.minimum(self, other)

    def register_hook(self, hook_fn):
        """MindSpore's Tensor.register_hook: hook_fn(grad) is called with the gradient taken with
        respect to this tensor (it being an input of grad, value_and_grad or GradOperation) and
        may return a Tensor that replaces it (None keeps it). Hooks run in registration order; the
        returned handle's remove() takes one off. (Hooks on intermediate results are not run.)"""
        from pijit import parameter as _param
        if not callable(hook_fn):
            raise TypeError("Tensor.register_hook: the 'hook_fn' must be a function, but got %s"
                            % type(hook_fn).__name__)
        hooks = self.__dict__.get("_grad_hooks")
        if not hooks:
            if hooks is None:
                from collections import OrderedDict
                hooks = self._grad_hooks = OrderedDict()
            _param.hooks_registered[0] += 1
        key = object()
        hooks[key] = hook_fn
        return _param._HookHandle(self, key)

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

    def cumsum(self, axis=None, dtype=None, *, dim=None):
        """MindSpore's Tensor.cumsum(axis=None, dtype=None): axis None runs over the flattened
        tensor. The newer dim= keyword is accepted as axis."""
        from pijit.ops import functional as F
        return F.cumsum(self, F._either("Tensor.cumsum", "axis", axis, "dim", dim, None), dtype)

    def softmax(self, axis=-1):
        return _op("softmax", (self,), axis=axis)

    def sort(self, dim=-1, descending=False, stable=False, *, axis=None):
        """MindSpore's Tensor.sort(dim=-1, descending=False, stable=False) -> (values, indices);
        the older keyword axis= is accepted. pijit's sort is always stable."""
        from pijit.ops import functional as F
        dim = F._either("Tensor.sort", "dim", dim, "axis", axis, -1)
        F._check_bool("Tensor.sort", "stable", stable)
        return F.sort(self, dim, descending)

    def topk(self, k, dim=-1, largest=True, sorted=True, *, axis=None):
        """MindSpore's Tensor.topk(k, dim=-1, largest=True, sorted=True) -> (values, indices);
        pijit's earlier keyword axis= is accepted."""
        from pijit.ops import functional as F
        dim = F._either("Tensor.topk", "dim", dim, "axis", axis, -1)
        return _op("topk", (self,), k=k, axis=dim, largest=largest, sorted=sorted)


def _kind(dtype):
    """numpy's dtype categories, ordered as its same_kind casting reads them."""
    if dtype is _dt.bool_:
        return 0
    if dtype.is_floating_point:
        return 2
    return 3 if dtype.name.startswith("complex") else 1


def _written(x, r, who):
    """r as x's in-place result: of x's shape, cast to x's dtype where numpy's same_kind rule
    allows (the TypeError and ValueError numpy's in-place ufuncs raise otherwise)."""
    if r.dtype is not x.dtype:
        if _kind(r.dtype) > _kind(x.dtype):
            raise TypeError("Cannot cast ufunc '%s' output from dtype('%s') to dtype('%s') with "
                            "casting rule 'same_kind'" % (who, r.dtype.name, x.dtype.name))
        r = r.astype(x.dtype)
    if tuple(r.shape) != tuple(x.shape):
        raise ValueError("non-broadcastable output operand with shape %s doesn't match the "
                         "broadcast shape %s" % (tuple(x.shape), tuple(r.shape)))
    return r


def _scaled(other, alpha):
    return other if alpha == 1 else other * alpha


def _add_value(x, other, *, alpha=1):
    return _written(x, x + _scaled(other, alpha), "add")


def _sub_value(x, other, *, alpha=1):
    return _written(x, x - _scaled(other, alpha), "subtract")


def _mul_value(x, other):
    return _written(x, x * other, "multiply")


def _div_value(x, other, *, rounding_mode=None):
    from pijit.ops import functional as F
    return _written(x, F.div(x, other, rounding_mode=rounding_mode), "divide")


def _floor_divide_value(x, other):
    return _written(x, x // other, "floor_divide")


def _copy_value(x, src, non_blocking=False):
    from pijit.ops import functional as F
    if not isinstance(src, _C.TensorBase):
        raise TypeError("Tensor.copy_: src must be a Tensor, got %s" % type(src).__name__)
    if src.dtype is not x.dtype:
        src = src.astype(x.dtype)
    if tuple(src.shape) != tuple(x.shape):
        src = F.broadcast_to(src, tuple(x.shape))
    return src.copy()  # (a view of src would change with it)


def _fill_value(x, value):
    from pijit.ops import functional as F
    if isinstance(value, _C.TensorBase):
        if value.ndim != 0:
            raise RuntimeError("Tensor.fill_: value must be a number or a 0-d Tensor, got a Tensor "
                               "of shape %s" % (tuple(value.shape),))
        return F.broadcast_to(value.astype(x.dtype), tuple(x.shape)).copy()
    if not isinstance(value, (int, float, complex)):  # (bools are ints)
        raise TypeError("Tensor.fill_: value must be a number or a 0-d Tensor, got %s"
                        % type(value).__name__)
    return F.broadcast_to(Tensor(value, x.dtype), tuple(x.shape)).copy()


def _zero_value(x):
    return _fill_value(x, 0)


for _name in ("add_", "sub_", "mul_", "div_", "floor_divide_", "copy_", "fill_", "zero_"):
    getattr(Tensor, _name).__pijit_inplace__ = globals()["_%s_value" % _name[:-1]]
del _name


def _kd(keep_dims, keepdims):
    return bool(keep_dims if keepdims is None else keepdims)


def _max_min(x, who, axis, keepdims, initial, where, return_indices):
    from pijit.ops import functional as F
    if not isinstance(axis, (list, tuple)):
        return F._extreme(who, x, axis, keepdims, initial, where,
                          F._check_bool("Tensor." + who, "return_indices", return_indices))
    if return_indices:
        raise ValueError("Tensor.%s: return_indices must be False when axis is a tuple/list, got "
                         "axis=%r" % (who, axis))
    x = F._initial_and_where(who, x, initial, where)
    return _op(who, (x,), axis=tuple(axis), keepdims=F._check_bool("Tensor." + who, "keepdims",
                                                                   keepdims))


_C._register(Tensor, _dt._ALL)
