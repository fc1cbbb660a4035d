"""Functional ops with MindSpore's names and signatures (``ops.add``, ``ops.matmul``, ...).

Each function validates its Python arguments and calls registry ops (graph/ops/*.cc), the same
declarations eager tensors, capture and autodiff use: one op where one op does the work, a few
where MindSpore's meaning needs them (ops.max's indices, div's rounding modes). Nothing here reads
tensor data: under capture the tensors are symbolic, and only shapes and dtypes are known.

Where MindSpore 2.x renamed an argument (axis -> dim, keep_dims -> keepdim), the MindSpore name is
the parameter and pijit's earlier spelling stays accepted as a keyword (see _either).
"""
import builtins as _builtins

from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op, as_tensor as _t, operands as _operands, axes as _axes


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _either(who, name, value, old_name, old_value, default):
    """The value of an argument MindSpore calls `name` and pijit also accepts as `old_name`."""
    if old_value is None:
        return value
    if value is not default and not (type(value) is type(default) and value == default):
        raise TypeError("%s() got both '%s' and '%s', two names for the same argument"
                        % (who, name, old_name))
    return old_value


def _check_bool(who, name, value):
    if not isinstance(value, bool):
        raise TypeError("%s: %s must be a bool, got %r" % (who, name, value))
    return value


def _check_dim(who, name, value, ndim):
    """An int axis in [-ndim, ndim) (0-d tensors accept 0 and -1, as everywhere in pijit)."""
    if not _is_int(value):
        raise TypeError("%s: %s must be an int, got %r" % (who, name, value))
    n = _builtins.max(ndim, 1)
    if not -n <= value < n:
        raise ValueError("%s: %s=%d is out of range for a %d-D tensor (expected [%d, %d))"
                         % (who, name, value, ndim, -n, n))
    return value


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


def _make_binary(name, _call=_C.op, _base=_C.TensorBase, _operand=_C.as_operand):
    # Hot path, as the unary one: a tensor first operand (the other converted as operators do).
    def f(input, other):
        if isinstance(input, _base):
            return _call(name, (input, other if isinstance(other, _base) else _operand(other, input)))
        return _op(name, _operands(input, other))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = ("Elementwise %s with numpy broadcasting and type promotion (registry op '%s')."
                 % (name, name))
    return f


def _entry(f, name, arity):
    """f as one C entry (pijit._C._op_entry): `arity` tensors given positionally run registry op
    `name` from the call itself; any other call is f's (its name, doc and signature too)."""
    return _C._op_entry(name, arity, f)


for _n in _UNARY:
    globals()[_n] = _entry(_make_unary(_n), _n, 1)
for _n in _BINARY:
    globals()[_n] = _entry(_make_binary(_n), _n, 2)
# div, round and softplus are redefined below with MindSpore's extra arguments (rounding_mode,
# decimals, beta/threshold); the generated forms stay in the registry-name tables above.

# MindSpore spellings
negative = globals()["neg"]
subtract = globals()["sub"]
multiply = globals()["mul"]
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


mean = _reduction("mean")
amax = _reduction("max")
amin = _reduction("min")
all = _reduction("all")
any = _reduction("any")
logsumexp = _reduction("logsumexp")
reduce_sum, reduce_mean, reduce_prod = _reduction("sum"), mean, _reduction("prod")
reduce_max, reduce_min = amax, amin


def _with_dtype(x, dtype):
    """x cast to `dtype` first (MindSpore's `dtype=` on sum, prod, cumsum, softmax: the input is
    converted, so the accumulation happens in that type)."""
    if dtype is None:
        return x
    dtype = _dt.as_dtype(dtype)
    return x if x.dtype is dtype else _op("cast", (x,), dtype=dtype)


def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None, keep_dims=None, keepdims=None):
    """MindSpore's ops.sum(input, dim=None, keepdim=False, *, dtype=None): dim None sums every
    element; an int or a tuple/list of ints names the axes. dtype converts the input first.
    pijit's earlier keywords axis=, keep_dims= and keepdims= are also accepted."""
    dim = _either("sum", "dim", dim, "axis", axis, None)
    keepdim = _either("sum", "keepdim", keepdim, "keep_dims", keep_dims, False)
    keepdim = _either("sum", "keepdim", keepdim, "keepdims", keepdims, False)
    x = _with_dtype(_t(input), dtype)
    return _op("sum", (x,), axis=_axes(dim), keepdims=_check_bool("sum", "keepdim", keepdim))


def prod(input, axis=None, keep_dims=False, dtype=None, *, keepdims=None):
    """MindSpore's ops.prod(input, axis=None, keep_dims=False, dtype=None); dtype converts the
    input first. keepdims= is accepted as another name for keep_dims."""
    keep_dims = _either("prod", "keep_dims", keep_dims, "keepdims", keepdims, False)
    x = _with_dtype(_t(input), dtype)
    return _op("prod", (x,), axis=_axes(axis), keepdims=_check_bool("prod", "keep_dims", keep_dims))


def _initial_and_where(who, x, initial, where_):
    """MindSpore's `initial` and `where` for max/min along one axis: elements are first clamped
    by `initial` (max: maximum(x, initial); min: minimum), then those where `where_` is False are
    replaced by `initial`; the reduction and its indices see the result."""
    if initial is not None:
        if isinstance(initial, bool) or not isinstance(initial, (int, float)):
            raise TypeError("%s: initial must be a number, got %r" % (who, initial))
        init = _op("full", (), shape=(), value=initial, dtype=x.dtype)
        x = _op("maximum" if who == "max" else "minimum", (x, init))
    if where_ is None or where_ is True:
        return x
    if initial is None:
        raise ValueError("%s: where needs initial (the value masked-out elements take)" % who)
    mask = _t(where_)
    if mask.dtype is not _dt.bool_:
        mask = _op("cast", (mask,), dtype=_dt.bool_)
    out = _op("where", (mask, x, init))
    if out.shape != x.shape:
        raise ValueError("%s: where of shape %s does not broadcast to the input's shape %s"
                         % (who, mask.shape, x.shape))
    return out


def _extreme(who, input, axis, keepdims, initial, where_, with_index):
    """ops.max/ops.min and Tensor.max/Tensor.min: (values, indices) when with_index, else values.
    As MindSpore documents, axis None reduces every element and ignores keepdims, initial and
    where, and its index is 0."""
    x = _t(input)
    if axis is None:
        values = _op(who, (x,), axis=None, keepdims=False)
        if not with_index:
            return values
        return values, _op("full", (), shape=(), value=0, dtype=_dt.int64)
    if isinstance(axis, (list, tuple)):
        raise TypeError("%s: axis must be an int or None, got %r (ops.a%s reduces several axes)"
                        % (who, axis, who))
    _check_dim(who, "axis", axis, x.ndim)
    _check_bool(who, "keepdims", keepdims)
    x = _initial_and_where(who, x, initial, where_)
    values = _op(who, (x,), axis=(axis,), keepdims=keepdims)
    if not with_index:
        return values
    return values, _op("arg" + who, (x,), axis=axis, keepdims=keepdims)


def max(input, axis=None, keepdims=False, *, initial=None, where=None):
    """MindSpore's ops.max: a tuple (values, indices) of the maximum along the int `axis` (the
    first index among equal maxima; indices are int64). axis None: the maximum of every element
    and index 0, keepdims, initial and where then having no effect (MindSpore's documented rule).
    initial: the smallest value an output may take; where (bool tensor broadcast to the input):
    elements to include, the others count as `initial` (which where then requires).
    For a multi-axis maximum use ops.amax."""
    return _extreme("max", input, axis, keepdims, initial, where, True)


def min(input, axis=None, keepdims=False, *, initial=None, where=None):
    """MindSpore's ops.min: as ops.max, with the minimum; initial is the largest value an output
    may take."""
    return _extreme("min", input, axis, keepdims, initial, where, True)


def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """MindSpore's ops.argmax(input, dim=None, keepdim=False): int64 indices of the maxima along
    `dim` (None: of the flattened tensor). axis= and keepdims= are accepted as the same."""
    dim = _either("argmax", "dim", dim, "axis", axis, None)
    keepdim = _either("argmax", "keepdim", keepdim, "keepdims", keepdims, False)
    return _op("argmax", (_t(input),), axis=dim, keepdims=keepdim)


def argmin(input, axis=None, keepdims=False):
    return _op("argmin", (_t(input),), axis=axis, keepdims=keepdims)


def var(input, axis=None, ddof=0, keepdims=False):
    return _op("var", (_t(input),), axis=_axes(axis), keepdims=keepdims, ddof=ddof)


def std(input, axis=None, ddof=0, keepdims=False):
    return _op("std", (_t(input),), axis=_axes(axis), keepdims=keepdims, ddof=ddof)


def cumsum(x, axis, dtype=None):
    """MindSpore's ops.cumsum(x, axis, dtype=None): the running sum along `axis` (None: over the
    flattened tensor). dtype converts the input first; without it the result keeps the input's
    dtype (int32 stays int32; bool counts in int64)."""
    t = _t(x)
    want = t.dtype if dtype is None else _dt.as_dtype(dtype)
    out = _op("cumsum", (_with_dtype(t, dtype),), axis=axis)
    if out.dtype is not want and want is not _dt.bool_:
        out = _op("cast", (out,), dtype=want)
    return out


def matmul(input, other):
    return _op("matmul", _operands(input, other))


def softmax(input, axis=-1, *, dtype=None):
    """MindSpore's ops.softmax(input, axis=-1, *, dtype=None); dtype converts the input first."""
    return _op("softmax", (_with_dtype(_t(input), dtype),), axis=axis)


def log_softmax(input, axis=-1):
    return _op("log_softmax", (_t(input),), axis=axis)


def div(input, other, *, rounding_mode=None):
    """MindSpore's ops.div(input, other, *, rounding_mode=None): true division (None), rounded
    down ("floor", Python's //) or towards zero ("trunc", C's integer division). Two integer
    inputs keep an integer result under "floor" and "trunc"."""
    a, b = _operands(input, other)
    if rounding_mode is None:
        return _op("div", (a, b))
    if rounding_mode == "floor":
        return _op("floor_div", (a, b))
    if rounding_mode != "trunc":
        raise ValueError("div: rounding_mode must be None, 'floor' or 'trunc', got %r"
                         % (rounding_mode,))
    if a.dtype.is_floating_point or b.dtype.is_floating_point:
        q = _op("div", (a, b))
        return _op("mul", (_op("sign", (q,)), _op("floor", (_op("abs", (q,)),))))
    # Integers: |a| // |b| is the truncated quotient's magnitude, exact at any size.
    mag = _op("floor_div", (_op("abs", (a,)), _op("abs", (b,))))
    return _op("mul", (_op("mul", (_op("sign", (a,)), _op("sign", (b,)))), mag))


div = _entry(div, "div", 2)  # (div(a, b) of two tensors: rounding_mode None, the registry's div)
divide = div


def round(input, *, decimals=0):
    """MindSpore's ops.round(input, *, decimals=0): round half to even, to `decimals` places
    (negative: to tens, hundreds, ...), computed as numpy does (scale, round, unscale).
    Integer inputs take decimals=0 only (MindSpore raises RuntimeError otherwise)."""
    x = _t(input)
    if not _is_int(decimals):
        raise TypeError("round: decimals must be an int, got %r" % (decimals,))
    if decimals == 0:
        return _op("round", (x,))
    if not x.dtype.is_floating_point:
        raise RuntimeError("round: decimals must be 0 for an integer input (%s), got %d"
                           % (x.dtype, decimals))
    if decimals > 0:
        scale = 10.0 ** decimals
        return _op("round", (x * scale,)) / scale
    scale = 10.0 ** -decimals
    return _op("round", (x / scale,)) * scale


round = _entry(round, "round", 1)  # (round(x): decimals 0, the registry's round)

def softplus(input, beta=1, threshold=20):
    """MindSpore's ops.softplus(input, beta=1, threshold=20): log(1 + exp(beta * x)) / beta, and
    x itself where beta * x > threshold. With the defaults this is the registry's stable softplus
    alone: above 20 it differs from x by under exp(-20) ~ 2e-9 (nothing in float32)."""
    x = _t(input)
    for name, v in (("beta", beta), ("threshold", threshold)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError("softplus: %s must be a number, got %r" % (name, v))
    if beta == 1 and threshold == 20:
        return _op("softplus", (x,))
    if beta == 0:
        raise ValueError("softplus: beta must be non-zero, got 0")
    bx = x if beta == 1 else x * beta
    sp = _op("softplus", (bx,))
    if beta != 1:
        sp = sp / beta
    return _op("where", (bx > threshold, x, sp))


softplus = _entry(softplus, "softplus", 1)  # (softplus(x): the defaults, the registry's softplus)

def concat(tensors, axis=0):
    if isinstance(tensors, _C.TensorBase) or not isinstance(tensors, (list, tuple)):
        raise TypeError("concat expects a tuple or list of tensors, got %s" % type(tensors).__name__)
    return _op("concat", tuple(_t(x) for x in tensors), axis=axis)


cat = concat


def stack(tensors, axis=0):
    if isinstance(tensors, _C.TensorBase) or not isinstance(tensors, (list, tuple)):
        raise TypeError("stack expects a tuple or list of tensors, got %s" % type(tensors).__name__)
    return _op("stack", tuple(_t(x) for x in tensors), axis=axis)


def split(tensor, split_size_or_sections, axis=0):
    """MindSpore's ops.split: an int is the size of each chunk along `axis` (the last may be
    smaller); a tuple/list gives the size of every chunk and must sum to the axis length.
    Returns a tuple of views."""
    x = _t(tensor)
    if x.ndim == 0:
        raise ValueError("split: cannot split a 0-d tensor")
    n = x.shape[_check_dim("split", "axis", axis, x.ndim)]
    s = split_size_or_sections
    if _is_int(s):
        if s <= 0:
            raise ValueError("split: split_size_or_sections must be positive, got %d" % s)
        cuts = tuple(range(s, n, s))
    elif isinstance(s, (list, tuple)):
        if not _builtins.all(_is_int(v) for v in s):
            raise TypeError("split: split_size_or_sections must hold ints, got %r" % (s,))
        if _builtins.any(v < 0 for v in s) or _builtins.sum(s) != n:
            raise ValueError("split: split_size_or_sections %r must be non-negative and sum to "
                             "the length of axis %d (%d)" % (tuple(s), axis, n))
        cuts, at = [], 0
        for v in s[:-1]:
            at += v
            cuts.append(at)
        cuts = tuple(cuts)
    else:
        raise TypeError("split: split_size_or_sections must be an int or a tuple/list of ints, "
                        "got %r" % (s,))
    out = _op("split", (x,), indices=cuts, axis=axis)
    return out if isinstance(out, tuple) else (out,)


def tile(input, reps):
    return _op("tile", (_t(input),), reps=_axes(reps))


def broadcast_to(input, shape):
    return _op("broadcast_to", (_t(input),), shape=tuple(shape))


def reshape(input, shape):
    return _op("reshape", (_t(input),), shape=tuple(shape))


reshape.__pijit_shape_args__ = True  # (see Tensor.reshape)


def transpose(input, perm):
    return _op("transpose", (_t(input),), perm=tuple(perm))


permute = transpose


def squeeze(input, axis=None):
    return _op("squeeze", (_t(input),), axis=_axes(axis))


def expand_dims(input, axis):
    return _op("expand_dims", (_t(input),), axis=axis)


def unsqueeze(input, dim=None, *, axis=None):
    """MindSpore's ops.unsqueeze(input, dim); axis= is accepted as the same."""
    dim = _either("unsqueeze", "dim", dim, "axis", axis, None)
    if dim is None:
        raise TypeError("unsqueeze() missing required argument: 'dim'")
    return _op("expand_dims", (_t(input),), axis=dim)


def _flatten(who, input, order, more, start_dim, end_dim):
    """MindSpore's flatten: dims start_dim..end_dim become one; order 'F' flattens in column-major
    order (MindSpore reverses every dim first, then flattens). A 0-d or 1-d input gives 1-d.
    pijit's earlier positional form flatten(x, start_dim[, end_dim]) is read from `order` and
    `more`: an int is never a MindSpore order, so no MindSpore call changes meaning."""
    x = _t(input)
    if _is_int(order):
        if len(more) > 1:
            raise TypeError("%s() takes at most 2 positional dims, got %d" % (who, 1 + len(more)))
        start_dim, end_dim, order = order, (more[0] if more else end_dim), "C"
    elif more:
        raise TypeError("%s(): after order, start_dim and end_dim are keyword-only" % who)
    if not isinstance(order, str):
        raise TypeError("%s: order must be a str, got %r" % (who, order))
    if order not in ("C", "F"):
        raise ValueError("%s: order must be 'C' or 'F', got %r" % (who, order))
    nd = x.ndim
    if nd <= 1 and (start_dim, end_dim) == (1, -1):  # ops.flatten's default on 0-d/1-d: 1-d
        start_dim = 0
    s = _check_dim(who, "start_dim", start_dim, nd) % _builtins.max(nd, 1)
    e = _check_dim(who, "end_dim", end_dim, nd) % _builtins.max(nd, 1)
    if s > e:
        raise ValueError("%s: start_dim (%d) comes after end_dim (%d)" % (who, start_dim, end_dim))
    if order == "F" and nd > 1:
        x = _op("transpose", (x,), perm=tuple(reversed(range(nd))))
    if nd <= 1:
        s, e = 0, -1
    return _op("flatten", (x,), start_dim=s, end_dim=e)


def flatten(input, order="C", *more, start_dim=1, end_dim=-1):
    """MindSpore's ops.flatten(input, order='C', *, start_dim=1, end_dim=-1): by default keeps
    dim 0, (N, C, H, W) -> (N, C*H*W)."""
    return _flatten("flatten", input, order, more, start_dim, end_dim)


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1):
    return _op("one_hot", (_t(indices),), depth=depth, on_value=float(on_value),
               off_value=float(off_value), axis=axis)


def gather(input_params, input_indices, axis):
    return _op("gather", (_t(input_params), _t(input_indices)), axis=axis)


def index_select(input, axis, index):
    return _op("index_select", (_t(input), _t(index)), axis=axis)


def sort(input_x, axis=-1, descending=False):
    """MindSpore's ops.sort(input_x, axis=-1, descending=False) -> (values, int64 indices); the
    sort is stable."""
    return _op("sort", (_t(input_x),), axis=axis, descending=_check_bool("sort", "descending",
                                                                         descending))


def topk(input, k, dim=None, largest=True, sorted=True):
    """MindSpore's ops.topk(input, k, dim=None, largest=True, sorted=True) -> (values, indices);
    dim None is the last dim."""
    return _op("topk", (_t(input),), k=k, axis=-1 if dim is None else dim, largest=largest,
               sorted=sorted)


# MindSpore's `ops.functional` (imported as F) also carries the graph utilities and queries:
# F.depend, F.assign, F.shape, ... (defined in misc, which builds on the functions above).
from pijit.ops.misc import *  # noqa: E402,F401,F403
from pijit.autodiff import grad, value_and_grad  # noqa: E402,F401  (F.grad, as MindSpore's F has it)


def partial(fn, *args):
    """F.partial(fn, *args): fn with its first arguments bound, as MindSpore's functional partial
    (model-zoo code maps F.partial(clip_grad, type, value) over the gradients with a HyperMap).
    A closure rather than functools.partial, so that capture follows the call through it."""
    if not callable(fn):
        raise TypeError("partial: the first input must be callable, got %s" % type(fn).__name__)

    def bound(*more, **kwargs):
        return fn(*(args + more), **kwargs)
    return bound


def make_range(start, limit=None, delta=1):
    """F.make_range(limit) or F.make_range(start, limit, delta=1): the tuple of Python ints
    range(...) gives, as MindSpore's graph-time make_range (BERT's masked-LM head builds its flat
    offsets from it); the arguments must be ints."""
    for name, v in (("start", start), ("limit", limit), ("delta", delta)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise TypeError("make_range: %s must be an int, got %s" % (name, type(v).__name__))
    if delta == 0:
        raise ValueError("make_range: delta must not be 0")
    return tuple(range(start)) if limit is None else tuple(range(start, limit, delta))


def __getattr__(name):
    # mindspore.ops.functional.jvp: ops' own jvp, looked up on first use (pijit.ops.special2
    # imports this module, so it cannot be imported at the top)
    if name == "jvp":
        from pijit.ops.special2 import jvp
        return jvp
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
