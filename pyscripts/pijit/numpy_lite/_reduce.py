"""Reductions for pijit's numpy stand-in, in numpy's order of operations.

numpy sums floats pairwise (8 accumulators, blocks of 128, halves above that) along the innermost
reduced axis and sequentially along the others, starting from 0; products and running sums go one
element after another. Float results depend on that order, so it is reproduced here with pijit
ops over whole rows at a time, in the dtype numpy computes in (float16 in float32, rounded where
numpy rounds). Integer sums go to pijit's sum in int64, which is exact.
"""
import math
import operator

from pijit import dtype as _pdt
from pijit.numpy_lite import _dtypes as _d
from pijit.numpy_lite import _scalars as _s
from pijit.numpy_lite._array import (op, tensor, wrap, ldtype, scalar_of, normalize,
                                     cast_storage, asarray, ndarray, AxisError, _tb_shape,
                                     _tb_ndim, _tb_getitem, _tb_strides)

_BUFSIZE = 8192  # numpy's iterator buffer: a casting reduction sums one buffer at a time


def norm_axes(axis, nd):
    """The reduced axes as a sorted tuple (None: all)."""
    if axis is None:
        return tuple(range(nd))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -nd <= a < nd:
            raise AxisError(a, nd)
        a %= nd
        if a in out:
            raise ValueError("duplicate value in 'axis'")
        out.append(a)
    return tuple(sorted(out))


def _col(x, i, j=None):
    return _tb_getitem(x, (slice(None), i if j is None else slice(i, j)))


def _add(a, b):
    return op("add", (a, b))


def pairwise_rows(x, n):
    """numpy's pairwise sum of each row of the 2-D storage tensor x (rows, n), in x's dtype."""
    if n < 8:
        res = tensor(0.0, _pdt_of(x))
        for i in range(n):
            res = _add(res, _col(x, i))
        if n == 0:
            res = op("broadcast_to", (res,), shape=(_tb_shape(x)[0],))
        return res
    if n <= 128:
        r = _col(x, 0, 8)
        m = n - n % 8
        for i in range(8, m, 8):
            r = _add(r, _col(x, i, i + 8))
        c = [_col(r, j) for j in range(8)]
        res = _add(_add(_add(c[0], c[1]), _add(c[2], c[3])), _add(_add(c[4], c[5]),
                                                                   _add(c[6], c[7])))
        for i in range(m, n):
            res = _add(res, _col(x, i))
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _add(pairwise_rows(_col(x, 0, n2), n2), pairwise_rows(_col(x, n2, n), n - n2))


def _pdt_of(t):
    from pijit.numpy_lite._array import _tb_dtype
    return _tb_dtype(t)


def _memory_order(t, axes):
    """t with its axes in memory order (as numpy's iterator visits them), the reduced axes
    renumbered to match, and the permutation that puts the kept axes back in order afterwards."""
    nd = _tb_ndim(t)
    strides = _tb_strides(t)
    perm = sorted(range(nd), key=lambda i: -abs(strides[i]))
    if perm == list(range(nd)) or _is_contiguous(t):
        return t, axes, None
    t = op("transpose", (t,), perm=tuple(perm))
    kept = [p for p in perm if p not in axes]  # logical axes of the result, in memory order
    back = tuple(sorted(range(len(kept)), key=lambda i: kept[i]))
    return t, tuple(sorted(perm.index(a) for a in axes)), back


def _is_contiguous(t):
    from pijit import _C
    return _C.TensorBase.is_contiguous(t)


def _drop_unit_axes(t, axes):
    """Squeezes out size-1 axes (numpy's iterator coalesces them away); returns the tensor, the
    reduced axes renumbered, and the shape of the result before keepdims."""
    shape = _tb_shape(t)
    keep = [i for i, s in enumerate(shape) if s != 1]
    if len(keep) == len(shape):
        return t, axes
    t = op("reshape", (t,), shape=tuple(shape[i] for i in keep))
    return t, tuple(keep.index(a) for a in axes if a in keep)


def reduce_in_numpy_order(t, axes, inner, outer):
    """Reduces storage tensor t over `axes` the way numpy's iterator walks it: axes in memory
    order, the innermost run of reduced axes handed to inner(rows_tensor, n) -> (rows,) one row
    at a time (numpy's reduce loop), every other reduced axis folded with outer(acc, slice) one
    slice after another (its elementwise loop). The result has t's kept axes, in order."""
    out_shape = tuple(s for i, s in enumerate(_tb_shape(t)) if i not in axes)
    t, axes = _drop_unit_axes(t, axes)
    if not axes:  # nothing left to walk: the output starts at the identity and takes t once
        return op("reshape", (outer(None, t),), shape=out_shape)
    t, axes, back = _memory_order(t, axes)
    nd = _tb_ndim(t)
    shape = _tb_shape(t)
    k = 0
    while k < nd and (nd - 1 - k) in axes:
        k += 1
    if k:
        n = 1
        for s in shape[nd - k:]:
            n *= s
        front = tuple(shape[:nd - k])
        rows = 1
        for s in front:
            rows *= s
        x = op("reshape", (op("copy", (t,)),), shape=(rows, n))
        t = op("reshape", (inner(x, n),), shape=front)
        axes = tuple(a for a in axes if a < nd - k)
    if axes:
        nd = _tb_ndim(t)
        shape = _tb_shape(t)
        keep = [i for i in range(nd) if i not in axes]
        t = op("transpose", (t,), perm=tuple(axes) + tuple(keep))
        m = 1
        for a in axes:
            m *= shape[a]
        rest = tuple(shape[i] for i in keep)
        t = op("reshape", (t,), shape=(m,) + rest)
        acc = None
        for i in range(m):
            acc = outer(acc, _tb_getitem(t, i))
        t = acc
    if back is not None and len(back) > 1:
        t = op("copy", (op("transpose", (t,), perm=back),))
    return op("reshape", (t,), shape=out_shape)


def float_sum(t, axes, rnd=lambda x: x):
    """numpy's float add-reduce of storage tensor t over `axes`, in t's dtype (float16 data in
    float32 with rnd rounding where numpy stores a half). numpy's reduce loop sees at most one
    iterator buffer (8192 elements) of a row at a time and adds each buffer's pairwise sum to the
    output."""
    zero = tensor(0.0, _pdt_of(t))

    def inner(x, n):
        acc = zero
        for lo in range(0, max(n, 1), _BUFSIZE):
            hi = min(n, lo + _BUFSIZE)
            acc = rnd(_add(acc, pairwise_rows(_col(x, lo, hi), hi - lo)))
        return acc

    def outer(acc, x):
        return rnd(_add(zero if acc is None else acc, x))

    return reduce_in_numpy_order(t, axes, inner, outer)


def _restore_keepdims(t, shape, axes):
    return op("reshape", (t,), shape=tuple(1 if i in axes else s for i, s in enumerate(shape)))


def _finish(t, d, shape, axes, keepdims):
    if keepdims:
        t = _restore_keepdims(t, shape, axes)
    if _tb_ndim(t) == 0:
        return scalar_of(t, d)
    return wrap(t, d)


def _check_unsupported(out=None, initial=None, where=True):
    if out is not None:
        raise _d.unsupported("the out= argument")
    if initial is not None:
        raise _d.unsupported("the initial= argument")
    if where is not True:
        raise _d.unsupported("the where= argument")


def sum_dtype(d):
    """The dtype numpy's sum returns for an input dtype (small integers widen to int64)."""
    if d.kind == "b" or (d.kind == "i" and d._bits < 64):
        return _d.INT64
    if d.kind == "u":  # summed in int64: the same bits as numpy's wrapping uint64 sum
        return _d.UINT64
    return d


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    _check_unsupported(out, initial, where)
    a = asarray(a)
    src = ldtype(a)
    d = sum_dtype(src) if dtype is None else _d.as_dtype(dtype)
    axes = norm_axes(axis, a.ndim)
    shape = a.shape
    if d.kind in "biu":
        t = op("sum", (cast_storage(a, _d.INT64),), axis=axes, keepdims=False)
        if d is not _d.INT64:
            t = cast_storage(wrap(t, _d.INT64), d)
        return _finish(t, d, shape, axes, keepdims)
    if d.kind == "c":
        t = _complex_sum(wrap(op("copy", (cast_storage(a, d),)), d), axes, d)
        return _finish(t, d, shape, axes, keepdims)
    compute = _d.FLOAT32 if d is _d.FLOAT16 else d
    rnd = (lambda x: normalize(x, _d.FLOAT16)) if d is _d.FLOAT16 else (lambda x: x)
    t = float_sum(cast_storage(a, compute), axes, rnd)
    return _finish(t, d, shape, axes, keepdims)


def _cpairwise(vals, rnd):
    """numpy's complex pairwise sum of a list of complex numbers (each part rounded by rnd):
    under 4 elements in sequence from -0.0, up to 64 with 4 running sums, else halves."""
    n = len(vals)
    if n < 4:
        rr = ri = -0.0
        for z in vals:
            rr, ri = rnd(rr + z.real), rnd(ri + z.imag)
        return rr, ri
    if n <= 64:
        r = [[z.real, z.imag] for z in vals[:4]]
        i = 4
        while i + 4 <= n:
            for j in range(4):
                r[j][0] = rnd(r[j][0] + vals[i + j].real)
                r[j][1] = rnd(r[j][1] + vals[i + j].imag)
            i += 4
        rr = rnd(rnd(r[0][0] + r[1][0]) + rnd(r[2][0] + r[3][0]))
        ri = rnd(rnd(r[0][1] + r[1][1]) + rnd(r[2][1] + r[3][1]))
        for z in vals[i:]:
            rr, ri = rnd(rr + z.real), rnd(ri + z.imag)
        return rr, ri
    n2 = (n - n % 8) // 2  # numpy halves the count of floats, 8-aligned
    a, b = _cpairwise(vals[:n2], rnd), _cpairwise(vals[n2:], rnd)
    return rnd(a[0] + b[0]), rnd(a[1] + b[1])


def _complex_sum(c, axes, d):
    """sum of a contiguous complex array over axes in numpy's order: 0 plus the pairwise sum of
    the elements when the reduced axes are the trailing ones (contiguous), else 0 plus each
    element in turn."""
    rnd = _d.round_f32 if d is _d.COMPLEX64 else (lambda x: x)
    nd = c.ndim
    keep = [i for i in range(nd) if i not in axes]
    trailing = list(axes) == list(range(nd - len(axes), nd))
    t = c.transpose(keep + list(axes)) if keep or axes else c
    outer = 1
    for i in keep:
        outer *= c.shape[i]
    flat = t.reshape(outer, -1).tolist() if nd else [[c.item()]]
    out = []
    for row in flat:
        if not row:
            out.append(0j)
            continue
        if trailing:
            rr, ri = _cpairwise(row, rnd)
            out.append(complex(0.0 + rr, 0.0 + ri))
        else:
            rr = ri = 0.0
            for z in row:
                rr, ri = rnd(rr + z.real), rnd(ri + z.imag)
            out.append(complex(rr, ri))
    res = tensor(out, d._storage)
    return op("reshape", (res,), shape=tuple(c.shape[i] for i in keep))


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    _check_unsupported(out, None, where)
    a = asarray(a)
    src = ldtype(a)
    axes = norm_axes(axis, a.ndim)
    n = _count(a.shape, axes)
    half = False
    if dtype is None:
        if src.kind in "biu":
            dtype = _d.FLOAT64
        elif src is _d.FLOAT16:
            dtype, half = _d.FLOAT32, True
    d = src if dtype is None else _d.as_dtype(dtype)
    if d.kind in "biu":
        raise _d.unsupported("mean with an integer dtype=")
    s = sum(a, axis, d, keepdims=keepdims)
    if isinstance(s, ndarray) or (d.kind == "c" and n):  # complex: numpy's Smith division
        if not isinstance(s, ndarray):
            return _divide_into(s, n)
        r = _divide_into(s, n)
        return r.astype(src) if half else r
    v = s._value() / n if n else math.nan
    return _s.make(src if half else d, _d.to_value(v, src if half else d))


def _divide_into(s, n):
    """numpy's true_divide(s, n, out=s, casting='unsafe'): the quotient in s's own dtype."""
    from pijit.numpy_lite._operators import binary
    r = binary("div", s, n)
    return r if r.dtype is s.dtype else r.astype(s.dtype)


def _var(a, axis, dtype, ddof, keepdims):
    from pijit.numpy_lite._operators import binary
    a = asarray(a)
    src = ldtype(a)
    axes = norm_axes(axis, a.ndim)
    n = _count(a.shape, axes)
    if dtype is None and src.kind in "biu":
        dtype = _d.FLOAT64
    d = src if dtype is None else _d.as_dtype(dtype)
    m = _divide_into(sum(a, axis, d, keepdims=True), n)
    x = binary("sub", a, m)
    x = binary("mul", x, x)
    r = sum(x, axis, d, keepdims=keepdims)
    cnt = max(n - ddof, 0)
    if isinstance(r, ndarray):
        return _divide_into(r, cnt)
    rd = r.dtype
    return _s.make(rd, _d.to_value(r._value() / cnt if cnt else math.nan, rd))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True):
    _check_unsupported(out, None, where)
    return _var(a, axis, dtype, ddof, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True):
    _check_unsupported(out, None, where)
    from pijit.numpy_lite._funcs import sqrt
    return sqrt(_var(a, axis, dtype, ddof, keepdims))


def _logical(name, a, axis, keepdims):
    a = asarray(a)
    axes = norm_axes(axis, a.ndim)
    t = op(name, (cast_storage(a, _d.BOOL),), axis=axes, keepdims=False)
    return _finish(t, _d.BOOL, a.shape, axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, where=True):
    _check_unsupported(out, None, where)
    return _logical("all", a, axis, keepdims)


def any(a, axis=None, out=None, keepdims=False, where=True):
    _check_unsupported(out, None, where)
    return _logical("any", a, axis, keepdims)


def _extreme(name, a, axis, keepdims, out, initial, where):
    _check_unsupported(out, initial, where)
    a = asarray(a)
    axes = norm_axes(axis, a.ndim)
    if a.size == 0 or _count(a.shape, axes) == 0:
        raise ValueError("zero-size array to reduction operation %s which has no identity"
                         % ("maximum" if name == "max" else "minimum"))
    d = ldtype(a)
    if d is _d.BOOL:
        t = op("any" if name == "max" else "all", (a,), axis=axes, keepdims=False)
        return _finish(t, d, a.shape, axes, keepdims)
    t = op(name, (a,), axis=axes, keepdims=False)
    if d.kind == "f":  # numpy propagates NaN
        nan = op("any", (op("ne", (a, a)),), axis=axes, keepdims=False)
        t = op("where", (nan, tensor(math.nan, _pdt_of(t)), t))
    return _finish(t, d, a.shape, axes, keepdims)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return _extreme("max", a, axis, keepdims, out, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return _extreme("min", a, axis, keepdims, out, initial, where)


def _arg(name, a, axis, out, keepdims):
    if out is not None:
        raise _d.unsupported("the out= argument")
    a = asarray(a)
    if a.size == 0:
        raise ValueError("attempt to get %s of an empty sequence" % name)
    if axis is None:
        r = _arg(name, a.reshape(-1), 0, None, False)
        if keepdims:
            return wrap(op("reshape", (tensor(r._value(), _pdt.int64),), shape=(1,) * a.ndim),
                        _d.INT64)
        return r
    ax = norm_axes(axis, a.ndim)[0]
    x = cast_storage(a, _d.INT32) if ldtype(a) is _d.BOOL else a
    t = op("cast", (op(name, (x,), axis=ax, keepdims=bool(keepdims)),), dtype=_pdt.int64)
    if ldtype(a).kind == "f":  # numpy: the first NaN wins, for argmin as for argmax
        isnan = op("cast", (op("ne", (a, a)),), dtype=_pdt.int32)
        first = op("cast", (op("argmax", (isnan,), axis=ax, keepdims=bool(keepdims)),),
                   dtype=_pdt.int64)
        anynan = op("any", (op("ne", (a, a)),), axis=(ax,), keepdims=bool(keepdims))
        t = op("where", (anynan, first, t))
    if _tb_ndim(t) == 0:
        return scalar_of(t, _d.INT64)
    return wrap(t, _d.INT64)


def argmax(a, axis=None, out=None, keepdims=False):
    return _arg("argmax", a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    return _arg("argmin", a, axis, out, keepdims)


def py_round(d):
    """Rounds a Python number computed in double (or exactly, for ints) to dtype d; one double
    operation then this rounding equals the operation in d (+ - * / on float32 and float16)."""
    if d is _d.FLOAT32:
        return _d.round_f32
    if d is _d.FLOAT16:
        return _d.round_f16
    if d.kind in "iu":
        return lambda v: _d.wrap_int(v, d)
    return lambda v: v


def _accumulate_axis(t, axis, name, d):
    """Running sum/product of storage tensor t (dtype d's values) along one axis, one element
    after another (numpy's accumulate)."""
    nd = _tb_ndim(t)
    if nd == 1:
        rnd = py_round(d)
        fn = operator.add if name == "add" else operator.mul
        out, acc = [], None
        for v in t.tolist():
            acc = v if acc is None else rnd(fn(acc, v))
            out.append(acc)
        return tensor(out, _pdt_of(t)) if out else op("copy", (t,))
    rnd = (lambda v: normalize(v, d)) if d._emulated else (lambda v: v)
    perm = (axis,) + tuple(i for i in range(nd) if i != axis)
    x = op("transpose", (t,), perm=perm)
    n = _tb_shape(x)[0]
    outs = []
    acc = None
    for i in range(n):
        cur = _tb_getitem(x, i)
        acc = op("copy", (cur,)) if acc is None else rnd(op(name, (acc, cur)))
        outs.append(acc)
    if not outs:
        return op("copy", (t,))
    y = op("stack", tuple(outs), axis=0)
    inv = [perm.index(i) for i in range(nd)]
    return op("copy", (op("transpose", (y,), perm=tuple(inv)),))


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """numpy's multiply-reduce: one element after another, from 1. A float16 product is carried
    in float32 along the innermost reduced run and rounded to half where numpy stores it."""
    _check_unsupported(out, initial, where)
    a = asarray(a)
    d = sum_dtype(ldtype(a)) if dtype is None else _d.as_dtype(dtype)
    axes = norm_axes(axis, a.ndim)
    x = cast_storage(a, d)
    st = _pdt_of(x)
    half = d is _d.FLOAT16
    if len(axes) == a.ndim and _is_contiguous(x):  # one product: in Python, numpy's rounding
        rnd = py_round(_d.FLOAT32 if half else d)
        acc = 1
        for i, v in enumerate(op("reshape", (x,), shape=(-1,)).tolist()):
            if half and i and i % _BUFSIZE == 0:  # numpy stores the half between buffers
                acc = _d.round_f16(acc)
            acc = rnd(acc * v)
        t = tensor(_d.round_f16(acc) if half else acc, d._storage)
        return _finish(t, d, a.shape, axes, keepdims)
    norm = (lambda v: normalize(v, d)) if d._emulated else (lambda v: v)
    one = tensor(1, st)

    def inner(rows, n):
        acc = op("broadcast_to", (one,), shape=(_tb_shape(rows)[0],))
        for i in range(n):
            if half and i and i % _BUFSIZE == 0:
                acc = norm(acc)
            acc = op("mul", (acc, _col(rows, i)))
            if not half:
                acc = norm(acc)
        return norm(acc)

    def outer(acc, v):
        return norm(op("mul", (one if acc is None else acc, v)))

    t = reduce_in_numpy_order(x, axes, inner, outer)
    return _finish(t, d, a.shape, axes, keepdims)


def _running(name, a, axis, dtype, out):
    if out is not None:
        raise _d.unsupported("the out= argument")
    a = asarray(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    d = sum_dtype(ldtype(a)) if dtype is None else _d.as_dtype(dtype)
    ax = norm_axes(axis, a.ndim)[0]
    return wrap(_accumulate_axis(cast_storage(a, d), ax, name, d), d)


def cumsum(a, axis=None, dtype=None, out=None):
    return _running("add", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    return _running("mul", a, axis, dtype, out)
