"""MindSpore's primitive classes: instantiate with attributes, call with tensors.

    add = ops.Add(); add(x, y)
    ops.MatMul(transpose_b=True)(a, b); ops.ReduceSum(keep_dims=True)(x, axis)
Instances print as MindSpore prints them ("Prim[Add]", "Prim[MatMul]<transpose_a=False, ...>").
"""
import functools
import sys

from pijit import _C
from pijit import creation as _creation
from pijit import dtype as _dt
from pijit._state import output, runtime_state
from pijit.ops import functional as F
from pijit.ops import misc as M
from pijit.ops import nn_functional as NF


class Primitive(object):
    """Base of every primitive; `name` is the MindSpore class name."""

    def __init__(self, **attrs):
        self.name = type(self).__name__
        self.attrs = attrs

    def __call__(self, *args):
        raise NotImplementedError("%s must implement __call__" % self.name)

    def __repr__(self):
        if not self.attrs:
            return "Prim[%s]" % self.name
        return "Prim[%s]<%s>" % (self.name, ", ".join("%s=%s" % kv for kv in self.attrs.items()))

    def _arity(self, args, n):
        if len(args) != n:
            raise TypeError("%s takes %d inputs but %d were given" % (self.name, n, len(args)))


def _binary_primitive(name, fn):
    class P(Primitive):
        def __call__(self, *args):
            self._arity(args, 2)
            return fn(*args)
    P.__name__ = P.__qualname__ = name
    return P


def _unary_primitive(name, fn):
    class P(Primitive):
        def __call__(self, *args):
            self._arity(args, 1)
            return fn(*args)
    P.__name__ = P.__qualname__ = name
    return P


_BINARY = {"Add": F.add, "Sub": F.sub, "Mul": F.mul, "Div": F.div, "RealDiv": F.div,
           "FloorDiv": F.floor_div, "FloorMod": F.mod, "Pow": F.pow,
           "Maximum": F.maximum, "Minimum": F.minimum, "Equal": F.eq, "NotEqual": F.ne,
           "Less": F.lt, "LessEqual": F.le, "Greater": F.gt, "GreaterEqual": F.ge,
           "LogicalAnd": F.logical_and, "LogicalOr": F.logical_or, "LogicalXor": F.logical_xor}
_UNARY = {"Neg": F.neg, "Abs": F.abs, "Sign": F.sign, "Square": F.square, "ReLU": F.relu,
          "Floor": F.floor, "Ceil": F.ceil, "Round": F.round, "Exp": F.exp, "Log": F.log,
          "Log1p": F.log1p, "Expm1": F.expm1, "Tan": F.tan, "Sqrt": F.sqrt, "Rsqrt": F.rsqrt, "Reciprocal": F.reciprocal,
          "Sin": F.sin, "Cos": F.cos, "Tanh": F.tanh, "Sigmoid": F.sigmoid, "Erf": F.erf,
          "Softplus": F.softplus, "LogicalNot": F.logical_not, "ReLU6": NF.relu6,
          "SiLU": F.silu, "HSwish": NF.hardswish, "HSigmoid": NF.hardsigmoid}



def _c_mod(x, y):
    """ops.Mod: the remainder with the dividend's sign (C's %, fmod): Mod()(-4, 3) is -1."""
    from pijit.ops.functional2 import fmod
    return fmod(x, y)


_BINARY["Mod"] = _c_mod

_module = sys.modules[__name__]
for _name, _fn in _BINARY.items():
    setattr(_module, _name, _binary_primitive(_name, _fn))
for _name, _fn in _UNARY.items():
    setattr(_module, _name, _unary_primitive(_name, _fn))


class AddN(Primitive):
    def __call__(self, inputs):
        if not isinstance(inputs, (list, tuple)) or not inputs:
            raise TypeError("AddN takes a non-empty tuple or list of tensors")
        out = inputs[0]
        for x in inputs[1:]:
            out = out + x
        return out


class GeLU(Primitive):
    def __call__(self, x):
        return F.gelu(x)


class MatMul(Primitive):
    def __init__(self, transpose_a=False, transpose_b=False):
        super().__init__(transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))

    def __call__(self, x, y):
        if x.ndim != 2 or y.ndim != 2:
            raise ValueError("MatMul: inputs must be 2-D, got shapes %s and %s (use BatchMatMul)"
                             % (x.shape, y.shape))
        a = x.T if self.attrs["transpose_a"] else x
        b = y.T if self.attrs["transpose_b"] else y
        return F.matmul(a, b)


class BatchMatMul(MatMul):
    def __call__(self, x, y):
        a = x.mT if self.attrs["transpose_a"] else x
        b = y.mT if self.attrs["transpose_b"] else y
        return F.matmul(a, b)


class Reshape(Primitive):
    def __call__(self, x, shape):
        return F.reshape(x, shape)


class Transpose(Primitive):
    def __call__(self, x, perm):
        return F.transpose(x, perm)


class ExpandDims(Primitive):
    def __call__(self, x, axis):
        return F.expand_dims(x, axis)


class Squeeze(Primitive):
    def __init__(self, axis=()):
        super().__init__(axis=axis)

    def __call__(self, x):
        axis = self.attrs["axis"]
        return F.squeeze(x, None if axis == () else axis)


class Cast(Primitive):
    def __call__(self, x, dtype):
        return F.cast(x, dtype)


class Select(Primitive):
    def __call__(self, cond, x, y):
        return F.where(cond, x, y)


class Concat(Primitive):
    def __init__(self, axis=0):
        super().__init__(axis=axis)

    def __call__(self, tensors):
        return F.concat(tensors, self.attrs["axis"])


class Stack(Primitive):
    def __init__(self, axis=0):
        super().__init__(axis=axis)

    def __call__(self, tensors):
        return F.stack(tensors, self.attrs["axis"])


class Tile(Primitive):
    def __call__(self, x, multiples):
        return F.tile(x, multiples)


class Softmax(Primitive):
    def __init__(self, axis=-1):
        super().__init__(axis=axis)

    def __call__(self, x):
        axis = self.attrs["axis"]
        return F.softmax(x, axis[0] if isinstance(axis, (tuple, list)) else axis)


class LogSoftmax(Softmax):
    def __call__(self, x):
        return F.log_softmax(x, self.attrs["axis"])


def _reduce_primitive(name, fn):
    class P(Primitive):
        def __init__(self, keep_dims=False):
            super().__init__(keep_dims=bool(keep_dims))

        def __call__(self, x, axis=()):
            axis = None if axis == () else axis
            return fn(x, axis, keepdims=self.attrs["keep_dims"])
    P.__name__ = P.__qualname__ = name
    return P


ReduceSum = _reduce_primitive("ReduceSum", F.sum)
ReduceMean = _reduce_primitive("ReduceMean", F.mean)
ReduceMax = _reduce_primitive("ReduceMax", F.amax)
ReduceMin = _reduce_primitive("ReduceMin", F.amin)
ReduceProd = _reduce_primitive("ReduceProd", F.prod)
ReduceAll = _reduce_primitive("ReduceAll", F.all)
ReduceAny = _reduce_primitive("ReduceAny", F.any)


class Argmax(Primitive):
    def __init__(self, axis=-1, output_type=_dt.int32):
        super().__init__(axis=axis, output_type=output_type)

    def __call__(self, x):
        return F.argmax(x, self.attrs["axis"]).astype(self.attrs["output_type"])


class OneHot(Primitive):
    """OneHot(axis=-1)(indices, depth, on_value, off_value): on_value where the index is the
    position along the new `axis`, off_value elsewhere. With Tensor on/off values (MindSpore's
    form) the output takes on_value's dtype and the values stay tensors: a jitted step whose
    label smoothing computes them is one graph, never a float() of a graph value."""

    def __init__(self, axis=-1):
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError("For 'OneHot', the 'axis' must be an int, but got %r" % (axis,))
        super().__init__(axis=axis)

    def __call__(self, indices, depth, on_value, off_value):
        if not isinstance(indices, _C.TensorBase):
            raise TypeError("For 'OneHot', the 'indices' must be a Tensor, but got %s"
                            % type(indices).__name__)
        if indices.dtype not in (_dt.int32, _dt.int64):
            raise TypeError("For 'OneHot', the dtype of 'indices' must be int32 or int64, but "
                            "got %s" % indices.dtype)
        if isinstance(depth, _C.TensorBase) and depth.ndim == 0:
            depth = int(depth)  # (MindSpore accepts a 0-d Tensor depth; it fixes the shape)
        if not isinstance(depth, int) or isinstance(depth, bool):
            raise TypeError("For 'OneHot', the 'depth' must be an int, but got %r" % (depth,))
        if depth < 0:
            raise ValueError("For 'OneHot', the 'depth' must be non-negative, but got %d" % depth)
        axis = self.attrs["axis"]
        if not -1 <= axis <= indices.ndim:
            raise ValueError("For 'OneHot', the 'axis' must be in [-1, %d], but got %d"
                             % (indices.ndim, axis))
        tensors = isinstance(on_value, _C.TensorBase) or isinstance(off_value, _C.TensorBase)
        if not tensors:
            return F.one_hot(indices, depth, float(on_value), float(off_value), axis)
        if not (isinstance(on_value, _C.TensorBase) and isinstance(off_value, _C.TensorBase)):
            raise TypeError("For 'OneHot', 'on_value' and 'off_value' must both be Tensors, but "
                            "got %s and %s" % (type(on_value).__name__, type(off_value).__name__))
        if on_value.dtype is not off_value.dtype:
            raise TypeError("For 'OneHot', 'off_value' must have the dtype of 'on_value' (%s), "
                            "but got %s" % (on_value.dtype, off_value.dtype))
        if on_value.dtype is _dt.bool_ or str(on_value.dtype).lower().startswith("complex"):
            raise TypeError("For 'OneHot', the dtype of 'on_value' must be an int or float type, "
                            "but got %s" % on_value.dtype)
        hot = F.one_hot(indices, depth, 1.0, 0.0, axis)
        return F.where(F.cast(hot, _dt.bool_), on_value, off_value)


class Gather(Primitive):
    def __call__(self, params, indices, axis):
        return F.gather(params, indices, axis)


class Shape(Primitive):
    def __call__(self, x):
        return M.shape(x)


class DType(Primitive):
    def __call__(self, x):
        return M.dtype(x)


class Rank(Primitive):
    def __call__(self, x):
        return M.rank(x)


class Size(Primitive):
    def __call__(self, x):
        return M.size(x)


class Fill(Primitive):
    """Fill()(type, shape, value), as ops.fill."""

    def __call__(self, type, shape, value):
        return _creation.fill(type, shape, value)


class Ones(Primitive):
    """Ones()(shape, type), as ops.ones."""

    def __call__(self, shape, type=None):
        return _creation.ones(shape, type)


class Zeros(Primitive):
    """Zeros()(size, type), as ops.zeros."""

    def __call__(self, size, type=None):
        return _creation.zeros(size, type)


class Assign(Primitive):
    """Assign()(variable, value), as ops.assign."""

    @runtime_state("writes a Parameter in place")
    def __call__(self, variable, value):
        return M.assign(variable, value)


class Depend(Primitive):
    """Depend()(value, expr): returns value; expr was evaluated first (ordering in graphs)."""

    def __call__(self, value, expr):
        return M.depend(value, expr)


class Print(Primitive):
    """Print()(*args): prints like MindSpore's Print operator (see ops.print_)."""

    @output  # replayed after the graph
    def __call__(self, *args):
        return M.print_(*args)


class Partial(Primitive):
    """Partial()(fn, *args): fn with its first arguments bound (functools.partial)."""

    def __call__(self, fn, *args):
        if not callable(fn):
            raise TypeError("Partial: the first input must be callable, got %s"
                            % type(fn).__name__)
        return functools.partial(fn, *args)


class HyperMap(Primitive):
    """HyperMap(ops=None, reverse=False): applies a function leaf by leaf over nested tuples,
    lists and dicts of the same structure, keeping the structure. With `ops` given, call it as
    hyper_map(*inputs); without, as hyper_map(fn, *inputs). `reverse` maps from the last element
    to the first (the order in which side effects happen)."""

    def __init__(self, ops=None, reverse=False):
        super().__init__(reverse=bool(reverse))
        self.ops = ops

    def __call__(self, *args):
        fn, seqs = (self.ops, args) if self.ops is not None else (args[0] if args else None,
                                                                  args[1:])
        if not callable(fn):
            raise TypeError("HyperMap: the function to map must be callable, got %s"
                            % type(fn).__name__)
        if not seqs:
            raise TypeError("HyperMap: no inputs to map over")
        return self._map(fn, seqs)

    def _map(self, fn, xs):
        # Loops and list comprehensions, no generators: capture simulates this code when `fn`
        # is the user's (and refuses generators).
        kinds = [type(x) for x in xs if isinstance(x, (tuple, list, dict))]
        if not kinds:
            return fn(*xs)
        kind = kinds[0]
        for x in xs:
            if not isinstance(x, kind):
                raise TypeError("HyperMap: inputs must have the same structure, got %s"
                                % ", ".join([type(v).__name__ for v in xs]))
        if kind is dict:
            keys = list(xs[0])
            for x in xs[1:]:
                if list(x) != keys:
                    raise ValueError("HyperMap: dict inputs must have the same keys in the same "
                                     "order")
            order = keys[::-1] if self.attrs["reverse"] else keys
            out = {k: self._map(fn, [x[k] for x in xs]) for k in order}
            return {k: out[k] for k in keys}
        n = len(xs[0])
        for x in xs[1:]:
            if len(x) != n:
                raise ValueError("HyperMap: sequence inputs must have the same length, got %s"
                                 % ", ".join([str(len(v)) for v in xs]))
        order = range(n - 1, -1, -1) if self.attrs["reverse"] else range(n)
        out = {i: self._map(fn, [x[i] for x in xs]) for i in order}
        return kind([out[i] for i in range(n)])


class Conv2D(Primitive):
    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCHW"):
        super().__init__(out_channel=out_channel, kernel_size=kernel_size, pad_mode=pad_mode,
                         pad=pad, stride=stride, dilation=dilation, group=group)

    def __call__(self, x, weight):
        a = self.attrs
        return NF.conv2d(x, weight, None, a["stride"], a["pad_mode"], a["pad"], a["dilation"],
                         a["group"])


class BiasAdd(Primitive):
    def __call__(self, x, bias):
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return x + bias.reshape(shape)


# the second half of the primitives (StridedSlice, Split, ArgMaxWithValue, LayerNorm, ...)
from pijit.ops.primitives2 import *  # noqa: E402,F401,F403
# the linear-algebra primitives (MatrixInverse, Svd, Qr, Cholesky, ...) with their functions
from pijit.ops.linalg import *  # noqa: E402,F401,F403

# the third part (scatters on Parameters, segments, Apply* updates, ...: primitives3.py)
from pijit.ops.primitives3 import *  # noqa: E402,F401,F403
# the elementwise maths with kernels of their own (Asin, Atan2, Lgamma, BitwiseAnd, Gcd, ...)
from pijit.ops.math2 import *  # noqa: E402,F401,F403

__all__ = sorted(n for n, v in globals().items()
                 if isinstance(v, type) and issubclass(v, Primitive) and v is not Primitive)
