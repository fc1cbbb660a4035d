"""More of mindspore.ops' functional names (MindSpore 2.5 signatures): shapes and joins (flip,
roll, tril, swapaxes, unstack, meshgrid, tensor_split, diagonal, ...), products (bmm, mm, outer,
batch_dot, tensor_dot, addmm, ...), elementwise math (isnan, isclose, fmod, logaddexp,
...), reductions (norm, count_nonzero, median, cummax, cumprod, ...), activations and losses
(elu, selu, mish, kl_div, huber_loss, ...), segment and scatter ops, random draws, and a few
queries (is_tensor, numel, dyn_shape).

Each is composed from registry ops and the primitive classes of primitives.py/primitives2.py, with
Python deciding only from shapes, dtypes and arguments, so a function that does not depend on
tensor data captures into the caller's graph. The data-dependent ones (unique, nonzero,
masked_select, argwhere, sequence_mask without maxlen, unique_consecutive) read values, and under
jit stop capture there, as MindSpore documents them as dynamic-shape ops.
Errors follow MindSpore's classes: TypeError for a wrong type, ValueError for a wrong value, the
message naming the function and the argument ("For 'flip', ...").

Not here, because pijit has no kernel to compose them from honestly: asin/acos/atan/atan2 (no
arctangent kernel), lgamma/digamma, the bitwise ops, matrix inverse/det/svd and the 2/-2/'nuc'
matrix norms.
"""
import builtins as _b
import math as _math

from pijit.ops import math2 as _M2  # (kernels: math2 imports nothing of this module)
from pijit import _C
from pijit import creation as _creation
from pijit import dtype as _dt
from pijit._ops_common import op as _op, as_tensor as _t, operands as _operands
from pijit._state import runtime_state as _runtime_state
from pijit.ops import functional as F
from pijit.ops import nn_functional as NF
from pijit.ops import primitives2 as P2
from pijit.ops.primitives2 import (_tensor, _int, _bool, _ints, _axis, _floating, _flip, _take,
                                   _is_int)

_Tensor = _C.TensorBase

__all__ = []


def _export(fn):
    __all__.append(fn.__name__)
    return fn


def _alias(name, fn):
    globals()[name] = fn
    __all__.append(name)


def _number(who, name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("For '%s', the '%s' must be a number, but got %r" % (who, name, v))
    return v


def _float(x):
    """x as a floating tensor (integers and bool compute in float32, as MindSpore's float ops)."""
    return x if x.dtype.is_floating_point else F.cast(x, _dt.float32)


def _tensors(who, name, seq):
    if isinstance(seq, _Tensor) or not isinstance(seq, (tuple, list)):
        raise TypeError("For '%s', the '%s' must be a tuple or list of Tensors, but got %s"
                        % (who, name, type(seq).__name__))
    return [_tensor(who, name, x) for x in seq]


def _dims(who, name, dims, ndim):
    """An int or a tuple/list of ints as distinct axes in [0, ndim)."""
    if _is_int(dims):
        dims = (dims,)
    dims = _ints(who, name, dims)
    out = tuple(_axis(who, name, d, ndim) for d in dims)
    if len(set(out)) != len(out):
        raise ValueError("For '%s', the '%s' names a dim twice: %r" % (who, name, dims))
    return out


def _reduce(who, reduction, x):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError("For '%s', the 'reduction' must be 'mean', 'sum' or 'none', but got %r"
                         % (who, reduction))
    if reduction == "mean":
        return F.mean(x)
    if reduction == "sum":
        return F.sum(x)
    return x


def _broadcast_shape(who, s1, s2):
    s1, s2 = tuple(s1), tuple(s2)
    n = _b.max(len(s1), len(s2))
    s1, s2 = (1,) * (n - len(s1)) + s1, (1,) * (n - len(s2)) + s2
    out = []
    for p, q in zip(s1, s2):
        if p != q and p != 1 and q != 1:
            raise ValueError("For '%s', the shapes %r and %r do not broadcast" % (who, s1, s2))
        out.append(q if p == 1 else p)
    return tuple(out)


def _const(values, dtype=_dt.int64):
    return _creation.tensor(list(values), dtype)


# ----- shapes, joins and splits ----------------------------------------------------------------

@_export
def flip(input, dims):
    """ops.flip(input, dims): input reversed along each dim in `dims` (an int or a tuple/list)."""
    x = _tensor("flip", "input", input)
    for d in _dims("flip", "dims", dims, x.ndim):
        x = _flip(x, d)
    return x


@_export
def fliplr(input):
    """ops.fliplr(input): reversed along dim 1 (the input must be at least 2-D)."""
    x = _tensor("fliplr", "input", input)
    if x.ndim < 2:
        raise ValueError("For 'fliplr', the rank of 'input' must be >= 2, but got %d" % x.ndim)
    return _flip(x, 1)


@_export
def flipud(input):
    """ops.flipud(input): reversed along dim 0 (the input must be at least 1-D)."""
    x = _tensor("flipud", "input", input)
    if x.ndim < 1:
        raise ValueError("For 'flipud', the rank of 'input' must be >= 1, but got 0")
    return _flip(x, 0)


@_export
def reverse(x, axis):
    """ops.reverse(x, axis): as flip (MindSpore's older name)."""
    return flip(x, axis)


@_export
def roll(input, shifts, dims=None):
    """ops.roll(input, shifts, dims=None): elements shifted along each dim, wrapping around;
    dims None rolls the flattened tensor and restores the shape."""
    x = _tensor("roll", "input", input)
    if dims is None:
        if not _is_int(shifts):
            shifts = _ints("roll", "shifts", shifts)
            if len(shifts) != 1:
                raise ValueError("For 'roll', 'shifts' must be one int when 'dims' is None, but "
                                 "got %r" % (shifts,))
            shifts = shifts[0]
        flat = F.reshape(x, (-1,))
        return F.reshape(P2.Roll(shifts, 0)(flat), tuple(x.shape))
    return P2.Roll(shifts, dims)(x)


@_export
def rot90(input, k=1, dims=(0, 1)):
    """ops.rot90(input, k=1, dims=(0, 1)): rotated by 90 degrees k times, from the first dim
    towards the second."""
    x = _tensor("rot90", "input", input)
    _int("rot90", "k", k)
    if x.ndim < 2:
        raise ValueError("For 'rot90', the rank of 'input' must be >= 2, but got %d" % x.ndim)
    d0, d1 = _dims("rot90", "dims", dims, x.ndim) if len(dims) == 2 else (None, None)
    if d0 is None:
        raise ValueError("For 'rot90', 'dims' must hold 2 dims, but got %r" % (dims,))
    k %= 4
    if k == 0:
        return x[...]
    if k == 2:
        return _flip(_flip(x, d0), d1)
    if k == 1:
        return swapaxes(_flip(x, d1), d0, d1)
    return _flip(swapaxes(x, d0, d1), d1)


@_export
def tril(input, diagonal=0):
    """ops.tril(input, diagonal=0): the lower triangle of the last two dims, the rest zero."""
    return P2.Tril(diagonal)(_tensor("tril", "input", input))


@_export
def triu(input, diagonal=0):
    """ops.triu(input, diagonal=0): the upper triangle of the last two dims, the rest zero."""
    return P2.Triu(diagonal)(_tensor("triu", "input", input))


@_export
def swapaxes(input, axis0, axis1):
    """ops.swapaxes(input, axis0, axis1): the two dims exchanged."""
    x = _tensor("swapaxes", "input", input)
    a = _axis("swapaxes", "axis0", axis0, x.ndim)
    b = _axis("swapaxes", "axis1", axis1, x.ndim)
    if x.ndim < 2 or a == b:
        return x[...]
    perm = list(_b.range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return F.transpose(x, tuple(perm))


@_export
def swapdims(input, dim0, dim1):
    """ops.swapdims(input, dim0, dim1): as swapaxes."""
    return swapaxes(input, dim0, dim1)


@_export
def t(input):
    """ops.t(input): a 2-D tensor transposed; 0-D and 1-D come back as they are."""
    x = _tensor("t", "input", input)
    if x.ndim > 2:
        raise ValueError("For 't', the rank of 'input' must be <= 2, but got %d" % x.ndim)
    return F.transpose(x, (1, 0)) if x.ndim == 2 else x[...]


@_export
def movedim(x, source, destination):
    """ops.movedim(x, source, destination): dims `source` moved to `destination` (ints or
    tuples of the same length), the other dims keeping their order."""
    x = _tensor("movedim", "x", x)
    src = _dims("movedim", "source", source, x.ndim)
    dst = _dims("movedim", "destination", destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError("For 'movedim', 'source' and 'destination' must have the same length, "
                         "but got %d and %d" % (len(src), len(dst)))
    rest = [d for d in _b.range(x.ndim) if d not in src]
    perm = [None] * x.ndim
    for s, d in zip(src, dst):
        perm[d] = s
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return F.transpose(x, tuple(perm)) if x.ndim else x[...]


_alias("moveaxis", movedim)


@_export
def unstack(input_x, axis=0):
    """ops.unstack(input_x, axis=0): the tuple of slices along `axis`, that dim removed."""
    return P2.Unstack(axis)(_tensor("unstack", "input_x", input_x))


@_export
def unbind(input, dim=0):
    """ops.unbind(input, dim=0): as unstack."""
    return P2.Unstack(dim)(_tensor("unbind", "input", input))


@_export
def meshgrid(*inputs, indexing="xy"):
    """ops.meshgrid(*inputs, indexing='xy'): coordinate grids from 1-D tensors ('xy': the first
    two outputs' dims are swapped, as numpy's; 'ij': matrix indexing). A single tuple/list of
    tensors is accepted too."""
    if len(inputs) == 1 and isinstance(inputs[0], (tuple, list)):
        inputs = tuple(inputs[0])
    return P2.Meshgrid(indexing)(tuple(inputs))


@_export
def repeat_elements(x, rep, axis=0):
    """ops.repeat_elements(x, rep, axis=0): each slice along `axis` repeated rep times in place:
    [a, b] -> [a, a, b, b]."""
    x = _tensor("repeat_elements", "x", x)
    _int("repeat_elements", "rep", rep)
    if rep < 0:
        raise ValueError("For 'repeat_elements', the 'rep' must be >= 0, but got %d" % rep)
    if x.ndim == 0:
        raise ValueError("For 'repeat_elements', the rank of 'x' must be >= 1, but got 0")
    return x.repeat(rep, _axis("repeat_elements", "axis", axis, x.ndim))


@_export
def repeat_interleave(input, repeats, axis=None):
    """ops.repeat_interleave(input, repeats, axis=None): each element repeated `repeats` times
    along `axis` (None: of the flattened input); repeats an int, one count per element (a
    tuple/list), or a Tensor of either (read: a Tensor of counts depends on the data)."""
    x = _tensor("repeat_interleave", "input", input)
    if isinstance(repeats, _Tensor):
        repeats = repeats.tolist()
    if isinstance(repeats, (list, tuple)) and len(repeats) == 1:
        repeats = repeats[0]
    if not _is_int(repeats):
        _ints("repeat_interleave", "repeats", repeats)
    elif repeats < 0:
        raise ValueError("For 'repeat_interleave', the 'repeats' must be >= 0, but got %d"
                         % repeats)
    if axis is not None:
        axis = _axis("repeat_interleave", "axis", axis, x.ndim)
    return x.repeat(repeats, axis)


@_export
def narrow(input, axis, start, length):
    """ops.narrow(input, axis, start, length): `length` elements along `axis` from `start`."""
    x = _tensor("narrow", "input", input)
    a = _axis("narrow", "axis", axis, x.ndim)
    _int("narrow", "start", start)
    _int("narrow", "length", length)
    n = x.shape[a]
    if not -n <= start <= n:
        raise ValueError("For 'narrow', the 'start' must be in [%d, %d], but got %d"
                         % (-n, n, start))
    start %= n if n else 1
    if length < 0 or start + length > n:
        raise ValueError("For 'narrow', start (%d) + length (%d) must be in [0, %d]"
                         % (start, length, n))
    return x[(_b.slice(None),) * a + (_b.slice(start, start + length),)]


def _cuts_split(x, axis, cuts):
    pre = (_b.slice(None),) * axis
    bounds = [0] + list(cuts) + [x.shape[axis]]
    return tuple(x[pre + (_b.slice(_b.min(lo, x.shape[axis]), _b.min(_b.max(lo, hi), x.shape[axis])),)]
                 for lo, hi in zip(bounds[:-1], bounds[1:]))


@_export
def tensor_split(input, indices_or_sections, axis=0):
    """ops.tensor_split(input, indices_or_sections, axis=0): an int n gives n pieces, the first
    size % n of them one longer; a tuple/list gives the indices to cut at."""
    who = "tensor_split"
    x = _tensor(who, "input", input)
    if x.ndim == 0:
        raise ValueError("For 'tensor_split', the rank of 'input' must be >= 1, but got 0")
    a = _axis(who, "axis", axis, x.ndim)
    s = indices_or_sections
    if _is_int(s):
        if s <= 0:
            raise ValueError("For 'tensor_split', the 'indices_or_sections' must be > 0, but "
                             "got %d" % s)
        n = x.shape[a]
        size, extra = divmod(n, s)
        cuts, at = [], 0
        for i in _b.range(s - 1):
            at += size + (1 if i < extra else 0)
            cuts.append(at)
    elif isinstance(s, (tuple, list)):
        cuts = [c % (x.shape[a] + 1) if c < 0 else c for c in _ints(who, "indices_or_sections", s)]
    else:
        raise TypeError("For 'tensor_split', the 'indices_or_sections' must be an int or a "
                        "tuple/list of ints, but got %r" % (s,))
    return _cuts_split(x, a, cuts)


@_export
def hsplit(input, indices_or_sections):
    """ops.hsplit: tensor_split along dim 1 (dim 0 for a 1-D input)."""
    x = _tensor("hsplit", "input", input)
    if x.ndim == 0:
        raise ValueError("For 'hsplit', the rank of 'input' must be >= 1, but got 0")
    return tensor_split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


@_export
def vsplit(input, indices_or_sections):
    """ops.vsplit: tensor_split along dim 0 (the input must be at least 2-D)."""
    x = _tensor("vsplit", "input", input)
    if x.ndim < 2:
        raise ValueError("For 'vsplit', the rank of 'input' must be >= 2, but got %d" % x.ndim)
    return tensor_split(x, indices_or_sections, 0)


@_export
def dsplit(input, indices_or_sections):
    """ops.dsplit: tensor_split along dim 2 (the input must be at least 3-D)."""
    x = _tensor("dsplit", "input", input)
    if x.ndim < 3:
        raise ValueError("For 'dsplit', the rank of 'input' must be >= 3, but got %d" % x.ndim)
    return tensor_split(x, indices_or_sections, 2)


@_export
def chunk(input, chunks, axis=0):
    """ops.chunk(input, chunks, axis=0): pieces of ceil(size / chunks) along `axis` (fewer pieces
    when that already covers it, the last smaller)."""
    x = _tensor("chunk", "input", input)
    _int("chunk", "chunks", chunks)
    if chunks <= 0:
        raise ValueError("For 'chunk', the 'chunks' must be > 0, but got %d" % chunks)
    if x.ndim == 0:
        raise ValueError("For 'chunk', the rank of 'input' must be >= 1, but got 0")
    a = _axis("chunk", "axis", axis, x.ndim)
    n = x.shape[a]
    size = _b.max(-(-n // chunks), 1)
    return _cuts_split(x, a, list(_b.range(size, n, size)))


def _at_least(x, nd):
    while x.ndim < nd:
        x = F.expand_dims(x, 0 if nd < 3 or x.ndim == 0 else x.ndim)
    return x


@_export
def hstack(tensors):
    """ops.hstack(tensors): concatenated along dim 1 (dim 0 for 1-D tensors)."""
    xs = [_at_least(x, 1) for x in _tensors("hstack", "tensors", tensors)]
    return F.concat(xs, 0 if xs[0].ndim == 1 else 1)


@_export
def vstack(tensors):
    """ops.vstack(tensors): 1-D tensors as rows, concatenated along dim 0."""
    xs = [x if x.ndim >= 2 else F.reshape(x, (1, -1))
          for x in _tensors("vstack", "tensors", tensors)]
    return F.concat(xs, 0)


@_export
def column_stack(tensors):
    """ops.column_stack(tensors): 0-D and 1-D tensors as columns, concatenated along dim 1."""
    xs = [x if x.ndim >= 2 else F.reshape(x, (-1, 1))
          for x in _tensors("column_stack", "tensors", tensors)]
    return F.concat(xs, 1)


@_export
def expand(input_x, size):
    """ops.expand(input_x, size): broadcast to `size` (a tuple/list or a 1-D Tensor of ints); -1
    keeps the input's size of that dim."""
    x = _tensor("expand", "input_x", input_x)
    if isinstance(size, _Tensor):
        size = size.tolist()
    return P2.BroadcastTo(_ints("expand", "size", size))(x)


@_export
def ravel(input):
    """ops.ravel(input): the elements as a 1-D tensor."""
    return F.reshape(_tensor("ravel", "input", input), (-1,))


def _diag_index(n, m, offset):
    """Flat positions in an (n, m) matrix of its diagonal `offset`."""
    r0, c0 = _b.max(-offset, 0), _b.max(offset, 0)
    length = _b.max(0, _b.min(n - r0, m - c0))
    return [(r0 + i) * m + c0 + i for i in _b.range(length)]


@_export
def diagonal(input, offset=0, dim1=0, dim2=1):
    """ops.diagonal(input, offset=0, dim1=0, dim2=1): the diagonal `offset` of the matrices in
    dims dim1 and dim2 (removed; the diagonal becomes the last dim)."""
    x = _tensor("diagonal", "input", input)
    if x.ndim < 2:
        raise ValueError("For 'diagonal', the rank of 'input' must be >= 2, but got %d" % x.ndim)
    _int("diagonal", "offset", offset)
    a, b = _axis("diagonal", "dim1", dim1, x.ndim), _axis("diagonal", "dim2", dim2, x.ndim)
    if a == b:
        raise ValueError("For 'diagonal', 'dim1' and 'dim2' must be different, but both are %d" % a)
    x = movedim(x, (a, b), (x.ndim - 2, x.ndim - 1))
    n, m = x.shape[-2], x.shape[-1]
    flat = F.reshape(x, tuple(x.shape[:-2]) + (n * m,))
    return _take(flat, flat.ndim - 1, _diag_index(n, m, offset))


@_export
def diag(input):
    """ops.diag(input): a diagonal tensor from `input` (shape (D1..Dk) -> (D1..Dk, D1..Dk)): a
    1-D input gives the square matrix with it on the diagonal."""
    x = _tensor("diag", "input", input)
    if x.ndim == 0:
        raise ValueError("For 'diag', the rank of 'input' must be >= 1, but got 0")
    n = 1
    for s in x.shape:
        n *= s
    eye = F.cast(_creation.eye(n), _dt.bool_)
    flat = F.broadcast_to(F.reshape(x, (n, 1)), (n, n))
    out = F.where(eye, flat, _creation.zeros((n, n), dtype=x.dtype))
    return F.reshape(out, tuple(x.shape) * 2)


@_export
def diagflat(input, offset=0):
    """ops.diagflat(input, offset=0): the flattened input on diagonal `offset` of a square
    matrix."""
    x = F.reshape(_tensor("diagflat", "input", input), (-1,))
    _int("diagflat", "offset", offset)
    n = x.shape[0]
    size = n + _b.abs(offset)
    rows = F.reshape(_creation.arange(size), (size, 1))
    cols = F.reshape(_creation.arange(size), (1, size))
    on = F.eq(cols - rows, offset)
    # the value of row r (offset >= 0) or column c (offset < 0) is x[r] / x[c]
    pad = _creation.zeros((_b.abs(offset),), dtype=x.dtype)
    v = F.concat((x, pad), 0) if offset else x
    vals = F.reshape(v, (size, 1)) if offset >= 0 else F.reshape(v, (1, size))
    vals = F.broadcast_to(vals, (size, size))
    return F.where(on, vals, _creation.zeros((size, size), dtype=x.dtype))


@_export
def trace(input):
    """ops.trace(input): the sum of a 2-D tensor's main diagonal."""
    x = _tensor("trace", "input", input)
    if x.ndim != 2:
        raise ValueError("For 'trace', the rank of 'input' must be 2, but got %d" % x.ndim)
    return F.sum(diagonal(x))


@_export
def slice(input_x, begin, size):
    """ops.slice(input_x, begin, size): the block starting at `begin` of `size` (-1: to the
    end)."""
    return P2.Slice()(_tensor("slice", "input_x", input_x), begin, size)


@_export
def sequence_mask(lengths, maxlen=None):
    """ops.sequence_mask(lengths, maxlen=None): mask[..., j] = j < lengths[...], of shape
    lengths.shape + (maxlen,); maxlen None takes the largest length (read from the data)."""
    lengths = _tensor("sequence_mask", "lengths", lengths)
    if maxlen is None:
        maxlen = int(F.amax(lengths).item()) if lengths.size else 0
    _int("sequence_mask", "maxlen", maxlen)
    if maxlen <= 0:
        raise ValueError("For 'sequence_mask', the 'maxlen' must be > 0, but got %d" % maxlen)
    r = _creation.arange(maxlen, dtype=lengths.dtype)
    return F.lt(r, F.expand_dims(lengths, -1))


@_export
def gather_nd(input_x, indices):
    """ops.gather_nd(input_x, indices): out[i...] = input_x[indices[i..., 0], ...,
    indices[i..., k-1]] with k = indices.shape[-1]."""
    x = _tensor("gather_nd", "input_x", input_x)
    idx = P2._integral("gather_nd", "indices", _tensor("gather_nd", "indices", indices))
    if idx.ndim < 1 or not 1 <= idx.shape[-1] <= x.ndim:
        raise ValueError("For 'gather_nd', the last dim of 'indices' must be in [1, %d], but got "
                         "shape %r" % (x.ndim, idx.shape))
    return x[tuple(idx[..., i] for i in _b.range(idx.shape[-1]))]


@_export
def masked_fill(input_x, mask, value):
    """ops.masked_fill(input_x, mask, value): value where the bool mask is True."""
    return P2.MaskedFill()(input_x, mask, value)


@_export
def index_fill(x, axis, index, value):
    """ops.index_fill(x, axis, index, value): a copy of x with the slices `index` (a 1-D int
    Tensor) along `axis` set to value (a number or 0-d Tensor)."""
    x = _tensor("index_fill", "x", x)
    _int("index_fill", "axis", axis)
    a = _axis("index_fill", "axis", axis, x.ndim)
    idx = P2._integral("index_fill", "index", _tensor("index_fill", "index", index))
    if idx.ndim > 1:
        raise ValueError("For 'index_fill', the 'index' must be 0-D or 1-D, but got %d-D" % idx.ndim)
    n = x.shape[a] if x.ndim else 1
    hit = F.any(F.eq(F.reshape(idx, (-1, 1)), F.reshape(_creation.arange(n, dtype=idx.dtype),
                                                       (1, n))), 0)
    shape = [1] * _b.max(x.ndim, 1)
    shape[a] = n
    hit = F.reshape(hit, tuple(shape) if x.ndim else ())
    return F.where(hit, F.cast(_t(value), x.dtype), x)


# ----- products -----------------------------------------------------------------------------

def _check_floats(who, *pairs):
    for name, x in pairs:
        if x.dtype is _dt.bool_:
            raise TypeError("For '%s', the dtype of '%s' must be a number type, but got bool"
                            % (who, name))


@_export
def mm(input, mat2):
    """ops.mm(input, mat2): the product of two 2-D tensors."""
    a, b = _tensor("mm", "input", input), _tensor("mm", "mat2", mat2)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError("For 'mm', both inputs must be 2-D, but got shapes %r and %r"
                         % (a.shape, b.shape))
    if a.shape[1] != b.shape[0]:
        raise ValueError("For 'mm', the shapes %r and %r cannot be multiplied" % (a.shape, b.shape))
    return F.matmul(a, b)


@_export
def bmm(input_x, mat2):
    """ops.bmm(input_x, mat2): batched matrix products of tensors of rank >= 3 (batch dims
    broadcast)."""
    a, b = _tensor("bmm", "input_x", input_x), _tensor("bmm", "mat2", mat2)
    if a.ndim < 3 or b.ndim < 3:
        raise ValueError("For 'bmm', both inputs must have rank >= 3, but got shapes %r and %r"
                         % (a.shape, b.shape))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError("For 'bmm', the shapes %r and %r cannot be multiplied" % (a.shape, b.shape))
    return F.matmul(a, b)


@_export
def mv(mat, vec):
    """ops.mv(mat, vec): a 2-D tensor times a 1-D one."""
    a, v = _tensor("mv", "mat", mat), _tensor("mv", "vec", vec)
    if a.ndim != 2 or v.ndim != 1 or a.shape[1] != v.shape[0]:
        raise ValueError("For 'mv', 'mat' must be (N, M) and 'vec' (M,), but got %r and %r"
                         % (a.shape, v.shape))
    return F.matmul(a, v)


@_export
def outer(input, vec2):
    """ops.outer(input, vec2): out[i, j] = input[i] * vec2[j] of two 1-D tensors."""
    a, b = _tensor("outer", "input", input), _tensor("outer", "vec2", vec2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("For 'outer', both inputs must be 1-D, but got shapes %r and %r"
                         % (a.shape, b.shape))
    return F.mul(F.reshape(a, (-1, 1)), F.reshape(b, (1, -1)))


_alias("ger", outer)


@_export
def inner(input, other):
    """ops.inner(input, other): sums over the last dims: out shape input.shape[:-1] +
    other.shape[:-1]; a 0-d operand multiplies."""
    a, b = _tensor("inner", "input", input), _t(other)
    if a.ndim == 0 or b.ndim == 0:
        return F.mul(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError("For 'inner', the last dims must match, but got shapes %r and %r"
                         % (a.shape, b.shape))
    out = F.matmul(F.reshape(a, (-1, a.shape[-1])), F.transpose(F.reshape(b, (-1, b.shape[-1])), (1, 0)))
    return F.reshape(out, tuple(a.shape[:-1]) + tuple(b.shape[:-1]))


@_export
def dot(input, other):
    """ops.dot(input, other): numpy.dot's product: the last dim of input with the second-to-last
    of other (the last when other is 1-D); the other dims of both are kept, input's first."""
    a, b = _tensor("dot", "input", input), _tensor("dot", "other", other)
    if a.ndim == 0 or b.ndim == 0:
        return F.mul(a, b)
    kb = b.shape[-2] if b.ndim >= 2 else b.shape[0]
    if a.shape[-1] != kb:
        raise ValueError("For 'dot', the last dim of 'input' (%d) must equal the contracted dim "
                         "of 'other' (%d)" % (a.shape[-1], kb))
    return tensor_dot(a, b, ((a.ndim - 1,), (b.ndim - 2 if b.ndim >= 2 else 0,)))


@_export
def tensor_dot(x1, x2, axes):
    """ops.tensor_dot(x1, x2, axes): the sum over the dims axes[0] of x1 and axes[1] of x2; an
    int n means x1's last n dims with x2's first n. Out: x1's other dims, then x2's."""
    a, b = _tensor("tensor_dot", "x1", x1), _tensor("tensor_dot", "x2", x2)
    if _is_int(axes):
        if not 0 <= axes <= _b.min(a.ndim, b.ndim):
            raise ValueError("For 'tensor_dot', the int 'axes' must be in [0, %d], but got %d"
                             % (_b.min(a.ndim, b.ndim), axes))
        ax_a, ax_b = tuple(_b.range(a.ndim - axes, a.ndim)), tuple(_b.range(axes))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax_a = _dims("tensor_dot", "axes", axes[0], a.ndim)
        ax_b = _dims("tensor_dot", "axes", axes[1], b.ndim)
    else:
        raise TypeError("For 'tensor_dot', the 'axes' must be an int or a pair of ints/tuples, "
                        "but got %r" % (axes,))
    if len(ax_a) != len(ax_b) or _b.any(a.shape[i] != b.shape[j] for i, j in zip(ax_a, ax_b)):
        raise ValueError("For 'tensor_dot', the dims %r of %r and %r of %r must match"
                         % (ax_a, a.shape, ax_b, b.shape))
    keep_a = [d for d in _b.range(a.ndim) if d not in ax_a]
    keep_b = [d for d in _b.range(b.ndim) if d not in ax_b]
    k = 1
    for d in ax_a:
        k *= a.shape[d]
    am = F.reshape(F.transpose(a, tuple(keep_a) + ax_a) if a.ndim else a, (-1, k))
    bm = F.reshape(F.transpose(b, ax_b + tuple(keep_b)) if b.ndim else b, (k, -1))
    out = F.matmul(am, bm)
    return F.reshape(out, tuple(a.shape[d] for d in keep_a) + tuple(b.shape[d] for d in keep_b))


@_export
def batch_dot(x1, x2, axes=None):
    """ops.batch_dot(x1, x2, axes=None): per-sample tensor_dot over dim 0. axes None is
    (x1.ndim - 1, x2.ndim - 2), or (x1.ndim - 1, x2.ndim - 1) when x2 is 2-D; an int n is
    (n, n). Out: (batch,) + x1's other dims + x2's other dims, and (batch, 1) when nothing else
    is left."""
    a, b = _tensor("batch_dot", "x1", x1), _tensor("batch_dot", "x2", x2)
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError("For 'batch_dot', both inputs must have rank >= 2, but got %d and %d"
                         % (a.ndim, b.ndim))
    if a.shape[0] != b.shape[0]:
        raise ValueError("For 'batch_dot', the batch sizes %d and %d must match"
                         % (a.shape[0], b.shape[0]))
    if axes is None:
        axes = (a.ndim - 1, b.ndim - 2 if b.ndim > 2 else b.ndim - 1)
    elif _is_int(axes):
        axes = (axes, axes)
    axes = _ints("batch_dot", "axes", axes)
    if len(axes) != 2:
        raise ValueError("For 'batch_dot', the 'axes' must hold 2 ints, but got %r" % (axes,))
    ia, ib = _axis("batch_dot", "axes", axes[0], a.ndim), _axis("batch_dot", "axes", axes[1], b.ndim)
    if ia == 0 or ib == 0:
        raise ValueError("For 'batch_dot', the 'axes' cannot name the batch dim 0, but got %r"
                         % (axes,))
    if a.shape[ia] != b.shape[ib]:
        raise ValueError("For 'batch_dot', dim %d of x1 (%d) and dim %d of x2 (%d) must match"
                         % (ia, a.shape[ia], ib, b.shape[ib]))
    ka = [d for d in _b.range(1, a.ndim) if d != ia]
    kb = [d for d in _b.range(1, b.ndim) if d != ib]
    n, k = a.shape[0], a.shape[ia]
    am = F.reshape(F.transpose(a, (0,) + tuple(ka) + (ia,)), (n, -1, k))
    bm = F.reshape(F.transpose(b, (0, ib) + tuple(kb)), (n, k, -1))
    out = F.reshape(F.matmul(am, bm), (n,) + tuple(a.shape[d] for d in ka)
                    + tuple(b.shape[d] for d in kb))
    return F.reshape(out, (n, 1)) if out.ndim == 1 else out


def _scaled(who, beta, alpha, base, prod):
    _number(who, "beta", beta)
    _number(who, "alpha", alpha)
    p = prod if alpha == 1 else F.mul(prod, alpha)
    if beta == 0:  # input is ignored (its nan and inf too), as MindSpore and torch document
        return p
    return F.add(base if beta == 1 else F.mul(base, beta), p)


@_export
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """ops.addmm(input, mat1, mat2, *, beta=1, alpha=1): beta * input + alpha * (mat1 @ mat2)."""
    return _scaled("addmm", beta, alpha, _tensor("addmm", "input", input), mm(mat1, mat2))


@_export
def baddbmm(input, batch1, batch2, beta=1, alpha=1):
    """ops.baddbmm(input, batch1, batch2, beta=1, alpha=1): beta * input + alpha * bmm."""
    return _scaled("baddbmm", beta, alpha, _tensor("baddbmm", "input", input), bmm(batch1, batch2))


@_export
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """ops.addbmm(input, batch1, batch2, *, beta=1, alpha=1): beta * input + alpha * the sum over
    the batch of batch1[i] @ batch2[i]."""
    b1, b2 = _tensor("addbmm", "batch1", batch1), _tensor("addbmm", "batch2", batch2)
    if b1.ndim != 3 or b2.ndim != 3:
        raise ValueError("For 'addbmm', 'batch1' and 'batch2' must be 3-D, but got %r and %r"
                         % (b1.shape, b2.shape))
    return _scaled("addbmm", beta, alpha, _tensor("addbmm", "input", input),
                   F.sum(bmm(b1, b2), 0))


@_export
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """ops.addmv(input, mat, vec, *, beta=1, alpha=1): beta * input + alpha * (mat @ vec)."""
    return _scaled("addmv", beta, alpha, _tensor("addmv", "input", input), mv(mat, vec))


@_export
def addr(x, vec1, vec2, *, beta=1, alpha=1):
    """ops.addr(x, vec1, vec2, *, beta=1, alpha=1): beta * x + alpha * outer(vec1, vec2)."""
    return _scaled("addr", beta, alpha, _tensor("addr", "x", x), outer(vec1, vec2))


@_export
def addcmul(input_data, x1, x2, value):
    """ops.addcmul(input_data, x1, x2, value): input_data + value * x1 * x2."""
    return F.add(_tensor("addcmul", "input_data", input_data), F.mul(value, F.mul(x1, x2)))


@_export
def addcdiv(input_data, x1, x2, value):
    """ops.addcdiv(input_data, x1, x2, value): input_data + value * x1 / x2."""
    return F.add(_tensor("addcdiv", "input_data", input_data), F.mul(value, F.div(x1, x2)))


@_export
def kron(input, other):
    """ops.kron(input, other): the Kronecker product (block (i, j) is input[i, j] * other)."""
    a, b = _tensor("kron", "input", input), _tensor("kron", "other", other)
    nd = _b.max(a.ndim, b.ndim)
    a = F.reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    b = F.reshape(b, (1,) * (nd - b.ndim) + tuple(b.shape))
    sa, sb = [], []
    for i in _b.range(nd):
        sa += [a.shape[i], 1]
        sb += [1, b.shape[i]]
    out = F.mul(F.reshape(a, tuple(sa)), F.reshape(b, tuple(sb)))
    return F.reshape(out, tuple(a.shape[i] * b.shape[i] for i in _b.range(nd)))


@_export
def cross(input, other, dim=None):
    """ops.cross(input, other, dim=None): the cross product of 3-vectors along `dim` (None: the
    first dim of size 3)."""
    a, b = _operands(_tensor("cross", "input", input), _tensor("cross", "other", other))
    if a.shape != b.shape:
        raise ValueError("For 'cross', 'input' and 'other' must have one shape, but got %r and %r"
                         % (a.shape, b.shape))
    if dim is None:
        dims = [i for i, s in enumerate(a.shape) if s == 3]
        if not dims:
            raise ValueError("For 'cross', no dim of %r has size 3" % (a.shape,))
        d = dims[0]
    else:
        d = _axis("cross", "dim", dim, a.ndim)
    if a.shape[d] != 3:
        raise ValueError("For 'cross', dim %d must have size 3, but got %d" % (d, a.shape[d]))
    pre = (_b.slice(None),) * d

    def c(x, i):
        return x[pre + (_b.slice(i, i + 1),)]
    return F.concat((c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
                     c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0)), d)


# ----- elementwise ----------------------------------------------------------------------------

@_export
def isnan(input):
    """ops.isnan(input): True where input is NaN."""
    return P2.IsNan()(_tensor("isnan", "input", input))


@_export
def isinf(input):
    """ops.isinf(input): True where input is +inf or -inf."""
    return P2.IsInf()(_tensor("isinf", "input", input))


@_export
def isfinite(input):
    """ops.isfinite(input): True where input is neither inf nor NaN."""
    return P2.IsFinite()(_tensor("isfinite", "input", input))


@_export
def isposinf(input):
    """ops.isposinf(input): True where input is +inf."""
    x = _tensor("isposinf", "input", input)
    return F.eq(x, float("inf")) if x.dtype.is_floating_point else F.ne(x, x)


@_export
def isneginf(input):
    """ops.isneginf(input): True where input is -inf."""
    x = _tensor("isneginf", "input", input)
    return F.eq(x, float("-inf")) if x.dtype.is_floating_point else F.ne(x, x)


@_export
def isreal(input):
    """ops.isreal(input): True everywhere for real dtypes (pijit's complex tensors: where the
    imaginary part is 0 is not computed; complex inputs raise TypeError)."""
    x = _tensor("isreal", "input", input)
    if P2._is_complex(x.dtype):
        raise TypeError("For 'isreal', complex inputs are not supported in pijit")
    return _creation.ones(tuple(x.shape), dtype=_dt.bool_)


@_export
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """ops.isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False): |input - other| <=
    atol + rtol * |other|; equal infinities are close, NaN only to NaN with equal_nan."""
    a, b = _operands(_tensor("isclose", "input", input), other)
    _number("isclose", "rtol", rtol)
    _number("isclose", "atol", atol)
    _bool("isclose", "equal_nan", equal_nan)
    if rtol < 0 or atol < 0:
        raise ValueError("For 'isclose', 'rtol' and 'atol' must be >= 0, but got %r and %r"
                         % (rtol, atol))
    same = F.eq(a, b)
    if not (a.dtype.is_floating_point or b.dtype.is_floating_point):
        af, bf = F.cast(a, _dt.float64), F.cast(b, _dt.float64)
    else:
        af, bf = a, b
    near = F.le(F.abs(af - bf), atol + rtol * F.abs(bf))
    out = F.logical_or(same, F.logical_and(near, F.logical_and(F.abs(af) < float("inf"),
                                                               F.abs(bf) < float("inf"))))
    if equal_nan:
        out = F.logical_or(out, F.logical_and(F.ne(a, a), F.ne(b, b)))
    return out


def _unary(name, body, floating=True):
    def f(input):
        x = _tensor(name, "input", input)
        return body(_float(x) if floating else x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = "ops.%s(input), elementwise (integer inputs compute in float32)." % name
    globals()[name] = f
    __all__.append(name)
    return f


_LN2, _LN10 = _math.log(2.0), _math.log(10.0)
_unary("exp2", lambda x: F.pow(2.0, x))
_unary("log2", lambda x: F.log(x) * (1.0 / _LN2))
_unary("log10", lambda x: F.log(x) * (1.0 / _LN10))
_unary("sinh", lambda x: P2.Sinh()(x))
_unary("cosh", lambda x: P2.Cosh()(x))
# asinh, acosh, atanh, signbit, hypot: the kernels of ops/math2.py (ops.X is the same object)
for _name in ("asinh", "acosh", "atanh", "signbit", "hypot"):
    _alias(_name, getattr(_M2, _name))
_unary("erfc", lambda x: P2.Erfc()(x))
_unary("sinc", lambda x: F.where(F.eq(x, 0), _creation.ones_like(x),
                                 F.sin(x * _math.pi) / (x * _math.pi)))
_unary("deg2rad", lambda x: x * (_math.pi / 180.0))
_unary("rad2deg", lambda x: x * (180.0 / _math.pi))
_unary("tanhshrink", lambda x: x - F.tanh(x))
_unary("logsigmoid", lambda x: F.neg(F.softplus(F.neg(x))))
_unary("softsign", lambda x: P2.Softsign()(x))
_unary("mish", lambda x: P2.Mish()(x))
_unary("fast_gelu", lambda x: P2.FastGeLU()(x))
for _name, _same in (("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh")):
    _alias(_name, globals()[_same])


@_export
def trunc(input):
    """ops.trunc(input): rounded towards zero."""
    return P2.Trunc()(_tensor("trunc", "input", input))


@_export
def frac(input):
    """ops.frac(input): input - trunc(input) (0 for integers)."""
    x = _tensor("frac", "input", input)
    return x - P2.Trunc()(x)


@_export
def absolute(input):
    """ops.absolute(input): as abs."""
    return F.abs(_tensor("absolute", "input", input))


@_export
def positive(input):
    """ops.positive(input): the input itself (a bool input raises TypeError)."""
    x = _tensor("positive", "input", input)
    if x.dtype is _dt.bool_:
        raise TypeError("For 'positive', the dtype of 'input' must be a number type, but got bool")
    return x[...]


@_export
def sgn(input):
    """ops.sgn(input): sign for real inputs."""
    x = _tensor("sgn", "input", input)
    if P2._is_complex(x.dtype):
        raise TypeError("For 'sgn', complex inputs are not supported in pijit")
    return F.sign(x)


@_export
def copysign(x, other):
    """ops.copysign(x, other): |x| with the sign bit of other."""
    x = _float(_tensor("copysign", "x", x))
    other = _t(other) if isinstance(other, _Tensor) else _creation.tensor(float(other), x.dtype)
    return F.where(signbit(other), F.neg(F.abs(x)), F.abs(x))


@_export
def fmod(input, other):
    """ops.fmod(input, other): the remainder of input / other with input's sign (C's fmod)."""
    a, b = _operands(input, other)
    if a.dtype.is_floating_point or b.dtype.is_floating_point:
        return a - P2.Trunc()(F.div(a, b)) * b
    return a - F.div(a, b, rounding_mode="trunc") * b


@_export
def floor_mod(x, y):
    """ops.floor_mod(x, y): the remainder with y's sign (Python's %)."""
    return F.mod(x, y)


@_export
def truncate_div(x, y):
    """ops.truncate_div(x, y): x / y rounded towards zero."""
    return F.div(x, y, rounding_mode="trunc")


@_export
def truncate_mod(x, y):
    """ops.truncate_mod(x, y): as fmod."""
    return fmod(x, y)


@_export
def xlogy(input, other):
    """ops.xlogy(input, other): input * log(other), 0 where input is 0."""
    return P2.Xlogy()(input, other)


@_export
def xdivy(x, y):
    """ops.xdivy(x, y): x / y, 0 where x is 0."""
    a, b = _operands(x, y)
    q = F.div(a, b)
    return F.where(F.eq(a, 0), _creation.zeros_like(q), q)


@_export
def lerp(input, end, weight):
    """ops.lerp(input, end, weight): input + weight * (end - input)."""
    return P2.Lerp()(_tensor("lerp", "input", input), end, weight)


@_export
def logaddexp(input, other):
    """ops.logaddexp(input, other): log(exp(input) + exp(other)) without overflow."""
    a, b = _operands(input, other)
    a, b = _float(a), _float(b)
    m = F.maximum(a, b)
    d = F.neg(F.abs(a - b))
    out = m + F.log1p(F.exp(d))
    return F.where(F.eq(a, b), a + _LN2, out)  # equal infinities: (inf - inf) would be NaN


@_export
def logaddexp2(input, other):
    """ops.logaddexp2(input, other): log2(2^input + 2^other) without overflow."""
    a, b = _operands(input, other)
    a, b = _float(a), _float(b)
    m = F.maximum(a, b)
    d = F.neg(F.abs(a - b))
    out = m + F.log1p(F.pow(2.0, d)) * (1.0 / _LN2)
    return F.where(F.eq(a, b), a + 1.0, out)


@_export
def float_power(input, exponent):
    """ops.float_power(input, exponent): input ** exponent computed in float64."""
    a, b = _operands(input, exponent)
    return F.pow(F.cast(a, _dt.float64), F.cast(b, _dt.float64))


@_export
def heaviside(input, values):
    """ops.heaviside(input, values): 0 where input < 0, values where input == 0, 1 above."""
    x = _tensor("heaviside", "input", input)
    v = _tensor("heaviside", "values", values)
    one, zero = _creation.ones_like(x), _creation.zeros_like(x)
    return F.where(F.eq(x, 0), F.cast(v, x.dtype), F.where(F.gt(x, 0), one, zero))


@_export
def ldexp(x, other):
    """ops.ldexp(x, other): x * 2 ** other."""
    a = _float(_tensor("ldexp", "x", x))
    return F.mul(a, F.pow(2.0, F.cast(_t(other), a.dtype)))


@_export
def logit(input, eps=None):
    """ops.logit(input, eps=None): log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is
    given."""
    x = _float(_tensor("logit", "input", input))
    if eps is not None:
        _number("logit", "eps", eps)
        x = F.clamp(x, eps, 1.0 - eps)
    return F.log(x / (1.0 - x))


@_export
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """ops.nan_to_num(input, nan=0.0, posinf=None, neginf=None): NaN, +inf and -inf replaced
    (posinf/neginf None: the dtype's largest/lowest finite value)."""
    x = _tensor("nan_to_num", "input", input)
    if not x.dtype.is_floating_point:
        return x[...]
    big = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
           "float32": 3.4028234663852886e38}.get(x.dtype.name, 1.7976931348623157e308)
    posinf = big if posinf is None else _number("nan_to_num", "posinf", posinf)
    neginf = -big if neginf is None else _number("nan_to_num", "neginf", neginf)
    _number("nan_to_num", "nan", nan)
    full = lambda v: _creation.full(tuple(x.shape), v, dtype=x.dtype)  # noqa: E731
    x = F.where(F.ne(x, x), full(nan), x)
    x = F.where(F.eq(x, float("inf")), full(posinf), x)
    return F.where(F.eq(x, float("-inf")), full(neginf), x)


@_export
def fmax(input, other):
    """ops.fmax(input, other): the larger, ignoring a NaN operand (NaN only when both are)."""
    a, b = _operands(input, other)
    m = F.maximum(a, b)
    return F.where(F.ne(a, a), b, F.where(F.ne(b, b), a, m))


@_export
def fmin(input, other):
    """ops.fmin(input, other): the smaller, ignoring a NaN operand."""
    a, b = _operands(input, other)
    m = F.minimum(a, b)
    return F.where(F.ne(a, a), b, F.where(F.ne(b, b), a, m))


@_export
def bias_add(input_x, bias, data_format="NCHW"):
    """ops.bias_add(input_x, bias, data_format='NCHW'): bias added along the channel dim (1 for
    NCHW/NCDHW, the last for NHWC)."""
    x, b = _tensor("bias_add", "input_x", input_x), _tensor("bias_add", "bias", bias)
    if data_format not in ("NCHW", "NHWC", "NCDHW"):
        raise ValueError("For 'bias_add', the 'data_format' must be 'NCHW', 'NHWC' or 'NCDHW', "
                         "but got %r" % (data_format,))
    if x.ndim < 2 or b.ndim != 1:
        raise ValueError("For 'bias_add', 'input_x' must have rank >= 2 and 'bias' rank 1, but "
                         "got %d and %d" % (x.ndim, b.ndim))
    c = x.ndim - 1 if data_format == "NHWC" else 1
    if b.shape[0] != x.shape[c]:
        raise ValueError("For 'bias_add', 'bias' must have %d elements (the channels), but got %d"
                         % (x.shape[c], b.shape[0]))
    shape = [1] * x.ndim
    shape[c] = b.shape[0]
    return F.add(x, F.reshape(b, tuple(shape)))


# ----- reductions and scans -------------------------------------------------------------------

@_export
def count_nonzero(x, axis=(), keep_dims=False, dtype=_dt.int32):
    """ops.count_nonzero(x, axis=(), keep_dims=False, dtype=mstype.int32): the number of non-zero
    elements over `axis` (() or None: every axis)."""
    t = _tensor("count_nonzero", "x", x)
    _bool("count_nonzero", "keep_dims", keep_dims)
    if axis is None or axis == () or axis == []:
        axes = None
    else:
        axes = _dims("count_nonzero", "axis", axis, t.ndim)
    nz = F.cast(F.ne(t, 0), _dt.int64)
    return F.cast(F.sum(nz, axes, keep_dims), _dt.as_dtype(dtype))


@_export
def aminmax(input, *, axis=0, keepdims=False):
    """ops.aminmax(input, *, axis=0, keepdims=False) -> (min, max) along `axis` (None: every
    element)."""
    x = _tensor("aminmax", "input", input)
    _bool("aminmax", "keepdims", keepdims)
    if axis is not None:
        axis = _axis("aminmax", "axis", axis, x.ndim)
    return F.amin(x, axis, keepdims), F.amax(x, axis, keepdims)


@_export
def std_mean(input, axis=None, ddof=0, keepdims=False):
    """ops.std_mean(input, axis=None, ddof=0, keepdims=False) -> (std, mean); ddof may be a bool
    (True: 1)."""
    x = _tensor("std_mean", "input", input)
    ddof = int(ddof)
    return F.std(x, axis, ddof, keepdims), F.mean(x, axis, keepdims)


@_export
def var_mean(input, axis=None, ddof=0, keepdims=False):
    """ops.var_mean(input, axis=None, ddof=0, keepdims=False) -> (var, mean)."""
    x = _tensor("var_mean", "input", input)
    ddof = int(ddof)
    return F.var(x, axis, ddof, keepdims), F.mean(x, axis, keepdims)


@_export
def median(input, axis=-1, keepdims=False):
    """ops.median(input, axis=-1, keepdims=False) -> (values, indices): the lower median along
    `axis` (the element at (n - 1) // 2 of the sorted slice) and its index."""
    x = _tensor("median", "input", input)
    _bool("median", "keepdims", keepdims)
    if x.ndim == 0:
        return x[...], _creation.zeros((), dtype=_dt.int64)
    a = _axis("median", "axis", axis, x.ndim)
    values, order = F.sort(x, a)
    k = (x.shape[a] - 1) // 2
    pick = (_b.slice(None),) * a + ((_b.slice(k, k + 1),) if keepdims else (k,))
    return values[pick], order[pick]


def _scan(who, x, axis, combine, identity):
    """The inclusive scan of x along `axis` in log2(n) steps: at step s each element combines
    with the one s before it (identity beyond the start)."""
    n = x.shape[axis]
    pre = (_b.slice(None),) * axis
    s = 1
    while s < n:
        head = identity(x[pre + (_b.slice(0, s),)])
        x = combine(x, F.concat((head, x[pre + (_b.slice(0, n - s),)]), axis))
        s *= 2
    return x


@_export
def cumprod(input, dim, dtype=None):
    """ops.cumprod(input, dim, dtype=None): the running product along `dim` (dtype converts the
    input first)."""
    x = _tensor("cumprod", "input", input)
    if dtype is not None:
        x = F.cast(x, _dt.as_dtype(dtype))
    if x.ndim == 0:
        return x[...]
    a = _axis("cumprod", "dim", dim, x.ndim)
    return _scan("cumprod", x, a, F.mul, _creation.ones_like)


def _cum_extreme(who, input, axis, better):
    x = _tensor(who, "input", input)
    if x.dtype is _dt.bool_:
        raise TypeError("For '%s', the dtype of 'input' must be a number type, but got bool" % who)
    if x.ndim == 0:
        return x[...], _creation.zeros((), dtype=_dt.int64)
    a = _axis(who, "axis", axis, x.ndim)
    n = x.shape[a]
    shape = [1] * x.ndim
    shape[a] = n
    idx = F.broadcast_to(F.reshape(_creation.arange(n), tuple(shape)), tuple(x.shape))
    pre = (_b.slice(None),) * a
    s = 1
    while s < n:
        # (value, index) pairs s before: an earlier one wins only when strictly better (ties
        # keep the later index, as torch's cummax/cummin); NaN propagates as the winner.
        pv = F.concat((x[pre + (_b.slice(0, s),)], x[pre + (_b.slice(0, n - s),)]), a)
        pi = F.concat((idx[pre + (_b.slice(0, s),)], idx[pre + (_b.slice(0, n - s),)]), a)
        valid = F.ge(F.reshape(_creation.arange(n), tuple(shape)), s)
        take = F.logical_and(valid, F.logical_or(better(pv, x), F.logical_and(F.ne(pv, pv),
                                                                            F.eq(x, x))))
        x = F.where(take, pv, x)
        idx = F.where(take, pi, idx)
        s *= 2
    return x, idx


@_export
def cummax(input, axis):
    """ops.cummax(input, axis) -> (values, int64 indices): the running maximum along `axis`."""
    return _cum_extreme("cummax", input, axis, F.gt)


@_export
def cummin(input, axis):
    """ops.cummin(input, axis) -> (values, int64 indices): the running minimum along `axis`."""
    return _cum_extreme("cummin", input, axis, F.lt)


@_export
def argsort(input, axis=-1, descending=False):
    """ops.argsort(input, axis=-1, descending=False): the int64 indices that sort `input` along
    `axis` (stable)."""
    x = _tensor("argsort", "input", input)
    _bool("argsort", "descending", descending)
    return F.sort(x, axis, descending)[1]


@_export
def msort(input):
    """ops.msort(input): sorted along dim 0."""
    return F.sort(_tensor("msort", "input", input), 0)[0]


@_export
def diff(x, n=1, axis=-1, prepend=None, append=None):
    """ops.diff(x, n=1, axis=-1, prepend=None, append=None): the n-th forward difference along
    `axis`, after joining prepend and append there."""
    t = _tensor("diff", "x", x)
    _int("diff", "n", n)
    if n < 0:
        raise ValueError("For 'diff', the 'n' must be >= 0, but got %d" % n)
    a = _axis("diff", "axis", axis, t.ndim)
    parts = [p for p in (prepend, t, append) if p is not None]
    if len(parts) > 1:
        t = F.concat([_t(p) for p in parts], a)
    pre = (_b.slice(None),) * a
    for _ in _b.range(n):
        if t.shape[a] == 0:
            break
        later, earlier = t[pre + (_b.slice(1, None),)], t[pre + (_b.slice(0, -1),)]
        t = F.logical_xor(later, earlier) if t.dtype is _dt.bool_ else later - earlier
    return t


@_export
def trapz(y, x=None, *, dx=1.0, dim=-1):
    """ops.trapz(y, x=None, *, dx=1.0, dim=-1): the trapezoid-rule integral of y along `dim`, at
    sample points x (spacing dx when x is None)."""
    yt = _float(_tensor("trapz", "y", y))
    a = _axis("trapz", "dim", dim, yt.ndim)
    pre = (_b.slice(None),) * a
    mid = (yt[pre + (_b.slice(1, None),)] + yt[pre + (_b.slice(0, -1),)]) * 0.5
    if x is None:
        return F.sum(mid, a) * _number("trapz", "dx", dx)
    xt = _tensor("trapz", "x", x)
    if xt.ndim == 1:
        shape = [1] * yt.ndim
        shape[a] = xt.shape[0]
        xt = F.reshape(xt, tuple(shape))
        d = xt[pre + (_b.slice(1, None),)] - xt[pre + (_b.slice(0, -1),)]
    else:
        d = xt[pre + (_b.slice(1, None),)] - xt[pre + (_b.slice(0, -1),)]
    return F.sum(mid * d, a)


@_export
def cov(input, *, correction=1, fweights=None, aweights=None):
    """ops.cov(input, *, correction=1, fweights=None, aweights=None): the covariance matrix of
    the variables in input's rows (observations in its columns), weighted by integer frequency
    weights and/or observation weights."""
    x = _tensor("cov", "input", input)
    if x.ndim > 2:
        raise ValueError("For 'cov', the rank of 'input' must be <= 2, but got %d" % x.ndim)
    _int("cov", "correction", correction)
    x = _float(F.reshape(x, (1, -1)) if x.ndim < 2 else x)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = F.cast(_tensor("cov", "fweights", fweights), x.dtype)
    if aweights is not None:
        aw = F.cast(_tensor("cov", "aweights", aweights), x.dtype)
        w = aw if w is None else w * aw
    for name, v in (("fweights", fweights), ("aweights", aweights)):
        if v is not None and (v.ndim != 1 or v.shape[0] != n):
            raise ValueError("For 'cov', the '%s' must be 1-D of size %d, but got shape %r"
                             % (name, n, v.shape))
    if w is None:
        avg = F.mean(x, 1, True)
        norm = float(n - correction)
        xm = x - avg
        c = F.matmul(xm, F.transpose(xm, (1, 0)))
    else:
        wsum = F.sum(w)
        avg = F.sum(x * w, 1, True) / wsum
        if aweights is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * F.sum(w * aw) / wsum
        xm = x - avg
        c = F.matmul(xm * w, F.transpose(xm, (1, 0)))
    if not isinstance(norm, _Tensor):
        norm = _creation.tensor(float(norm), x.dtype)
    c = c / F.maximum(norm, 0.0)
    return F.reshape(c, ()) if _tensor("cov", "input", input).ndim < 2 else c


# ----- norms and distances ------------------------------------------------------------------

def _pnorm(x, p, axes, keepdim):
    """The vector p-norm of x over `axes` (None: all)."""
    ax = x if x.dtype.is_floating_point else F.cast(x, _dt.float32)
    if p == float("inf"):
        return F.amax(F.abs(ax), axes, keepdim)
    if p == float("-inf"):
        return F.amin(F.abs(ax), axes, keepdim)
    if p == 0:
        return F.cast(F.sum(F.cast(F.ne(ax, 0), ax.dtype), axes, keepdim), ax.dtype)
    if p == 1:
        return F.sum(F.abs(ax), axes, keepdim)
    if p == 2:
        return F.sqrt(F.sum(F.square(ax), axes, keepdim))
    return F.pow(F.sum(F.pow(F.abs(ax), float(p)), axes, keepdim), 1.0 / p)


@_export
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """ops.norm(A, ord=None, dim=None, keepdim=False, *, dtype=None): vector norms (an int dim,
    or a 1-D input) and matrix norms (a pair of dims, or a 2-D input with ord given): ord None
    (2-norm / Frobenius), 'fro', inf, -inf, 0 (vectors), 1, -1, any other number (vectors).
    The singular-value norms (matrix ord 2, -2, 'nuc') need an SVD pijit does not have."""
    x = _tensor("norm", "A", A)
    if dtype is not None:
        x = F.cast(x, _dt.as_dtype(dtype))
    _bool("norm", "keepdim", keepdim)
    if ord is not None and not isinstance(ord, str):
        _number("norm", "ord", ord)
    if dim is None:
        if ord is None:
            return _pnorm(F.reshape(x, (-1,)) if not keepdim else x, 2, None, keepdim)
        if x.ndim not in (1, 2):
            raise ValueError("For 'norm', 'A' must be 1-D or 2-D when 'dim' is None and 'ord' "
                             "is given, but got %d-D" % x.ndim)
        dim = 0 if x.ndim == 1 else (0, 1)
    if _is_int(dim) or (isinstance(dim, (tuple, list)) and len(dim) == 1):
        d = _dims("norm", "dim", dim, x.ndim)
        if isinstance(ord, str):
            raise TypeError("For 'norm', a vector norm takes a number 'ord', but got %r" % (ord,))
        return _pnorm(x, 2 if ord is None else ord, d, keepdim)
    d0, d1 = _dims("norm", "dim", dim, x.ndim) if len(dim) == 2 else (None, None)
    if d0 is None:
        raise ValueError("For 'norm', the 'dim' must be an int or a pair of ints, but got %r"
                         % (dim,))
    if ord is None or ord == "fro":
        return _pnorm(x, 2, (d0, d1), keepdim)
    if ord in (2, -2, "nuc"):
        from pijit.ops.linalg import _singular_value_norm
        return _singular_value_norm(_float(x), (d0, d1), ord, keepdim)
    if ord not in (1, -1, float("inf"), float("-inf")):
        raise ValueError("For 'norm', a matrix norm takes ord None, 'fro', 'nuc', inf, -inf, 1, "
                         "-1, 2 or -2, but got %r" % (ord,))
    ax = _float(x)
    # 1/-1: the max/min column sum (sum over d0, then reduce d1); inf/-inf: rows (swap)
    sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
    s = F.sum(F.abs(ax), sum_dim, True)
    r = F.amax(s, red_dim, True) if ord in (1, float("inf")) else F.amin(s, red_dim, True)
    return r if keepdim else F.squeeze(r, (d0, d1))


@_export
def clip_by_norm(x, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """ops.clip_by_norm(x, max_norm, norm_type=2.0, error_if_nonfinite=False): x (a Tensor or a
    tuple/list of them) scaled by max_norm / (total norm + 1e-6) where that is below 1; the total
    norm is the norm_type norm of every element together. error_if_nonfinite reads the norm."""
    single = isinstance(x, _Tensor)
    xs = [x] if single else _tensors("clip_by_norm", "x", x)
    _number("clip_by_norm", "max_norm", max_norm)
    _number("clip_by_norm", "norm_type", norm_type)
    norms = [_pnorm(t, norm_type, None, False) for t in xs]
    if norm_type == float("inf"):
        total = F.amax(F.stack(norms, 0))
    else:
        total = _pnorm(F.stack(norms, 0), norm_type, None, False)
    if error_if_nonfinite and not _math.isfinite(float(total.item())):
        raise RuntimeError("For 'clip_by_norm', the total norm of order %r is non-finite"
                           % (norm_type,))
    coef = F.clamp(max_norm / (total + 1e-6), None, 1.0)
    out = [F.cast(t * F.cast(coef, t.dtype), t.dtype) for t in xs]
    return out[0] if single else tuple(out)


@_export
def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    """ops.clip_by_global_norm(x, clip_norm=1.0, use_norm=None): each tensor of the tuple x times
    clip_norm / max(global_norm, clip_norm), global_norm the 2-norm of every element of x
    together (use_norm must be None, as MindSpore requires)."""
    xs = _tensors("clip_by_global_norm", "x", x)
    _number("clip_by_global_norm", "clip_norm", clip_norm)
    if clip_norm <= 0:
        raise ValueError("For 'clip_by_global_norm', the 'clip_norm' must be > 0, but got %r"
                         % (clip_norm,))
    if use_norm is not None:
        raise ValueError("For 'clip_by_global_norm', the 'use_norm' only supports None, but got %r"
                         % (use_norm,))
    sq = [F.sum(F.square(F.cast(t, _dt.float32) if not t.dtype.is_floating_point else t))
          for t in xs]
    total = F.sqrt(_b.sum(sq[1:], sq[0]))
    scale = clip_norm / F.maximum(total, clip_norm)
    return tuple(t * F.cast(scale, t.dtype) for t in xs)


@_export
def dist(input, other, p=2):
    """ops.dist(input, other, p=2): the p-norm of input - other (broadcast), over every element."""
    a, b = _operands(_tensor("dist", "input", input), _tensor("dist", "other", other))
    _number("dist", "p", p)
    return _pnorm(a - b, p, None, False)


@_export
def cdist(x1, x2, p=2.0):
    """ops.cdist(x1, x2, p=2.0): the p-norm distance between each row of x1 (.., P, M) and each
    row of x2 (.., R, M): shape (.., P, R)."""
    a, b = _float(_tensor("cdist", "x1", x1)), _float(_tensor("cdist", "x2", x2))
    _number("cdist", "p", p)
    if p < 0:
        raise ValueError("For 'cdist', the 'p' must be >= 0, but got %r" % (p,))
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise ValueError("For 'cdist', 'x1' and 'x2' must have rank >= 2 and one last dim, but "
                         "got %r and %r" % (a.shape, b.shape))
    d = F.expand_dims(a, -2) - F.expand_dims(b, -3)
    return _pnorm(d, p, (d.ndim - 1,), False)


@_export
def pdist(input, p=2.0):
    """ops.pdist(input, p=2.0): the p-norm distances between the rows of (.., N, M) input, i < j
    in row-major order: N * (N - 1) / 2 values."""
    x = _float(_tensor("pdist", "input", input))
    _number("pdist", "p", p)
    if p < 0:
        raise ValueError("For 'pdist', the 'p' must be >= 0, but got %r" % (p,))
    if x.ndim < 2:
        raise ValueError("For 'pdist', the rank of 'input' must be >= 2, but got %d" % x.ndim)
    n = x.shape[-2]
    ii = [i for i in _b.range(n) for j in _b.range(i + 1, n)]
    jj = [j for i in _b.range(n) for j in _b.range(i + 1, n)]
    if not ii:
        return _creation.zeros(tuple(x.shape[:-2]) + (0,), dtype=x.dtype)
    d = _take(x, x.ndim - 2, ii) - _take(x, x.ndim - 2, jj)
    return _pnorm(d, p, (d.ndim - 1,), False)


@_export
def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """ops.cosine_similarity(x1, x2, dim=1, eps=1e-08): sum(x1 * x2) / sqrt(max(|x1|^2 |x2|^2,
    eps^2)) along `dim` (x1 and x2 broadcast)."""
    a, b = _operands(_float(_tensor("cosine_similarity", "x1", x1)),
                     _float(_tensor("cosine_similarity", "x2", x2)))
    _number("cosine_similarity", "eps", eps)
    shape = _broadcast_shape("cosine_similarity", a.shape, b.shape)
    d = _axis("cosine_similarity", "dim", dim, len(shape))
    w12 = F.sum(a * b, d)
    w1, w2 = F.sum(F.square(a), d), F.sum(F.square(b), d)
    return w12 / F.sqrt(F.maximum(w1 * w2, eps * eps))


@_export
def renorm(input, p, axis, maxnorm):
    """ops.renorm(input, p, axis, maxnorm): each slice along `axis` whose p-norm exceeds maxnorm
    scaled down to norm maxnorm."""
    x = _floating("renorm", "input", _tensor("renorm", "input", input))
    _int("renorm", "p", p)
    if p <= 0:
        raise ValueError("For 'renorm', the 'p' must be > 0, but got %d" % p)
    _number("renorm", "maxnorm", maxnorm)
    a = _axis("renorm", "axis", axis, x.ndim)
    others = tuple(d for d in _b.range(x.ndim) if d != a)
    nrm = _pnorm(x, p, others, True)
    scale = F.where(F.gt(nrm, maxnorm), maxnorm / (nrm + 1e-7), _creation.ones_like(nrm))
    return x * scale


# ----- activations ----------------------------------------------------------------------------

@_export
def softmin(x, axis=-1, *, dtype=None):
    """ops.softmin(x, axis=-1, *, dtype=None): softmax(-x)."""
    t = _tensor("softmin", "x", x)
    if dtype is not None:
        t = F.cast(t, _dt.as_dtype(dtype))
    return F.softmax(F.neg(t), axis)


@_export
def elu(input_x, alpha=1.0):
    """ops.elu(input_x, alpha=1.0): x above 0, alpha * (exp(x) - 1) elsewhere."""
    return P2.Elu(alpha)(input_x)


@_export
def celu(x, alpha=1.0):
    """ops.celu(x, alpha=1.0): max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    t = _floating("celu", "x", _tensor("celu", "x", x))
    _number("celu", "alpha", alpha)
    if alpha == 0:
        raise ValueError("For 'celu', the 'alpha' must not be 0")
    return F.where(F.gt(t, 0), t, F.expm1(t / alpha) * alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@_export
def selu(input_x):
    """ops.selu(input_x): scale * elu(x, alpha) with SELU's fixed alpha 1.67326... and scale
    1.05070..."""
    t = _floating("selu", "input_x", _tensor("selu", "input_x", input_x))
    return F.where(F.gt(t, 0), t, F.expm1(t) * _SELU_ALPHA) * _SELU_SCALE


@_export
def prelu(x, weight):
    """ops.prelu(x, weight): x above 0, weight * x elsewhere; weight has one value per channel
    (dim 1) or one in all."""
    return P2.PReLU()(x, weight)


@_export
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3):
    """ops.rrelu(input, lower=1/8, upper=1/3): x above 0, x times a slope drawn uniformly from
    [lower, upper] for each element elsewhere."""
    x = _floating("rrelu", "input", _tensor("rrelu", "input", input))
    _number("rrelu", "lower", lower)
    _number("rrelu", "upper", upper)
    if lower > upper:
        raise ValueError("For 'rrelu', 'lower' (%r) must be <= 'upper' (%r)" % (lower, upper))
    slope = _creation.rand(tuple(x.shape), dtype=x.dtype) * (upper - lower) + lower
    return F.where(F.ge(x, 0), x, x * slope)


@_export
def hardshrink(x, lambd=0.5):
    """ops.hardshrink(x, lambd=0.5): x where |x| > lambd, else 0."""
    t = _tensor("hardshrink", "x", x)
    _number("hardshrink", "lambd", lambd)
    return F.where(F.gt(F.abs(t), lambd), t, _creation.zeros_like(t))


@_export
def soft_shrink(input, lambd=0.5):
    """ops.soft_shrink(input, lambd=0.5): x - lambd above lambd, x + lambd below -lambd, else 0."""
    t = _tensor("soft_shrink", "input", input)
    _number("soft_shrink", "lambd", lambd)
    if lambd < 0:
        raise ValueError("For 'soft_shrink', the 'lambd' must be >= 0, but got %r" % (lambd,))
    zero = _creation.zeros_like(t)
    return F.where(F.gt(t, lambd), t - lambd, F.where(F.lt(t, -lambd), t + lambd, zero))


_alias("softshrink", soft_shrink)


@_export
def hardtanh(input, min_val=-1.0, max_val=1.0):
    """ops.hardtanh(input, min_val=-1.0, max_val=1.0): clamped to [min_val, max_val]."""
    t = _tensor("hardtanh", "input", input)
    _number("hardtanh", "min_val", min_val)
    _number("hardtanh", "max_val", max_val)
    if min_val > max_val:
        raise ValueError("For 'hardtanh', 'min_val' (%r) must be <= 'max_val' (%r)"
                         % (min_val, max_val))
    return F.clamp(t, min_val, max_val)


@_export
def threshold(input, thr, value):
    """ops.threshold(input, thr, value): input where input > thr, else value."""
    t = _tensor("threshold", "input", input)
    _number("threshold", "thr", thr)
    _number("threshold", "value", value)
    return F.where(F.gt(t, thr), t, _creation.ones_like(t) * value)


@_export
def glu(x, axis=-1):
    """ops.glu(x, axis=-1): a * sigmoid(b), a and b the halves of x along `axis`."""
    t = _floating("glu", "x", _tensor("glu", "x", x))
    a = _axis("glu", "axis", axis, t.ndim)
    if t.shape[a] % 2:
        raise ValueError("For 'glu', dim %d must have an even size, but got %d" % (a, t.shape[a]))
    h = t.shape[a] // 2
    pre = (_b.slice(None),) * a
    return t[pre + (_b.slice(0, h),)] * F.sigmoid(t[pre + (_b.slice(h, None),)])


@_export
def gumbel_softmax(logits, tau=1.0, hard=False, dim=-1):
    """ops.gumbel_softmax(logits, tau=1.0, hard=False, dim=-1): softmax((logits + g) / tau), g
    Gumbel noise; hard gives the one-hot of the largest, with the soft sample's gradient."""
    x = _floating("gumbel_softmax", "logits", _tensor("gumbel_softmax", "logits", logits))
    _number("gumbel_softmax", "tau", tau)
    _bool("gumbel_softmax", "hard", hard)
    if tau <= 0:
        raise ValueError("For 'gumbel_softmax', the 'tau' must be > 0, but got %r" % (tau,))
    d = _axis("gumbel_softmax", "dim", dim, x.ndim)
    u = _creation.rand(tuple(x.shape), dtype=x.dtype)
    g = F.neg(F.log(F.neg(F.log(F.clamp(u, 1e-20, None))) + 1e-20))
    y = F.softmax((x + g) / tau, d)
    if not hard:
        return y
    idx = F.argmax(y, d, True)
    n = x.shape[d]
    shape = [1] * x.ndim
    shape[d] = n
    onehot = F.cast(F.eq(F.reshape(_creation.arange(n), tuple(shape)), idx), x.dtype)
    return onehot - F.stop_gradient(y) + y


def _channel_dropout(who, input, p, training, nd):
    x = _tensor(who, "input", input)
    _number(who, "p", p)
    _bool(who, "training", training)
    if not 0 <= p <= 1:
        raise ValueError("For '%s', the 'p' must be in [0, 1], but got %r" % (who, p))
    if x.ndim not in (nd + 1, nd + 2):
        raise ValueError("For '%s', the rank of 'input' must be %d or %d, but got %d"
                         % (who, nd + 1, nd + 2, x.ndim))
    _floating(who, "input", x)
    if not training or p == 0:
        return x
    if p == 1:
        return _creation.zeros_like(x)
    keep_shape = tuple(x.shape[:x.ndim - nd]) + (1,) * nd
    keep = F.cast(F.ge(_creation.rand(keep_shape, dtype=x.dtype), p), x.dtype)
    return x * keep * (1.0 / (1.0 - p))


@_export
def dropout1d(input, p=0.5, training=True):
    """ops.dropout1d(input, p=0.5, training=True): whole channels of (N, C, L) or (C, L) zeroed
    with probability p, the others scaled by 1 / (1 - p)."""
    return _channel_dropout("dropout1d", input, p, training, 1)


@_export
def dropout2d(input, p=0.5, training=True):
    """ops.dropout2d(input, p=0.5, training=True): as dropout1d for (N, C, H, W)."""
    return _channel_dropout("dropout2d", input, p, training, 2)


@_export
def dropout3d(input, p=0.5, training=True):
    """ops.dropout3d(input, p=0.5, training=True): as dropout1d for (N, C, D, H, W)."""
    return _channel_dropout("dropout3d", input, p, training, 3)


@_export
def pixel_shuffle(input, upscale_factor):
    """ops.pixel_shuffle(input, upscale_factor): (.., C r^2, H, W) -> (.., C, H r, W r)."""
    x = _tensor("pixel_shuffle", "input", input)
    r = _int("pixel_shuffle", "upscale_factor", upscale_factor)
    if r <= 0 or x.ndim < 3 or x.shape[-3] % (r * r):
        raise ValueError("For 'pixel_shuffle', 'input' must be (.., C*r*r, H, W) with r = %r > 0, "
                         "but got shape %r" % (r, x.shape))
    lead = tuple(x.shape[:-3])
    c, h, w = x.shape[-3] // (r * r), x.shape[-2], x.shape[-1]
    k = len(lead)
    y = F.reshape(x, lead + (c, r, r, h, w))
    y = F.transpose(y, tuple(_b.range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
    return F.reshape(y, lead + (c, h * r, w * r))


@_export
def pixel_unshuffle(input, downscale_factor):
    """ops.pixel_unshuffle(input, downscale_factor): (.., C, H r, W r) -> (.., C r^2, H, W)."""
    x = _tensor("pixel_unshuffle", "input", input)
    r = _int("pixel_unshuffle", "downscale_factor", downscale_factor)
    if r <= 0 or x.ndim < 3 or x.shape[-2] % r or x.shape[-1] % r:
        raise ValueError("For 'pixel_unshuffle', 'input' must be (.., C, H*r, W*r) with r = %r > "
                         "0, but got shape %r" % (r, x.shape))
    lead = tuple(x.shape[:-3])
    c, h, w = x.shape[-3], x.shape[-2] // r, x.shape[-1] // r
    k = len(lead)
    y = F.reshape(x, lead + (c, h, r, w, r))
    y = F.transpose(y, tuple(_b.range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
    return F.reshape(y, lead + (c * r * r, h, w))


# ----- losses ---------------------------------------------------------------------------------

@_export
def kl_div(logits, labels, reduction="mean", log_target=False):
    """ops.kl_div(logits, labels, reduction='mean', log_target=False): labels * (log(labels) -
    logits) (0 where labels is 0); log_target: labels are log-probabilities, exp(labels) *
    (labels - logits). 'mean' averages every element, 'batchmean' divides the sum by dim 0."""
    x = _floating("kl_div", "logits", _tensor("kl_div", "logits", logits))
    y = _tensor("kl_div", "labels", labels)
    _bool("kl_div", "log_target", log_target)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError("For 'kl_div', the 'reduction' must be 'none', 'mean', 'sum' or "
                         "'batchmean', but got %r" % (reduction,))
    if log_target:
        out = F.exp(y) * (y - x)
        if reduction == "none":
            return out
        if reduction == "sum":
            return F.sum(out)
        if reduction == "mean":
            return F.mean(out)
        return F.sum(out) / (x.shape[0] if x.ndim else 1)
    return P2.KLDivLoss(reduction)(x, y)


@_export
def huber_loss(input, target, reduction="mean", delta=1.0):
    """ops.huber_loss(input, target, reduction='mean', delta=1.0): 0.5 d^2 where |d| < delta,
    else delta (|d| - 0.5 delta), d = input - target."""
    x, y = _tensor("huber_loss", "input", input), _tensor("huber_loss", "target", target)
    _number("huber_loss", "delta", delta)
    if delta <= 0:
        raise ValueError("For 'huber_loss', the 'delta' must be > 0, but got %r" % (delta,))
    d = F.abs(x - y)
    out = F.where(F.lt(d, delta), F.square(d) * 0.5, (d - 0.5 * delta) * delta)
    return _reduce("huber_loss", reduction, out)


@_export
def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """ops.margin_ranking_loss(input1, input2, target, margin=0.0, reduction='mean'):
    max(0, -target * (input1 - input2) + margin)."""
    a = _tensor("margin_ranking_loss", "input1", input1)
    b = _tensor("margin_ranking_loss", "input2", input2)
    y = _tensor("margin_ranking_loss", "target", target)
    _number("margin_ranking_loss", "margin", margin)
    return _reduce("margin_ranking_loss", reduction, F.relu(F.neg(y) * (a - b) + margin))


@_export
def hinge_embedding_loss(inputs, targets, margin=1.0, reduction="mean"):
    """ops.hinge_embedding_loss(inputs, targets, margin=1.0, reduction='mean'): x where target
    is 1, max(0, margin - x) where it is -1."""
    x = _tensor("hinge_embedding_loss", "inputs", inputs)
    y = _tensor("hinge_embedding_loss", "targets", targets)
    _number("hinge_embedding_loss", "margin", margin)
    zero = _creation.zeros_like(x)
    out = F.where(F.eq(y, 1), x, zero) + F.where(F.eq(y, -1), F.relu(F.neg(x) + margin), zero)
    return _reduce("hinge_embedding_loss", reduction, out)


@_export
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """ops.cosine_embedding_loss(input1, input2, target, margin=0.0, reduction='mean'): 1 - cos
    where target is 1, max(0, cos - margin) where it is -1; cos along the last dim (eps 1e-12
    under the square root, as MindSpore)."""
    a = _float(_tensor("cosine_embedding_loss", "input1", input1))
    b = _float(_tensor("cosine_embedding_loss", "input2", input2))
    y = _tensor("cosine_embedding_loss", "target", target)
    _number("cosine_embedding_loss", "margin", margin)
    if not -1 <= margin <= 1:
        raise ValueError("For 'cosine_embedding_loss', the 'margin' must be in [-1, 1], but got %r"
                         % (margin,))
    d = a.ndim - 1
    cos = F.sum(a * b, d) / F.sqrt((F.sum(F.square(a), d) + 1e-12) * (F.sum(F.square(b), d) + 1e-12))
    zero = _creation.zeros_like(cos)
    out = F.where(F.eq(y, 1), 1 - cos, zero) + F.where(F.eq(y, -1), F.relu(cos - margin), zero)
    return _reduce("cosine_embedding_loss", reduction, out)


@_export
def gaussian_nll_loss(x, target, var, full=False, eps=1e-6, reduction="mean"):
    """ops.gaussian_nll_loss(x, target, var, full=False, eps=1e-6, reduction='mean'):
    0.5 (log(max(var, eps)) + (x - target)^2 / max(var, eps)) (+ 0.5 log(2 pi) with full)."""
    a = _floating("gaussian_nll_loss", "x", _tensor("gaussian_nll_loss", "x", x))
    y = _tensor("gaussian_nll_loss", "target", target)
    v = _tensor("gaussian_nll_loss", "var", var)
    _bool("gaussian_nll_loss", "full", full)
    _number("gaussian_nll_loss", "eps", eps)
    if v.ndim == a.ndim - 1 or (v.ndim == a.ndim and v.shape[-1] == 1 and a.shape[-1] != 1):
        v = F.reshape(v, tuple(v.shape[:a.ndim - 1]) + (1,))
    v = F.maximum(v, eps)
    out = (F.log(v) + F.square(a - y) / v) * 0.5
    if full:
        out = out + 0.5 * _math.log(2 * _math.pi)
    return _reduce("gaussian_nll_loss", reduction, out)


@_export
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                        reduction="mean"):
    """ops.triplet_margin_loss: max(d(a, p) - d(a, n) + margin, 0), d the p-norm distance of
    the differences plus eps along the last dim; swap also takes d(p, n) when smaller."""
    a = _float(_tensor("triplet_margin_loss", "anchor", anchor))
    pos = _float(_tensor("triplet_margin_loss", "positive", positive))
    neg = _float(_tensor("triplet_margin_loss", "negative", negative))
    _number("triplet_margin_loss", "margin", margin)
    _bool("triplet_margin_loss", "swap", swap)

    def d(u, v):
        diff = u - v + eps
        return _pnorm(diff, p, (diff.ndim - 1,), False)
    dp, dn = d(a, pos), d(a, neg)
    if swap:
        dn = F.minimum(dn, d(pos, neg))
    return _reduce("triplet_margin_loss", reduction, F.relu(dp - dn + margin))


@_export
def multilabel_soft_margin_loss(input, target, weight=None, reduction="mean"):
    """ops.multilabel_soft_margin_loss(input, target, weight=None, reduction='mean'):
    -mean over classes of (y log sigmoid(x) + (1 - y) log sigmoid(-x)), times weight."""
    x = _float(_tensor("multilabel_soft_margin_loss", "input", input))
    y = F.cast(_tensor("multilabel_soft_margin_loss", "target", target), x.dtype)
    ls = logsigmoid
    out = F.neg(y * ls(x) + (1 - y) * ls(F.neg(x)))
    if weight is not None:
        out = out * _tensor("multilabel_soft_margin_loss", "weight", weight)
    return _reduce("multilabel_soft_margin_loss", reduction, F.mean(out, x.ndim - 1))


# ----- scatters and segments ------------------------------------------------------------------

def _work(x):
    """index_add and scatter_add add floating tensors: integers go through float64 (exact below
    2**53)."""
    return x if x.dtype.is_floating_point else F.cast(x, _dt.float64)


@_export
def unsorted_segment_sum(input_x, segment_ids, num_segments):
    """ops.unsorted_segment_sum(input_x, segment_ids, num_segments): out[s] = the sum of the
    slices input_x[i...] whose segment_ids[i...] is s (segment_ids' shape is a prefix of
    input_x's); ids outside [0, num_segments) are dropped."""
    who = "unsorted_segment_sum"
    x = _tensor(who, "input_x", input_x)
    ids = P2._integral(who, "segment_ids", _tensor(who, "segment_ids", segment_ids))
    if isinstance(num_segments, _Tensor):
        num_segments = int(num_segments.item())
    _int(who, "num_segments", num_segments)
    if num_segments <= 0:
        raise ValueError("For '%s', the 'num_segments' must be > 0, but got %d" % (who, num_segments))
    if tuple(x.shape[:ids.ndim]) != tuple(ids.shape):
        raise ValueError("For '%s', the shape of 'segment_ids' %r must be a prefix of input_x's %r"
                         % (who, ids.shape, x.shape))
    tail = tuple(x.shape[ids.ndim:])
    flat = F.reshape(F.cast(ids, _dt.int64), (-1,))
    ok = F.logical_and(F.ge(flat, 0), F.lt(flat, num_segments))
    flat = F.where(ok, flat, _creation.ones_like(flat) * num_segments)  # dropped ids go to a spare row
    src = F.reshape(_work(x), (flat.shape[0],) + tail)
    base = _creation.zeros((num_segments + 1,) + tail, dtype=src.dtype)
    out = _op("index_add", (base, flat, src), axis=0)[:num_segments]
    return out if out.dtype is x.dtype else F.cast(out, x.dtype)


@_export
def tensor_scatter_elements(input_x, indices, updates, axis=0, reduction="none"):
    """ops.tensor_scatter_elements(input_x, indices, updates, axis=0, reduction='none'): a copy
    of input_x with out[..., indices[i][j], ...] = updates[i][j] along `axis` ('add': added,
    repeated positions adding up). Negative indices count from the end; indices may be smaller
    than input_x on the other dims. Integers go through float64 (exact below 2**53)."""
    who = "tensor_scatter_elements"
    x = _tensor(who, "input_x", input_x)
    idx = P2._integral(who, "indices", _tensor(who, "indices", indices))
    upd = _tensor(who, "updates", updates)
    if reduction not in ("none", "add"):
        raise ValueError("For '%s', the 'reduction' must be 'none' or 'add', but got %r"
                         % (who, reduction))
    if idx.ndim != x.ndim or tuple(upd.shape) != tuple(idx.shape):
        raise ValueError("For '%s', 'indices' and 'updates' must have one shape of the rank of "
                         "'input_x' (%d), but got %r and %r" % (who, x.ndim, idx.shape, upd.shape))
    if upd.dtype is not x.dtype:
        raise TypeError("For '%s', 'updates' must have the dtype of 'input_x' (%s), but got %s"
                        % (who, x.dtype, upd.dtype))
    a = _axis(who, "axis", axis, x.ndim)
    idx = F.cast(idx, _dt.int64)
    idx = F.where(F.lt(idx, 0), idx + x.shape[a], idx)
    if _b.any(idx.shape[d] > x.shape[d] for d in _b.range(x.ndim) if d != a):
        raise ValueError("For '%s', 'indices' %r must not be larger than 'input_x' %r on a dim "
                         "other than 'axis' (%d)" % (who, idx.shape, x.shape, a))
    w = _work(x)
    src, hits = F.cast(upd, w.dtype), _creation.ones(tuple(idx.shape), dtype=w.dtype)
    # scatter_add wants index and src as large as input_x on the other dims: pad them with
    # index 0 and value 0, which add nothing
    for d in _b.range(x.ndim):
        extra = x.shape[d] - idx.shape[d]
        if d != a and extra:
            pad = list(idx.shape)
            pad[d] = extra
            idx = F.concat((idx, _creation.zeros(tuple(pad), dtype=idx.dtype)), d)
            src = F.concat((src, _creation.zeros(tuple(pad), dtype=w.dtype)), d)
            hits = F.concat((hits, _creation.zeros(tuple(pad), dtype=w.dtype)), d)
    added = _op("scatter_add", (_creation.zeros_like(w), idx, src), axis=a)
    if reduction == "add":
        out = w + added
    else:
        # each position written once takes its update exactly (sum / 1); MindSpore leaves
        # repeated positions undefined, here they take the mean of their updates
        count = _op("scatter_add", (_creation.zeros_like(w), idx, hits), axis=a)
        hit = F.gt(count, 0)
        out = F.where(hit, added / F.where(hit, count, _creation.ones_like(count)), w)
    return out if out.dtype is x.dtype else F.cast(out, x.dtype)


_alias("scatter", tensor_scatter_elements)


@_export
def tensor_scatter_add(input_x, indices, updates):
    """ops.tensor_scatter_add(input_x, indices, updates): a copy of input_x with updates added at
    the positions `indices` (ScatterNd's; repeated positions add up)."""
    return P2.TensorScatterAdd()(input_x, indices, updates)


@_export
def tensor_scatter_sub(input_x, indices, updates):
    """ops.tensor_scatter_sub(input_x, indices, updates): as tensor_scatter_add, subtracting."""
    return P2.TensorScatterAdd()(input_x, indices, F.neg(_tensor("tensor_scatter_sub", "updates",
                                                                 updates)))


@_export
def tensor_scatter_update(input_x, indices, updates):
    """ops.tensor_scatter_update(input_x, indices, updates): a copy of input_x with the positions
    `indices` set to updates."""
    return P2.TensorScatterUpdate()(input_x, indices, updates)


def _scatter_rows(who, x, indices, updates):
    """The new value of x after ScatterAdd's rows: updates (shape indices.shape + x.shape[1:])
    added at rows `indices`."""
    x = _tensor(who, "input_x", x)
    idx = P2._integral(who, "indices", _tensor(who, "indices", indices))
    upd = _tensor(who, "updates", updates)
    want = tuple(idx.shape) + tuple(x.shape[1:])
    if tuple(upd.shape) != want:
        raise ValueError("For '%s', 'updates' must have shape %r (indices.shape + "
                         "input_x.shape[1:]), but got %r" % (who, want, upd.shape))
    flat = F.reshape(F.cast(idx, _dt.int64), (-1,))
    w = _work(x)
    src = F.reshape(F.cast(upd, w.dtype), (flat.shape[0],) + tuple(x.shape[1:]))
    out = _op("index_add", (w, flat, src), axis=0)
    return out if out.dtype is x.dtype else F.cast(out, x.dtype)


@_export
@_runtime_state("writes a Parameter in place")
def scatter_add(input_x, indices, updates):
    """ops.scatter_add(input_x, indices, updates): adds updates to the rows `indices` of the
    Parameter input_x in place (repeated rows add up) and returns it, as MindSpore's ScatterAdd
    (a graph break under jit, as Assign)."""
    new = _scatter_rows("scatter_add", input_x, indices, updates)
    input_x[...] = new
    return input_x


@_export
@_runtime_state("writes a Parameter in place")
def scatter_nd_add(input_x, indices, updates, use_locking=False):
    """ops.scatter_nd_add(input_x, indices, updates, use_locking=False): adds updates at the
    positions `indices` (ScatterNd's) of the Parameter input_x in place and returns it."""
    new = P2.TensorScatterAdd()(input_x, indices, updates)
    input_x[...] = new
    return input_x


@_export
@_runtime_state("writes a Parameter in place")
def index_add(x, indices, y, axis, use_lock=True, check_index_bound=True):
    """ops.index_add(x, indices, y, axis, use_lock=True, check_index_bound=True): adds y's slices
    to the slices `indices` (1-D int Tensor) of the Parameter x along `axis`, in place, and
    returns x."""
    t = _tensor("index_add", "x", x)
    idx = P2._integral("index_add", "indices", _tensor("index_add", "indices", indices))
    src = _tensor("index_add", "y", y)
    a = _axis("index_add", "axis", axis, t.ndim)
    w = _work(t)
    out = _op("index_add", (w, F.cast(idx, _dt.int64), F.cast(src, w.dtype)), axis=a)
    x[...] = out if out.dtype is t.dtype else F.cast(out, t.dtype)
    return x


# ----- data-dependent results (eager; under jit capture stops at them) -------------------------

@_export
def unique(input):
    """ops.unique(input) -> (y, idx): the sorted distinct elements and, for each element of the
    input, its index in y (idx has the input's shape)."""
    from pijit.numpy.array_ops import unique as _unique
    x = _tensor("unique", "input", input)
    y, inv = _unique(x, return_inverse=True)
    return y, F.reshape(inv, tuple(x.shape))


@_export
def unique_consecutive(input, return_idx=False, return_counts=False, axis=None):
    """ops.unique_consecutive(input, return_idx=False, return_counts=False, axis=None): runs of
    equal consecutive elements (of the flattened input, or slices along `axis`) reduced to one;
    return_idx gives each element's run number, return_counts each run's length."""
    x = _tensor("unique_consecutive", "input", input)
    _bool("unique_consecutive", "return_idx", return_idx)
    _bool("unique_consecutive", "return_counts", return_counts)
    if axis is None:
        t, a = F.reshape(x, (-1,)), 0
    else:
        t, a = x, _axis("unique_consecutive", "axis", axis, x.ndim)
    n = t.shape[a]
    pre = (_b.slice(None),) * a
    if n == 0:
        out, runs, counts = t, _creation.zeros((0,), dtype=_dt.int64), _creation.zeros((0,), dtype=_dt.int64)
    else:
        change = F.ne(t[pre + (_b.slice(1, None),)], t[pre + (_b.slice(0, -1),)])
        if t.ndim > 1:
            others = tuple(d for d in _b.range(t.ndim) if d != a)
            change = F.any(change, others)
        first = F.concat((_creation.ones((1,), dtype=_dt.bool_), change), 0)
        starts = [i for i, f in enumerate(first.tolist()) if f]
        out = _take(t, a, starts)
        runs = F.cast(F.cumsum(F.cast(first, _dt.int64), 0), _dt.int64) - 1
        counts = _const([e - s for s, e in zip(starts, starts[1:] + [n])])
    res = (out,)
    if return_idx:
        res += (F.reshape(runs, tuple(x.shape)) if axis is None else runs,)
    if return_counts:
        res += (counts,)
    return res[0] if len(res) == 1 else res


@_export
def masked_select(input, mask):
    """ops.masked_select(input, mask): the elements of input (broadcast with mask) where mask is
    True, as a 1-D tensor."""
    x = _tensor("masked_select", "input", input)
    m = _tensor("masked_select", "mask", mask)
    if m.dtype is not _dt.bool_:
        raise TypeError("For 'masked_select', the 'mask' must be a bool Tensor, but got %s" % m.dtype)
    shape = _broadcast_shape("masked_select", x.shape, m.shape)
    return F.broadcast_to(x, tuple(shape))[F.broadcast_to(m, tuple(shape))]


@_export
def nonzero(input, as_tuple=False):
    """ops.nonzero(input, as_tuple=False): the int64 coordinates of the non-zero elements, an
    (n, ndim) tensor, or with as_tuple one 1-D tensor per dim."""
    from pijit.numpy.array_ops import where as _where
    x = _tensor("nonzero", "input", input)
    _bool("nonzero", "as_tuple", as_tuple)
    if x.ndim == 0:
        x = F.reshape(x, (1,))
    idx = tuple(F.cast(i, _dt.int64) for i in _where(x))
    return idx if as_tuple else F.stack(idx, 1)


@_export
def argwhere(input):
    """ops.argwhere(input): nonzero's (n, ndim) int64 coordinates."""
    return nonzero(_tensor("argwhere", "input", input))


# ----- random ---------------------------------------------------------------------------------

def _seed(who, seed):
    if seed is not None and (not _is_int(seed) or seed < 0):
        raise TypeError("For '%s', the 'seed' must be a non-negative int or None, but got %r"
                        % (who, seed))
    return seed


def _shape(who, shape):
    if isinstance(shape, _Tensor):
        shape = shape.tolist()
    if _is_int(shape):
        shape = (shape,)
    return _ints(who, "shape", shape)


@_export
def rand_like(input, seed=None, *, dtype=None):
    """ops.rand_like(input, seed=None, *, dtype=None): uniform [0, 1) samples of input's shape."""
    x = _tensor("rand_like", "input", input)
    dt = x.dtype if dtype is None else _dt.as_dtype(dtype)
    if not dt.is_floating_point:
        raise TypeError("For 'rand_like', the dtype must be a floating type, but got %s" % dt)
    return _creation.rand(tuple(x.shape), dtype=dt, seed=_seed("rand_like", seed))


@_export
def randn_like(input, seed=None, *, dtype=None):
    """ops.randn_like(input, seed=None, *, dtype=None): standard normal samples of input's shape."""
    x = _tensor("randn_like", "input", input)
    dt = x.dtype if dtype is None else _dt.as_dtype(dtype)
    if not dt.is_floating_point:
        raise TypeError("For 'randn_like', the dtype must be a floating type, but got %s" % dt)
    return _creation.randn(tuple(x.shape), dtype=dt, seed=_seed("randn_like", seed))


@_export
def randint_like(input, low, high, seed=None, *, dtype=None):
    """ops.randint_like(input, low, high, seed=None, *, dtype=None): integers in [low, high) of
    input's shape (input's dtype unless dtype says otherwise)."""
    x = _tensor("randint_like", "input", input)
    _int("randint_like", "low", low)
    _int("randint_like", "high", high)
    if low >= high:
        raise ValueError("For 'randint_like', 'low' (%d) must be < 'high' (%d)" % (low, high))
    dt = x.dtype if dtype is None else _dt.as_dtype(dtype)
    return _creation.randint(low, high, tuple(x.shape), _seed("randint_like", seed), dtype=dt)


@_export
def standard_normal(shape, seed=None):
    """ops.standard_normal(shape, seed=None): float32 N(0, 1) samples."""
    return _creation.randn(_shape("standard_normal", shape), seed=_seed("standard_normal", seed))


@_export
def normal(shape, mean, stddev, seed=None):
    """ops.normal(shape, mean, stddev, seed=None): N(mean, stddev^2) samples; mean and stddev
    (numbers or Tensors) broadcast with shape."""
    s = _shape("normal", shape)
    z = _creation.randn(s, seed=_seed("normal", seed))
    m, sd = _t(mean), _t(stddev)
    return F.add(F.mul(z, F.cast(sd, z.dtype) if sd.dtype.is_floating_point else sd),
                 F.cast(m, z.dtype) if m.dtype.is_floating_point else m)


@_export
def uniform(shape, minval, maxval, seed=None, dtype=_dt.float32):
    """ops.uniform(shape, minval, maxval, seed=None, dtype=mstype.float32): samples from
    [minval, maxval): floating for a floating dtype, integers for int32/int64."""
    s = _shape("uniform", shape)
    dt = _dt.as_dtype(dtype)
    seed = _seed("uniform", seed)
    lo = minval.item() if isinstance(minval, _Tensor) and not dt.is_floating_point else minval
    hi = maxval.item() if isinstance(maxval, _Tensor) and not dt.is_floating_point else maxval
    if not dt.is_floating_point:
        if not (_is_int(lo) and _is_int(hi)) or lo >= hi:
            raise ValueError("For 'uniform', integer samples need int minval < maxval, but got "
                             "%r and %r" % (lo, hi))
        return _creation.randint(lo, hi, s, seed, dtype=dt)
    u = _creation.rand(s, dtype=dt, seed=seed)
    lo, hi = _t(lo), _t(hi)
    return F.add(F.mul(u, F.cast(hi - lo, dt)), F.cast(lo, dt))


@_export
def bernoulli(input, p=0.5, seed=None):
    """ops.bernoulli(input, p=0.5, seed=None): 1 with probability p (a number or a Tensor
    broadcast to input), else 0, in input's shape and dtype."""
    x = _tensor("bernoulli", "input", input)
    if not isinstance(p, _Tensor):
        _number("bernoulli", "p", p)
        if not 0 <= p <= 1:
            raise ValueError("For 'bernoulli', the 'p' must be in [0, 1], but got %r" % (p,))
    u = _creation.rand(tuple(x.shape), dtype=_dt.float32, seed=_seed("bernoulli", seed))
    return F.cast(F.lt(u, p), x.dtype)


@_export
def multinomial(input, num_samples, replacement=True, seed=None):
    """ops.multinomial(input, num_samples, replacement=True, seed=None): int64 category indices
    drawn with the (unnormalised) weights of each row of input. With replacement: inverse-CDF
    sampling; without: the num_samples largest of log(w) + Gumbel noise (each draw removing its
    category)."""
    w = _float(_tensor("multinomial", "input", input))
    _int("multinomial", "num_samples", num_samples)
    _bool("multinomial", "replacement", replacement)
    seed = _seed("multinomial", seed)
    if w.ndim not in (1, 2):
        raise ValueError("For 'multinomial', the rank of 'input' must be 1 or 2, but got %d" % w.ndim)
    k = w.shape[-1]
    if num_samples <= 0 or (not replacement and num_samples > k):
        raise ValueError("For 'multinomial', the 'num_samples' must be in [1, %s], but got %d"
                         % (k if not replacement else "inf", num_samples))
    rows = tuple(w.shape[:-1])
    if replacement:
        cdf = F.cumsum(w, -1)
        cdf = cdf / cdf[..., k - 1:k]
        u = _creation.rand(rows + (num_samples,), dtype=w.dtype, seed=seed)
        # the category of u is the number of cdf entries <= u (clamped: u < 1 = the last entry)
        below = F.sum(F.cast(F.le(F.expand_dims(cdf, -2), F.expand_dims(u, -1)), _dt.int64), -1)
        return F.clamp(below, None, k - 1)
    u = _creation.rand(tuple(w.shape), dtype=w.dtype, seed=seed)
    g = F.neg(F.log(F.neg(F.log(F.clamp(u, 1e-20, None)))))
    keys = F.where(F.gt(w, 0), F.log(F.where(F.gt(w, 0), w, _creation.ones_like(w))) + g,
                   _creation.full_like(w, float("-inf")))
    return F.topk(keys, num_samples)[1]


@_export
def shuffle(x, seed=None):
    """ops.shuffle(x, seed=None): x with its slices along dim 0 in a random order."""
    t = _tensor("shuffle", "x", x)
    if t.ndim == 0:
        return t[...]
    keys = _creation.rand((t.shape[0],), seed=_seed("shuffle", seed))
    return _op("index_select", (t, F.sort(keys, 0)[1]), axis=0)


@_export
def laplace(shape, mean, lambda_param, seed=None):
    """ops.laplace(shape, mean, lambda_param, seed=None): Laplace(mean, lambda_param) samples by
    the inverse CDF of uniform draws."""
    s = _shape("laplace", shape)
    u = _creation.rand(s, seed=_seed("laplace", seed)) - 0.5
    e = F.neg(F.sign(u) * F.log1p(F.neg(F.abs(u) * 2.0)))
    return F.add(F.mul(e, F.cast(_t(lambda_param), e.dtype)), F.cast(_t(mean), e.dtype))


@_export
def standard_laplace(shape, seed=None):
    """ops.standard_laplace(shape, seed=None): Laplace(0, 1) samples."""
    return laplace(shape, 0.0, 1.0, seed)


# ----- creation -------------------------------------------------------------------------------

@_export
def logspace(start, end, steps, base=10, *, dtype=_dt.float32):
    """ops.logspace(start, end, steps, base=10, *, dtype=mstype.float32): base ** linspace(start,
    end, steps)."""
    _number("logspace", "start", start)
    _number("logspace", "end", end)
    _int("logspace", "steps", steps)
    _int("logspace", "base", base)
    if steps < 0:
        raise ValueError("For 'logspace', the 'steps' must be >= 0, but got %d" % steps)
    e = _creation.linspace(start, end, steps, dtype=_dt.float64)
    return F.cast(F.pow(float(base), e), _dt.as_dtype(dtype))


@_export
def range(start, end, step):
    """ops.range(start, end, step): [start, end) in steps of step (numbers or 0-d Tensors); int64
    when all are ints, float32 otherwise."""
    vals = []
    for name, v in (("start", start), ("end", end), ("step", step)):
        vals.append(P2._number("range", name, v))
    s, e, st = vals
    if st == 0:
        raise ValueError("For 'range', the 'step' must not be 0")
    if (st > 0 and s > e) or (st < 0 and s < e):
        raise ValueError("For 'range', the 'step' %r cannot reach 'end' %r from 'start' %r"
                         % (st, e, s))
    ints = _b.all(_is_int(v) for v in vals)
    return _creation.arange(s, e, st, dtype=_dt.int64 if ints else _dt.float32)


@_export
def cartesian_prod(*inputs):
    """ops.cartesian_prod(*inputs): the rows of every combination of the 1-D inputs' elements
    (the last varying fastest); one input comes back as it is."""
    xs = [_tensor("cartesian_prod", "inputs", x) for x in inputs]
    if not xs or _b.any(x.ndim != 1 for x in xs):
        raise ValueError("For 'cartesian_prod', the inputs must be one or more 1-D Tensors")
    if len(xs) == 1:
        return xs[0][...]
    grids = P2.Meshgrid("ij")(tuple(xs))
    return F.stack([F.reshape(g, (-1,)) for g in grids], 1)


@_export
def block_diag(*inputs):
    """ops.block_diag(*inputs): the 0-D, 1-D or 2-D inputs on the diagonal of one matrix, zeros
    elsewhere."""
    xs = []
    for x in inputs:
        x = _tensor("block_diag", "inputs", x)
        if x.ndim > 2:
            raise ValueError("For 'block_diag', each input must have rank <= 2, but got %d" % x.ndim)
        xs.append(F.reshape(x, (1, -1)) if x.ndim < 2 else x)
    if not xs:
        raise ValueError("For 'block_diag', at least one input is needed")
    dt = xs[0].dtype
    for x in xs[1:]:
        dt = (x + _creation.zeros((), dtype=dt)).dtype
    cols = _b.sum(x.shape[1] for x in xs)
    rows, at = [], 0
    for x in xs:
        parts = []
        if at:
            parts.append(_creation.zeros((x.shape[0], at), dtype=dt))
        parts.append(F.cast(x, dt))
        if cols - at - x.shape[1]:
            parts.append(_creation.zeros((x.shape[0], cols - at - x.shape[1]), dtype=dt))
        rows.append(F.concat(parts, 1) if len(parts) > 1 else parts[0])
        at += x.shape[1]
    return F.concat(rows, 0)


# ----- queries --------------------------------------------------------------------------------

@_export
def is_tensor(obj):
    """ops.is_tensor(obj): whether obj is a Tensor (a Parameter is one)."""
    return isinstance(obj, _Tensor)


@_export
def is_floating_point(input):
    """ops.is_floating_point(input): whether input's dtype is float16/bfloat16/float32/float64."""
    return _tensor("is_floating_point", "input", input).dtype.is_floating_point


@_export
def is_complex(input):
    """ops.is_complex(input): whether input's dtype is complex64/complex128."""
    return P2._is_complex(_tensor("is_complex", "input", input).dtype)


@_export
def numel(input):
    """ops.numel(input): the number of elements (a Python int)."""
    x = _tensor("numel", "input", input)
    n = 1
    for s in x.shape:
        n *= s
    return n


@_export
def dyn_shape(input_x):
    """ops.dyn_shape(input_x): the shape as a 1-D int64 Tensor."""
    return _creation.tensor(list(_tensor("dyn_shape", "input_x", input_x).shape), _dt.int64)


@_export
def scalar_cast(input_x, input_y):
    """ops.scalar_cast(input_x, input_y): the Python number input_x converted to the dtype
    input_y's Python type (bool, int or float)."""
    if isinstance(input_x, bool) or not isinstance(input_x, (int, float)):
        raise TypeError("For 'scalar_cast', the 'input_x' must be a number, but got %r" % (input_x,))
    dt = _dt.as_dtype(input_y)
    if dt is _dt.bool_:
        return bool(input_x)
    return float(input_x) if dt.is_floating_point else int(input_x)
