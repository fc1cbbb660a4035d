"""numpy.unique (return_index, return_inverse, return_counts, axis, equal_nan) and
numpy.broadcast_shapes for pijit's numpy stand-in.

unique sorts stably as numpy does for its index outputs (the first occurrence of each value),
NaNs sort last and collapse to one with equal_nan=True (numpy 1.24's default).
"""
import math

from pijit.numpy_lite import _dtypes as _d
from pijit.numpy_lite._array import array, asarray, ndarray
from pijit.numpy_lite._operators import _broadcast_shapes


def broadcast_shapes(*args):
    shapes = [tuple(s) if isinstance(s, (tuple, list)) else (s,) for s in args]
    return _broadcast_shapes(*shapes) if shapes else ()


def _key(v):
    """Sort key: numpy's order, NaN after everything (complex: real part first, then imag)."""
    if isinstance(v, complex):
        return (_key(v.real), _key(v.imag))
    if isinstance(v, float) and math.isnan(v):
        return (1, 0.0)
    return (0, v)


def _is_nan(v):
    if isinstance(v, complex):
        return math.isnan(v.real) or math.isnan(v.imag)
    return isinstance(v, float) and math.isnan(v)


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           equal_nan=True):
    a = asarray(ar)
    d = a.dtype
    if axis is None:
        items = a.reshape(-1).tolist()
        keyf = _key
        shape_tail = None
    else:
        nd = a.ndim
        if not -nd <= axis < nd:
            from pijit.numpy_lite._array import AxisError
            raise AxisError(axis, nd)
        axis = axis % nd
        moved = a.swapaxes(0, axis) if axis else a
        shape_tail = moved.shape[1:]
        items = [asarray(moved[i]).reshape(-1).tolist() for i in range(moved.shape[0])]
        items = [tuple(r) for r in items]

        def keyf(row):
            return tuple(_key(v) for v in row)
    order = sorted(range(len(items)), key=lambda i: keyf(items[i]))  # stable: first wins
    uniq, first, counts = [], [], []
    inverse = [0] * len(items)
    for i in order:
        v = items[i]
        if uniq:
            last = uniq[-1]
            same = (v == last) if axis is not None else (
                v == last or (equal_nan and _is_nan(v) and _is_nan(last)))
            if same:
                counts[-1] += 1
                inverse[i] = len(uniq) - 1
                continue
        uniq.append(v)
        first.append(i)
        counts.append(1)
        inverse[i] = len(uniq) - 1
    if axis is None:
        u = array(uniq, dtype=d) if uniq else array([], dtype=d)
    else:
        rows = [list(r) for r in uniq]
        if rows:
            u = array(rows, dtype=d).reshape((len(rows),) + shape_tail)
        else:
            u = array([], dtype=d).reshape((0,) + shape_tail)
        if axis:
            u = u.swapaxes(0, axis)
    out = [u]
    if return_index:
        out.append(array(first, dtype=_d.INT64) if first else array([], dtype=_d.INT64))
    if return_inverse:
        inv = array(inverse, dtype=_d.INT64) if inverse else array([], dtype=_d.INT64)
        out.append(inv)
    if return_counts:
        out.append(array(counts, dtype=_d.INT64) if counts else array([], dtype=_d.INT64))
    return out[0] if len(out) == 1 else tuple(out)
