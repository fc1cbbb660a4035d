"""Runs a directory of pytest-style test files (MindSpore's PIJit system tests, kept outside this
repository) against pijit on the stdlib-only Pythons, and ends with "N passed, N failed".

    python tools/ms_st/run_ms_st.py /work/ms_st/tests/st/pi_jit               # pyenv 3.9 and 3.7
    python tools/ms_st/run_ms_st.py DIR --python 3.9 -k control_flow --json out.json

`import mindspore` resolves to pijit (its alias) and `import numpy` to pijit's numpy stand-in.
pytest itself and the test-only helper modules the files import are replaced by small stand-ins
written here from their documented meaning (see _install_standins): the files run unchanged.
Each file runs in a child process that reports every test as it goes; a test that hangs past
--timeout or kills its process is recorded as an error and the file goes on in a fresh child.
Outcomes: passed; failed (an assertion: a wrong value, a missing exception); errored (any other
exception, e.g. a name pijit lacks); not applicable (marked for a GPU/Ascend only, skipped by the
file itself, or needing MindSpore internals such as mindspore._c_expression or MindIR files).
"""
import argparse
import ast
import json
import os
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TAG = "@@MSST "


# ------------------------------------------------------------------------------------------------
# child side: stand-ins, collection, running
# ------------------------------------------------------------------------------------------------

class NotApplicable(Exception):
    """Raised by a stand-in when a test needs what only MindSpore (or a device) has."""


class Skipped(Exception):
    pass


def _emit(**kw):
    sys.__stdout__.write(TAG + json.dumps(kw) + "\n")
    sys.__stdout__.flush()


class _Mark(object):
    """pytest.mark.NAME(...): a decorator recording (name, args, kwargs) on the function/class."""

    def __init__(self, name, args=(), kwargs=None):
        self.name, self.args, self.kwargs = name, args, kwargs or {}

    def __call__(self, *args, **kwargs):
        configured = bool(self.args or self.kwargs)
        bare_apply = not configured and self.name != "parametrize"
        if len(args) == 1 and not kwargs and callable(args[0]) and (configured or bare_apply):
            obj = args[0]
            marks = list(getattr(obj, "pytestmark", []))
            marks.append(self)
            try:
                obj.pytestmark = marks
            except AttributeError:
                pass
            return obj
        return _Mark(self.name, args, kwargs)


class _MarkGen(object):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Mark(name)


class _Param(object):
    def __init__(self, values, id=None, marks=()):
        self.values, self.id, self.marks = values, id, marks


class _Raises(object):
    def __init__(self, exc, match=None):
        self.exc, self.match, self.value, self.type = exc, match, None, None

    def __enter__(self):
        return self

    def __exit__(self, tp, value, tb):
        import re
        if tp is None:
            raise AssertionError("DID NOT RAISE %s" % (self.exc,))
        if not issubclass(tp, self.exc):
            return False
        self.value, self.type = value, tp
        if self.match is not None and not re.search(self.match, str(value)):
            raise AssertionError("Regex pattern %r does not match %r" % (self.match, str(value)))
        return True


def _make_pytest():
    import types
    m = types.ModuleType("pytest")
    m.mark = _MarkGen()
    m.param = lambda *values, **kw: _Param(values, kw.get("id"), kw.get("marks", ()))

    def raises(exc, *args, **kwargs):
        if args:
            with _Raises(exc) as r:
                args[0](*args[1:], **kwargs)
            return r
        return _Raises(exc, kwargs.get("match"))
    m.raises = raises

    def skip(reason="", allow_module_level=False, msg=None):
        raise Skipped(msg or reason)
    m.skip = skip

    def fail(reason="", pytrace=True, msg=None):
        raise AssertionError(msg or reason)
    m.fail = fail

    def fixture(fn=None, **kw):
        def wrap(f):
            f._msst_fixture = kw
            return f
        return wrap(fn) if fn is not None else wrap
    m.fixture = fixture

    def approx(expected, rel=None, abs=None):
        import builtins

        class _Approx(object):
            def __eq__(self, other):
                tol = builtins.max((rel or 1e-6) * builtins.abs(expected), abs or 1e-12)
                return builtins.abs(other - expected) <= tol
        return _Approx()
    m.approx = approx
    return m


def _to_list(x):
    """Tensors / numpy-like arrays / scalars -> (nested python list or scalar, shape or None)."""
    if hasattr(x, "asnumpy"):
        x = x.asnumpy()
    if hasattr(x, "tolist") and hasattr(x, "shape"):
        return x.tolist(), tuple(x.shape)
    if isinstance(x, (list, tuple)):
        items = [_to_list(v) for v in x]
        shapes = [s for _, s in items]
        inner = shapes[0] if shapes else ()
        shape = (len(items),) + (inner or ()) if all(s == inner for s in shapes) and inner is not None else None
        return [v for v, _ in items], shape
    if hasattr(x, "item") and not isinstance(x, (int, float, complex, bool)):
        try:
            return x.item(), ()
        except Exception:
            pass
    return x, ()


def _flat(v):
    if isinstance(v, list):
        out = []
        for e in v:
            out.extend(_flat(e))
        return out
    return [v]


def _close(a, b, decimal):
    """numpy.testing semantics: equal (nan == nan), or |a - b| < 1.5 * 10**-decimal."""
    import math
    if isinstance(a, complex) or isinstance(b, complex):
        return _close(complex(a).real, complex(b).real, decimal) and _close(complex(a).imag, complex(b).imag, decimal)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if decimal is None:
        return a == b
    if a == b:
        return True
    try:
        return abs(a - b) < 1.5 * 10.0 ** (-decimal)
    except TypeError:
        return False


def _compare(actual, expected, decimal, err_msg):
    a, sa = _to_list(actual)
    e, se = _to_list(expected)
    fa, fe = _flat(a), _flat(e)
    if sa is not None and se is not None and sa != se and not (len(fe) == 1 and se == ()) \
            and not (len(fa) == 1 and sa == ()):
        raise AssertionError("shapes differ: %s vs %s %s" % (sa, se, err_msg))
    if len(fe) == 1 and len(fa) != 1:
        fe = fe * len(fa)
    if len(fa) == 1 and len(fe) != 1:
        fa = fa * len(fe)
    if len(fa) != len(fe):
        raise AssertionError("sizes differ: %d vs %d %s" % (len(fa), len(fe), err_msg))
    bad = [(i, x, y) for i, (x, y) in enumerate(zip(fa, fe)) if not _close(x, y, decimal)]
    if bad:
        raise AssertionError("%d of %d elements differ, first %s: %r != %r %s"
                             % (len(bad), len(fa), bad[0][0], bad[0][1], bad[0][2], err_msg))


class _Record(dict):
    """get_code_extra's record: the keys MindSpore's tests read, filled from pijit.jit_stats."""

    def __missing__(self, key):
        raise NotApplicable("reads MindSpore's internal capture record field %r" % key)


def _code_record(fn):
    import pijit
    target = getattr(fn, "__wrapped__", fn)
    try:
        s = pijit.jit_stats(target)
    except Exception:
        return None
    if not s.get("compiles") and not s.get("cache_hits"):
        return None
    # MindSpore's call_count_ is that of the code the last call used: the most recently used cache
    # entry (pijit keeps it first; its hits count the call that compiled it)
    entries = [e for e in s.get("entries", []) if not e.get("loop_body")]
    code = _Record(call_count_=entries[0].get("hits", 0) if entries else 0,
                   phase_=("graph" if s.get("graphs") else ""))
    return _Record(stat="GRAPH_CALLABLE" if s.get("graphs") or s.get("compiles") else "NEVER_COMPILE",
                   break_count_=s.get("breaks", 0), compile_count_=s.get("compiles", 0),
                   graph_count_=s.get("graphs", 0), code=code, _stats=s)


def _make_share_utils(name):
    """The share/utils helpers, as their names and docstrings describe them."""
    import types
    m = types.ModuleType(name)
    import pijit
    from pijit import Tensor, ops

    def match_array(actual, expected, error=0, err_msg=""):
        _compare(actual, expected, error if error > 0 else None, err_msg)

    def match_value(actual, expected, error=0, err_msg=""):
        if isinstance(actual, (tuple, list)) and isinstance(expected, (tuple, list)):
            assert len(actual) == len(expected), "lengths differ: %d vs %d" % (len(actual), len(expected))
            for x, y in zip(actual, expected):
                match_value(x, y, error, err_msg)
        elif isinstance(actual, dict) and isinstance(expected, dict):
            match_value(tuple(actual), tuple(expected), error, err_msg)
            match_value(tuple(actual.values()), tuple(expected.values()), error, err_msg)
        else:
            match_array(actual, expected, error, err_msg)

    def assert_equal(expected, actual, decimal=7, err_msg=""):
        if isinstance(expected, (list, tuple)):
            assert type(expected) is type(actual), "types differ: %s vs %s" % (type(expected), type(actual))
            assert len(expected) == len(actual)
            for x, y in zip(expected, actual):
                assert_equal(x, y, decimal, err_msg)
        elif isinstance(expected, dict):
            assert type(expected) is type(actual) and len(expected) == len(actual)
            for k in expected:
                assert k in actual
                assert_equal(expected[k], actual[k], decimal, err_msg)
        elif isinstance(expected, Tensor):
            assert isinstance(actual, Tensor), "expected a Tensor, got %s" % type(actual).__name__
            _compare(actual, expected, decimal, err_msg)
        else:
            assert expected == actual, "expect: %r, actual: %r" % (expected, actual)

    def allclose_nparray(data_expected, data_me, rtol, atol, equal_nan=True):
        import math
        e, se = _to_list(data_expected)
        a, sa = _to_list(data_me)
        assert se == sa, "shapes differ: %s vs %s" % (se, sa)
        fe, fa = _flat(e), _flat(a)
        bad = 0
        for x, y in zip(fe, fa):
            if isinstance(x, float) and math.isnan(x) or isinstance(y, float) and math.isnan(y):
                if not (equal_nan and isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)):
                    bad += 1
            elif abs(x - y) > atol + rtol * abs(y):
                bad += 1
        # MindSpore's helper tolerates a fraction (< rtol) of elements out of tolerance
        assert not fe or bad / len(fe) < rtol or bad == 0, "%d of %d elements differ" % (bad, len(fe))

    def _count_unequal_element(data_expected, data_me, rtol, atol):
        e, se = _to_list(data_expected)
        a, sa = _to_list(data_me)
        assert se == sa, "shapes differ: %s vs %s" % (se, sa)
        fe, fa = _flat(e), _flat(a)
        bad = sum(1 for x, y in zip(fe, fa) if abs(x - y) > atol + abs(y) * rtol)
        assert bad / max(1, len(fe)) < rtol, "%d of %d elements differ" % (bad, len(fe))

    def tensor_to_numpy(data):
        if isinstance(data, Tensor):
            return data.asnumpy()
        if isinstance(data, tuple):
            return tuple(tensor_to_numpy(d) for d in data)
        raise AssertionError("unsupported data type")

    def is_empty(v):
        return v is None or v == "" if isinstance(v, str) or v is None else \
            isinstance(v, (list, tuple, dict, set)) and len(v) == 0

    def get_empty_tensor(dtype=None):
        x = Tensor([1], dtype or pijit.float32)
        return ops.slice(x, (0,), (0,))

    def nptype_to_mstype(t):
        import numpy
        if t is None:
            return None
        return pijit.dtype.pytype_to_dtype(numpy.dtype(t)) if hasattr(pijit.dtype, "pytype_to_dtype") else t

    def _graph_record(func):
        rec = _code_record(func)
        assert rec is not None, "%s was never captured" % getattr(func, "__name__", func)
        return rec

    def has_graph(rec, depth=2):
        return bool(rec) and bool(rec["_stats"].get("graphs") or rec["_stats"].get("resume_graphs"))

    def assert_executed_by_graph_mode(func, call_count=None):
        rec = _graph_record(func)
        assert rec["break_count_"] == 0, "break_count expect: 0, actual: %d (%s)" % (
            rec["break_count_"], rec["_stats"].get("break_reasons"))
        assert has_graph(rec), "no graph was captured"
        if call_count is not None:
            assert rec["code"]["call_count_"] == call_count, "call_count expect: %s, actual: %s" % (
                call_count, rec["code"]["call_count_"])

    def assert_no_graph_break(func, call_count=None):
        rec = _graph_record(func)
        assert rec["break_count_"] == 0, "break_count expect: 0, actual: %d (%s)" % (
            rec["break_count_"], rec["_stats"].get("break_reasons"))
        if call_count is not None:
            assert rec["code"]["call_count_"] == call_count, "call_count expect: %s, actual: %s" % (
                call_count, rec["code"]["call_count_"])

    def assert_has_graph_break(func, break_count=1, call_count=None):
        rec = _graph_record(func)
        assert rec["break_count_"] == break_count, "break_count expect: %d, actual: %d" % (
            break_count, rec["break_count_"])
        if call_count is not None:
            assert rec["code"]["call_count_"] == call_count

    def assert_graph_compile_status(func, break_count=None, call_count=None, compile_count=None):
        rec = _graph_record(func)
        assert break_count is None or rec["break_count_"] == break_count, \
            "break_count expect: %s, actual: %s" % (break_count, rec["break_count_"])
        assert call_count is None or rec["code"]["call_count_"] == call_count, \
            "call_count expect: %s, actual: %s" % (call_count, rec["code"]["call_count_"])
        assert compile_count is None or rec["compile_count_"] == compile_count, \
            "compile_count expect: %s, actual: %s" % (compile_count, rec["compile_count_"])
        assert has_graph(rec), "no graph was captured"

    def pi_jit_with_config(function=None, jit_config=None, fullgraph=False):
        def wrap(f):
            return pijit.jit(f, fullgraph=fullgraph)
        return wrap(function) if function is not None else wrap

    for k, v in list(locals().items()):
        if callable(v) and (not k.startswith("_") or k == "_count_unequal_element") \
                and k not in ("Tensor", "ops", "pijit"):
            setattr(m, k, v)
    return m


def _make_c_expression():
    """mindspore._c_expression: only the capture-record reader and the global switches."""
    import types
    m = types.ModuleType("mindspore._c_expression")
    m.get_code_extra = _code_record
    m.jit_mode_pi_enable = lambda: None
    m.jit_mode_pi_disable = lambda: None
    m.update_pijit_default_config = lambda **kw: None
    return m


def _install_standins(pkg_root_name):
    import types
    sys.modules["pytest"] = _make_pytest()
    mark = types.ModuleType("tests.mark_utils")

    def arg_mark(plat_marks, level_mark, card_mark, essential_mark):
        def deco(fn):
            fn._msst_plat = list(plat_marks)
            return fn
        return deco
    mark.arg_mark = arg_mark
    sys.modules["tests.mark_utils"] = mark
    share = pkg_root_name + ".share.utils"
    sys.modules[share] = _make_share_utils(share)
    sys.modules["mindspore._c_expression"] = _make_c_expression()


def _ids(values):
    out = []
    for v in values:
        if isinstance(v, (str, int, float, bool)) or v is None:
            out.append(str(v))
        else:
            out.append(type(v).__name__)
    return "-".join(out)


def _expand(fn):
    """[(id suffix, kwargs, marks)] for the function's stacked parametrize marks."""
    cases = [("", {}, [])]
    for mk in reversed(getattr(fn, "pytestmark", [])):
        if mk.name != "parametrize":
            continue
        names, values = mk.args[0], mk.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        ids = mk.kwargs.get("ids")
        new = []
        for base, kw, marks in cases:
            for i, v in enumerate(values):
                pmarks = []
                if isinstance(v, _Param):
                    pmarks, label, v = list(v.marks) if isinstance(v.marks, (list, tuple)) else [v.marks], v.id, \
                        v.values if len(names) > 1 else v.values[0]
                else:
                    label = None
                vals = list(v) if len(names) > 1 else [v]
                if ids is not None and not callable(ids) and i < len(ids):
                    label = ids[i]
                label = label if label is not None else _ids(vals)
                new.append(((base + "-" if base else "") + str(label), dict(kw, **dict(zip(names, vals))), marks + pmarks))
        cases = new
    return cases


def _collect(mod):
    """[(test id, callable factory, marks, plat marks)] in definition order."""
    items, seen = [], set()

    def add(prefix, fn, owner_marks, make):
        marks = list(owner_marks) + [m for m in getattr(fn, "pytestmark", []) if m.name != "parametrize"]
        for suffix, kw, pmarks in _expand(fn):
            tid = prefix + (("[" + suffix + "]") if suffix else "")
            n, base = 1, tid
            while tid in seen:  # as pytest does, duplicate parameter ids get an index
                tid, n = "%s%d" % (base, n), n + 1
            seen.add(tid)
            items.append((tid, make, fn, kw, marks + pmarks, getattr(fn, "_msst_plat", None)))

    for name, obj in list(vars(mod).items()):
        if name.startswith("test") and callable(obj) and not isinstance(obj, type) \
                and getattr(obj, "__module__", None) == mod.__name__:
            add(name, obj, [], None)
        elif name.startswith("Test") and isinstance(obj, type) and "__init__" not in vars(obj):
            for mname in dir(obj):
                if mname.startswith("test") and callable(getattr(obj, mname)):
                    add(name + "::" + mname, getattr(obj, mname), getattr(obj, "pytestmark", []), obj)
    return items


def _fixtures(mod):
    return {n: f for n, f in vars(mod).items() if callable(f) and hasattr(f, "_msst_fixture")}


def _classify(exc, tb_text):
    name = type(exc).__name__
    msg = str(exc)
    if isinstance(exc, NotApplicable):
        return "not_applicable", msg
    if isinstance(exc, Skipped):
        return "not_applicable", "skipped by the test: " + msg
    if isinstance(exc, ImportError):
        mod = getattr(exc, "name", "") or ""
        if "_c_expression" in msg or mod.startswith("mindspore._") or "mindspore._" in msg:
            return "not_applicable", "needs a MindSpore internal: %s: %s" % (name, msg)
    if isinstance(exc, ImportError) and "._" in (getattr(exc, "name", "") or ""):
        return "not_applicable", "needs a MindSpore private module: %s: %s" % (name, msg)
    low = msg.lower()
    if "ir path not exists" in low or "save_graphs" in low:
        return "not_applicable", "reads MindSpore's IR dump files: %s: %s" % (name, msg)
    if "ms_jit_bytecode_logs" in low:
        return "not_applicable", "runs MindSpore's MS_JIT_BYTECODE_LOGS logging in a subprocess: %s" % msg[:200]
    if "mindir" in low:
        return "not_applicable", "needs MindIR export/load: %s: %s" % (name, msg)
    if isinstance(exc, AssertionError):
        return "failed", "%s: %s" % (name, msg)
    return "errored", "%s: %s" % (name, msg)


def _short_tb(tb_text, limit=6):
    lines = [l for l in tb_text.strip().splitlines()]
    return "\n".join(lines[-2 * limit:])


def child_main(args):
    root = os.path.abspath(args.root)
    path = os.path.abspath(args.child)
    # the package of the test tree: the folder above the first "tests" component
    parts = root.split(os.sep)
    top = parts.index("tests") if "tests" in parts else len(parts) - 1
    sys.path.insert(0, os.sep.join(parts[:top]) or os.sep)
    pkg_root = ".".join(parts[top:])
    from pijit import alias
    alias.install_mindspore_alias()
    alias.install_numpy_lite()
    _install_standins(pkg_root)
    rel = os.path.relpath(path, os.sep.join(parts[:top]))
    modname = rel[:-3].replace(os.sep, ".")
    import importlib
    done = set(args.done or [])
    t0 = time.time()
    try:
        mod = importlib.import_module(modname)
    except BaseException as e:  # collection error: every test the file defines errs with it
        kind, why = _classify(e, "")
        if kind == "failed":
            kind = "errored"
        tb = _short_tb(traceback.format_exc())
        for tid in _static_tests(path):
            _emit(event="result", test=tid, outcome=kind, reason="at import: " + why, tb=tb, secs=0)
        _emit(event="end")
        return 0
    fixtures = _fixtures(mod)
    autouse = [f for f in fixtures.values() if f._msst_fixture.get("autouse")]
    for tid, cls, fn, kw, marks, plat in _collect(mod):
        if tid in done:
            continue
        if args.k and not any(k in tid for k in args.k):
            continue
        _emit(event="start", test=tid)
        t0 = time.time()
        outcome, reason, tb = "passed", "", ""
        try:
            if plat is not None and "cpu_linux" not in plat:
                raise NotApplicable("marked for %s only" % "/".join(plat))
            for mk in marks:
                if mk.name == "skip":
                    raise Skipped(mk.kwargs.get("reason", mk.args[0] if mk.args else ""))
                if mk.name == "skipif" and (mk.args[0] if mk.args else mk.kwargs.get("condition")):
                    raise Skipped(mk.kwargs.get("reason", ""))
            gens = []
            try:
                for fx in autouse:
                    r = fx()
                    if hasattr(r, "__next__"):
                        next(r)
                        gens.append(r)
                call_kw = dict(kw)
                import inspect
                for pname in inspect.signature(fn).parameters:
                    if pname in fixtures and pname not in call_kw:
                        r = fixtures[pname]()
                        if hasattr(r, "__next__"):
                            v = next(r)
                            gens.append(r)
                            r = v
                        call_kw[pname] = r
                if cls is not None:
                    inst = cls()
                    if hasattr(inst, "setup_method"):
                        inst.setup_method(getattr(inst, fn.__name__))
                    try:
                        getattr(inst, fn.__name__)(**call_kw)
                    finally:
                        if hasattr(inst, "teardown_method"):
                            inst.teardown_method(getattr(inst, fn.__name__))
                else:
                    fn(**call_kw)
            finally:
                for g in reversed(gens):
                    try:
                        next(g)
                    except StopIteration:
                        pass
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            tb = _short_tb(traceback.format_exc())
            outcome, reason = _classify(e, tb)
        try:  # MindSpore's context is global: start every test from PyNative, as a fresh process would
            import pijit
            pijit.set_context(mode=pijit.PYNATIVE_MODE)
        except Exception:
            pass
        _emit(event="result", test=tid, outcome=outcome, reason=reason[:600], tb=tb[-3000:],
              secs=round(time.time() - t0, 3))
    _emit(event="end")
    return 0


def _static_tests(path):
    """Test names a file defines (without parametrize expansion), read from its source."""
    try:
        tree = ast.parse(open(path).read())
    except Exception:
        return ["<file>"]
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            out.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            out += [node.name + "::" + n.name for n in node.body
                    if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    return out or ["<file>"]


# ------------------------------------------------------------------------------------------------
# parent side
# ------------------------------------------------------------------------------------------------

def _python(v):
    if os.path.exists(v):
        return v
    prefix = subprocess.check_output(["pyenv", "prefix", v], universal_newlines=True).strip()
    return os.path.join(prefix, "bin", "python")


def run_file(py, path, root, timeout, k, env):
    """Runs one file's tests in child processes; returns [result dicts]."""
    import select
    results, done, restarts = [], [], 0
    while True:
        cmd = [py, os.path.abspath(__file__), root, "--child", path]
        for t in done:
            cmd += ["--done", t]
        for kk in k or []:
            cmd += ["-k", kk]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=REPO,
                             universal_newlines=True, bufsize=1)
        current, last, tail, ended = None, time.time(), [], False
        while True:
            r, _, _ = select.select([p.stdout], [], [], 1.0)
            if r:
                line = p.stdout.readline()
                if not line:
                    break
                if line.startswith(TAG):
                    ev = json.loads(line[len(TAG):])
                    last = time.time()
                    if ev["event"] == "start":
                        current, tail = ev["test"], []
                    elif ev["event"] == "result":
                        ev["output"] = "".join(tail[-20:])[-2000:]
                        results.append(ev)
                        done.append(ev["test"])
                        current = None
                    elif ev["event"] == "end":
                        ended = True
                else:
                    tail.append(line)
            elif time.time() - last > timeout:
                p.kill()
                break
        p.wait()
        if ended or current is None and not ended and p.returncode == 0:
            return results
        if current is None:  # died between tests or at import
            results.append({"test": "<file>", "outcome": "errored",
                            "reason": "child exited with %s" % p.returncode, "output": "".join(tail[-40:])})
            return results
        why = "timeout after %ds" % timeout if time.time() - last > timeout else "process died (exit %s)" % p.returncode
        results.append({"test": current, "outcome": "errored", "reason": why, "output": "".join(tail[-40:])[-3000:]})
        done.append(current)
        restarts += 1
        if restarts > 50:
            return results


# Causes of a non-passing test, first match wins (what the reason text says, not where it came from).
CLASSES = [
    ("numpy stand-in lacks it", r"numpy stand-in|module 'numpy' has no attribute|'complex' and 'ndarray'"),
    ("timeout / process died", r"^timeout after|^process died|child exited"),
    ("pijit captures where MindSpore breaks", r"break_count expect: (\d+), actual: (?!\1)\d+"),
    ("GRAPH_MODE/fullgraph refusal (CaptureError)", r"CaptureError"),
    ("capture refused where MindSpore captures", r"no graph was captured|was never captured"),
    ("guard / recompile count", r"call_count expect|compile_count expect"),
    ("missing API name", r"cannot import name|has no attribute|No module named|not supported by pijit"),
    ("exception type or text", r"DID NOT RAISE|Regex pattern"),
    ("gradient semantics", r"GradOperation|grad:|sens"),
]


def classify(result):
    import re
    text = result.get("reason", "")
    for name, pattern in CLASSES:
        m = re.search(pattern, text)
        if m and (name != "pijit captures where MindSpore breaks" or int(m.group(1)) > int(
                re.search(r"actual: (\d+)", text).group(1))):
            return name
    if result.get("outcome") == "failed":
        return "wrong value or other assertion"
    return "other exception"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", help="the test tree (e.g. /work/ms_st/tests/st/pi_jit)")
    ap.add_argument("--python", action="append", help="pyenv version or interpreter path (default 3.9 and 3.7)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds a single test may take")
    ap.add_argument("-k", action="append", help="run only tests whose id contains this")
    ap.add_argument("--files", action="append", help="only files whose path contains this")
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("-j", type=int, default=1, help="files run at once")
    ap.add_argument("--pyscripts", default=os.path.join(REPO, "pyscripts"),
                    help="the folder holding the pijit package (default: this checkout's)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--done", action="append", help=argparse.SUPPRESS)
    ap.add_argument("-v", action="store_true", help="print every non-passing test's reason")
    args = ap.parse_args(argv)
    if args.child:
        return child_main(args)
    root = os.path.abspath(args.root)
    files = []
    for d, _, names in os.walk(root):
        for n in sorted(names):
            if n.startswith("test_") and n.endswith(".py"):
                p = os.path.join(d, n)
                if not args.files or any(f in p for f in args.files):
                    files.append(p)
    files.sort()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath(args.pyscripts) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    pythons = args.python or ["3.9", "3.7"]
    report = {}
    grand = {"passed": 0, "failed": 0, "errored": 0, "not_applicable": 0}
    from concurrent.futures import ThreadPoolExecutor
    for pv in pythons:
        py = _python(pv)
        ver = subprocess.check_output([py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                      universal_newlines=True).strip()
        print("== Python %s (%s)" % (ver, py))
        per = report.setdefault(ver, {})
        with ThreadPoolExecutor(max(1, args.j)) as pool:
            futs = [(f, pool.submit(run_file, py, f, root, args.timeout, args.k, env)) for f in files]
            for f, fut in futs:
                res = fut.result()
                rel = os.path.relpath(f, root)
                per[rel] = res
                c = {o: sum(1 for r in res if r["outcome"] == o) for o in grand}
                for o in grand:
                    grand[o] += c[o]
                print("%-70s %3d passed %3d failed %3d errored %3d n/a" % (rel, c["passed"], c["failed"],
                                                                            c["errored"], c["not_applicable"]))
                if args.v:
                    for r in res:
                        if r["outcome"] != "passed":
                            print("    %-9s %s: %s" % (r["outcome"], r["test"], r["reason"].splitlines()[0][:200]
                                                       if r["reason"] else ""))
                sys.stdout.flush()
        folders = {}
        for rel, res in per.items():
            folder = rel.split(os.sep)[0] if os.sep in rel else "."
            fc = folders.setdefault(folder, {o: 0 for o in grand})
            for r in res:
                fc[r["outcome"]] += 1
        print("-- per folder (Python %s)" % ver)
        for folder in sorted(folders):
            fc = folders[folder]
            print("%-28s %4d passed %4d failed %4d errored %4d n/a" % (folder, fc["passed"], fc["failed"],
                                                                      fc["errored"], fc["not_applicable"]))
    classes = {}
    for per in report.values():
        for res in per.values():
            for r in res:
                if r["outcome"] in ("failed", "errored"):
                    r["class"] = classify(r)
                    classes[r["class"]] = classes.get(r["class"], 0) + 1
    if classes:
        print("-- failure classes (all Pythons)")
        for name, n in sorted(classes.items(), key=lambda kv: -kv[1]):
            print("%5d  %s" % (n, name))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
    print("total: %d passed, %d failed, %d errored, %d not applicable"
          % (grand["passed"], grand["failed"], grand["errored"], grand["not_applicable"]))
    print("%d passed, %d failed" % (grand["passed"], grand["failed"] + grand["errored"]))
    return 0 if grand["failed"] + grand["errored"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
