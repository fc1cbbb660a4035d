"""numpy.testing for pijit's numpy stand-in: assert_equal, assert_array_equal, assert_allclose,
assert_almost_equal, assert_array_almost_equal, assert_array_less, assert_raises and
assert_raises_regex, with numpy 1.24's semantics (NaNs in the same places pass, a scalar is
compared with every element) and its failure messages (header, 'Mismatched elements', the max
absolute and relative differences, the x:/y: reprs at the assertion's precision).

Anything else of numpy.testing raises AttributeError naming it.
"""
import contextlib
import operator
import unittest

from pijit.numpy_lite import _dtypes as _d

__all__ = ["assert_equal", "assert_array_equal", "assert_allclose", "assert_almost_equal",
           "assert_array_almost_equal", "assert_array_less", "assert_raises",
           "assert_raises_regex"]


def _np():
    import pijit.numpy_lite as np
    return np


def _repr_at(a, precision):
    """repr of an ndarray with the printing precision set for the call (numpy's array_repr
    with precision=)."""
    np = _np()
    old = np.get_printoptions()["precision"]
    np.set_printoptions(precision=precision)
    try:
        return repr(a)
    finally:
        np.set_printoptions(precision=old)


def build_err_msg(arrays, err_msg, header="Items are not equal:", verbose=True,
                  names=("ACTUAL", "DESIRED"), precision=8):
    np = _np()
    msg = ["\n" + header]
    if err_msg:
        if "\n" not in err_msg and len(err_msg) < 79 - len(header):
            msg = [msg[0] + " " + err_msg]
        else:
            msg.append(err_msg)
    if verbose:
        for name, a in zip(names, arrays):
            try:
                r = _repr_at(a, precision) if isinstance(a, np.ndarray) else repr(a)
            except Exception as exc:
                r = "[repr failed for <%s>: %s]" % (type(a).__name__, exc)
            if r.count("\n") > 3:
                r = "\n".join(r.splitlines()[:3]) + "..."
            msg.append(" %s: %s" % (name, r))
    return "\n".join(msg)


def _is_number(a):
    return a.dtype.kind in "biufc"


def _same_pos(x, y, func, hasval, err_msg, verbose, header, precision):
    """Both arrays must have `func` true in the same places; returns where it is."""
    np = _np()
    x_id, y_id = func(x), func(y)
    if not bool(np.all(np.asarray(x_id == y_id))):
        raise AssertionError(build_err_msg([x, y], err_msg + "\nx and y %s location mismatch:"
                                           % hasval, verbose=verbose, header=header,
                                           names=("x", "y"), precision=precision))
    if np.ndim(x_id) == 0:
        return np.bool_(x_id)
    if np.ndim(y_id) == 0:
        return np.bool_(y_id)
    return y_id


def assert_array_compare(comparison, x, y, err_msg="", verbose=True, header="", precision=6,
                         equal_nan=True, equal_inf=True, strict=False):
    np = _np()
    x, y = np.asanyarray(x), np.asanyarray(y)
    ox, oy = x, y
    names = ("x", "y")
    if strict:
        cond = x.shape == y.shape and x.dtype == y.dtype
    else:
        cond = x.shape == () or y.shape == () or x.shape == y.shape
    if not cond:
        if x.shape != y.shape:
            reason = "\n(shapes %s, %s mismatch)" % (x.shape, y.shape)
        else:
            reason = "\n(dtypes %s, %s mismatch)" % (x.dtype, y.dtype)
        raise AssertionError(build_err_msg([x, y], err_msg + reason, verbose=verbose,
                                           header=header, names=names, precision=precision))
    flagged = np.bool_(False)
    if _is_number(x) and _is_number(y):
        if equal_nan:
            flagged = _same_pos(x, y, np.isnan, "nan", err_msg, verbose, header, precision)
        if equal_inf:
            flagged = flagged | _same_pos(x, y, lambda v: v == np.inf, "+inf", err_msg,
                                          verbose, header, precision)
            flagged = flagged | _same_pos(x, y, lambda v: v == -np.inf, "-inf", err_msg,
                                          verbose, header, precision)
    if np.ndim(flagged) > 0:
        keep = ~flagged
        x = x[keep] if x.ndim else x
        y = y[keep] if y.ndim else y
        if x.size == 0 and y.size == 0 or (x.ndim and x.size == 0) or (y.ndim and y.size == 0):
            return
    elif flagged:
        return
    val = comparison(x, y)
    if isinstance(val, bool):
        reduced = np.array([val])
    else:
        reduced = np.asarray(val).ravel()
    if bool(reduced.all()):
        return
    n_mismatch = reduced.size - int(reduced.astype(np.int64).sum())
    n_elements = flagged.size if np.ndim(flagged) != 0 else reduced.size
    remarks = ["Mismatched elements: {} / {} ({:.3g}%)".format(
        n_mismatch, n_elements, 100 * n_mismatch / n_elements)]
    with contextlib.suppress(TypeError, NotImplementedError):
        error = abs(x - y)
        if x.dtype.kind == "u":
            error = np.minimum(error, abs(y - x))
        max_abs = np.max(error)
        remarks.append("Max absolute difference: " + _array2string(max_abs))
        nonzero = np.asarray(y != 0)
        if not bool(nonzero.any()):
            max_rel = np.array(np.inf)
        else:
            err, yy = np.asarray(error), np.asarray(y)
            shape = np.broadcast_shapes(err.shape, yy.shape)
            mask = np.broadcast_to(nonzero, shape)
            rel = np.broadcast_to(err, shape)[mask] / abs(np.broadcast_to(yy, shape)[mask])
            max_rel = np.max(rel)
        remarks.append("Max relative difference: " + _array2string(max_rel))
    err_msg += "\n" + "\n".join(remarks)
    raise AssertionError(build_err_msg([ox, oy], err_msg, verbose=verbose, header=header,
                                       names=names, precision=precision))


def _array2string(v):
    from pijit.numpy_lite import _print
    np = _np()
    a = np.asarray(v)
    return _print.array2string(a.tolist(), a.shape, a.dtype)


def assert_array_equal(x, y, err_msg="", verbose=True, strict=False):
    assert_array_compare(operator.__eq__, x, y, err_msg=err_msg, verbose=verbose,
                         header="Arrays are not equal", strict=strict)


def assert_allclose(actual, desired, rtol=1e-7, atol=0, equal_nan=True, err_msg="",
                    verbose=True):
    np = _np()

    def compare(x, y):
        return np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)

    actual, desired = np.asanyarray(actual), np.asanyarray(desired)
    header = "Not equal to tolerance rtol={:g}, atol={:g}".format(rtol, atol)
    assert_array_compare(compare, actual, desired, err_msg=str(err_msg), verbose=verbose,
                         header=header, equal_nan=equal_nan)


def assert_array_almost_equal(x, y, decimal=6, err_msg="", verbose=True):
    np = _np()

    def compare(x, y):
        if bool(np.any(np.isinf(x))) or bool(np.any(np.isinf(y))):
            xinf, yinf = np.isinf(x), np.isinf(y)
            if not bool(np.all(np.asarray(xinf == yinf))):
                return False
            if x.size == y.size == 1:
                return x == y
            x, y = x[~xinf], y[~yinf]
        dt = np.result_type(y, 1.0)
        y = np.asanyarray(y, dt)
        return abs(x - y) < 1.5 * 10.0 ** (-decimal)

    assert_array_compare(compare, x, y, err_msg=err_msg, verbose=verbose,
                         header="Arrays are not almost equal to %d decimals" % decimal,
                         precision=decimal)


def _iscomplexobj(x):
    np = _np()
    try:
        return np.asarray(x).dtype.kind == "c"
    except Exception:
        return isinstance(x, complex)


def _real_imag(v):
    np = _np()
    if _iscomplexobj(v):
        a = np.asarray(v)
        return a.real, a.imag
    return v, 0


def assert_almost_equal(actual, desired, decimal=7, err_msg="", verbose=True):
    np = _np()

    def _msg():
        return build_err_msg([actual, desired], err_msg, verbose=verbose,
                             header="Arrays are not almost equal to %d decimals" % decimal)

    if _iscomplexobj(actual) or _iscomplexobj(desired):
        (ar, ai), (dr, di) = _real_imag(actual), _real_imag(desired)
        try:
            assert_almost_equal(ar, dr, decimal=decimal)
            assert_almost_equal(ai, di, decimal=decimal)
        except AssertionError:
            raise AssertionError(_msg())
    if isinstance(actual, (np.ndarray, tuple, list)) or \
            isinstance(desired, (np.ndarray, tuple, list)):
        return assert_array_almost_equal(actual, desired, decimal, err_msg)
    try:
        fd, fa = bool(np.isfinite(desired)), bool(np.isfinite(actual))
        if not (fd and fa):
            nd, na = bool(np.isnan(desired)), bool(np.isnan(actual))
            if nd or na:
                if not (nd and na):
                    raise AssertionError(_msg())
            elif not desired == actual:
                raise AssertionError(_msg())
            return
    except (NotImplementedError, TypeError):
        pass
    if abs(desired - actual) >= np.float64(1.5 * 10.0 ** (-decimal)):
        raise AssertionError(_msg())


def assert_array_less(x, y, err_msg="", verbose=True):
    assert_array_compare(operator.__lt__, x, y, err_msg=err_msg, verbose=verbose,
                         header="Arrays are not less-ordered", equal_inf=False)


def assert_equal(actual, desired, err_msg="", verbose=True):
    np = _np()
    if isinstance(desired, dict):
        if not isinstance(actual, dict):
            raise AssertionError(repr(type(actual)))
        assert_equal(len(actual), len(desired), err_msg, verbose)
        for k in desired:
            if k not in actual:
                raise AssertionError(repr(k))
            assert_equal(actual[k], desired[k], "key=%r\n%s" % (k, err_msg), verbose)
        return
    if isinstance(desired, (list, tuple)) and isinstance(actual, (list, tuple)):
        assert_equal(len(actual), len(desired), err_msg, verbose)
        for k in range(len(desired)):
            assert_equal(actual[k], desired[k], "item=%r\n%s" % (k, err_msg), verbose)
        return
    if isinstance(actual, np.ndarray) or isinstance(desired, np.ndarray):
        return assert_array_equal(actual, desired, err_msg, verbose)
    msg = build_err_msg([actual, desired], err_msg, verbose=verbose)
    if _iscomplexobj(actual) or _iscomplexobj(desired):
        (ar, ai), (dr, di) = _real_imag(actual), _real_imag(desired)
        try:
            assert_equal(ar, dr)
            assert_equal(ai, di)
        except AssertionError:
            raise AssertionError(msg)
    if np.isscalar(desired) != np.isscalar(actual):
        raise AssertionError(msg)
    try:
        dn, an = bool(np.isnan(desired)), bool(np.isnan(actual))
        if dn and an:
            return
        if desired == 0 and actual == 0:
            if _signbit(desired) != _signbit(actual):
                raise AssertionError(msg)
    except (TypeError, ValueError, NotImplementedError):
        pass
    if not (desired == actual):
        raise AssertionError(msg)


def _signbit(v):
    import math
    return math.copysign(1.0, float(v)) < 0


class _Dummy(unittest.TestCase):
    def nop(self):
        pass


_tc = _Dummy("nop")


def assert_raises(*args, **kwargs):
    """assert_raises(exc, callable, *args) or `with assert_raises(exc):` (unittest's)."""
    return _tc.assertRaises(*args, **kwargs)


def assert_raises_regex(exception_class, expected_regexp, *args, **kwargs):
    return _tc.assertRaisesRegex(exception_class, expected_regexp, *args, **kwargs)


def __getattr__(name):
    raise AttributeError("module 'numpy.testing' has no attribute '%s' (%s)"
                         % (name, _d.not_provided("numpy.testing." + name)))
