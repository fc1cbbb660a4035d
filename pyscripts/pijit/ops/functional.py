"""Functional ops with MindSpore's names (``ops.add``, ``ops.matmul``, ...).

Each function validates its Python arguments and calls one registry op (graph/ops/*.cc), the same
declaration eager tensors, capture and autodiff use.
"""
from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op, as_tensor as _t, operands as _operands, axes as _axes

_UNARY = ("neg", "abs", "sign", "square", "relu", "floor", "ceil", "round", "exp", "log", "log1p",
          "expm1", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "silu",
          "softplus", "erf", "logical_not")
_BINARY = ("add", "sub", "mul", "div", "floor_div", "mod", "pow", "maximum", "minimum", "eq",
           "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")


def _make_unary(name, _call=_C.op, _base=_C.TensorBase):
    # Hot path: one Python frame, no attribute dict (measured ~1 us less per call).
    def f(input):
        return _call(name, (input if isinstance(input, _base) else _t(input),))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Elementwise %s (registry op '%s')." % (name, name)
    return f


def _make_binary(name):
    def f(input, other):
        return _op(name, _operands(input, other))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = ("Elementwise %s with numpy broadcasting and type promotion (registry op '%s')."
                 % (name, name))
    return f


for _n in _UNARY:
    globals()[_n] = _make_unary(_n)
for _n in _BINARY:
    globals()[_n] = _make_binary(_n)

# MindSpore spellings
negative = globals()["neg"]
subtract = globals()["sub"]
multiply = globals()["mul"]
divide = globals()["div"]
floor_divide = floordiv = globals()["floor_div"]
remainder = globals()["mod"]
equal = globals()["eq"]
not_equal = globals()["ne"]
less = globals()["lt"]
less_equal = globals()["le"]
greater = globals()["gt"]
greater_equal = globals()["ge"]
true_divide = globals()["div"]


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError("gelu: approximate must be 'none' or 'tanh', got %r" % (approximate,))
    return _op("gelu" if approximate == "none" else "gelu_tanh", (_t(input),))


def clamp(input, min=None, max=None):
    return _op("clamp", (_t(input),), min=min, max=max)


clip = clamp


def where(condition, x, y):
    c = _t(condition)
    x, y = _operands(x, y)
    return _op("where", (c, x, y))


select = where


def cast(input, dtype):
    return _op("cast", (_t(input),), dtype=_dt.as_dtype(dtype))


def _reduction(name):
    def f(input, axis=None, keep_dims=False, keepdims=None):
        kd = keep_dims if keepdims is None else keepdims
        return _op(name, (_t(input),), axis=_axes(axis), keepdims=bool(kd))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Reduction %s over `axis` (None: all axes), optionally keeping dims." % name
    return f


sum = _reduction("sum")
mean = _reduction("mean")
prod = _reduction("prod")
amax = _reduction("max")
amin = _reduction("min")
all = _reduction("all")
any = _reduction("any")
logsumexp = _reduction("logsumexp")
reduce_sum, reduce_mean, reduce_prod, reduce_max, reduce_min = sum, mean, prod, amax, amin


def max(input, axis=None, keepdims=False):
    return _op("max", (_t(input),), axis=_axes(axis), keepdims=keepdims)


def min(input, axis=None, keepdims=False):
    return _op("min", (_t(input),), axis=_axes(axis), keepdims=keepdims)


def argmax(input, axis=None, keepdims=False):
    return _op("argmax", (_t(input),), axis=axis, keepdims=keepdims)


def argmin(input, axis=None, keepdims=False):
    return _op("argmin", (_t(input),), axis=axis, keepdims=keepdims)


def var(input, axis=None, ddof=0, keepdims=False):
    return _op("var", (_t(input),), axis=_axes(axis), keepdims=keepdims, ddof=ddof)


def std(input, axis=None, ddof=0, keepdims=False):
    return _op("std", (_t(input),), axis=_axes(axis), keepdims=keepdims, ddof=ddof)


def cumsum(input, axis):
    return _op("cumsum", (_t(input),), axis=axis)


def matmul(input, other):
    return _op("matmul", _operands(input, other))


def softmax(input, axis=-1):
    return _op("softmax", (_t(input),), axis=axis)


def log_softmax(input, axis=-1):
    return _op("log_softmax", (_t(input),), axis=axis)


def concat(tensors, axis=0):
    if isinstance(tensors, _C.TensorBase) or not isinstance(tensors, (list, tuple)):
        raise TypeError("concat expects a tuple or list of tensors, got %s" % type(tensors).__name__)
    return _op("concat", tuple(_t(x) for x in tensors), axis=axis)


cat = concat


def stack(tensors, axis=0):
    if isinstance(tensors, _C.TensorBase) or not isinstance(tensors, (list, tuple)):
        raise TypeError("stack expects a tuple or list of tensors, got %s" % type(tensors).__name__)
    return _op("stack", tuple(_t(x) for x in tensors), axis=axis)


def split(input, sections, axis=0):
    """numpy.split semantics: an int splits into that many equal parts, a sequence gives the
    indices where to cut. Returns a tuple of views."""
    if isinstance(sections, (list, tuple)):
        out = _op("split", (_t(input),), indices=tuple(sections), axis=axis)
    else:
        out = _op("split", (_t(input),), sections=int(sections), axis=axis)
    return out if isinstance(out, tuple) else (out,)


def tile(input, reps):
    return _op("tile", (_t(input),), reps=_axes(reps))


def broadcast_to(input, shape):
    return _op("broadcast_to", (_t(input),), shape=tuple(shape))


def reshape(input, shape):
    return _op("reshape", (_t(input),), shape=tuple(shape))


def transpose(input, perm):
    return _op("transpose", (_t(input),), perm=tuple(perm))


permute = transpose


def squeeze(input, axis=None):
    return _op("squeeze", (_t(input),), axis=_axes(axis))


def expand_dims(input, axis):
    return _op("expand_dims", (_t(input),), axis=axis)


unsqueeze = expand_dims


def flatten(input, start_dim=0, end_dim=-1):
    return _op("flatten", (_t(input),), start_dim=start_dim, end_dim=end_dim)


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1):
    return _op("one_hot", (_t(indices),), depth=depth, on_value=float(on_value),
               off_value=float(off_value), axis=axis)


def gather(input_params, input_indices, axis):
    return _op("gather", (_t(input_params), _t(input_indices)), axis=axis)


def index_select(input, axis, index):
    return _op("index_select", (_t(input), _t(index)), axis=axis)


def sort(input, axis=-1, descending=False):
    return _op("sort", (_t(input),), axis=axis, descending=descending)


def topk(input, k, dim=-1, largest=True, sorted=True):
    return _op("topk", (_t(input),), k=k, axis=dim, largest=largest, sorted=sorted)
