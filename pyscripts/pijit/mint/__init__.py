"""mindspore.mint: MindSpore's PyTorch-style API (MindSpore 2.3+), over pijit's registry ops.

Names and arguments follow torch as mint documents them: `dim` and `keepdim`, sizes as tuples or
ints, `alpha` on add/sub, max/min returning (values, indices) with a dim, creation functions with a
keyword-only dtype. mint.nn holds the layers (Linear, Conv2d, ...), mint.nn.functional the
functions, mint.optim the optimizers (AdamW, Adam, SGD)."""
import builtins as _builtins

from pijit import _C
from pijit import dtype as _dt
from pijit import creation as _creation
from pijit._ops_common import op as _op, as_tensor as _t, operands as _operands
from pijit.ops import functional as _F
from pijit.mint.nn import functional as _NNF


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _dims(dim):
    """None -> None (every dim); an int -> (int,); a tuple or list -> tuple."""
    if dim is None:
        return None
    return tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)


def _cast(x, dtype):
    if dtype is None:
        return x
    dtype = _dt.as_dtype(dtype)
    return x if x.dtype is dtype else _op("cast", (x,), dtype=dtype)


def _size(who, size):
    if len(size) == 1 and isinstance(size[0], (tuple, list, _C.TensorBase)):
        size = size[0]
    return _creation._size(who, size)


# ---- creation ------------------------------------------------------------------------------------

def zeros(*size, dtype=None):
    """A tensor of zeros; size as ints or one tuple/list; float32 unless dtype says otherwise."""
    return _op("full", (), shape=_size("zeros", size), value=0, dtype=_cast_dtype(dtype))


def ones(*size, dtype=None):
    return _op("full", (), shape=_size("ones", size), value=1, dtype=_cast_dtype(dtype))


def empty(*size, dtype=None):
    """Zero-filled: pijit never hands out uninitialised memory."""
    return zeros(*size, dtype=dtype)


def _cast_dtype(dtype, default=None):
    if dtype is None:
        return _dt.float32 if default is None else default
    return _dt.as_dtype(dtype)


def full(size, fill_value, *, dtype=None):
    """A tensor of size filled with fill_value; the dtype follows the value (bool, int64,
    float32) unless given."""
    return _creation.full(size, fill_value, dtype=dtype)


def zeros_like(input, *, dtype=None):
    x = _t(input)
    return _op("full", (), shape=tuple(x.shape), value=0, dtype=_cast_dtype(dtype, x.dtype))


def ones_like(input, *, dtype=None):
    x = _t(input)
    return _op("full", (), shape=tuple(x.shape), value=1, dtype=_cast_dtype(dtype, x.dtype))


def empty_like(input, *, dtype=None):
    return zeros_like(input, dtype=dtype)


def full_like(input, fill_value, *, dtype=None):
    x = _t(input)
    return _creation.full(tuple(x.shape), fill_value, dtype=_cast_dtype(dtype, x.dtype))


def arange(start=0, end=None, step=1, *, dtype=None):
    """Values from start up to end, step apart; int64 when every bound is an int, else float32."""
    return _creation.arange(start, end, step, dtype)


def linspace(start, end, steps, *, dtype=None):
    return _creation.linspace(start, end, steps, dtype)


def eye(n, m=None, dtype=None):
    return _creation.eye(n, m, dtype)


def rand(*size, generator=None, dtype=None):
    return _creation.rand(*size, dtype=dtype)


def randn(*size, generator=None, dtype=None):
    return _creation.randn(*size, dtype=dtype)


def rand_like(input, *, dtype=None):
    x = _t(input)
    return _creation.rand(tuple(x.shape), dtype=_cast_dtype(dtype, x.dtype))


def randn_like(input, *, dtype=None):
    x = _t(input)
    return _creation.randn(tuple(x.shape), dtype=_cast_dtype(dtype, x.dtype))


def randint(*args, size=None, generator=None, dtype=None):
    """randint(high, size) or randint(low, high, size): integers in [low, high), int64."""
    if size is not None:
        args = args + (size,)
    if len(args) == 2:
        low, high, size = 0, args[0], args[1]
    elif len(args) == 3:
        low, high, size = args
    else:
        raise TypeError("randint() takes (high, size) or (low, high, size)")
    return _creation.randint(low, high, tuple(size), dtype=dtype)


def clone(input):
    return _op("copy", (_t(input),))


# ---- elementwise ---------------------------------------------------------------------------------

def _scaled(who, input, other, alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
        raise TypeError("%s: alpha must be a number, got %r" % (who, alpha))
    a, b = _operands(input, other)
    if alpha != 1:
        b = b * alpha
    return a, b


def add(input, other, *, alpha=1):
    """input + alpha * other."""
    return _op("add", _scaled("add", input, other, alpha))


def sub(input, other, *, alpha=1):
    """input - alpha * other."""
    return _op("sub", _scaled("sub", input, other, alpha))


subtract = sub


def div(input, other, *, rounding_mode=None):
    return _F.div(input, other, rounding_mode=rounding_mode)


divide = div
true_divide = _F.div


def clamp(input, min=None, max=None):
    """input limited to [min, max]; either bound may be None, a number or a tensor."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must not be None")
    x = _t(input)
    if isinstance(min, _C.TensorBase) or isinstance(max, _C.TensorBase):
        if min is not None:
            x = _op("maximum", _operands(x, min))
        if max is not None:
            x = _op("minimum", _operands(x, max))
        return x
    return _op("clamp", (x,), min=min, max=max)


clip = clamp


def round(input, *, decimals=0):  # noqa: A001
    return _F.round(input, decimals=decimals)


def trunc(input):
    x = _t(input)
    if not x.dtype.is_floating_point:
        return _op("copy", (x,))
    return _op("mul", (_op("sign", (x,)), _op("floor", (_op("abs", (x,)),))))


fix = trunc


def fmod(input, other):
    """The remainder of input / other with the sign of input (C's fmod)."""
    from pijit.numpy.math_ops import fmod as _fmod
    return _fmod(input, other)


def remainder(input, other):
    """The remainder with the sign of other (Python's %)."""
    return _op("mod", _operands(input, other))


def isfinite(input):
    from pijit.numpy.logic_ops import isfinite as _f
    return _f(_t(input))


def isnan(input):
    x = _t(input)
    return _op("ne", (x, x))


def isinf(input):
    from pijit.numpy.logic_ops import isinf as _f
    return _f(_t(input))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol |other| elementwise."""
    from pijit.numpy.logic_ops import isclose as _f
    return _f(_t(input), _t(other), rtol, atol, equal_nan)


def log2(input):
    import math
    return _op("log", (_float(_t(input)),)) * (1.0 / math.log(2.0))


def log10(input):
    import math
    return _op("log", (_float(_t(input)),)) * (1.0 / math.log(10.0))


def exp2(input):
    x = _float(_t(input))
    return _op("pow", (_C.as_operand(2.0, x), x))


def _float(x):
    return x if x.dtype.is_floating_point else _op("cast", (x,), dtype=_dt.float32)


def _unary(name, opname, to_float=False):
    def f(input):
        x = _t(input)
        return _op(opname, (_float(x) if to_float else x,))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Elementwise %s." % name
    return f


abs = _unary("abs", "abs")  # noqa: A001
absolute = abs
neg = negative = _unary("neg", "neg")
exp = _unary("exp", "exp", True)
expm1 = _unary("expm1", "expm1", True)
log = _unary("log", "log", True)
log1p = _unary("log1p", "log1p", True)
sqrt = _unary("sqrt", "sqrt", True)
rsqrt = _unary("rsqrt", "rsqrt", True)
square = _unary("square", "square")
reciprocal = _unary("reciprocal", "reciprocal", True)
sin = _unary("sin", "sin", True)
cos = _unary("cos", "cos", True)
tan = _unary("tan", "tan", True)
tanh = _unary("tanh", "tanh", True)
sigmoid = _unary("sigmoid", "sigmoid", True)
erf = _unary("erf", "erf", True)
floor = _unary("floor", "floor")
ceil = _unary("ceil", "ceil")
sign = _unary("sign", "sign")
logical_not = _unary("logical_not", "logical_not")


def _binary(name, opname):
    def f(input, other):
        return _op(opname, _operands(input, other))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Elementwise %s with broadcasting." % name
    return f


mul = multiply = _binary("mul", "mul")
pow = _binary("pow", "pow")  # noqa: A001
maximum = _binary("maximum", "maximum")
minimum = _binary("minimum", "minimum")
eq = _binary("eq", "eq")
ne = not_equal = _binary("ne", "ne")
gt = greater = _binary("gt", "gt")
ge = greater_equal = _binary("ge", "ge")
lt = less = _binary("lt", "lt")
le = less_equal = _binary("le", "le")
floor_divide = _binary("floor_divide", "floor_div")


def _logical(name, opname):
    def f(input, other):
        a, b = _operands(input, other)
        if a.dtype is not _dt.bool_:
            a = _op("ne", (a, _C.as_operand(0, a)))
        if b.dtype is not _dt.bool_:
            b = _op("ne", (b, _C.as_operand(0, b)))
        return _op(opname, (a, b))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "Elementwise logical %s (non-zero is true); a bool tensor." % name
    return f


logical_and = _logical("logical_and", "logical_and")
logical_or = _logical("logical_or", "logical_or")
logical_xor = _logical("logical_xor", "logical_xor")


def where(condition, input, other):
    return _F.where(condition, input, other)


# ---- linear algebra ------------------------------------------------------------------------------

def matmul(input, other):
    return _op("matmul", _operands(input, other))


def mm(input, mat2):
    a, b = _t(input), _t(mat2)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError("mm: both inputs must be 2-D, got %d-D and %d-D" % (a.ndim, b.ndim))
    return _op("matmul", (a, b))


def bmm(input, mat2):
    """Batched matrix product of (B, N, M) and (B, M, P)."""
    a, b = _t(input), _t(mat2)
    if a.ndim != 3 or b.ndim != 3:
        raise ValueError("bmm: both inputs must be 3-D, got %d-D and %d-D" % (a.ndim, b.ndim))
    if a.shape[0] != b.shape[0]:
        raise ValueError("bmm: batch sizes differ (%d and %d)" % (a.shape[0], b.shape[0]))
    return _op("matmul", (a, b))


def _add_scaled(who, input, prod, beta, alpha):
    out = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return out
    x = _t(input)
    return out + (x if beta == 1 else x * beta)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2)."""
    return _add_scaled("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * mm(mat1, mat2)."""
    return _add_scaled("addmm", input, mm(mat1, mat2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * the sum over the batch of bmm(batch1, batch2)."""
    prod = _op("sum", (bmm(batch1, batch2),), axis=(0,), keepdims=False)
    return _add_scaled("addbmm", input, prod, beta, alpha)


def outer(input, vec2):
    a, b = _t(input), _t(vec2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("outer: both inputs must be 1-D")
    return _op("mul", (_op("reshape", (a,), shape=(-1, 1)), _op("reshape", (b,), shape=(1, -1))))


def dot(input, other):
    a, b = _t(input), _t(other)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("dot: both inputs must be 1-D")
    return _op("sum", (a * b,), axis=None, keepdims=False)


# ---- reductions ----------------------------------------------------------------------------------

def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    return _F.sum(input, dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    x = _cast(_t(input), dtype)
    return _op("mean", (x,), axis=_dims(dim), keepdims=bool(keepdim))


def prod(input, dim=None, keepdim=False, *, dtype=None):
    x = _cast(_t(input), dtype)
    return _op("prod", (x,), axis=_dims(dim), keepdims=bool(keepdim))


def _max_min(who, input, dim, keepdim, other):
    x = _t(input)
    if isinstance(dim, _C.TensorBase) or other is not None:
        o = dim if other is None else other
        return _op("maximum" if who == "max" else "minimum", _operands(x, o))
    if dim is None:
        return _op(who, (x,), axis=None, keepdims=False)
    return _F._extreme(who, x, dim, keepdim, None, None, True)


def max(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    """max(input): the largest element; max(input, dim, keepdim=False): (values, int64 indices)
    along dim; max(input, other_tensor): the elementwise maximum."""
    return _max_min("max", input, dim, keepdim, other)


def min(input, dim=None, keepdim=False, *, other=None):  # noqa: A001
    return _max_min("min", input, dim, keepdim, other)


def amax(input, dim=(), keepdim=False):
    """The maximum over dim (() or None: every dim)."""
    return _op("max", (_t(input),), axis=_dims(dim) or None, keepdims=bool(keepdim))


def amin(input, dim=(), keepdim=False):
    return _op("min", (_t(input),), axis=_dims(dim) or None, keepdims=bool(keepdim))


def argmax(input, dim=None, keepdim=False):
    return _op("argmax", (_t(input),), axis=dim, keepdims=bool(keepdim))


def argmin(input, dim=None, keepdim=False):
    return _op("argmin", (_t(input),), axis=dim, keepdims=bool(keepdim))


def all(input, dim=None, keepdim=False):  # noqa: A001
    x = _t(input)
    if x.dtype is not _dt.bool_:
        x = _op("ne", (x, _C.as_operand(0, x)))
    return _op("all", (x,), axis=_dims(dim), keepdims=bool(keepdim))


def any(input, dim=None, keepdim=False):  # noqa: A001
    x = _t(input)
    if x.dtype is not _dt.bool_:
        x = _op("ne", (x, _C.as_operand(0, x)))
    return _op("any", (x,), axis=_dims(dim), keepdims=bool(keepdim))


def _correction(who, correction, unbiased):
    if unbiased is not None:
        return 1 if unbiased else 0
    if not _is_int(correction):
        raise TypeError("%s: correction must be an int, got %r" % (who, correction))
    return correction


def var(input, dim=None, *, correction=1, keepdim=False):
    """The variance over dim with Bessel's correction (correction=1) by default."""
    return _op("var", (_float(_t(input)),), axis=_dims(dim), keepdims=bool(keepdim),
               ddof=_correction("var", correction, None))


def std(input, dim=None, *, correction=1, keepdim=False):
    return _op("std", (_float(_t(input)),), axis=_dims(dim), keepdims=bool(keepdim),
               ddof=_correction("std", correction, None))


def logsumexp(input, dim, keepdim=False):
    return _op("logsumexp", (_float(_t(input)),), axis=_dims(dim), keepdims=bool(keepdim))


def cumsum(input, dim, dtype=None):
    """The running sum along dim; dtype converts the input first."""
    return _F.cumsum(input, dim, dtype)


def softmax(input, dim, dtype=None):
    return _NNF.softmax(input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    return _NNF.log_softmax(input, dim, dtype)


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    return _F.topk(input, k, dim, largest, sorted)


def sort(input, *, dim=-1, descending=False, stable=False):
    """(values, int64 indices), sorted along dim (pijit's sort is always stable)."""
    return _F.sort(input, dim, descending)


def argsort(input, dim=-1, descending=False, stable=False):
    return _F.sort(input, dim, descending)[1]


# ---- shapes, joining, indexing -------------------------------------------------------------------

def cat(tensors, dim=0):
    return _F.concat(tensors, dim)


concat = cat


def stack(tensors, dim=0):
    return _F.stack(tensors, dim)


def split(tensor, split_size_or_sections, dim=0):
    """An int: chunks of that size along dim (the last may be smaller); a list: the chunk sizes."""
    return _F.split(tensor, split_size_or_sections, dim)


def chunk(input, chunks, dim=0):
    """chunks pieces of ceil(size / chunks) along dim (fewer when that already covers it)."""
    x = _t(input)
    if not _is_int(chunks) or chunks <= 0:
        raise ValueError("chunk: chunks must be a positive int, got %r" % (chunks,))
    n = x.shape[dim]
    size = -(-n // chunks) if n else 1
    return _F.split(x, _builtins.max(size, 1), dim)


def narrow(input, dim, start, length):
    """length elements of input along dim from start (a view)."""
    x = _t(input)
    d = _F._check_dim("narrow", "dim", dim, x.ndim) % _builtins.max(x.ndim, 1)
    n = x.shape[d]
    if start < 0:
        start += n
    if not 0 <= start <= n or length < 0 or start + length > n:
        raise ValueError("narrow: start %d and length %d do not fit dim %d of size %d"
                         % (start, length, dim, n))
    return x[(slice(None),) * d + (slice(start, start + length),)]


def index_select(input, dim, index):
    return _op("index_select", (_t(input), _t(index)), axis=dim)


def gather(input, dim, index):
    """out[i][j] = input[index[i][j]][j] for dim 0 (torch's gather: index has input's ndim)."""
    from pijit.numpy.array_ops import take_along_axis
    x, idx = _t(input), _t(index)
    if idx.ndim != x.ndim:
        raise ValueError("gather: index must have as many dims as input (%d), got %d"
                         % (x.ndim, idx.ndim))
    d = _F._check_dim("gather", "dim", dim, x.ndim) % _builtins.max(x.ndim, 1)
    # index may be smaller than input along the other dims: slice input down to it first.
    sl = tuple(slice(None) if i == d else slice(0, idx.shape[i]) for i in range(x.ndim))
    return take_along_axis(x[sl], idx, d)


def scatter_add(input, dim, index, src):
    """A copy of input with src added at index along dim."""
    return _op("scatter_add", (_t(input), _t(index), _t(src)), axis=dim)


def flatten(input, start_dim=0, end_dim=-1):
    x = _t(input)
    return _F.flatten(x, start_dim=start_dim, end_dim=end_dim) if x.ndim > 0 else \
        _op("reshape", (x,), shape=(1,))


def reshape(input, shape):
    return _op("reshape", (_t(input),), shape=tuple(shape))


def permute(input, dims):
    return _op("transpose", (_t(input),), perm=tuple(dims))


def transpose(input, dim0, dim1):
    x = _t(input)
    perm = list(range(x.ndim))
    a = _F._check_dim("transpose", "dim0", dim0, x.ndim) % _builtins.max(x.ndim, 1)
    b = _F._check_dim("transpose", "dim1", dim1, x.ndim) % _builtins.max(x.ndim, 1)
    perm[a], perm[b] = perm[b], perm[a]
    return _op("transpose", (x,), perm=tuple(perm))


swapaxes = transpose


def squeeze(input, dim=None):
    """Removes size-1 dims (only those named by dim; a named dim of another size stays)."""
    x = _t(input)
    if dim is None:
        return _op("squeeze", (x,), axis=None)
    dims = tuple(d % _builtins.max(x.ndim, 1) for d in _dims(dim) if x.ndim and x.shape[d] == 1)
    return _op("squeeze", (x,), axis=dims) if dims else x


def unsqueeze(input, dim):
    return _op("expand_dims", (_t(input),), axis=dim)


def flip(input, dims):
    from pijit.numpy.array_ops import flip as _flip
    return _flip(_t(input), tuple(dims) if isinstance(dims, (list, tuple)) else dims)


def roll(input, shifts, dims=None):
    from pijit.numpy.array_ops import roll as _roll
    return _roll(_t(input), shifts, dims)


def tile(input, dims):
    return _op("tile", (_t(input),), reps=tuple(dims) if isinstance(dims, (list, tuple)) else (dims,))


def broadcast_to(input, size):
    return _op("broadcast_to", (_t(input),), shape=tuple(size))


def repeat_interleave(input, repeats, dim=None, *, output_size=None):
    """Each element repeated (of the flattened input when dim is None); repeats an int or one per
    element along dim."""
    x = _t(input)
    if dim is None:
        x, dim = _op("reshape", (x,), shape=(-1,)), 0
    if isinstance(repeats, _C.TensorBase):
        repeats = repeats.tolist() if repeats.ndim else repeats.item()
    return x.repeat(repeats, axis=dim)


def tril(input, diagonal=0):
    from pijit.numpy.array_creations import tril as _tril
    return _tril(_t(input), diagonal)


def triu(input, diagonal=0):
    from pijit.numpy.array_creations import triu as _triu
    return _triu(_t(input), diagonal)


def nonzero(input, *, as_tuple=False):
    """The int64 indices of the non-zero elements: an (n, ndim) tensor, or one 1-D tensor per dim
    with as_tuple. The count depends on the data: under jit this breaks the graph."""
    from pijit.numpy.array_ops import where as _where
    x = _t(input)
    idx = tuple(_op("cast", (i,), dtype=_dt.int64) for i in _where(x))
    if as_tuple:
        return idx
    return _op("stack", idx, axis=1)


def masked_select(input, mask):
    """The elements of input where mask holds, as a 1-D tensor (data-dependent size)."""
    x, m = _t(input), _t(mask)
    shape = tuple(_builtins.max(a, b) for a, b in zip((1,) * (m.ndim - x.ndim) + tuple(x.shape),
                                                      (1,) * (x.ndim - m.ndim) + tuple(m.shape)))
    return _op("broadcast_to", (x,), shape=shape)[_op("broadcast_to", (m,), shape=shape)]


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """The distinct elements, sorted; return_inverse maps each element to its index there
    (data-dependent size: a graph break under jit). return_counts and dim are not supported."""
    if return_counts or dim is not None:
        raise NotImplementedError("unique: return_counts and dim are not supported in pijit")
    from pijit.numpy.array_ops import unique as _unique
    out = _unique(_t(input), return_inverse=return_inverse)
    if not return_inverse:
        return out
    values, inverse = out
    x = _t(input)
    return values, _op("reshape", (_op("cast", (inverse,), dtype=_dt.int64),), shape=tuple(x.shape))


from pijit.mint import nn, optim, linalg  # noqa: E402
from pijit.ops.linalg import inverse  # noqa: E402,F401
from pijit.mint.nn import functional  # noqa: E402,F401

__all__ = ["zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
           "arange", "linspace", "eye", "rand", "randn", "rand_like", "randn_like", "randint",
           "clone", "add", "sub", "subtract", "div", "divide", "true_divide", "clamp", "clip",
           "round", "trunc", "fix", "fmod", "remainder", "isfinite", "isnan", "isinf", "isclose",
           "log2", "log10", "exp2", "abs", "absolute", "neg", "negative", "exp", "expm1", "log",
           "log1p", "sqrt", "rsqrt", "square", "reciprocal", "sin", "cos", "tan", "tanh",
           "sigmoid", "erf", "floor", "ceil", "sign", "logical_not", "mul", "multiply", "pow",
           "maximum", "minimum", "eq", "ne", "not_equal", "gt", "greater", "ge", "greater_equal",
           "lt", "less", "le", "less_equal", "floor_divide", "logical_and", "logical_or",
           "logical_xor", "where", "matmul", "mm", "bmm", "baddbmm", "addmm", "addbmm", "outer",
           "dot", "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all",
           "any", "var", "std", "logsumexp", "cumsum", "softmax", "log_softmax", "topk", "sort",
           "argsort", "cat", "concat", "stack", "split", "chunk", "narrow", "index_select",
           "gather", "scatter_add", "flatten", "reshape", "permute", "transpose", "swapaxes",
           "squeeze", "unsqueeze", "flip", "roll", "tile", "broadcast_to", "repeat_interleave",
           "tril", "triu", "nonzero", "masked_select", "unique", "inverse"]

# Elementwise functions whose mint form is the ops form (input first, no dim argument): the same
# objects, so capture and gradients are the kernels' (ops/math2.py).
from pijit import ops as _ops  # noqa: E402
_SAME_AS_OPS = ("acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
                "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_not", "bitwise_or",
                "bitwise_xor", "cosh", "sinh", "erfc", "erfinv", "frac", "gcd", "sinc", "xlogy",
                "logaddexp", "isneginf", "lerp", "float_power", "nan_to_num")
for _n in _SAME_AS_OPS:
    globals()[_n] = getattr(_ops, _n)
__all__ = __all__ + list(_SAME_AS_OPS)


# ---- the rest of mint's top level (torch's names and arguments as mint documents them) ----------
# One definition each: where ops has the function under mint's name and arguments, mint holds the
# same object; where only the argument names or defaults differ, a thin wrapper calls ops.
from pijit.ops import functional2 as _F2  # noqa: E402

_SAME_AS_OPS2 = ("addmv", "bincount", "cross", "cumprod", "einsum", "histc", "ravel",
                 "searchsorted", "t", "trace", "unbind")
for _n in _SAME_AS_OPS2:
    globals()[_n] = getattr(_ops, _n)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when |input - other| <= atol + rtol |other| everywhere (a Python bool)."""
    return _builtins.bool(all(isclose(input, other, rtol, atol, equal_nan)).item())


def _channel_axes(who, x):
    if x.ndim < 2:
        raise ValueError("For '%s', the input must have at least 2 dims (N, C, ...), but got %d"
                         % (who, x.ndim))
    return (0,) + tuple(range(2, x.ndim))


def _per_channel(v, ndim):
    """A (C,) vector shaped to broadcast against (N, C, ...)."""
    return _op("reshape", (_t(v),), shape=(1, -1) + (1,) * (ndim - 2))


def batch_norm_stats(input, eps):
    """(mean, invstd) of each channel (dim 1) over the batch and spatial dims: invstd is
    1 / sqrt(biased variance + eps)."""
    x = _float(_t(input))
    axes = _channel_axes("batch_norm_stats", x)
    m = _op("mean", (x,), axis=axes, keepdims=False)
    v = _op("var", (x,), axis=axes, keepdims=False, ddof=0)
    return m, _op("rsqrt", (v + eps,))


def batch_norm_elemt(input, weight, bias, mean, invstd, eps):
    """(input - mean) * invstd * weight + bias per channel (weight and bias may be None)."""
    x = _float(_t(input))
    _channel_axes("batch_norm_elemt", x)
    y = (x - _per_channel(mean, x.ndim)) * _per_channel(invstd, x.ndim)
    if weight is not None:
        y = y * _per_channel(weight, x.ndim)
    if bias is not None:
        y = y + _per_channel(bias, x.ndim)
    return y


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean=None, running_var=None,
                                        momentum=0.1, eps=1e-05, counts=None):
    """The global (mean, invstd) from per-replica statistics: mean and invstd (R, C), counts (R,)
    elements each replica saw. running_mean / running_var, when given, are updated in place with
    momentum (the variance unbiased by the total count)."""
    who = "batch_norm_gather_stats_with_counts"
    m, inv = _float(_t(mean)), _float(_t(invstd))
    if counts is None:
        raise TypeError("For '%s', 'counts' must be a Tensor, but got None" % who)
    c = _op("reshape", (_cast(_t(counts), m.dtype),), shape=(-1, 1))
    if m.ndim != 2 or tuple(inv.shape) != tuple(m.shape) or c.shape[0] != m.shape[0]:
        raise ValueError("For '%s', 'mean' and 'invstd' must be (R, C) and 'counts' (R,), but "
                         "got %s, %s and %s" % (who, tuple(m.shape), tuple(inv.shape),
                                                tuple(_t(counts).shape)))
    n = _op("sum", (c,), axis=None, keepdims=False)
    gmean = _op("sum", (m * c,), axis=(0,), keepdims=False) / n
    var_r = _op("reciprocal", (_op("square", (inv,)),)) - eps
    gvar = _op("sum", ((var_r + _op("square", (m - gmean,))) * c,), axis=(0,), keepdims=False) / n
    from pijit.ops.misc import assign
    if running_mean is not None:
        assign(running_mean, running_mean * (1 - momentum) + gmean * momentum)
    if running_var is not None:
        unbiased = gvar * n / (n - 1)
        assign(running_var, running_var * (1 - momentum) + unbiased * momentum)
    return gmean, _op("rsqrt", (gvar + eps,))


def bernoulli(input, *, generator=None):
    """1 with probability input[i] (each in [0, 1]), else 0, in input's dtype."""
    x = _t(input)
    return _F2.bernoulli(x, x)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 (.., P, M) and of x2 (.., R, M). compute_mode
    only chooses how torch computes p = 2; the exact difference form is used here."""
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError("For 'cdist', 'compute_mode' %r is not supported" % (compute_mode,))
    return _ops.cdist(x1, x2, p)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch's conv2d: padding an int, a pair, 'valid' or 'same' (stride 1)."""
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError("For 'conv2d', 'padding' must be 'same', 'valid', an int or a tuple, "
                             "but got %r" % (padding,))
        if padding == "same" and stride not in (1, (1, 1), [1, 1]):
            raise ValueError("For 'conv2d', padding='same' needs stride 1, but got %r" % (stride,))
        return _F.conv2d(input, weight, bias, stride, padding, 0, dilation, groups)
    return _F.conv2d(input, weight, bias, stride, "pad", padding, dilation, groups)


def count_nonzero(input, dim=None):
    """The number of non-zero elements over dim (None: all), int64."""
    return _ops.count_nonzero(input, () if dim is None else dim, False, _dt.int64)


def cummax(input, dim):
    """(values, int64 indices) of the running maximum along dim."""
    return _ops.cummax(input, dim)


def cummin(input, dim):
    return _ops.cummin(input, dim)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim (prepend / append joined first)."""
    return _ops.diff(input, n, dim, prepend, append)


def dstack(tensors):
    """The tensors joined along the third dim (1-D and 2-D ones viewed as (1, N, 1), (M, N, 1))."""
    from pijit.numpy.array_ops import dstack as _dstack
    return _dstack(tensors)


def median(input, dim=None, keepdim=False):
    """median(input): the lower median of every element; median(input, dim, keepdim=False):
    (values, int64 indices) of the lower median along dim."""
    x = _t(input)
    if dim is None:
        return _ops.median(_op("reshape", (x,), shape=(-1,)), 0, False)[0]
    return _ops.median(x, dim, keepdim)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-D/1-D tensors; indexing 'ij' (the default) or 'xy'."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    if indexing is None:
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError("For 'meshgrid', 'indexing' must be 'xy' or 'ij', but got %r" % (indexing,))
    return tuple(_ops.meshgrid(*[_op("reshape", (_t(x),), shape=(-1,)) for x in tensors],
                               indexing=indexing))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """int64 category indices drawn from each row's (unnormalised) weights."""
    return _ops.multinomial(input, num_samples, replacement)


def mv(input, vec):
    """The matrix-vector product of (N, M) input and (M,) vec."""
    return _ops.mv(input, vec)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum over dim treating NaN as zero."""
    x = _cast(_t(input), dtype)
    if x.dtype.is_floating_point:
        x = _op("where", (_op("ne", (x, x)), _C.as_operand(0, x), x))
    return _F.sum(x, dim, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, *, dtype=None):
    """torch.norm: 'fro' (the 2-norm of the elements over dim, all by default), 'nuc' (the sum of
    singular values of a matrix), or a number p: the vector p-norm over dim (inf: max |x|, -inf:
    min |x|, 0: the count of non-zeros)."""
    x = _float(_cast(_t(input), dtype))
    dims = _dims(dim)
    if p == "nuc":
        return _nuclear_norm(x, dims or (-2, -1), keepdim)
    if p == "fro" or p == 2:
        return _op("sqrt", (_op("sum", (_op("square", (x,)),), axis=dims, keepdims=bool(keepdim)),))
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise ValueError("For 'norm', 'p' must be 'fro', 'nuc' or a number, but got %r" % (p,))
    a = _op("abs", (x,))
    if p == float("inf"):
        return _op("max", (a,), axis=dims, keepdims=bool(keepdim))
    if p == float("-inf"):
        return _op("min", (a,), axis=dims, keepdims=bool(keepdim))
    if p == 0:
        return _op("sum", (_cast(_op("ne", (a, _C.as_operand(0, a))), x.dtype),), axis=dims,
                   keepdims=bool(keepdim))
    if p == 1:
        return _op("sum", (a,), axis=dims, keepdims=bool(keepdim))
    s = _op("sum", (_op("pow", (a, _C.as_operand(float(p), a))),), axis=dims, keepdims=bool(keepdim))
    return _op("pow", (s, _C.as_operand(1.0 / p, s)))


def _nuclear_norm(x, dims, keepdim):
    """The sum of the singular values of the matrices over the two dims (ops.svd)."""
    from pijit.ops.linalg import _singular_value_norm
    return _singular_value_norm(x, dims, "nuc", keepdim)


def _broadcast_shape(a, b):
    a, b = tuple(a), tuple(b)
    n = _builtins.max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    if _builtins.any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        raise ValueError("For 'normal', the shapes of 'mean' %s and 'std' %s do not broadcast"
                         % (a, b))
    return tuple(_builtins.max(x, y) if 0 not in (x, y) else 0 for x, y in zip(a, b))


def normal(mean, std=1.0, size=None, *, generator=None):
    """N(mean, std^2) samples: of the broadcast shape of mean and std when either is a Tensor,
    else of `size` (required then)."""
    tm, ts = isinstance(mean, _C.TensorBase), isinstance(std, _C.TensorBase)
    for name, v, is_t in (("mean", mean, tm), ("std", std, ts)):
        if not is_t and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise TypeError("For 'normal', '%s' must be a float or a Tensor, but got %s"
                            % (name, type(v).__name__))
    if not ts and std < 0:
        raise ValueError("For 'normal', 'std' must be >= 0, but got %r" % (std,))
    if tm or ts:
        if size is not None:
            raise TypeError("For 'normal', 'size' is only taken when mean and std are numbers")
        m = _float(mean) if tm else None
        s = _float(std) if ts else None
        ref = m if m is not None else s
        m = m if m is not None else _C.as_operand(float(mean), s)
        s = s if s is not None else _C.as_operand(float(std), ref)
        return _creation.randn(_broadcast_shape(m.shape, s.shape), dtype=ref.dtype) * s + m
    if size is None:
        raise TypeError("For 'normal', 'size' is required when mean and std are numbers")
    return _creation.randn(_size("normal", (size,)), dtype=_dt.float32) * float(std) + float(mean)


def polar(abs, angle):  # noqa: A002
    """The complex tensor abs * (cos(angle) + i sin(angle)) (complex64 from float32 parts)."""
    r, a = _t(abs), _t(angle)
    if not (r.dtype.is_floating_point and a.dtype is r.dtype):
        raise TypeError("For 'polar', 'abs' and 'angle' must be float tensors of one dtype, but "
                        "got %s and %s" % (r.dtype, a.dtype))
    return _ops.complex(r * _op("cos", (a,)), r * _op("sin", (a,)))


def randint_like(input, *args, generator=None, dtype=None):
    """randint_like(input, high) or randint_like(input, low, high): integers in [low, high) of
    input's shape (int64 unless dtype says otherwise)."""
    if len(args) == 1:
        low, high = 0, args[0]
    elif len(args) == 2:
        low, high = args
    else:
        raise TypeError("randint_like() takes (input, high) or (input, low, high)")
    return _ops.randint_like(input, low, high, dtype=_dt.int64 if dtype is None else dtype)


def randperm(n, *, generator=None, dtype=_dt.int64):
    """A random permutation of 0 .. n-1."""
    return _ops.randperm(n, dtype=dtype)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of input with out[index[i][j]][j] = src[i][j] along dim (dim 0 shown): src a Tensor
    (only its index-shaped corner is read) or a number (also as value=); reduce 'add' adds
    instead of writing."""
    x, idx = _t(input), _t(index)
    if src is None:
        src = value
    if src is None:
        raise TypeError("For 'scatter', one of 'src' and 'value' is required")
    if isinstance(src, _C.TensorBase):
        if src.ndim != idx.ndim or _builtins.any(s < i for s, i in zip(src.shape, idx.shape)):
            raise ValueError("For 'scatter', 'src' %s must be at least as large as 'index' %s on "
                             "every dim" % (tuple(src.shape), tuple(idx.shape)))
        upd = src[tuple(slice(0, i) for i in idx.shape)]
        upd = _cast(upd, x.dtype)
    else:
        upd = _op("full", (), shape=tuple(idx.shape), value=src, dtype=x.dtype)
    if reduce not in (None, "add"):
        raise ValueError("For 'scatter', 'reduce' must be None or 'add', but got %r" % (reduce,))
    return _ops.tensor_scatter_elements(x, idx, upd, dim, "add" if reduce == "add" else "none")


def select(input, dim, index):
    """The slice of input at `index` along dim (that dim removed)."""
    x = _t(input)
    d = _F._check_dim("select", "dim", dim, x.ndim) % _builtins.max(x.ndim, 1)
    n = x.shape[d]
    if not _is_int(index) or not -n <= index < n:
        raise IndexError("For 'select', 'index' %r is out of range for dim %d of size %d"
                         % (index, dim, n))
    return x[(slice(None),) * d + (index,)]


def std_mean(input, dim=None, *, correction=1, keepdim=False):
    """(std, mean) over dim, the std with Bessel's correction by default."""
    return std(input, dim, correction=correction, keepdim=keepdim), \
        mean(_float(_t(input)), dim, keepdim)


def var_mean(input, dim=None, *, correction=1, keepdim=False):
    """(var, mean) over dim."""
    return var(input, dim, correction=correction, keepdim=keepdim), \
        mean(_float(_t(input)), dim, keepdim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Runs of equal consecutive elements reduced to one: the output alone, or a tuple with the
    inverse (each element's run) and the counts as asked."""
    return _ops.unique_consecutive(input, return_inverse, return_counts, dim)


__all__ = __all__ + list(_SAME_AS_OPS2) + [
    "allclose", "batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats_with_counts",
    "bernoulli", "cdist", "conv2d", "count_nonzero", "cummax", "cummin", "diff", "dstack",
    "median", "meshgrid", "multinomial", "mv", "nansum", "norm", "normal", "polar",
    "randint_like", "randperm", "scatter", "select", "std_mean", "var_mean", "unique_consecutive"]
