"""Verify mode: pj.jit(fn, verify=N), PIJIT_VERIFY=N, `python -m pijit run --verify[=N]`.

Every Nth call of a jitted function runs twice from one state: captured (its graphs, guards and
replayed effects) and then as plain Python (every jit forced eager), and the two are compared:
the result, what was printed, the exception, and the state the call could touch: its arguments,
the globals its code names, its closure, the object it is a method of (a Cell's Parameters),
tensors bit for bit, pijit's random generator. The first difference raises VerifyError naming
the function, the call, where the two differ, and the graph and guards of the entry that ran.
The program goes on from the plain run's state and result, so verify never changes what the
program computes. Off (verify 0, the default), a call pays one integer test in C.

The state is snapshot with copy.deepcopy (one memo: shared objects stay shared) and put back in
place between the runs (lists, dicts, sets, objects' __dict__, tensors' data, global and closure
bindings), so the objects the program holds are the ones it had. A call whose state cannot be
copied (a lock, an open file) runs once, captured, with a warning."""
import copy
import io
import logging
import struct
import sys
import types

from pijit import _C


class VerifyError(AssertionError):
    """A jitted call differs from plain Python (verify mode)."""


_log = logging.getLogger("pijit")
class _Unbound(object):
    """An unbound global or closure cell (one object, copies included)."""
    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        return "<unbound>"


_MISSING = _Unbound()


def _codes(code, out):
    out.append(code)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _codes(c, out)
    return out


def _bindings(target):
    """The (dict, name) globals and the closure cells the target's code (and the user functions
    its globals name, two levels down) may read or rebind; and the object a method belongs to."""
    owner = None
    fn = target
    if isinstance(target, types.MethodType):
        owner, fn = target.__self__, target.__func__
    elif not isinstance(target, types.FunctionType) and hasattr(type(target), "construct"):
        owner, fn = target, type(target).construct  # a Cell
    elif not isinstance(target, types.FunctionType):
        owner = target
        fn = getattr(type(target), "__call__", None)
    globs, cells, seen, named = [], [], set(), set()
    pending = [(fn, 0)]  # (function, how many calls down from the target)
    while pending:
        f, depth = pending.pop()
        if not isinstance(f, types.FunctionType) or id(f) in seen or (f.__module__ or "").startswith("pijit"):
            continue
        seen.add(id(f))
        g = f.__globals__
        for code in _codes(f.__code__, []):
            for name in code.co_names:
                if (id(g), name) not in named:
                    named.add((id(g), name))
                    globs.append((g, name))
                    v = g.get(name)
                    if depth < 2 and isinstance(v, types.FunctionType):
                        pending.append((v, depth + 1))
        cells.extend(f.__closure__ or ())
    return owner, globs, cells


def _atomic_memo():
    """A deepcopy memo where modules stand for themselves (copy copies functions and classes so,
    not modules, which objects hold: a Cell's backend, a namespace)."""
    return {id(m): m for m in list(sys.modules.values()) if m is not None}


def _now(args, kwargs, owner, globs, cells):
    """Everything verify compares, as it is now (live objects)."""
    return {"args": args, "kwargs": kwargs, "owner": owner,
            "globals": [(name, g.get(name, _MISSING)) for g, name in globs],
            "cells": [c.cell_contents if _cell_set(c) else _MISSING for c in cells],
            "rng": _C.rng_state()}


def _cell_set(c):
    try:
        c.cell_contents
        return True
    except ValueError:
        return False


def _restore(memo, globs, cells, saved):
    """Puts every object the snapshot copied back into the state it had, in place."""
    back = {}
    pairs = []
    for orig in memo.get(id(memo), []):
        c = memo.get(id(orig))
        if c is not None and c is not orig:
            back[id(c)] = orig
            pairs.append((orig, c))

    def b(v):
        return back.get(id(v), v)
    for orig, c in pairs:
        if isinstance(orig, _C.TensorBase):
            if not _C.tensor_to_bytes(orig) == _C.tensor_to_bytes(c):
                orig[...] = c
        elif isinstance(orig, list):
            orig[:] = [b(v) for v in c]
        elif isinstance(orig, dict):
            items = [(b(k), b(v)) for k, v in c.items()]
            orig.clear()
            orig.update(items)
        elif isinstance(orig, set):
            orig.clear()
            orig.update(b(v) for v in c)
        elif hasattr(orig, "__dict__") and not isinstance(orig, type) and type(orig.__dict__) is dict:
            d = [(k, b(v)) for k, v in c.__dict__.items()]
            orig.__dict__.clear()
            orig.__dict__.update(d)
    for (g, name), (_, v) in zip(globs, saved["globals"]):
        if v is _MISSING:
            g.pop(name, None)
        else:
            g[name] = v
    for c, v in zip(cells, saved["cells"]):
        if v is _MISSING:
            if _cell_set(c):
                del c.cell_contents
        else:
            c.cell_contents = v
    _C.set_rng_state(saved["rng"])


def _float_bits(x):
    return struct.pack("<d", x)


def _diff(a, b, path, seen):
    """Where a (jitted) and b (plain) first differ, as text; None when they agree."""
    if isinstance(a, _C.TensorBase) or isinstance(b, _C.TensorBase):
        if type(a) is not type(b):
            return "%s: a %s jitted, a %s plain" % (path, type(a).__name__, type(b).__name__)
        if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
            return "%s: %s%s jitted, %s%s plain" % (path, a.dtype, list(a.shape), b.dtype, list(b.shape))
        if _C.tensor_to_bytes(a) != _C.tensor_to_bytes(b):
            fa, fb = a.reshape(-1).tolist(), b.reshape(-1).tolist()
            for i, (x, y) in enumerate(zip(fa, fb)):
                if (_float_bits(x) if isinstance(x, float) else x) != (_float_bits(y) if isinstance(y, float) else y):
                    return "%s: element %d is %r jitted, %r plain (%s)" % (path, i, x, y, a.dtype)
            return "%s: the bytes differ (%s)" % (path, a.dtype)
        return None
    if type(a) is not type(b):
        return "%s: %s jitted, %s plain" % (path, type(a).__name__, type(b).__name__)
    if isinstance(a, float):
        return None if _float_bits(a) == _float_bits(b) else "%s: %r jitted, %r plain" % (path, a, b)
    if a is b or isinstance(a, (int, str, bytes, type(None), types.FunctionType, types.ModuleType, type)):
        return None if a is b or a == b else "%s: %r jitted, %r plain" % (path, a, b)
    key = (id(a), id(b))
    if key in seen:
        return None
    seen.add(key)
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return "%s: %d items jitted, %d plain" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = _diff(x, y, "%s[%d]" % (path, i), seen)
            if d:
                return d
        return None
    if isinstance(a, dict):
        if list(a.keys()) != list(b.keys()):
            return "%s: keys %r jitted, %r plain" % (path, list(a.keys()), list(b.keys()))
        for k in a:
            d = _diff(a[k], b[k], "%s[%r]" % (path, k), seen)
            if d:
                return d
        return None
    if isinstance(a, (set, frozenset)):
        return None if a == b else "%s: %r jitted, %r plain" % (path, a, b)
    if hasattr(a, "__dict__") and type(a.__dict__) is dict:
        return _diff(a.__dict__, b.__dict__, path + ".__dict__", seen)
    try:
        same = bool(a == b)
    except Exception:  # noqa: BLE001 (a type whose == raises: compare what repr shows)
        same = repr(a) == repr(b)
    return None if same else "%s: %r jitted, %r plain" % (path, a, b)


def _run(fn, args, kwargs):
    out = io.StringIO()
    real = sys.stdout
    sys.stdout = out
    try:
        return fn(*args, **kwargs), None, out.getvalue()
    except Exception as e:  # noqa: BLE001 (an exception is a result here; KeyboardInterrupt is not)
        return None, e, out.getvalue()
    finally:
        sys.stdout = real


def _name(target):
    f = getattr(target, "__func__", target)
    code = getattr(f, "__code__", None)
    if code is None:
        code = getattr(getattr(type(target), "construct", None), "__code__", None)
    if code is None:
        return repr(target)
    return "%s (%s:%d)" % (code.co_name, code.co_filename, code.co_firstlineno)


def _entry_text(jitfn):
    try:
        st = _C.jit_stats(jitfn)
    except Exception:  # noqa: BLE001
        return ""
    if not st.get("entries"):
        return "\nno captured entry ran (the call ran eagerly: %s)" % "; ".join(st.get("break_reasons", [])[-1:])
    e = st["entries"][0]
    return "\nthe entry that ran: its graph\n%s\nits guards:\n  %s%s" % (
        (e.get("graph") or "(none)").rstrip(), "\n  ".join(e.get("guards", [])),
        "\nits graph break: %s" % e["graph_break"] if e.get("graph_break") else "")


def verify_frame(code, globals_, closure, values, number):
    """`python -m pijit run --verify`: one call of a function the script's auto-capture runs, its
    frame's bound arguments `values` (runtime/eval_frame.cc), verified through a function rebuilt
    on the same code, globals and closure."""
    target = types.FunctionType(code, globals_, code.co_name, None, closure)
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    args = list(values[:npos])
    kwargs = {names[npos + i]: values[npos + i] for i in range(nkw)}
    i = npos + nkw
    if code.co_flags & 0x04:  # CO_VARARGS
        args.extend(values[i])
        i += 1
    if code.co_flags & 0x08:  # CO_VARKEYWORDS
        kwargs.update(values[i])
    return verify_call(None, target, tuple(args), kwargs, number)


def verify_call(jitfn, target, args, kwargs, number):
    """One verified call (runtime/jit_objects.cc calls it every Nth call of a jitted function;
    jitfn None: a function auto-capture runs, which a plain call of target captures)."""
    kwargs = kwargs or {}
    run_jitted = jitfn._run_jitted if jitfn is not None else target
    owner, globs, cells = _bindings(target)
    live = _now(args, kwargs, owner, globs, cells)
    memo = _atomic_memo()
    try:
        snapshot = copy.deepcopy(live, memo)  # noqa: F841 (kept alive: memo maps into it)
    except Exception as e:  # noqa: BLE001
        _log.warning("pijit verify: %s: the call's state cannot be copied (%s: %s); it runs once, captured",
                     _name(target), type(e).__name__, e)
        return run_jitted(*args, **kwargs)
    saved = {"globals": live["globals"], "cells": live["cells"], "rng": live["rng"]}
    r_jit, e_jit, out_jit = _run(run_jitted, args, kwargs)
    try:
        after_jit = copy.deepcopy({"result": r_jit, "state": _now(args, kwargs, owner, globs, cells)}, _atomic_memo())
    except Exception as e:  # noqa: BLE001 (a generator returned, a lock stored: the jitted call stands)
        _log.warning("pijit verify: %s: what the call returned or changed cannot be copied (%s: %s); "
                     "it ran once, captured", _name(target), type(e).__name__, e)
        if e_jit is not None:
            raise e_jit
        sys.stdout.write(out_jit)
        return r_jit
    _restore(memo, globs, cells, saved)
    before = _C.set_stance("force_eager")
    try:
        r_plain, e_plain, out_plain = _run(target, args, kwargs)
    finally:
        _C.set_stance(before)
    sys.stdout.write(out_plain)
    where = None
    if (type(e_jit), str(e_jit)) != (type(e_plain), str(e_plain)):
        where = "the exception: %s jitted, %s plain" % (_exc(e_jit), _exc(e_plain))
    elif out_jit != out_plain:
        where = "the printed output: %r jitted, %r plain" % (out_jit, out_plain)
    else:
        where = _first_difference(after_jit, r_plain, _now(args, kwargs, owner, globs, cells), globs)
    if where:
        raise VerifyError("pijit verify: %s, call %d: the jitted call differs from plain Python at %s%s"
                          % (_name(target), number, where, _entry_text(jitfn if jitfn is not None else target)))
    if e_plain is not None:
        raise e_plain
    return r_plain


def _first_difference(jit, r_plain, plain, globs):
    seen = set()
    a, b = jit["state"], plain
    checks = [(jit["result"], r_plain, "the result"), (a["args"], b["args"], "the arguments"),
              (a["kwargs"], b["kwargs"], "the keyword arguments"), (a["owner"], b["owner"], "self")]
    checks += [(x[1], y[1], "global %s" % g[1]) for x, y, g in zip(a["globals"], b["globals"], globs)]
    checks += [(x, y, "closure cell %d" % i) for i, (x, y) in enumerate(zip(a["cells"], b["cells"]))]
    checks.append((a["rng"], b["rng"], "pijit's random generator (seed, offset)"))
    for x, y, path in checks:
        if x is _MISSING or y is _MISSING:
            if x is not y:
                return "%s: %s jitted, %s plain" % (path, "unbound" if x is _MISSING else "bound",
                                                     "unbound" if y is _MISSING else "bound")
            continue
        d = _diff(x, y, path, seen)
        if d:
            return d
    return None


def _exc(e):
    return "no exception" if e is None else "%s(%s)" % (type(e).__name__, e)
