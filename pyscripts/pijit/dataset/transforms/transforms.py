"""mindspore.dataset.transforms: transforms for any column (labels, masks, sequences).

Compose chains transforms and fuses consecutive image transforms into single kernel calls
(vision/_image.py); TypeCast casts; OneHot encodes labels ((1 - s) * onehot + s / num_classes
when smoothing_rate s > 0, then float32); Fill, Concatenate, Duplicate, Slice, PadEnd, Mask and
the random combinators RandomApply / RandomChoice / RandomOrder behave as MindSpore's.
"""
import operator

from pijit.dataset._compat import np
from pijit.dataset.transforms import _core
from pijit.dataset.transforms._core import (TensorOperation, RandomMixin, check_type, check_value,
                                            to_array)

__all__ = ["TensorOperation", "PyTensorOperation", "Compose", "TypeCast", "OneHot", "Fill",
           "Concatenate", "Duplicate", "Slice", "PadEnd", "Mask", "Relational", "RandomApply",
           "RandomChoice", "RandomOrder", "Unique"]

PyTensorOperation = TensorOperation


def _check_transforms(transforms, name="transforms"):
    check_type(transforms, (list,), name)
    if not transforms:
        raise ValueError("%s list can not be empty." % name)
    for i, t in enumerate(transforms):
        if not callable(t):
            raise ValueError("%s[%d] is neither a transforms op (TensorOperation) nor a callable "
                             "pyfunc." % (name, i))
    return list(transforms)


def _flatten_compose(ops):
    out = []
    for op in ops:
        if isinstance(op, Compose):
            out.extend(_flatten_compose(op.transforms))
        else:
            out.append(op)
    return out


class Compose(TensorOperation):
    """Applies transforms in order; each takes the previous one's outputs as its arguments.
    Consecutive fusable image transforms run as one kernel pass."""

    def __init__(self, transforms):
        self.transforms = _check_transforms(transforms)
        self._flat = _flatten_compose(self.transforms)
        self.random = any(getattr(t, "random", False) for t in self._flat)

    def __call__(self, *args):
        from pijit.dataset.vision._image import run_chain
        out = run_chain(self._flat, args)
        return out[0] if len(out) == 1 else out

    @staticmethod
    def reduce(operations):
        """One callable for a map's operation list (MindSpore's Compose.reduce)."""
        if len(operations) == 1:
            return operations[0]
        return Compose(list(operations))


class TypeCast(TensorOperation):
    """Casts to data_type (a mindspore dtype such as mstype.int32, or a numpy dtype)."""

    def __init__(self, data_type):
        from pijit import dtype as _pdt
        if not isinstance(data_type, _pdt.Type):
            try:
                np.dtype(data_type)
            except (TypeError, NotImplementedError, AttributeError):
                raise TypeError("Argument data_type with value %s is not of type [<class "
                                "'mindspore._c_expression.typing.Type'>, <class 'numpy.dtype'>], "
                                "but got %s." % (data_type, type(data_type))) from None
        self.data_type = data_type
        self._dtype = _core.np_dtype(data_type, type(self).__name__)

    def __call__(self, *args):
        outs = tuple(to_array(a, type(self).__name__).astype(self._dtype) for a in args)
        return outs[0] if len(outs) == 1 else outs


class OneHot(TensorOperation):
    """A scalar label -> (num_classes,), a 1-D array of n labels -> (n, num_classes), in the
    label's integer dtype (float32 with label smoothing)."""

    def __init__(self, num_classes, smoothing_rate=0.0):
        check_type(num_classes, (int,), "num_classes")
        check_value(num_classes, (0, _core.INT32_MAX), "num_classes")
        check_type(smoothing_rate, (int, float), "smoothing_rate")
        check_value(smoothing_rate, (0.0, 1.0), "smoothing_rate")
        self.num_classes = num_classes
        self.smoothing_rate = smoothing_rate

    def __call__(self, *args):
        outs = tuple(self._one(a) for a in args)
        return outs[0] if len(outs) == 1 else outs

    def _one(self, label):
        a = to_array(label, "OneHot")
        shape = [d for d in a.shape if d != 1]
        if len(shape) > 1:
            raise RuntimeError("OneHot: Only support scalar or 1D input, got rank: %d" % a.ndim)
        if a.dtype.kind not in "iu":
            raise RuntimeError("OneHot: Only support input of int type, but got:%s" % a.dtype)
        flat = [int(v) for v in a.reshape(-1).tolist()]
        n = self.num_classes
        for v in flat:
            if v >= n:
                raise RuntimeError("OneHot: index values should not bigger than num classes: %d, "
                                   "but got: %d" % (n, v))
            if v < 0:
                raise RuntimeError("OneHot: index values should not be negative, but got: %d" % v)
        rows = [[1 if j == v else 0 for j in range(n)] for v in flat]
        if self.smoothing_rate > 0:
            s = float(self.smoothing_rate)
            out = np.array([[(1.0 - s) * x + s / n for x in r] for r in rows], dtype=np.float32)
        else:
            out = np.array(rows, dtype=a.dtype) if rows else np.zeros((0, n), dtype=a.dtype)
        return out.reshape((n,)) if not shape else out


class Fill(TensorOperation):
    """An array of the input's shape and dtype, every element fill_value."""

    def __init__(self, fill_value):
        check_type(fill_value, (str, float, bool, int, bytes), "fill_value")
        self.fill_value = fill_value

    def __call__(self, *args):
        outs = []
        for a in args:
            a = to_array(a, "Fill")
            try:
                outs.append(np.full(a.shape, self.fill_value, dtype=a.dtype))
            except (TypeError, ValueError) as e:
                raise RuntimeError("Fill: fill_value %r cannot be converted to the input's dtype "
                                   "%s (%s)" % (self.fill_value, a.dtype, e)) from None
        return outs[0] if len(outs) == 1 else tuple(outs)


class Concatenate(TensorOperation):
    """prepend + input + append along axis (1-D inputs; axis 0 or -1)."""

    def __init__(self, axis=0, prepend=None, append=None):
        check_type(axis, (int,), "axis")
        for name, v in (("prepend", prepend), ("append", append)):
            if v is not None:
                check_type(v, (np.ndarray,), name)
        self.axis, self.prepend, self.append = axis, prepend, append

    def __call__(self, *args):
        if len(args) != 1:
            raise RuntimeError("Concatenate: input is multi-dimensional or more than one column.")
        a = to_array(args[0], "Concatenate")
        if a.ndim != 1 or self.axis not in (0, -1):
            raise RuntimeError("Concatenate: Only 1D input supported, got rank: %d" % a.ndim)
        parts = [p for p in (self.prepend, a, self.append) if p is not None]
        for p in parts:
            if p.dtype != a.dtype:
                raise RuntimeError("Concatenate: input datatype does not match: %s vs %s"
                                   % (p.dtype, a.dtype))
        return np.concatenate(parts, axis=0)


class Duplicate(TensorOperation):
    """The input twice (one map column becomes two)."""

    def __call__(self, *args):
        if len(args) != 1:
            raise RuntimeError("Duplicate: only supports transform one column each time.")
        a = to_array(args[0], "Duplicate")
        return a, a.copy()


class Slice(TensorOperation):
    """Slices the input: one selector per dimension (int, list of indices, slice, None or
    Ellipsis for everything)."""

    def __init__(self, *slices):
        for i, s in enumerate(slices):
            check_type(s, (int, list, slice, type(None), type(Ellipsis)), "slices[%d]" % i)
        self.slices = slices

    def __call__(self, *args):
        outs = []
        for a in args:
            a = to_array(a, "Slice")
            r = a
            for dim, s in enumerate(self.slices):
                if s is None or s is Ellipsis:
                    continue
                idx = [slice(None)] * r.ndim
                idx[dim] = [s] if isinstance(s, int) else s
                r = r[tuple(idx)]
            outs.append(r)
        return outs[0] if len(outs) == 1 else tuple(outs)


class PadEnd(TensorOperation):
    """Pads (or cuts) each dimension at its end to pad_shape (None: keep the size), with
    pad_value (default 0 / empty string)."""

    def __init__(self, pad_shape, pad_value=None):
        check_type(pad_shape, (list,), "pad_shape")
        for i, d in enumerate(pad_shape):
            if d is not None:
                check_type(d, (int,), "pad_shape[%d]" % i)
                check_value(d, (0, _core.INT32_MAX), "pad_shape")
        if pad_value is not None:
            check_type(pad_value, (str, bytes, int, float, bool), "pad_value")
        self.pad_shape, self.pad_value = pad_shape, pad_value

    def __call__(self, *args):
        a = to_array(args[0], "PadEnd")
        if len(self.pad_shape) != a.ndim:
            raise RuntimeError("PadEnd: invalid pad shape, as rank of input is: %d, and rank of "
                               "pad value is: %d." % (a.ndim, len(self.pad_shape)))
        shape = tuple(a.shape[i] if d is None else d for i, d in enumerate(self.pad_shape))
        out = np.full(shape, self.pad_value if self.pad_value is not None else 0, dtype=a.dtype)
        src = a[tuple(slice(0, min(s, t)) for s, t in zip(a.shape, shape))]
        out[tuple(slice(0, d) for d in src.shape)] = src
        return out


class Relational:
    """The comparisons Mask takes."""
    EQ = 0
    NE = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5


_REL = {0: operator.eq, 1: operator.ne, 2: operator.gt, 3: operator.ge, 4: operator.lt,
        5: operator.le}


class Mask(TensorOperation):
    """A bool array: input `operator` constant, elementwise (then cast to dtype)."""

    def __init__(self, operator, constant, dtype=None):
        check_type(operator, (int,), "operator")
        if operator not in _REL:
            raise TypeError("operator must be a Relational value")
        check_type(constant, (str, float, bool, int, bytes), "constant")
        self.operator, self.constant = operator, constant
        self.dtype = np.bool_ if dtype is None else _core.np_dtype(dtype, "Mask")

    def __call__(self, *args):
        a = to_array(args[0], "Mask")
        return np.asarray(_REL[self.operator](a, self.constant)).astype(self.dtype)


class Unique(TensorOperation):
    """(unique values in first-seen order, index of each input element in them, counts)."""

    def __call__(self, *args):
        a = to_array(args[0], "Unique")
        if a.ndim != 1:
            raise RuntimeError("Unique: only 1D input supported, but got rank: %d" % a.ndim)
        seen, idx, counts = {}, [], []
        values = a.tolist()
        for v in values:
            k = seen.setdefault(v, len(seen))
            if k == len(counts):
                counts.append(0)
            counts[k] += 1
            idx.append(k)
        return (np.array(list(seen), dtype=a.dtype), np.array(idx, dtype=np.int32),
                np.array(counts, dtype=np.int32))


class RandomApply(RandomMixin, TensorOperation):
    """Applies the transforms (as Compose) with probability prob, else passes the input on."""

    def __init__(self, transforms, prob=0.5):
        self.transforms = _check_transforms(transforms)
        check_type(prob, (float, int), "prob")
        check_value(prob, (0.0, 1.0), "prob")
        self.prob = prob
        self._compose = Compose(self.transforms)

    def __call__(self, *args):
        if self._random().random() < self.prob:
            return self._compose(*args)
        return args[0] if len(args) == 1 else args


class RandomChoice(RandomMixin, TensorOperation):
    """Applies one of the transforms, chosen uniformly."""

    def __init__(self, transforms):
        self.transforms = _check_transforms(transforms)

    def __call__(self, *args):
        op = self.transforms[self._random().randrange(len(self.transforms))]
        return op(*args)


class RandomOrder(RandomMixin, TensorOperation):
    """Applies every transform, in a random order."""

    def __init__(self, transforms):
        self.transforms = _check_transforms(transforms)

    def __call__(self, *args):
        ops = list(self.transforms)
        self._random().shuffle(ops)
        return Compose(ops)(*args)

