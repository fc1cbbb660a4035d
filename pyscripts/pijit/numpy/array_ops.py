"""mindspore.numpy's array manipulation functions over pijit tensors (transpose, reshape,
concatenate, stack, split, flip, roll, repeat, take, where, unique, ...)."""
import builtins

from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit.numpy._utils import (is_int, tensor as _t, operands as _operands, check_axis as _axis,
                                check_axes as _axes, full as _full, prod as _prod)


def transpose(a, axes=None):
    """Permutes the dims (reverses them when axes is None)."""
    a = _t(a, "transpose")
    if axes is None:
        axes = tuple(reversed(range(a.ndim)))
    axes = tuple(_axis("transpose", d, a.ndim) for d in axes)
    if sorted(axes) != list(range(a.ndim)):
        raise ValueError("transpose: axes %r do not permute the %d dims" % (axes, a.ndim))
    return _op("transpose", (a,), perm=axes)


def rollaxis(x, axis, start=0):
    """Moves axis so that it lies before position start."""
    x = _t(x, "rollaxis")
    n = x.ndim
    axis = _axis("rollaxis", axis, n)
    if not is_int(start) or not -n <= start <= n:
        raise ValueError("rollaxis: start %r is out of range for a %d-D array" % (start, n))
    start = start % (n + 1) if start < 0 else start
    if axis < start:
        start -= 1
    perm = [d for d in range(n) if d != axis]
    perm.insert(start, axis)
    return _op("transpose", (x,), perm=tuple(perm))


def swapaxes(x, axis1, axis2):
    x = _t(x, "swapaxes")
    a, b = _axis("swapaxes", axis1, x.ndim), _axis("swapaxes", axis2, x.ndim)
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return _op("transpose", (x,), perm=tuple(perm))


def moveaxis(a, source, destination):
    a = _t(a, "moveaxis")
    src = (source,) if is_int(source) else tuple(source)
    dst = (destination,) if is_int(destination) else tuple(destination)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of elements")
    src = [_axis("moveaxis", s, a.ndim) for s in src]
    dst = [_axis("moveaxis", d, a.ndim) for d in dst]
    order = [d for d in range(a.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _op("transpose", (a,), perm=tuple(order))


def reshape(x, new_shape):
    x = _t(x, "reshape")
    if is_int(new_shape):
        new_shape = (new_shape,)
    return _op("reshape", (x,), shape=tuple(new_shape))


def ravel(x):
    return _op("reshape", (_t(x, "ravel"),), shape=(-1,))


def expand_dims(a, axis):
    """Inserts size-1 dims at the positions of axis (an int or a tuple) in the result."""
    a = _t(a, "expand_dims")
    axes = (axis,) if is_int(axis) else tuple(axis)
    nd = a.ndim + len(axes)
    axes = sorted(_axis("expand_dims", d, nd) for d in axes)
    shape = list(a.shape)
    for d in axes:
        shape.insert(d, 1)
    return _op("reshape", (a,), shape=tuple(shape))


def squeeze(a, axis=None):
    a = _t(a, "squeeze")
    if axis is not None:
        for d in _axes("squeeze", axis, a.ndim):
            if a.shape[d] != 1:
                raise ValueError("squeeze: cannot select an axis to squeeze out which has size "
                                 "not equal to one (axis %d has size %d)" % (d, a.shape[d]))
    return _op("squeeze", (a,), axis=None if axis is None else _axes("squeeze", axis, a.ndim))


def _seq(who, arrays):
    if isinstance(arrays, _C.TensorBase):
        return [arrays[i] for i in range(arrays.shape[0])]
    if not isinstance(arrays, (list, tuple)):
        raise TypeError("%s: expected a list or tuple of arrays, got %s"
                        % (who, type(arrays).__name__))
    return [_t(a, who) for a in arrays]


def concatenate(arrays, axis=0):
    """Joins arrays along axis; axis None flattens them first."""
    xs = _seq("concatenate", arrays)
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    if len(xs) == 1:
        return xs[0]
    return _op("concat", tuple(xs), axis=axis)


def append(arr, values, axis=None):
    arr, values = _t(arr, "append"), _t(values, "append")
    if axis is None:
        return _op("concat", (ravel(arr), ravel(values)), axis=0)
    return _op("concat", (arr, values), axis=axis)


def stack(arrays, axis=0):
    return _op("stack", tuple(_seq("stack", arrays)), axis=axis)


def atleast_1d(*arys):
    out = [(_op("reshape", (a,), shape=(1,)) if a.ndim == 0 else a)
           for a in (_t(x, "atleast_1d") for x in arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in (_t(x, "atleast_2d") for x in arys):
        if a.ndim < 2:
            a = _op("reshape", (a,), shape=(1,) * (2 - a.ndim) + tuple(a.shape))
        out.append(a)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """0-D -> (1, 1, 1), 1-D (N) -> (1, N, 1), 2-D (M, N) -> (M, N, 1)."""
    out = []
    for a in (_t(x, "atleast_3d") for x in arys):
        if a.ndim == 0:
            a = _op("reshape", (a,), shape=(1, 1, 1))
        elif a.ndim == 1:
            a = _op("reshape", (a,), shape=(1, a.shape[0], 1))
        elif a.ndim == 2:
            a = _op("reshape", (a,), shape=tuple(a.shape) + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def hstack(tup):
    xs = [atleast_1d(x) for x in _seq("hstack", tup)]
    return _op("concat", tuple(xs), axis=0 if xs[0].ndim == 1 else 1)


def vstack(tup):
    return _op("concat", tuple(atleast_2d(x) for x in _seq("vstack", tup)), axis=0)


def dstack(tup):
    return _op("concat", tuple(atleast_3d(x) for x in _seq("dstack", tup)), axis=2)


def column_stack(tup):
    xs = []
    for x in _seq("column_stack", tup):
        if x.ndim == 0:
            x = _op("reshape", (x,), shape=(1, 1))
        elif x.ndim == 1:
            x = _op("reshape", (x,), shape=(x.shape[0], 1))
        xs.append(x)
    return _op("concat", tuple(xs), axis=1)


def where(condition, x=None, y=None):
    """x where condition holds, else y (broadcast together). where(condition) alone is
    nonzero(condition): its size depends on the data, so under jit it breaks the graph."""
    if x is None and y is None:
        c = _t(condition, "where")
        flat = _op("reshape", (c,), shape=(-1,))
        mask = flat if flat.dtype is _dt.bool_ else _op("ne", (flat, _C.as_operand(0, flat)))
        pos = _op("arange", (), start=0.0, stop=float(flat.shape[0]), step=1.0,
                  dtype=_dt.int32)[mask]
        return unravel_index(pos, tuple(c.shape)) if c.ndim else (pos,)
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    c = _t(condition, "where")
    if c.dtype is not _dt.bool_:
        c = _op("cast", (c,), dtype=_dt.bool_)
    x, y = _operands(x, y)
    return _op("where", (c, x, y))


def tile(a, reps):
    a = _t(a, "tile")
    reps = (reps,) if is_int(reps) else tuple(reps)
    return _op("tile", (a,), reps=reps)


def broadcast_to(array, shape):
    return _op("broadcast_to", (_t(array, "broadcast_to"),),
               shape=(shape,) if is_int(shape) else tuple(shape))


def _broadcast_shape(shapes):
    nd = builtins.max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        dims = {s[i - nd + len(s)] for s in shapes if i - nd + len(s) >= 0} - {1}
        if len(dims) > 1:
            raise ValueError("shape mismatch: objects cannot be broadcast to a single shape: %s"
                             % (shapes,))
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def broadcast_arrays(*args):
    xs = [_t(a, "broadcast_arrays") for a in args]
    shape = _broadcast_shape([tuple(x.shape) for x in xs])
    return [_op("broadcast_to", (x,), shape=shape) for x in xs]


def _sections(who, n, indices_or_sections, exact):
    """numpy's cut points: an int splits into that many parts (exact: equal), a list gives the
    indices at which to cut."""
    s = indices_or_sections
    if is_int(s):
        if s <= 0:
            raise ValueError("%s: number of sections must be larger than 0" % who)
        if exact and n % s:
            raise ValueError("%s: array split does not result in an equal division" % who)
        q, r = divmod(n, s)
        sizes = [q + 1] * r + [q] * (s - r)
        cuts, at = [], 0
        for v in sizes[:-1]:
            at += v
            cuts.append(at)
        return cuts
    if isinstance(s, (list, tuple)) and builtins.all(is_int(v) for v in s):
        return [builtins.min(builtins.max(v if v >= 0 else v + n, 0), n) for v in s]
    raise TypeError("%s: indices_or_sections must be an int or a list/tuple of ints, got %r"
                    % (who, s))


def _split(who, x, indices_or_sections, axis, exact):
    x = _t(x, who)
    axis = _axis(who, axis, x.ndim)
    n = x.shape[axis]
    cuts = _sections(who, n, indices_or_sections, exact)
    bounds = [0] + cuts + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index = [slice(None)] * axis + [slice(lo, builtins.max(lo, hi))]
        out.append(x[tuple(index)])
    return tuple(out)


def split(x, indices_or_sections, axis=0):
    """numpy's split: an int gives that many equal parts, a list the indices to cut at."""
    return _split("split", x, indices_or_sections, axis, True)


def array_split(x, indices_or_sections, axis=0):
    """As split, but an int need not divide the axis (the first parts are one longer)."""
    return _split("array_split", x, indices_or_sections, axis, False)


def hsplit(x, indices_or_sections):
    x = _t(x, "hsplit")
    return _split("hsplit", x, indices_or_sections, 0 if x.ndim == 1 else 1, True)


def vsplit(x, indices_or_sections):
    return _split("vsplit", x, indices_or_sections, 0, True)


def dsplit(x, indices_or_sections):
    return _split("dsplit", x, indices_or_sections, 2, True)


def flip(m, axis=None):
    """Reverses the order of elements along axis (every axis when None)."""
    m = _t(m, "flip")
    axes = range(m.ndim) if axis is None else _axes("flip", axis, m.ndim)
    index = [slice(None)] * m.ndim
    for d in axes:
        index[d] = slice(None, None, -1)
    return m[tuple(index)] if m.ndim else m


def flipud(m):
    return flip(m, 0)


def fliplr(m):
    return flip(m, 1)


def roll(a, shift, axis=None):
    """Rolls elements along axis (the flattened array when None); shift and axis may be tuples."""
    a = _t(a, "roll")
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), tuple(a.shape))
    shifts = (shift,) if is_int(shift) else tuple(shift)
    axes = (axis,) if is_int(axis) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length")
    total = {}
    for s, d in zip(shifts, axes):
        d = _axis("roll", d, a.ndim)
        total[d] = total.get(d, 0) + s
    for d, s in total.items():
        n = a.shape[d]
        if n == 0 or s % n == 0:
            continue
        s %= n
        head = [slice(None)] * d
        a = _op("concat", (a[tuple(head + [slice(n - s, None)])],
                           a[tuple(head + [slice(0, n - s)])]), axis=d)
    return a


def repeat(a, repeats, axis=None):
    """Repeats each element (of the flattened array when axis is None) repeats times; repeats may
    be an int or one int per element along axis."""
    a = _t(a, "repeat")
    if axis is None:
        a, axis = ravel(a), 0
    if isinstance(repeats, _C.TensorBase):
        repeats = repeats.tolist()
    return a.repeat(repeats, axis=axis)


def _index_grid(shape, axis, index):
    """The advanced index that picks index's entries along axis and every other position as is."""
    nd = len(shape)
    idx = []
    for d in range(nd):
        if d == axis:
            idx.append(index)
        else:
            s = [1] * nd
            s[d] = shape[d]
            idx.append(_op("reshape", (_op("arange", (), start=0.0, stop=float(shape[d]), step=1.0,
                                                 dtype=_dt.int64),), shape=tuple(s)))
    return tuple(idx)


def take_along_axis(arr, indices, axis):
    """Picks from arr along axis the entries indices names (same ndim, broadcast elsewhere)."""
    arr, indices = _t(arr, "take_along_axis"), _t(indices, "take_along_axis")
    if axis is None:
        arr, axis = ravel(arr), 0
    if indices.ndim != arr.ndim:
        raise ValueError("take_along_axis: indices and arr must have the same number of dims")
    axis = _axis("take_along_axis", axis, arr.ndim)
    shape = _broadcast_shape([tuple(s if d != axis else 1 for d, s in enumerate(arr.shape)),
                              tuple(s if d != axis else 1 for d, s in enumerate(indices.shape))])
    shape = tuple(indices.shape[d] if d == axis else shape[d] for d in range(arr.ndim))
    indices = _op("broadcast_to", (indices,), shape=shape)
    return arr[_index_grid(shape, axis, indices)]


def take(a, indices, axis=None, mode="clip"):
    """Elements of a at indices along axis (of the flattened array when None). mode 'clip'
    clamps out-of-range indices, 'wrap' wraps them, 'raise' leaves them to the indexing check."""
    a = _t(a, "take")
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis("take", axis, a.ndim)
    idx = _t(indices, "take")
    if idx.dtype.is_floating_point or idx.dtype is _dt.bool_:
        raise TypeError("take: indices must be integers, got %s" % idx.dtype)
    n = a.shape[axis]
    if mode == "clip":
        idx = _op("clamp", (idx,), min=0, max=n - 1)
    elif mode == "wrap":
        idx = _op("mod", (idx, _C.as_operand(n, idx)))
    elif mode != "raise":
        raise ValueError("take: mode must be 'raise', 'wrap' or 'clip', got %r" % (mode,))
    shape_idx = tuple(idx.shape)
    flat = _op("reshape", (idx,), shape=(-1,))
    out = _op("index_select", (a, flat), axis=axis)
    return _op("reshape", (out,), shape=tuple(a.shape[:axis]) + shape_idx + tuple(a.shape[axis + 1:]))


def rot90(a, k=1, axes=(0, 1)):
    """Rotates by 90 degrees k times in the plane of axes (from the first towards the second)."""
    a = _t(a, "rot90")
    if len(axes) != 2:
        raise ValueError("rot90: len(axes) must be 2")
    a0, a1 = _axis("rot90", axes[0], a.ndim), _axis("rot90", axes[1], a.ndim)
    if a0 == a1:
        raise ValueError("rot90: axes must be different")
    k %= 4
    if k == 0:
        return a
    if k == 2:
        return flip(flip(a, a0), a1)
    perm = list(range(a.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _op("transpose", (flip(a, a1),), perm=tuple(perm))
    return flip(_op("transpose", (a,), perm=tuple(perm)), a1)


def select(condlist, choicelist, default=0):
    """The element of the first choice whose condition holds, else default."""
    if len(condlist) != len(choicelist):
        raise ValueError("select: list of cases must be same length as list of conditions")
    choices = [_t(c, "select") for c in choicelist]
    out = None
    for cond, choice in reversed(list(zip(condlist, choices))):
        cond = _t(cond, "select")
        if cond.dtype is not _dt.bool_:
            cond = _op("cast", (cond,), dtype=_dt.bool_)
        if out is None:
            out = _operands(choice, default)[1] if isinstance(default, (int, float)) else _t(default)
        out = _op("where", (cond,) + _operands(choice, out))
    return out


def choose(a, choices, mode="clip"):
    """choices[a[i]][i] for every i (a and the choices broadcast together); 'clip' clamps a,
    'wrap' wraps it."""
    a = _t(a, "choose")
    cs = broadcast_arrays(a, *[_t(c, "choose") for c in choices])
    a, cs = cs[0], cs[1:]
    n = len(cs)
    if mode == "clip":
        a = _op("clamp", (a,), min=0, max=n - 1)
    elif mode == "wrap":
        a = _op("mod", (a, _C.as_operand(n, a)))
    elif mode != "raise":
        raise ValueError("choose: mode must be 'raise', 'wrap' or 'clip', got %r" % (mode,))
    stacked = _op("stack", tuple(cs), axis=0)
    picked = take_along_axis(stacked, _op("expand_dims", (a,), axis=0), 0)
    return _op("squeeze", (picked,), axis=(0,))


def size(a, axis=None):
    """The number of elements (along axis when given)."""
    a = _t(a, "size")
    if axis is None:
        return a.size
    return a.shape[_axis("size", axis, a.ndim)]


def unique(x, return_inverse=False):
    """The sorted distinct elements of x (flattened); return_inverse also gives, for each element
    of x, its index in the result. The result's size depends on the data: under jit this breaks
    the graph."""
    x = ravel(_t(x, "unique"))
    n = x.shape[0]
    if n == 0:
        return (x, _full((0,), 0, _dt.int32)) if return_inverse else x
    values, order = _op("sort", (x,), axis=0, descending=False)
    first = _op("concat", (_full((1,), True, _dt.bool_),
                           _op("ne", (values[1:], values[:-1]))), axis=0)
    out = values[first]
    if not return_inverse:
        return out
    rank = _op("cumsum", (_op("cast", (first,), dtype=_dt.int32),), axis=0) - 1
    # x[i] sits at position where(order == i) of the sorted values: sorting order inverts it.
    where_sorted = _op("sort", (order,), axis=0, descending=False)[1]
    inverse = _op("index_select", (rank, where_sorted), axis=0)
    return out, _op("cast", (inverse,), dtype=_dt.int32)


def unravel_index(indices, shape, order="C"):
    """The coordinates in an array of shape of flat indices, one array per dim."""
    idx = _t(indices, "unravel_index")
    shape = (shape,) if is_int(shape) else tuple(shape)
    if order not in ("C", "F"):
        raise ValueError("unravel_index: order must be 'C' or 'F', got %r" % (order,))
    dims = list(enumerate(shape))
    if order == "C":
        dims.reverse()
    out = [None] * len(shape)
    rest = idx
    for d, s in dims:
        out[d] = _op("mod", (rest, _C.as_operand(s, rest)))
        rest = _op("floor_div", (rest, _C.as_operand(s, rest)))
    return tuple(out)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to each 1-D slice along axis; the results are stacked in its place."""
    arr = _t(arr, "apply_along_axis")
    axis = _axis("apply_along_axis", axis, arr.ndim)
    moved = moveaxis(arr, axis, -1)
    outer = tuple(moved.shape[:-1])
    flat = _op("reshape", (moved,), shape=(-1, moved.shape[-1]))
    res = [_t(func1d(flat[i], *args, **kwargs)) for i in range(flat.shape[0])]
    out = _op("stack", tuple(res), axis=0)
    out = _op("reshape", (out,), shape=outer + tuple(res[0].shape))
    if res[0].ndim == 0:
        return out
    return moveaxis(out, list(range(len(outer), out.ndim)),
                    list(range(axis, axis + res[0].ndim)))


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping the result's ndim."""
    a = _t(a, "apply_over_axes")
    for ax in ((axes,) if is_int(axes) else axes):
        res = func(a, ax)
        if res.ndim == a.ndim - 1:
            res = expand_dims(res, ax)
        elif res.ndim != a.ndim:
            raise ValueError("apply_over_axes: function is not returning an array of the "
                             "correct shape")
        a = res
    return a


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i] (a function of x, or a value) where condlist[i] holds; one extra function is
    the default where no condition holds."""
    x = _t(x, "piecewise")
    if isinstance(condlist, _C.TensorBase) and condlist.dtype is _dt.bool_ and \
            tuple(condlist.shape) == tuple(x.shape):
        condlist = [condlist]
    conds = [_t(c, "piecewise") for c in condlist]
    if len(funclist) not in (len(conds), len(conds) + 1):
        raise ValueError("piecewise: with %d condition(s), either %d or %d functions are expected"
                         % (len(conds), len(conds), len(conds) + 1))
    if len(funclist) == len(conds) + 1:
        nothing = conds[0]
        for c in conds[1:]:
            nothing = _op("logical_or", (nothing, c))
        conds = conds + [_op("logical_not", (nothing,))]
    out = _op("full", (), shape=tuple(x.shape), value=0, dtype=x.dtype)
    for c, f in zip(conds, funclist):
        v = f(x, *args, **kw) if callable(f) else f
        out = _op("where", (c,) + _operands(v, out))
    return out


__all__ = ["transpose", "expand_dims", "squeeze", "rollaxis", "swapaxes", "reshape", "ravel",
           "concatenate", "where", "atleast_1d", "atleast_2d", "atleast_3d", "column_stack",
           "hstack", "dstack", "vstack", "stack", "unique", "moveaxis", "tile", "broadcast_to",
           "broadcast_arrays", "append", "roll", "split", "vsplit", "flip", "flipud", "fliplr",
           "hsplit", "dsplit", "take_along_axis", "take", "repeat", "rot90", "select",
           "array_split", "choose", "size", "apply_along_axis", "piecewise", "unravel_index",
           "apply_over_axes"]
