"""What the capture suites compare between a plain and a jitted call: results (tensors by dtype,
shape and values), printed output and exceptions, with stress mode off for the plain call."""
import contextlib
import io
import os
import sys

import pijit as pj


# Whether pijit captures on this interpreter: 3.7-3.11 (on 3.11 unless PIJIT_PY311_CAPTURE=0;
# elsewhere pj.jit runs functions eagerly).
CAPTURE_ON = ((3, 7) <= sys.version_info[:2] <= (3, 10)
              or (sys.version_info[:2] == (3, 11) and os.environ.get("PIJIT_PY311_CAPTURE") != "0"))
CAPTURE_OFF_WHY = "capture runs on Python 3.7-3.11 (3.11: not under PIJIT_PY311_CAPTURE=0)"
# Whether capture's stages are built for this interpreter (3.7-3.11): their test hooks
# (_C._capture_probe, _C._frame_probe) run them on 3.11 under PIJIT_PY311_CAPTURE=0 too.
CAPTURE_BUILT = (3, 7) <= sys.version_info[:2] <= (3, 11)


def say(*parts):
    """Output capture does not replay (a stream's method it does not simulate): a graph break."""
    sys.stdout.write(" ".join(map(str, parts)) + "\n")


def show(v):
    """A comparable summary: tensors by dtype, shape and values; containers item by item, dicts in
    their order; instances of plain classes (the default repr) by their attributes."""
    if isinstance(v, pj.Tensor):
        return ("Tensor", str(v.dtype), v.shape, v.tolist())
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [show(a) for a in v])
    if isinstance(v, dict):
        return ("dict", [(k, show(a)) for k, a in v.items()])
    if type(v).__repr__ is object.__repr__ and hasattr(v, "__dict__"):
        return (type(v).__name__, show(vars(v)))
    return repr(v)


def same_bits(a, b):
    """Exact equality of nested results: tensors by dtype, shape and the repr of every element (so
    -0.0 and nan count), other values by type and ==."""
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b))
    if isinstance(a, pj.Tensor):
        return (isinstance(b, pj.Tensor) and a.dtype == b.dtype and a.shape == b.shape
                and [repr(v) for v in a.reshape(-1).tolist()] == [repr(v) for v in b.reshape(-1).tolist()])
    return type(a) is type(b) and a == b


@contextlib.contextmanager
def no_stress():
    """Plain runs are plain even under PIJIT_STRESS (the code's cache is shared with the jit)."""
    if not CAPTURE_ON:  # (no stress mode to turn off: its switches raise NotImplementedError there)
        yield
        return
    level = pj.stress_stats()["level"]
    pj.set_stress(0)
    try:
        yield
    finally:
        pj.set_stress(level)


def eager(fn, *args, **kwargs):
    """fn run plainly: the reference side of a comparison (under PIJIT_STRESS a plain call would be
    captured too, and it shares its code's cache and counters with the jitted calls)."""
    with no_stress():
        return fn(*args, **kwargs)


def assert_ran_eagerly(test, fn):
    """Where capture is off, what pj.jit did instead of capturing: fn (jitted) ran plainly, with
    no compile and no graph. Returns its jit_stats."""
    st = pj.jit_stats(fn)
    test.assertEqual((st["mode"], st["compiles"], st["graphs"], st["break_reasons"]), ("never", 0, 0, []), st)
    return st


def assert_refused(test, fn, reason, detail=""):
    """The outcome a test states where capture is meant to refuse: fn (jitted) holds no graph, and
    its first break reason has the id `reason` ("B005") and holds `detail`. Returns its jit_stats."""
    st = pj.jit_stats(fn)
    test.assertEqual(st["graphs"], 0, st["break_reasons"])
    test.assertTrue(st["break_reasons"], st)
    test.assertTrue(st["break_reasons"][0].startswith(reason + " "), st["break_reasons"])
    test.assertIn(detail, st["break_reasons"][0])
    return st


def same_calls(test, f, make_args, calls=3, view=lambda v: v):
    """Plain and jitted calls of f alternate, each on fresh arguments; the results (seen through
    `view`) are bit-identical, types included. Returns the jitted function and its jit_stats."""
    jf = pj.jit(f)
    for _ in range(calls):
        with no_stress():
            want = view(f(*make_args()))
        got = view(jf(*make_args()))
        test.assertTrue(same_bits(want, got), (want, got))
    return jf, pj.jit_stats(jf)


def same_raise(test, f, make_args, exc, jf=None):
    """f raises exc plainly and jitted (jf, else pj.jit(f)), with the same message; returns it."""
    with test.assertRaises(exc) as want:
        with no_stress():
            f(*make_args())
    with test.assertRaises(exc) as got:
        (jf or pj.jit(f))(*make_args())
    test.assertEqual(str(got.exception), str(want.exception))
    return str(got.exception)


def run(fn, *args):
    """(("ok", result) or ("raises", type, message), printed output)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            r = ("ok", show(fn(*args)))
        except Exception as e:  # the same exception, the same message
            r = ("raises", type(e).__name__, str(e))
    return r, out.getvalue()


def plain(fn, *args):
    with no_stress():
        return run(fn, *args)
