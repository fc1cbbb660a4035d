"""More of MindSpore's primitive classes (model-zoo staples: StridedSlice, Split, ArgMaxWithValue,
Slice, AssignAdd, InplaceAdd, LayerNorm, SparseSoftmaxCrossEntropyWithLogits, MaxPool, TopK, ...)
and the functional forms MindSpore pairs with some of them (ops.strided_slice, ops.assign_add,
ops.inplace_add, ops.tuple_to_array, ...).

Every class is built from registry ops (one declaration serves eager, capture and autodiff) and
plain Python on shapes and attributes, never on tensor data: inside jit the tensors are symbolic.
Where pijit has no kernel, the op is composed and the docstring says how (GatherD from advanced
indexing, ScatterNd from index_add, Invert as -x - 1, the resizes as separable gathers).
Errors follow MindSpore's classes: TypeError for a wrong type, ValueError for a wrong value, with
the message naming the primitive and the argument ("For 'Split', ...").
"""
import builtins as _b

from pijit import _C
from pijit import creation as _creation
from pijit import dtype as _dt
from pijit._ops_common import op as _op, as_tensor as _t
from pijit._state import runtime_state
from pijit.ops import functional as F
from pijit.ops import misc as M
from pijit.ops import nn_functional as NF
from pijit.ops.primitives import Primitive, Add

_Tensor = _C.TensorBase


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _tensor(who, name, x):
    if not isinstance(x, _Tensor):
        raise TypeError("For '%s', the input '%s' must be a Tensor, but got %s"
                        % (who, name, type(x).__name__))
    return x


def _int(who, name, v):
    if not _is_int(v):
        raise TypeError("For '%s', the '%s' must be an int, but got %r" % (who, name, v))
    return v


def _bool(who, name, v):
    if not isinstance(v, bool):
        raise TypeError("For '%s', the '%s' must be a bool, but got %r" % (who, name, v))
    return v


def _ints(who, name, v):
    if not isinstance(v, (tuple, list)) or not _b.all(_is_int(e) for e in v):
        raise TypeError("For '%s', the '%s' must be a tuple of ints, but got %r" % (who, name, v))
    return tuple(v)


def _axis(who, name, axis, ndim):
    _int(who, name, axis)
    n = _b.max(ndim, 1)
    if not -n <= axis < n:
        raise ValueError("For '%s', the '%s' must be in range [%d, %d), but got %d"
                         % (who, name, -n, n, axis))
    return axis % n


def _floating(who, name, x):
    if not x.dtype.is_floating_point:
        raise TypeError("For '%s', the dtype of '%s' must be a floating type, but got %s"
                        % (who, name, x.dtype))
    return x


def _is_complex(dtype):
    return str(dtype).lower().startswith("complex")


def _integral(who, name, x):
    if x.dtype.is_floating_point or x.dtype is _dt.bool_ or _is_complex(x.dtype):
        raise TypeError("For '%s', the dtype of '%s' must be an integer type, but got %s"
                        % (who, name, x.dtype))
    return x


def _flip(x, axis):
    """x reversed along `axis` (a basic slice with step -1: a view, captured as one op)."""
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


def _take(x, axis, idx):
    """x's slices along `axis` at the constant int list `idx` (index_select)."""
    return _op("index_select", (x, _t(_creation.tensor(list(idx), _dt.int64))), axis=axis)


# ----- slicing and shapes -----------------------------------------------------------------

class StridedSlice(Primitive):
    """StridedSlice(begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
    shrink_axis_mask=0)(input_x, begin, end, strides): TensorFlow's strided slice. Bit i of a
    mask applies to entry i of begin/end/strides: begin_mask/end_mask ignore begin[i]/end[i]
    (the widest range), ellipsis_mask (one bit at most) stands for every dim not named,
    new_axis_mask inserts a dim of 1, shrink_axis_mask takes index begin[i] and drops the dim.
    Dims after the spec are taken whole. Built as one Python subscript (a view)."""

    def __init__(self, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                 shrink_axis_mask=0):
        masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                     new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
        for k, v in masks.items():
            _int("StridedSlice", k, v)
            if v < 0:
                raise ValueError("For 'StridedSlice', the '%s' must be non-negative, but got %d"
                                 % (k, v))
        if ellipsis_mask & (ellipsis_mask - 1):
            raise ValueError("For 'StridedSlice', only one bit of 'ellipsis_mask' may be set, "
                             "but got %d" % ellipsis_mask)
        super().__init__(**masks)

    def __call__(self, input_x, begin, end, strides):
        return _strided_slice(input_x, begin, end, strides, **self.attrs)


def _strided_slice(input_x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                   new_axis_mask=0, shrink_axis_mask=0):
    who = "StridedSlice"
    x = _tensor(who, "input_x", input_x)
    begin, end, strides = (_ints(who, "begin", begin), _ints(who, "end", end),
                           _ints(who, "strides", strides))
    if not len(begin) == len(end) == len(strides):
        raise ValueError("For 'StridedSlice', 'begin', 'end' and 'strides' must have the same "
                         "length, but got %d, %d and %d" % (len(begin), len(end), len(strides)))
    items, named = [], 0  # the subscript; how many input dims it names (not counting ...)
    ellipsis = False
    for i in range(len(begin)):
        bit = 1 << i
        if ellipsis_mask & bit:
            items.append(Ellipsis)
            ellipsis = True
        elif new_axis_mask & bit:
            items.append(None)
        elif shrink_axis_mask & bit:
            items.append(begin[i])
            named += 1
        else:
            if strides[i] == 0:
                raise ValueError("For 'StridedSlice', the 'strides' cannot contain 0, but got %r"
                                 % (strides,))
            items.append(slice(None if begin_mask & bit else begin[i],
                               None if end_mask & bit else end[i], strides[i]))
            named += 1
    if named > x.ndim:
        raise ValueError("For 'StridedSlice', the slice names %d dims of a %d-D input"
                         % (named, x.ndim))
    # A shrunk index must be inside its dim (Python's subscript would raise IndexError).
    dim = 0
    for it in items:
        if it is Ellipsis:
            dim += x.ndim - named
        elif it is None:
            continue
        else:
            if _is_int(it) and not -x.shape[dim] <= it < x.shape[dim]:
                raise ValueError("For 'StridedSlice', the shrunk index %d is out of range for "
                                 "dim %d of size %d" % (it, dim, x.shape[dim]))
            dim += 1
    if not ellipsis:
        items.append(Ellipsis)  # the dims after the spec, whole
    return x[tuple(items)]


def strided_slice(input_x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0):
    """MindSpore's ops.strided_slice: StridedSlice's masks as arguments."""
    return StridedSlice(begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                        shrink_axis_mask)(input_x, begin, end, strides)


class Slice(Primitive):
    """Slice()(input_x, begin, size): the block starting at `begin` with `size` elements per dim;
    a size of -1 takes the rest of that dim."""

    def __call__(self, input_x, begin, size):
        x = _tensor("Slice", "input_x", input_x)
        begin, size = _ints("Slice", "begin", begin), _ints("Slice", "size", size)
        if len(begin) != x.ndim or len(size) != x.ndim:
            raise ValueError("For 'Slice', the length of 'begin' and 'size' must equal the rank "
                             "of 'input_x' (%d), but got %d and %d" % (x.ndim, len(begin), len(size)))
        items = []
        for d, (b, s) in enumerate(zip(begin, size)):
            n = x.shape[d]
            if s == -1:
                s = n - b
            if b < 0 or s < 0 or b + s > n:
                raise ValueError("For 'Slice', begin[%d] + size[%d] (%d + %d) must lie within "
                                 "dim %d of size %d (begin >= 0, size >= 0 or -1)"
                                 % (d, d, b, s, d, n))
            items.append(slice(b, b + s))
        return x[tuple(items)]


class Split(Primitive):
    """Split(axis=0, output_num=1)(input_x): `output_num` equal pieces along `axis` (a tuple);
    the dim must divide evenly."""

    def __init__(self, axis=0, output_num=1):
        _int("Split", "axis", axis)
        _int("Split", "output_num", output_num)
        if output_num <= 0:
            raise ValueError("For 'Split', the 'output_num' must be positive, but got %d"
                             % output_num)
        super().__init__(axis=axis, output_num=output_num)

    def __call__(self, input_x):
        x = _tensor("Split", "input_x", input_x)
        axis = _axis("Split", "axis", self.attrs["axis"], x.ndim)
        n, k = x.shape[axis], self.attrs["output_num"]
        if n % k:
            raise ValueError("For 'Split', the dim %d of size %d cannot be split into "
                             "'output_num' %d equal pieces" % (axis, n, k))
        if k == 1:
            return (x[...],)
        return F.split(x, n // k, axis)


class Unstack(Primitive):
    """Unstack(axis=0, num=None)(input_x): the tuple of slices along `axis`, that dim removed."""

    def __init__(self, axis=0, num=None):
        _int("Unstack", "axis", axis)
        super().__init__(axis=axis, num=num)

    def __call__(self, input_x):
        x = _tensor("Unstack", "input_x", input_x)
        if x.ndim == 0:
            raise ValueError("For 'Unstack', the input must have rank >= 1")
        axis = _axis("Unstack", "axis", self.attrs["axis"], x.ndim)
        num = self.attrs["num"]
        if num is not None and num != x.shape[axis]:
            raise ValueError("For 'Unstack', the 'num' (%r) must equal the size of dim %d (%d)"
                             % (num, axis, x.shape[axis]))
        pre = (slice(None),) * axis
        return tuple(x[pre + (i,)] for i in range(x.shape[axis]))


class Flatten(Primitive):
    """Flatten()(input_x): (N, ...) -> (N, X), X the product of the other dims (1-D: (N, 1))."""

    def __call__(self, input_x):
        x = _tensor("Flatten", "input_x", input_x)
        if x.ndim == 0:
            raise ValueError("For 'Flatten', the rank of 'input_x' must be >= 1, but got 0")
        if x.ndim == 1:
            return F.reshape(x, (x.shape[0], 1))
        return _op("flatten", (x,), start_dim=1, end_dim=-1)


class ZerosLike(Primitive):
    """ZerosLike()(input_x): zeros of the input's shape and dtype."""

    def __call__(self, input_x):
        return _creation.zeros_like(_tensor("ZerosLike", "input_x", input_x))


class OnesLike(Primitive):
    """OnesLike()(input_x): ones of the input's shape and dtype."""

    def __call__(self, input_x):
        return _creation.ones_like(_tensor("OnesLike", "input_x", input_x))


class BroadcastTo(Primitive):
    """BroadcastTo(shape)(input_x); a -1 in `shape` keeps the input's size of that dim."""

    def __init__(self, shape):
        super().__init__(shape=_ints("BroadcastTo", "shape", shape))

    def __call__(self, input_x):
        x = _tensor("BroadcastTo", "input_x", input_x)
        shape = list(self.attrs["shape"])
        off = len(shape) - x.ndim
        if off < 0:
            raise ValueError("For 'BroadcastTo', the target shape %r has fewer dims than the "
                             "input's %r" % (tuple(shape), x.shape))
        for i, s in enumerate(shape):
            if s == -1:
                if i < off:
                    raise ValueError("For 'BroadcastTo', -1 in 'shape' at a dim the input lacks")
                shape[i] = x.shape[i - off]
        return F.broadcast_to(x, tuple(shape))


class ReverseV2(Primitive):
    """ReverseV2(axis)(input_x): the input reversed along each axis in `axis`."""

    def __init__(self, axis):
        super().__init__(axis=_ints("ReverseV2", "axis", axis))

    def __call__(self, input_x):
        x = _tensor("ReverseV2", "input_x", input_x)
        axes = [_axis("ReverseV2", "axis", a, x.ndim) for a in self.attrs["axis"]]
        if len(set(axes)) != len(axes):
            raise ValueError("For 'ReverseV2', 'axis' names a dim twice: %r" % (self.attrs["axis"],))
        for a in axes:
            x = _flip(x, a)
        return x


class Identity(Primitive):
    """Identity()(x): a copy of x."""

    def __call__(self, x):
        return _op("copy", (_tensor("Identity", "x", x),))


class Pad(Primitive):
    """Pad(paddings)(input_x): zero padding, ((before, after), ...) per dim."""

    def __init__(self, paddings):
        if not isinstance(paddings, (tuple, list)) or not _b.all(
                isinstance(p, (tuple, list)) and len(p) == 2 and _b.all(_is_int(v) for v in p)
                for p in paddings):
            raise TypeError("For 'Pad', the 'paddings' must be a tuple of (before, after) int "
                            "pairs, but got %r" % (paddings,))
        if _b.any(v < 0 for p in paddings for v in p):
            raise ValueError("For 'Pad', the 'paddings' must be non-negative, got %r" % (paddings,))
        super().__init__(paddings=tuple(tuple(p) for p in paddings))

    def __call__(self, input_x):
        x = _tensor("Pad", "input_x", input_x)
        pads = self.attrs["paddings"]
        if len(pads) != x.ndim:
            raise ValueError("For 'Pad', the 'paddings' has %d pairs for a %d-D input"
                             % (len(pads), x.ndim))
        flat = []
        for before, after in reversed(pads):  # ops.pad takes the last dim first
            flat += [before, after]
        return NF.pad(x, tuple(flat))


# ----- reductions and indices ---------------------------------------------------------------

class _ArgWithValue(Primitive):
    _which = "max"

    def __init__(self, axis=0, keep_dims=False):
        _int(self._name(), "axis", axis)
        _bool(self._name(), "keep_dims", keep_dims)
        super().__init__(axis=axis, keep_dims=keep_dims)

    @classmethod
    def _name(cls):
        return cls.__name__

    def __call__(self, input):
        x = _tensor(self.name, "input", input)
        axis = _axis(self.name, "axis", self.attrs["axis"], x.ndim)
        if x.ndim == 0:
            axis = None
        kd = self.attrs["keep_dims"]
        values = _op(self._which, (x,), axis=None if axis is None else (axis,), keepdims=kd)
        index = _op("arg" + self._which, (x,), axis=axis, keepdims=kd)
        return index, values


class ArgMaxWithValue(_ArgWithValue):
    """ArgMaxWithValue(axis=0, keep_dims=False)(input) -> (index, values): the maximum along
    `axis` and its int64 index (the first among equal maxima)."""
    _which = "max"


class ArgMinWithValue(_ArgWithValue):
    """ArgMinWithValue(axis=0, keep_dims=False)(input) -> (index, values), as ArgMaxWithValue."""
    _which = "min"


class Argmin(Primitive):
    """Argmin(axis=-1, output_type=int32)(input_x): indices of the minima along `axis`."""

    def __init__(self, axis=-1, output_type=_dt.int32):
        _int("Argmin", "axis", axis)
        if output_type not in (_dt.int32, _dt.int64):
            raise TypeError("For 'Argmin', the 'output_type' must be int32 or int64, but got %r"
                            % (output_type,))
        super().__init__(axis=axis, output_type=output_type)

    def __call__(self, input_x):
        x = _tensor("Argmin", "input_x", input_x)
        axis = _axis("Argmin", "axis", self.attrs["axis"], x.ndim)
        return F.cast(F.argmin(x, axis), self.attrs["output_type"])


class TopK(Primitive):
    """TopK(sorted=True)(input_x, k) -> (values, int32 indices) of the k largest along the last
    dim."""

    def __init__(self, sorted=True):
        super().__init__(sorted=_bool("TopK", "sorted", sorted))

    def __call__(self, input_x, k):
        x = _tensor("TopK", "input_x", input_x)
        _int("TopK", "k", k)
        n = x.shape[-1] if x.ndim else 1
        if not 0 <= k <= n:
            raise ValueError("For 'TopK', the 'k' must be in [0, %d], but got %d" % (n, k))
        values, indices = F.topk(x, k, -1, True, self.attrs["sorted"])
        return values, F.cast(indices, _dt.int32)


class Sort(Primitive):
    """Sort(axis=-1, descending=False)(x) -> (values, int32 indices); stable."""

    def __init__(self, axis=-1, descending=False):
        _int("Sort", "axis", axis)
        super().__init__(axis=axis, descending=_bool("Sort", "descending", descending))

    def __call__(self, x):
        x = _tensor("Sort", "x", x)
        _axis("Sort", "axis", self.attrs["axis"], x.ndim)
        values, indices = F.sort(x, self.attrs["axis"], self.attrs["descending"])
        return values, F.cast(indices, _dt.int32)


class CumSum(Primitive):
    """CumSum(exclusive=False, reverse=False)(input, axis): the running sum along `axis`;
    exclusive leaves each element out of its own sum, reverse sums from the end."""

    def __init__(self, exclusive=False, reverse=False):
        super().__init__(exclusive=_bool("CumSum", "exclusive", exclusive),
                         reverse=_bool("CumSum", "reverse", reverse))

    def __call__(self, input, axis):
        x = _tensor("CumSum", "input", input)
        if isinstance(axis, _Tensor):
            raise TypeError("For 'CumSum', pijit needs 'axis' as an int (a Tensor axis is data)")
        axis = _axis("CumSum", "axis", axis, x.ndim)
        if self.attrs["reverse"]:
            x = _flip(x, axis)
        out = F.cumsum(x, axis)
        if self.attrs["exclusive"]:
            # shifted by one: a zero first, the last running sum dropped (no cancellation error)
            pre = (slice(None),) * axis
            head = _creation.zeros_like(x[pre + (slice(0, 1),)])
            out = F.concat((head, out[pre + (slice(0, -1),)]), axis)
        if self.attrs["reverse"]:
            out = _flip(out, axis)
        return out


# ----- element-wise --------------------------------------------------------------------------

class TensorAdd(Add):
    """Deprecated MindSpore alias of Add."""


class Invert(Primitive):
    """Invert()(x): bitwise NOT of an integer tensor (the bitwise_not kernel, ops/math2.py)."""

    def __call__(self, x):
        from pijit.ops.math2 import bitwise_not
        return bitwise_not(_integral("Invert", "x", _tensor("Invert", "x", x)))


def _nonfinite(x):
    # |x| < inf is False exactly for inf, -inf and nan
    return F.logical_not(F.abs(x) < float("inf"))


class IsNan(Primitive):
    """IsNan()(x): True where x is NaN."""

    def __call__(self, x):
        x = _tensor("IsNan", "x", x)
        return F.ne(x, x)


class IsInf(Primitive):
    """IsInf()(x): True where x is +inf or -inf."""

    def __call__(self, x):
        x = _tensor("IsInf", "x", x)
        if not x.dtype.is_floating_point:
            return F.ne(x, x)
        return F.eq(F.abs(x), float("inf"))


class IsFinite(Primitive):
    """IsFinite()(x): True where x is neither inf nor NaN."""

    def __call__(self, x):
        x = _tensor("IsFinite", "x", x)
        if not x.dtype.is_floating_point:
            return F.eq(x, x)
        return F.abs(x) < float("inf")


class FloatStatus(Primitive):
    """FloatStatus()(x): float32 [1.] when x holds an inf or NaN, else [0.] (shape (1,))."""

    def __call__(self, x):
        x = _floating("FloatStatus", "x", _tensor("FloatStatus", "x", x))
        bad = F.any(_nonfinite(x))
        return F.reshape(F.cast(bad, _dt.float32), (1,))


class SquaredDifference(Primitive):
    """SquaredDifference()(x, y): (x - y) ** 2."""

    def __call__(self, x, y):
        return F.square(F.sub(x, y))


class Erfc(Primitive):
    """Erfc()(x): 1 - erf(x) (composed)."""

    def __call__(self, x):
        return 1 - F.erf(_tensor("Erfc", "x", x))


class Trunc(Primitive):
    """Trunc()(input_x): rounds towards zero."""

    def __call__(self, input_x):
        x = _tensor("Trunc", "input_x", input_x)
        if not x.dtype.is_floating_point:
            return x[...]
        return F.sign(x) * F.floor(F.abs(x))


class Elu(Primitive):
    """Elu(alpha=1.0)(input_x): x where x > 0, alpha * (exp(x) - 1) elsewhere."""

    def __init__(self, alpha=1.0):
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise TypeError("For 'Elu', the 'alpha' must be a float, but got %r" % (alpha,))
        super().__init__(alpha=float(alpha))

    def __call__(self, input_x):
        x = _floating("Elu", "input_x", _tensor("Elu", "input_x", input_x))
        return F.where(x > 0, x, F.expm1(x) * self.attrs["alpha"])


class Softsign(Primitive):
    """Softsign()(x): x / (1 + |x|)."""

    def __call__(self, x):
        x = _floating("Softsign", "x", _tensor("Softsign", "x", x))
        return x / (F.abs(x) + 1)


class Mish(Primitive):
    """Mish()(x): x * tanh(softplus(x))."""

    def __call__(self, x):
        x = _floating("Mish", "x", _tensor("Mish", "x", x))
        return x * F.tanh(F.softplus(x))


class FastGeLU(Primitive):
    """FastGeLU()(x): x * sigmoid(1.702 x), MindSpore's x / (1 + exp(-1.702 |x|)) *
    exp(0.851 (x - |x|)) written the stable way."""

    def __call__(self, x):
        x = _floating("FastGeLU", "x", _tensor("FastGeLU", "x", x))
        return x * F.sigmoid(x * 1.702)


class Tril(Primitive):
    """Tril(diagonal=0)(x): the lower triangle of the last two dims, the rest zero."""

    _lower = True

    def __init__(self, diagonal=0):
        super().__init__(diagonal=_int(type(self).__name__, "diagonal", diagonal))

    def __call__(self, x):
        x = _tensor(self.name, "x", x)
        if x.ndim < 2:
            raise ValueError("For '%s', the rank of 'x' must be >= 2, but got %d"
                             % (self.name, x.ndim))
        r, c = x.shape[-2], x.shape[-1]
        rows = F.reshape(_creation.arange(r), (r, 1))
        cols = F.reshape(_creation.arange(c), (1, c))
        d = cols - rows
        keep = (d <= self.attrs["diagonal"]) if self._lower else (d >= self.attrs["diagonal"])
        return F.where(keep, x, _creation.zeros_like(x))


class Triu(Tril):
    """Triu(diagonal=0)(x): the upper triangle of the last two dims, the rest zero."""

    _lower = False


class MaskedFill(Primitive):
    """MaskedFill()(input, mask, value): value where the bool mask is True."""

    def __call__(self, input, mask, value):
        x = _tensor("MaskedFill", "input", input)
        m = _tensor("MaskedFill", "mask", mask)
        if m.dtype is not _dt.bool_:
            raise TypeError("For 'MaskedFill', the 'mask' must be a bool Tensor, but got %s"
                            % m.dtype)
        v = F.cast(_t(value), x.dtype)
        out = F.where(m, v, x)
        if out.shape != x.shape:
            raise ValueError("For 'MaskedFill', the 'mask' %r does not broadcast to the input's "
                             "shape %r" % (m.shape, x.shape))
        return out


class L2Normalize(Primitive):
    """L2Normalize(axis=0, epsilon=1e-4)(x): x / sqrt(max(sum(x ** 2, axis), epsilon))."""

    def __init__(self, axis=0, epsilon=1e-4):
        if _is_int(axis):
            axis = (axis,)
        axis = _ints("L2Normalize", "axis", axis)
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
            raise TypeError("For 'L2Normalize', the 'epsilon' must be a float, but got %r"
                            % (epsilon,))
        super().__init__(axis=axis, epsilon=float(epsilon))

    def __call__(self, x):
        x = _floating("L2Normalize", "x", _tensor("L2Normalize", "x", x))
        axes = tuple(_axis("L2Normalize", "axis", a, x.ndim) for a in self.attrs["axis"])
        sq = F.sum(F.square(x), axes, True)
        return x * F.rsqrt(F.maximum(sq, self.attrs["epsilon"]))


class Dense(Primitive):
    """Dense()(x, w, b=None): x @ w.T + b; a 1-D x with a 1-D w gives a scalar."""

    def __call__(self, x, w, b=None):
        x, w = _tensor("Dense", "x", x), _tensor("Dense", "w", w)
        if x.ndim == 0:
            raise ValueError("For 'Dense', the rank of 'x' must be > 0")
        want = 1 if x.ndim == 1 else 2
        if w.ndim != want or w.shape[-1] != x.shape[-1]:
            raise ValueError("For 'Dense', 'w' must be %d-D with last dim %d (that of 'x'), but "
                             "got shape %r" % (want, x.shape[-1], w.shape))
        if b is not None:
            b = _tensor("Dense", "b", b)
            if x.ndim == 1 and b.ndim != 0 or b.ndim > 1 or (b.ndim == 1 and b.shape[0] != w.shape[0]):
                raise ValueError("For 'Dense', 'b' of shape %r does not fit 'w' of shape %r"
                                 % (b.shape, w.shape))
        if x.ndim == 1:
            out = F.sum(x * w)
            return out if b is None else out + b
        if b is not None and b.ndim == 0:
            return NF.dense(x, w) + b
        return NF.dense(x, w, b)


# ----- in-place updates -----------------------------------------------------------------------

def _assign_op(who, variable, value, sign):
    if not isinstance(variable, _Tensor):
        raise TypeError("For '%s', the 'variable' must be a Parameter or Tensor, but got %s"
                        % (who, type(variable).__name__))
    if isinstance(value, bool) or not isinstance(value, (_Tensor, int, float)):
        raise TypeError("For '%s', the 'value' must be a Tensor or a number, but got %s"
                        % (who, type(value).__name__))
    shape = tuple(value.shape) if isinstance(value, _Tensor) else ()
    extra = len(shape) - variable.ndim
    if extra > 0 and _b.all(d == 1 for d in shape[:extra]):
        # MindSpore broadcasts leading 1s away too: a (1,) value adds into a () Parameter
        value = F.reshape(value, shape[extra:])
        shape = shape[extra:]
    fits = len(shape) <= variable.ndim and _b.all(
        v in (1, w) for v, w in zip(reversed(shape), reversed(tuple(variable.shape))))
    new = (variable + value if sign > 0 else variable - value) if fits else None
    if not fits or new.shape != variable.shape:
        raise ValueError("For '%s', the 'value' of shape %r does not broadcast to the variable's "
                         "shape %r" % (who, shape, variable.shape))
    return M._assigned(variable, new)


def assign_add(variable, value):
    """MindSpore's ops.assign_add(variable, value): variable += value in place (value broadcast to
    the variable's shape and cast to its dtype); returns the variable. Under jit the write to a
    Parameter is replayed after the graph, as for ops.assign."""
    variable[...] = _assign_op("AssignAdd", variable, value, 1)
    return variable


def assign_sub(variable, value):
    """MindSpore's ops.assign_sub(variable, value): variable -= value in place; returns it."""
    variable[...] = _assign_op("AssignSub", variable, value, -1)
    return variable


# capture traces these to learn the value written, then makes the write (as ops.assign)
assign_add.__pijit_inplace__ = lambda variable, value: _assign_op("AssignAdd", variable, value, 1)
assign_sub.__pijit_inplace__ = lambda variable, value: _assign_op("AssignSub", variable, value, -1)


class AssignAdd(Primitive):
    """AssignAdd()(variable, value): variable += value in place; returns the variable. Under jit
    the call is a graph break, as Assign() is (ops.assign_add is captured)."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, variable, value):
        return assign_add(variable, value)


class AssignSub(Primitive):
    """AssignSub()(variable, value): variable -= value in place; returns the variable."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, variable, value):
        return assign_sub(variable, value)


def _rows(who, indices, n):
    if _is_int(indices):
        indices = (indices,)
    indices = _ints(who, "indices", indices)
    for i in indices:
        if not 0 <= i < n:
            raise ValueError("For '%s', the 'indices' must be in [0, %d), but got %d" % (who, n, i))
    return indices


def _inplace(who, x, v, indices, mode):
    x, v = _tensor(who, "x", x), _tensor(who, "v", v)
    if x.ndim == 0:
        raise ValueError("For '%s', the rank of 'x' must be >= 1" % who)
    rows = _rows(who, indices, x.shape[0])
    if v.dtype is not x.dtype:
        raise TypeError("For '%s', 'v' must have the dtype of 'x' (%s), but got %s"
                        % (who, x.dtype, v.dtype))
    if v.ndim != x.ndim or v.shape[0] != len(rows) or v.shape[1:] != x.shape[1:]:
        raise ValueError("For '%s', 'v' must have shape %r (one row per index), but got %r"
                         % (who, (len(rows),) + tuple(x.shape[1:]), v.shape))
    idx = _creation.tensor(list(rows), _dt.int64)
    if mode == "update":  # a repeated row takes the last of its values, as applied in order
        last = {}
        for k, r in enumerate(rows):
            last[r] = k
        keep = sorted(last.items())
        return _index_update(x, [r for r, _ in keep], _take(v, 0, [k for _, k in keep]))
    src = v if mode == "add" else F.neg(v)
    work = x if x.dtype.is_floating_point else F.cast(x, _dt.float64)
    src = src if src.dtype is work.dtype else F.cast(src, work.dtype)
    out = _op("index_add", (work, idx, src), axis=0)  # repeated indices add up
    return out if out.dtype is x.dtype else F.cast(out, x.dtype)


def _index_update(x, rows, src):
    """x with rows `rows` (distinct, sorted) replaced by src's rows: the untouched rows and the
    new ones gathered into place by one index_select over their concatenation."""
    n = x.shape[0]
    pos = {r: n + k for k, r in enumerate(rows)}
    order = [pos.get(i, i) for i in range(n)]
    return _take(F.concat((x, src), 0), 0, order)


class InplaceAdd(Primitive):
    """InplaceAdd(indices)(x, v): x with v's rows added to rows `indices` (an int or a tuple;
    repeated rows add up). Returns a new tensor; integers are added in float64 (index_add is
    floating-only), exact below 2**53."""

    def __init__(self, indices):
        if not _is_int(indices):
            _ints("InplaceAdd", "indices", indices)
        super().__init__(indices=indices)

    def __call__(self, x, v):
        return _inplace("InplaceAdd", x, v, self.attrs["indices"], "add")


class InplaceSub(InplaceAdd):
    """InplaceSub(indices)(x, v): x with v's rows subtracted from rows `indices`."""

    def __call__(self, x, v):
        return _inplace("InplaceSub", x, v, self.attrs["indices"], "sub")


class InplaceUpdate(InplaceAdd):
    """InplaceUpdate(indices)(x, v): x with rows `indices` replaced by v's rows."""

    def __call__(self, x, v):
        return _inplace("InplaceUpdate", x, v, self.attrs["indices"], "update")


def inplace_add(x, v, indices):
    """MindSpore's ops.inplace_add(x, v, indices): InplaceAdd(indices)(x, v)."""
    return _inplace("InplaceAdd", x, v, indices, "add")


def inplace_sub(x, v, indices):
    """MindSpore's ops.inplace_sub(x, v, indices): InplaceSub(indices)(x, v)."""
    return _inplace("InplaceSub", x, v, indices, "sub")


def inplace_update(x, v, indices):
    """MindSpore's ops.inplace_update(x, v, indices): InplaceUpdate(indices)(x, v)."""
    return _inplace("InplaceUpdate", x, v, indices, "update")


# ----- gathers and scatters -------------------------------------------------------------------

def _gather_d(who, x, dim, index):
    x, index = _tensor(who, "x", x), _tensor(who, "index", index)
    _integral(who, "index", index)
    if index.ndim != x.ndim:
        raise ValueError("For '%s', 'index' must have the rank of 'x' (%d), but got %d"
                         % (who, x.ndim, index.ndim))
    dim = _axis(who, "dim", dim, x.ndim)
    # advanced indexing with `index` on dim and broadcast aranges elsewhere: out[i][j][k] =
    # x[i][index[i][j][k]][k] for dim 1
    items = []
    for d in range(x.ndim):
        if d == dim:
            items.append(index)
        else:
            shape = [1] * x.ndim
            shape[d] = index.shape[d]
            items.append(F.reshape(_creation.arange(index.shape[d]), tuple(shape)))
    return x[tuple(items)]


class GatherD(Primitive):
    """GatherD()(x, dim, index): out[i][j] = x[index[i][j]][j] (dim 0), x[i][index[i][j]]
    (dim 1), ... ; composed from advanced indexing."""

    def __call__(self, x, dim, index):
        return _gather_d("GatherD", x, dim, index)


def gather_d(x, dim, index):
    """MindSpore's ops.gather_d(x, dim, index), as GatherD()."""
    return _gather_d("GatherD", x, dim, index)


def gather_elements(input, dim, index):
    """MindSpore's ops.gather_elements(input, dim, index), as GatherD()."""
    return _gather_d("gather_elements", input, dim, index)


class ScatterNd(Primitive):
    """ScatterNd()(indices, updates, shape): zeros of `shape` with updates added at `indices`
    (last dim of indices: a position's leading coordinates; repeated positions add up). Composed
    as index_add over the flattened leading dims; integers add in float64."""

    def __call__(self, indices, updates, shape):
        who = "ScatterNd"
        indices = _integral(who, "indices", _tensor(who, "indices", indices))
        updates = _tensor(who, "updates", updates)
        shape = _ints(who, "shape", shape)
        if not shape or _b.any(s <= 0 for s in shape):
            raise ValueError("For 'ScatterNd', the 'shape' must be non-empty and positive, got %r"
                             % (shape,))
        if indices.ndim < 1:
            raise ValueError("For 'ScatterNd', the rank of 'indices' must be >= 1")
        k = indices.shape[-1]
        if not 1 <= k <= len(shape):
            raise ValueError("For 'ScatterNd', the last dim of 'indices' (%d) must be in [1, %d]"
                             % (k, len(shape)))
        want = tuple(indices.shape[:-1]) + tuple(shape[k:])
        if tuple(updates.shape) != want:
            raise ValueError("For 'ScatterNd', 'updates' must have shape %r, but got %r"
                             % (want, updates.shape))
        lead, tail = shape[:k], tuple(shape[k:])
        strides, acc = [], 1
        for s in reversed(lead):
            strides.append(acc)
            acc *= s
        strides = _creation.tensor(list(reversed(strides)), _dt.int64)
        flat = F.sum(F.cast(indices, _dt.int64) * strides, -1)  # linear position in the lead dims
        flat = F.reshape(flat, (-1,))
        n = flat.shape[0]
        work_dt = updates.dtype if updates.dtype.is_floating_point else _dt.float64
        src = F.reshape(F.cast(updates, work_dt), (n,) + tail)
        base = _creation.zeros((acc,) + tail, dtype=work_dt)
        out = F.reshape(_op("index_add", (base, flat, src), axis=0), shape)
        return out if out.dtype is updates.dtype else F.cast(out, updates.dtype)


def scatter_nd(indices, updates, shape):
    """MindSpore's ops.scatter_nd(indices, updates, shape), as ScatterNd()."""
    return ScatterNd()(indices, updates, shape)


# ----- creation -------------------------------------------------------------------------------

def _number(who, name, v):
    if isinstance(v, _Tensor):
        if v.ndim != 0:
            raise ValueError("For '%s', the '%s' must be a scalar, but got shape %r"
                             % (who, name, v.shape))
        return v.item()  # (a value: under jit this reads data, and stops capture)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("For '%s', the '%s' must be a number or a 0-d Tensor, but got %r"
                        % (who, name, v))
    return v


class Range(Primitive):
    """Range(maxlen=1000000)(start, limit, delta): [start, limit) in steps of delta, int64 when
    every bound is an int, else float32; at most maxlen elements."""

    def __init__(self, maxlen=1000000):
        _int("Range", "maxlen", maxlen)
        if maxlen <= 0:
            raise ValueError("For 'Range', the 'maxlen' must be positive, but got %d" % maxlen)
        super().__init__(maxlen=maxlen)

    def __call__(self, start, limit, delta):
        start, limit, delta = (_number("Range", "start", start), _number("Range", "limit", limit),
                               _number("Range", "delta", delta))
        if delta == 0:
            raise ValueError("For 'Range', the 'delta' cannot be 0")
        if (limit - start) * delta < 0:
            raise ValueError("For 'Range', 'delta' %r cannot reach 'limit' %r from 'start' %r"
                             % (delta, limit, start))
        ints = _b.all(_is_int(v) for v in (start, limit, delta))
        n = -(-(limit - start) // delta) if ints else None
        if n is not None and n > self.attrs["maxlen"]:
            raise ValueError("For 'Range', the output has %d elements, more than 'maxlen' %d"
                             % (n, self.attrs["maxlen"]))
        return _creation.arange(start, limit, delta, dtype=_dt.int64 if ints else _dt.float32)


class Eye(Primitive):
    """Eye()(n, m, t): an n x m identity matrix of dtype t."""

    def __call__(self, n, m, t):
        _int("Eye", "n", n)
        _int("Eye", "m", m)
        if n < 0 or m < 0:
            raise ValueError("For 'Eye', 'n' and 'm' must be non-negative, but got %d and %d"
                             % (n, m))
        return _creation.eye(n, m, dtype=t)


def _tuple_to_array(who, input_x):
    if not isinstance(input_x, (tuple, list)):
        raise TypeError("For '%s', the 'input_x' must be a tuple, but got %s"
                        % (who, type(input_x).__name__))
    if not input_x:
        raise ValueError("For '%s', the 'input_x' must not be empty" % who)
    flat = list(input_x)
    while flat and isinstance(flat[0], (tuple, list)):
        flat = [v for row in flat for v in row]
    if not _b.all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat):
        raise TypeError("For '%s', the elements of 'input_x' must be numbers, but got %r"
                        % (who, input_x))
    dtype = _dt.int64 if _is_int(flat[0]) else _dt.float32
    return _creation.tensor(input_x, dtype)


class TupleToArray(Primitive):
    """TupleToArray()(input_x): a tuple of numbers as a tensor, int64 when the first element is
    an int, else float32."""

    def __call__(self, input_x):
        return _tuple_to_array("TupleToArray", input_x)


def tuple_to_array(input_x):
    """MindSpore's ops.tuple_to_array(input_x), as TupleToArray()."""
    return _tuple_to_array("tuple_to_array", input_x)


class ScalarToTensor(Primitive):
    """ScalarToTensor()(input_x, dtype=float32): a 0-d tensor."""

    def __call__(self, input_x, dtype=_dt.float32):
        if isinstance(input_x, bool) or not isinstance(input_x, (int, float)):
            raise TypeError("For 'ScalarToTensor', the 'input_x' must be an int or float, but "
                            "got %r" % (input_x,))
        return _creation.tensor(input_x, dtype)


def scalar_to_tensor(input_x, dtype=_dt.float32):
    """MindSpore's ops.scalar_to_tensor(input_x, dtype=float32)."""
    return ScalarToTensor()(input_x, dtype)


class ScalarCast(Primitive):
    """ScalarCast()(input_x, input_t): a Python number converted to the scalar type of input_t
    (an int or float dtype, or the type int/float/bool)."""

    def __call__(self, input_x, input_t):
        if isinstance(input_x, _Tensor) or not isinstance(input_x, (int, float, bool)):
            raise TypeError("For 'ScalarCast', the 'input_x' must be a scalar, but got %r"
                            % (input_x,))
        if input_t in (int, float, bool):
            return input_t(input_x)
        t = _dt.as_dtype(input_t)
        if t is _dt.bool_:
            return bool(input_x)
        return float(input_x) if t.is_floating_point else int(input_x)


# ----- neural-network primitives --------------------------------------------------------------

class LayerNorm(Primitive):
    """LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(input_x, gamma, beta)
    -> (output, mean, variance): normalised over the dims from begin_norm_axis on; gamma and
    beta have the shape of the dims from begin_params_axis on; mean and variance keep the
    normalised dims as 1."""

    def __init__(self, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7):
        _int("LayerNorm", "begin_norm_axis", begin_norm_axis)
        _int("LayerNorm", "begin_params_axis", begin_params_axis)
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
            raise TypeError("For 'LayerNorm', the 'epsilon' must be a float, but got %r"
                            % (epsilon,))
        super().__init__(begin_norm_axis=begin_norm_axis, begin_params_axis=begin_params_axis,
                         epsilon=float(epsilon))

    def __call__(self, input_x, gamma, beta):
        x = _floating("LayerNorm", "input_x", _tensor("LayerNorm", "input_x", input_x))
        gamma, beta = _tensor("LayerNorm", "gamma", gamma), _tensor("LayerNorm", "beta", beta)
        a = self.attrs
        norm = _axis("LayerNorm", "begin_norm_axis", a["begin_norm_axis"], x.ndim)
        params = _axis("LayerNorm", "begin_params_axis", a["begin_params_axis"], x.ndim)
        want = tuple(x.shape[params:])
        if tuple(gamma.shape) != want or tuple(beta.shape) != want:
            raise ValueError("For 'LayerNorm', 'gamma' and 'beta' must have shape %r, but got %r "
                             "and %r" % (want, gamma.shape, beta.shape))
        axes = tuple(range(norm, x.ndim))
        mean = F.mean(x, axes, True)
        centred = x - mean
        var = F.mean(F.square(centred), axes, True)
        out = centred * F.rsqrt(var + a["epsilon"]) * gamma + beta
        return out, mean, var


class Dropout(Primitive):
    """Dropout(keep_prob=0.5, Seed0=0, Seed1=0)(x) -> (output, mask): each element kept with
    probability keep_prob and scaled by 1 / keep_prob; mask (x's dtype) is 1 where kept. A
    non-zero seed pair makes the draw repeatable."""

    def __init__(self, keep_prob=0.5, Seed0=0, Seed1=0):
        if isinstance(keep_prob, bool) or not isinstance(keep_prob, (int, float)):
            raise TypeError("For 'Dropout', the 'keep_prob' must be a float, but got %r"
                            % (keep_prob,))
        if not 0 < keep_prob <= 1:
            raise ValueError("For 'Dropout', the 'keep_prob' must be in (0, 1], but got %r"
                             % (keep_prob,))
        _int("Dropout", "Seed0", Seed0)
        _int("Dropout", "Seed1", Seed1)
        super().__init__(keep_prob=float(keep_prob), Seed0=Seed0, Seed1=Seed1)

    def __call__(self, x):
        x = _floating("Dropout", "x", _tensor("Dropout", "x", x))
        a = self.attrs
        seed = (a["Seed0"] * 1000003 + a["Seed1"]) if (a["Seed0"] or a["Seed1"]) else None
        out, mask = _op("dropout", (x,), p=1.0 - a["keep_prob"], training=True, seed=seed)
        return out, F.cast(mask, x.dtype)


def _sparse_labels(who, logits, labels):
    logits = _floating(who, "logits", _tensor(who, "logits", logits))
    labels = _integral(who, "labels", _tensor(who, "labels", labels))
    if logits.ndim != 2 or labels.ndim != 1 or labels.shape[0] != logits.shape[0]:
        raise ValueError("For '%s', 'logits' must be (N, C) and 'labels' (N,), but got %r and %r"
                         % (who, logits.shape, labels.shape))
    return logits, labels


class SparseSoftmaxCrossEntropyWithLogits(Primitive):
    """SparseSoftmaxCrossEntropyWithLogits(is_grad=False)(logits, labels): the mean over the
    batch of -log softmax(logits)[label]; is_grad=True gives its gradient with respect to the
    logits instead, (softmax - one_hot) / N."""

    def __init__(self, is_grad=False):
        super().__init__(is_grad=_bool("SparseSoftmaxCrossEntropyWithLogits", "is_grad", is_grad))

    def __call__(self, logits, labels):
        logits, labels = _sparse_labels("SparseSoftmaxCrossEntropyWithLogits", logits, labels)
        if not self.attrs["is_grad"]:
            return NF.cross_entropy(logits, labels, reduction="mean")
        n, c = logits.shape
        onehot = F.cast(_op("one_hot", (labels,), depth=c, on_value=1.0, off_value=0.0, axis=-1),
                        logits.dtype)
        return (F.softmax(logits, -1) - onehot) / n


class SoftmaxCrossEntropyWithLogits(Primitive):
    """SoftmaxCrossEntropyWithLogits()(logits, labels) -> (loss, dlogits): per-sample
    -sum(labels * log_softmax(logits)) of shape (N,), and softmax(logits) - labels."""

    def __call__(self, logits, labels):
        who = "SoftmaxCrossEntropyWithLogits"
        logits = _floating(who, "logits", _tensor(who, "logits", logits))
        labels = _tensor(who, "labels", labels)
        if logits.ndim != 2 or tuple(labels.shape) != tuple(logits.shape):
            raise ValueError("For '%s', 'logits' and 'labels' must both be (N, C), but got %r and "
                             "%r" % (who, logits.shape, labels.shape))
        loss = F.neg(F.sum(labels * F.log_softmax(logits, -1), -1))
        return loss, F.softmax(logits, -1) - labels


class SigmoidCrossEntropyWithLogits(Primitive):
    """SigmoidCrossEntropyWithLogits()(logits, label): element-wise
    max(x, 0) - x * y + log(1 + exp(-|x|)) (no reduction)."""

    def __call__(self, logits, label):
        who = "SigmoidCrossEntropyWithLogits"
        x = _floating(who, "logits", _tensor(who, "logits", logits))
        y = _tensor(who, "label", label)
        return NF.binary_cross_entropy_with_logits(x, y, reduction="none")


def _reduction(who, reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError("For '%s', the 'reduction' must be 'none', 'mean' or 'sum', but got %r"
                         % (who, reduction))
    return reduction


class BCEWithLogitsLoss(Primitive):
    """BCEWithLogitsLoss(reduction='mean')(logits, label, weight, pos_weight)."""

    def __init__(self, reduction="mean"):
        super().__init__(reduction=_reduction("BCEWithLogitsLoss", reduction))

    def __call__(self, logits, label, weight=None, pos_weight=None):
        return NF.binary_cross_entropy_with_logits(logits, label, weight, pos_weight,
                                                   self.attrs["reduction"])


class BinaryCrossEntropy(Primitive):
    """BinaryCrossEntropy(reduction='mean')(logits, labels, weight=None): on probabilities."""

    def __init__(self, reduction="mean"):
        super().__init__(reduction=_reduction("BinaryCrossEntropy", reduction))

    def __call__(self, logits, labels, weight=None):
        return NF.binary_cross_entropy(logits, labels, weight, self.attrs["reduction"])


class SmoothL1Loss(Primitive):
    """SmoothL1Loss(beta=1.0, reduction='none')(logits, labels)."""

    def __init__(self, beta=1.0, reduction="none"):
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or beta <= 0:
            raise ValueError("For 'SmoothL1Loss', the 'beta' must be a positive float, but got %r"
                             % (beta,))
        super().__init__(beta=float(beta), reduction=_reduction("SmoothL1Loss", reduction))

    def __call__(self, logits, labels):
        return NF.smooth_l1_loss(logits, labels, self.attrs["beta"], self.attrs["reduction"])


class L2Loss(Primitive):
    """L2Loss()(input): sum(input ** 2) / 2, a scalar."""

    def __call__(self, input):
        x = _floating("L2Loss", "input", _tensor("L2Loss", "input", input))
        return F.sum(F.square(x)) / 2


def _pool_args(who, kernel_size, strides, pad_mode, data_format):
    def pair(name, v):
        if _is_int(v):
            return (v, v)
        if isinstance(v, (tuple, list)) and _b.all(_is_int(e) for e in v):
            if len(v) == 2:
                return tuple(v)
            if len(v) == 4 and v[0] == v[1] == 1:  # (1, 1, h, w)
                return tuple(v[2:])
        raise TypeError("For '%s', the '%s' must be an int or a tuple of 2 ints, but got %r"
                        % (who, name, v))
    k, s = pair("kernel_size", kernel_size), pair("strides", strides)
    if _b.min(k + s) <= 0:
        raise ValueError("For '%s', 'kernel_size' and 'strides' must be positive, got %r and %r"
                         % (who, kernel_size, strides))
    if not isinstance(pad_mode, str) or pad_mode.upper() not in ("SAME", "VALID"):
        raise ValueError("For '%s', the 'pad_mode' must be 'same' or 'valid', but got %r"
                         % (who, pad_mode))
    if data_format != "NCHW":
        raise ValueError("For '%s', pijit supports data_format 'NCHW' only, but got %r"
                         % (who, data_format))
    return k, s, pad_mode.upper()


class _Pool(Primitive):
    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        k, s, mode = _pool_args(type(self).__name__, kernel_size, strides, pad_mode, data_format)
        super().__init__(kernel_size=k, strides=s, pad_mode=mode, data_format=data_format)

    def __call__(self, x):
        x = _floating(self.name, "x", _tensor(self.name, "x", x))
        if x.ndim != 4:
            raise ValueError("For '%s', the input must be 4-D (NCHW), but got shape %r"
                             % (self.name, x.shape))
        k, s = self.attrs["kernel_size"], self.attrs["strides"]
        if self.attrs["pad_mode"] == "VALID":
            if x.shape[2] < k[0] or x.shape[3] < k[1]:
                raise ValueError("For '%s', the kernel %r is larger than the input's H, W %r"
                                 % (self.name, k, tuple(x.shape[2:])))
            return self._valid(x, k, s)
        top, bottom, left, right = NF.same_pads(x.shape[2:], k, s, (1, 1))
        return self._same(x, k, s, (left, right, top, bottom))


class MaxPool(_Pool):
    """MaxPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x); 'same' pads
    as TensorFlow (output ceil(in / stride), the odd pixel at the end) with -inf."""

    def _valid(self, x, k, s):
        return NF.max_pool2d(x, k, s)

    def _same(self, x, k, s, pads):
        if _b.any(pads):
            x = _op("pad", (x,), pads=pads, mode="constant", value=float("-inf"))
        return NF.max_pool2d(x, k, s)


class AvgPool(_Pool):
    """AvgPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x); under 'same'
    a window averages only the input pixels it covers (padding not counted)."""

    def _valid(self, x, k, s):
        return NF.avg_pool2d(x, k, s)

    def _same(self, x, k, s, pads):
        if not _b.any(pads):
            return NF.avg_pool2d(x, k, s)
        total = NF.avg_pool2d(NF.pad(x, pads), k, s)  # sum / (kh * kw)
        ones = _creation.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype)
        share = NF.avg_pool2d(NF.pad(ones, pads), k, s)  # covered / (kh * kw)
        return total / share


class AdaptiveAvgPool2D(Primitive):
    """AdaptiveAvgPool2D(output_size)(input_x); None in output_size keeps that dim."""

    def __init__(self, output_size):
        super().__init__(output_size=output_size)

    def __call__(self, input_x):
        return NF.adaptive_avg_pool2d(input_x, self.attrs["output_size"])


# TensorFlow's resize coordinate rules (MindSpore's ResizeNearestNeighbor / ResizeBilinear)
def _resize_scale(n_in, n_out, align_corners):
    if align_corners and n_out > 1:
        return (n_in - 1) / (n_out - 1)
    return n_in / n_out


def _nearest_index(n_in, n_out, align_corners, half_pixel):
    scale = _resize_scale(n_in, n_out, align_corners)
    out = []
    for i in range(n_out):
        if half_pixel:
            src = (i + 0.5) * scale
        else:
            src = i * scale
        j = int((src + 0.5) // 1) if align_corners else int(src // 1)  # (C roundf: halves up)
        out.append(_b.min(_b.max(j, 0), n_in - 1))
    return out


def _linear_taps(n_in, n_out, align_corners, half_pixel):
    scale = _resize_scale(n_in, n_out, align_corners)
    lo, hi, w = [], [], []
    for i in range(n_out):
        src = (i + 0.5) * scale - 0.5 if half_pixel else i * scale
        f = src // 1  # (below 0 only with half pixels: both taps are then pixel 0)
        lo.append(_b.min(_b.max(int(f), 0), n_in - 1))
        hi.append(_b.min(_b.max(int(f) + 1, 0), n_in - 1))
        w.append(src - f)
    return lo, hi, w


def _resize_size(who, size):
    if isinstance(size, (tuple, list)) and len(size) == 2 and _b.all(_is_int(v) for v in size):
        if _b.min(size) <= 0:
            raise ValueError("For '%s', the 'size' must be positive, but got %r" % (who, size))
        return tuple(size)
    raise TypeError("For '%s', the 'size' must be a tuple of 2 ints, but got %r" % (who, size))


class ResizeNearestNeighbor(Primitive):
    """ResizeNearestNeighbor(size, align_corners=False, half_pixel_centers=False)(input_x):
    TensorFlow's nearest-neighbour resize of the last two dims (composed: two index_selects)."""

    def __init__(self, size, align_corners=False, half_pixel_centers=False):
        who = "ResizeNearestNeighbor"
        super().__init__(size=_resize_size(who, size),
                         align_corners=_bool(who, "align_corners", align_corners),
                         half_pixel_centers=_bool(who, "half_pixel_centers", half_pixel_centers))

    def __call__(self, input_x):
        x = _tensor(self.name, "input_x", input_x)
        if x.ndim != 4:
            raise ValueError("For '%s', the input must be 4-D (NCHW), but got shape %r"
                             % (self.name, x.shape))
        a = self.attrs
        for axis, n_out in ((2, a["size"][0]), (3, a["size"][1])):
            idx = _nearest_index(x.shape[axis], n_out, a["align_corners"], a["half_pixel_centers"])
            x = _take(x, axis, idx)
        return x


def _bilinear(x, size, align_corners, half_pixel):
    for axis, n_out in ((2, size[0]), (3, size[1])):
        lo, hi, w = _linear_taps(x.shape[axis], n_out, align_corners, half_pixel)
        shape = [1] * x.ndim
        shape[axis] = n_out
        wt = F.reshape(_creation.tensor(w, x.dtype), tuple(shape))
        a, b = _take(x, axis, lo), _take(x, axis, hi)
        x = a + (b - a) * wt
    return x


class ResizeBilinear(Primitive):
    """ResizeBilinear(size, align_corners=False, half_pixel_centers=False)(x): TensorFlow's
    bilinear resize of the last two dims (legacy corners by default; composed separably)."""

    def __init__(self, size, align_corners=False, half_pixel_centers=False):
        who = "ResizeBilinear"
        if align_corners and half_pixel_centers:
            raise ValueError("For 'ResizeBilinear', 'align_corners' and 'half_pixel_centers' "
                             "cannot both be True")
        super().__init__(size=_resize_size(who, size),
                         align_corners=_bool(who, "align_corners", align_corners),
                         half_pixel_centers=_bool(who, "half_pixel_centers", half_pixel_centers))

    def __call__(self, x):
        x = _floating(self.name, "x", _tensor(self.name, "x", x))
        if x.ndim != 4:
            raise ValueError("For '%s', the input must be 4-D (NCHW), but got shape %r"
                             % (self.name, x.shape))
        a = self.attrs
        return _bilinear(x, a["size"], a["align_corners"], a["half_pixel_centers"])


class ResizeBilinearV2(Primitive):
    """ResizeBilinearV2(align_corners=False, half_pixel_centers=False)(x, size)."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        who = "ResizeBilinearV2"
        if align_corners and half_pixel_centers:
            raise ValueError("For 'ResizeBilinearV2', 'align_corners' and 'half_pixel_centers' "
                             "cannot both be True")
        super().__init__(align_corners=_bool(who, "align_corners", align_corners),
                         half_pixel_centers=_bool(who, "half_pixel_centers", half_pixel_centers))

    def __call__(self, x, size):
        x = _floating(self.name, "x", _tensor(self.name, "x", x))
        if x.ndim != 4:
            raise ValueError("For '%s', the input must be 4-D (NCHW), but got shape %r"
                             % (self.name, x.shape))
        size = _resize_size(self.name, tuple(size) if isinstance(size, list) else size)
        return _bilinear(x, size, self.attrs["align_corners"], self.attrs["half_pixel_centers"])


# ----- einsum ---------------------------------------------------------------------------------

def _einsum(equation, operands):
    """Any explicit or implicit einsum without ellipses: each operand's letters permuted into one
    common order and broadcast, multiplied together, and summed over the letters not kept.
    Composed from transpose/reshape/mul/sum (memory: the broadcast product)."""
    who = "Einsum"
    if not isinstance(equation, str):
        raise TypeError("For 'Einsum', the 'equation' must be a str, but got %r" % (equation,))
    eq = equation.replace(" ", "")
    if "." in eq:
        raise ValueError("For 'Einsum', pijit does not support '...' in the equation %r" % equation)
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError("For 'Einsum', the equation %r names %d operands, but got %d"
                         % (equation, len(terms), len(operands)))
    if not arrow:
        counts = {}
        for t in terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        rhs = "".join(sorted(c for c, k in counts.items() if k == 1))
    letters = []
    for t in terms:
        for c in t:
            if not c.isalpha():
                raise ValueError("For 'Einsum', the equation %r has an invalid letter %r"
                                 % (equation, c))
            if c not in letters:
                letters.append(c)
    for c in rhs:
        if c not in letters or rhs.count(c) > 1:
            raise ValueError("For 'Einsum', the output letter %r of %r must appear once and in "
                             "an input" % (c, equation))
    sizes = {}
    product = None
    for t, x in zip(terms, operands):
        x = _tensor(who, "inputs", x)
        if len(t) != x.ndim:
            raise ValueError("For 'Einsum', the term %r does not fit an operand of shape %r"
                             % (t, x.shape))
        # a repeated letter in one term takes the diagonal
        while len(set(t)) < len(t):
            c = [c for c in t if t.count(c) > 1][0]
            i, j = t.index(c), t.index(c, t.index(c) + 1)
            n = x.shape[i]
            if x.shape[j] != n:
                raise ValueError("For 'Einsum', the letter %r has sizes %d and %d" % (c, n, x.shape[j]))
            ar = _creation.arange(n)
            items = [slice(None)] * x.ndim
            items[i], items[j] = ar, ar
            # advanced indices split by slices go first: move the diagonal back to position i
            x = x[tuple(items)]
            rest = [k for k in range(len(t)) if k not in (i, j)]
            t2 = c + "".join(t[k] for k in rest)
            adv_first = not (j == i + 1)
            if not adv_first:
                t2 = t[:i] + c + t[j + 1:]
            t = t2
        for c, n in zip(t, x.shape):
            if sizes.setdefault(c, n) != n and n != 1 and sizes[c] != 1:
                raise ValueError("For 'Einsum', the letter %r has sizes %d and %d"
                                 % (c, sizes[c], n))
            sizes[c] = _b.max(sizes[c], n)
        order = sorted(range(len(t)), key=lambda k: letters.index(t[k]))
        if order != list(range(len(t))):
            x = F.transpose(x, tuple(order))
        present = [t[k] for k in order]
        shape = tuple(x.shape[present.index(c)] if c in present else 1 for c in letters)
        x = F.reshape(x, shape)
        product = x if product is None else product * x
    summed = tuple(k for k, c in enumerate(letters) if c not in rhs)
    out = F.sum(product, summed) if summed else product
    kept = [c for c in letters if c in rhs]
    out = F.broadcast_to(out, tuple(sizes[c] for c in kept)) if kept else out
    perm = tuple(kept.index(c) for c in rhs)
    if perm != tuple(range(len(perm))):
        out = F.transpose(out, perm)
    return out


class Einsum(Primitive):
    """Einsum(equation)(inputs): Einstein summation over a tuple of tensors."""

    def __init__(self, equation):
        if not isinstance(equation, str):
            raise TypeError("For 'Einsum', the 'equation' must be a str, but got %r" % (equation,))
        super().__init__(equation=equation)

    def __call__(self, inputs):
        if not isinstance(inputs, (tuple, list)) or not inputs:
            raise TypeError("For 'Einsum', the 'inputs' must be a non-empty tuple of Tensors")
        return _einsum(self.attrs["equation"], tuple(inputs))


def einsum(equation, *operands):
    """MindSpore's ops.einsum(equation, *operands)."""
    return _einsum(equation, operands)


class Meshgrid(Primitive):
    """Meshgrid(indexing='xy')(inputs): coordinate grids from 1-D tensors."""

    def __init__(self, indexing="xy"):
        if indexing not in ("xy", "ij"):
            raise ValueError("For 'Meshgrid', the 'indexing' must be 'xy' or 'ij', but got %r"
                             % (indexing,))
        super().__init__(indexing=indexing)

    def __call__(self, inputs):
        if not isinstance(inputs, (tuple, list)) or len(inputs) < 2:
            raise TypeError("For 'Meshgrid', the 'inputs' must be a tuple of at least 2 Tensors")
        xs = [_tensor("Meshgrid", "inputs", x) for x in inputs]
        if _b.any(x.ndim != 1 for x in xs):
            raise ValueError("For 'Meshgrid', every input must be 1-D")
        n = len(xs)
        sizes = [x.shape[0] for x in xs]
        if self.attrs["indexing"] == "xy":
            sizes[0], sizes[1] = sizes[1], sizes[0]
        out = []
        for i, x in enumerate(xs):
            at = i
            if self.attrs["indexing"] == "xy" and i < 2:
                at = 1 - i
            shape = [1] * n
            shape[at] = x.shape[0]
            out.append(F.broadcast_to(F.reshape(x, tuple(shape)), tuple(sizes)))
        return tuple(out)


class Lerp(Primitive):
    """Lerp()(start, end, weight): start + weight * (end - start)."""

    def __call__(self, start, end, weight):
        s = _tensor("Lerp", "start", start)
        return s + F.mul(weight, F.sub(end, s))


class LinSpace(Primitive):
    """LinSpace()(start, stop, num): num evenly spaced float32 values from start to stop."""

    def __call__(self, start, stop, num):
        start = _number("LinSpace", "start", start)
        stop = _number("LinSpace", "stop", stop)
        if isinstance(num, _Tensor):
            num = _number("LinSpace", "num", num)
        _int("LinSpace", "num", num)
        if num <= 0:
            raise ValueError("For 'LinSpace', the 'num' must be positive, but got %d" % num)
        return _creation.linspace(start, stop, num, dtype=_dt.float32)


class Sinh(Primitive):
    """Sinh()(input_x): (exp(x) - exp(-x)) / 2 (composed)."""

    def __call__(self, input_x):
        x = _floating("Sinh", "input_x", _tensor("Sinh", "input_x", input_x))
        return (F.exp(x) - F.exp(F.neg(x))) / 2


class Cosh(Primitive):
    """Cosh()(input_x): (exp(x) + exp(-x)) / 2 (composed)."""

    def __call__(self, input_x):
        x = _floating("Cosh", "input_x", _tensor("Cosh", "input_x", input_x))
        return (F.exp(x) + F.exp(F.neg(x))) / 2


class Xlogy(Primitive):
    """Xlogy()(x, y): x * log(y), and 0 where x is 0 (even where y is 0)."""

    def __call__(self, x, y):
        x, y = F.mul(x, 1.0), F.mul(y, 1.0)  # (as tensors, promoted to floating)
        return F.where(F.eq(x, 0), F.mul(x, 0.0), x * F.log(y))


class PReLU(Primitive):
    """PReLU()(x, weight): x where x > 0, weight * x elsewhere; weight has one value per
    channel (dim 1) or a single one."""

    def __call__(self, x, weight):
        x = _floating("PReLU", "x", _tensor("PReLU", "x", x))
        w = _tensor("PReLU", "weight", weight)
        if w.ndim != 1 or (w.shape[0] != 1 and (x.ndim < 2 or w.shape[0] != x.shape[1])):
            raise ValueError("For 'PReLU', the 'weight' must be 1-D with 1 or C (dim 1 of x) "
                             "elements, but got shape %r for x of shape %r" % (w.shape, x.shape))
        if x.ndim >= 2:
            w = F.reshape(w, (1, -1) + (1,) * (x.ndim - 2))
        return F.where(x > 0, x, x * w)


class Roll(Primitive):
    """Roll(shift, axis)(input_x): elements shifted along each axis, wrapping around."""

    def __init__(self, shift, axis):
        shift = (shift,) if _is_int(shift) else _ints("Roll", "shift", shift)
        axis = (axis,) if _is_int(axis) else _ints("Roll", "axis", axis)
        if len(shift) != len(axis):
            raise ValueError("For 'Roll', 'shift' and 'axis' must have the same length, but got "
                             "%d and %d" % (len(shift), len(axis)))
        super().__init__(shift=shift, axis=axis)

    def __call__(self, input_x):
        x = _tensor("Roll", "input_x", input_x)
        for s, a in zip(self.attrs["shift"], self.attrs["axis"]):
            a = _axis("Roll", "axis", a, x.ndim)
            n = x.shape[a]
            s = s % n if n else 0
            if s:
                pre = (slice(None),) * a
                x = F.concat((x[pre + (slice(n - s, None),)], x[pre + (slice(0, n - s),)]), a)
        return x


class SquareSumAll(Primitive):
    """SquareSumAll()(x, y) -> (sum(x ** 2), sum(y ** 2))."""

    def __call__(self, x, y):
        x, y = _tensor("SquareSumAll", "x", x), _tensor("SquareSumAll", "y", y)
        return F.sum(F.square(x)), F.sum(F.square(y))


class ReduceStd(Primitive):
    """ReduceStd(axis=(), unbiased=True, keep_dims=False)(input_x) -> (std, mean); axis () is
    every axis."""

    def __init__(self, axis=(), unbiased=True, keep_dims=False):
        axis = (axis,) if _is_int(axis) else _ints("ReduceStd", "axis", axis)
        super().__init__(axis=axis, unbiased=_bool("ReduceStd", "unbiased", unbiased),
                         keep_dims=_bool("ReduceStd", "keep_dims", keep_dims))

    def __call__(self, input_x):
        x = _floating("ReduceStd", "input_x", _tensor("ReduceStd", "input_x", input_x))
        a = self.attrs
        axes = tuple(_axis("ReduceStd", "axis", v, x.ndim) for v in a["axis"]) or None
        std = F.std(x, axes, 1 if a["unbiased"] else 0, a["keep_dims"])
        return std, F.mean(x, axes, a["keep_dims"])


def _scatter_into(who, input_x, indices, updates, add):
    x = _tensor(who, "input_x", input_x)
    updates = _tensor(who, "updates", updates)
    if updates.dtype is not x.dtype:
        raise TypeError("For '%s', 'updates' must have the dtype of 'input_x' (%s), but got %s"
                        % (who, x.dtype, updates.dtype))
    scattered = ScatterNd()(indices, updates, tuple(x.shape))
    if add:
        return x + scattered
    ones = _creation.ones(tuple(updates.shape), dtype=_dt.float32)
    hit = ScatterNd()(indices, ones, tuple(x.shape)) > 0
    return F.where(hit, scattered, x)


class TensorScatterUpdate(Primitive):
    """TensorScatterUpdate()(input_x, indices, updates): a copy of input_x with the positions
    `indices` (as ScatterNd's) set to updates (positions should be distinct)."""

    def __call__(self, input_x, indices, updates):
        return _scatter_into("TensorScatterUpdate", input_x, indices, updates, False)


class TensorScatterAdd(Primitive):
    """TensorScatterAdd()(input_x, indices, updates): a copy of input_x with updates added at
    `indices` (repeated positions add up)."""

    def __call__(self, input_x, indices, updates):
        return _scatter_into("TensorScatterAdd", input_x, indices, updates, True)


class ScatterNdUpdate(Primitive):
    """ScatterNdUpdate(use_locking=True)(input_x, indices, updates): writes updates into the
    Parameter input_x at `indices` in place and returns it (a graph break under jit, as
    Assign())."""

    def __init__(self, use_locking=True):
        super().__init__(use_locking=_bool("ScatterNdUpdate", "use_locking", use_locking))

    @runtime_state("writes a Parameter in place")
    def __call__(self, input_x, indices, updates):
        new = _scatter_into("ScatterNdUpdate", input_x, indices, updates, False)
        input_x[...] = new
        return input_x


class NLLLoss(Primitive):
    """NLLLoss(reduction='mean', ignore_index=-100)(logits, labels, weight) -> (loss,
    total_weight): logits are log-probabilities (N, C); total_weight sums weight[label] over the
    samples not ignored."""

    def __init__(self, reduction="mean", ignore_index=-100):
        super().__init__(reduction=_reduction("NLLLoss", reduction),
                         ignore_index=_int("NLLLoss", "ignore_index", ignore_index))

    def __call__(self, logits, labels, weight):
        logits, labels = _sparse_labels("NLLLoss", logits, labels)
        weight = _tensor("NLLLoss", "weight", weight)
        a = self.attrs
        loss = NF.nll_loss(logits, labels, weight, a["ignore_index"], a["reduction"])
        keep = F.ne(labels, a["ignore_index"])
        safe = F.where(keep, labels, F.mul(labels, 0))
        total = F.sum(F.where(keep, F.gather(weight, safe, 0), F.mul(F.gather(weight, safe, 0), 0.0)))
        return loss, total


class KLDivLoss(Primitive):
    """KLDivLoss(reduction='mean')(logits, labels): labels * (log(labels) - logits), 0 where
    labels is 0; 'mean' over every element, 'batchmean' over dim 0, 'sum' or 'none'."""

    def __init__(self, reduction="mean"):
        if reduction not in ("none", "mean", "sum", "batchmean"):
            raise ValueError("For 'KLDivLoss', the 'reduction' must be 'none', 'mean', 'sum' or "
                             "'batchmean', but got %r" % (reduction,))
        super().__init__(reduction=reduction)

    def __call__(self, logits, labels):
        x = _floating("KLDivLoss", "logits", _tensor("KLDivLoss", "logits", logits))
        y = _tensor("KLDivLoss", "labels", labels)
        pos = y > 0
        safe = F.where(pos, y, F.mul(y, 0.0) + 1.0)
        out = F.where(pos, y * (F.log(safe) - x), F.mul(x, 0.0))
        r = self.attrs["reduction"]
        if r == "none":
            return out
        if r == "sum":
            return F.sum(out)
        if r == "mean":
            return F.mean(out)
        return F.sum(out) / (x.shape[0] if x.ndim else 1)


class _Random(Primitive):
    def __init__(self, seed=0, seed2=0):
        _int(type(self).__name__, "seed", seed)
        _int(type(self).__name__, "seed2", seed2)
        if seed < 0 or seed2 < 0:
            raise ValueError("For '%s', 'seed' and 'seed2' must be non-negative"
                             % type(self).__name__)
        super().__init__(seed=seed, seed2=seed2)

    def _seed(self):
        a = self.attrs
        return (a["seed"] * 1000003 + a["seed2"]) if (a["seed"] or a["seed2"]) else None

    def _shape(self, shape):
        return _ints(self.name, "shape", shape)


class UniformReal(_Random):
    """UniformReal(seed=0, seed2=0)(shape): float32 samples from [0, 1); a non-zero seed pair
    makes them repeatable."""

    def __call__(self, shape):
        return _creation.rand(self._shape(shape), seed=self._seed())


class StandardNormal(_Random):
    """StandardNormal(seed=0, seed2=0)(shape): float32 samples from N(0, 1)."""

    def __call__(self, shape):
        return _creation.randn(self._shape(shape), seed=self._seed())


_FUNCTIONAL = ["strided_slice", "assign_add", "assign_sub", "inplace_add", "inplace_sub",
               "inplace_update", "gather_d", "gather_elements", "scatter_nd", "tuple_to_array",
               "scalar_to_tensor", "einsum"]
__all__ = sorted(n for n, v in globals().items()
                 if isinstance(v, type) and issubclass(v, Primitive) and v is not Primitive
                 and not n.startswith("_") and n != "Add") + _FUNCTIONAL
