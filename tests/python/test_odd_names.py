"""Names that are not UTF-8 (issue 41). A directory name holding a byte that is not UTF-8 reaches
Python as a str with a lone surrogate (os.fsdecode: b'\\xff' -> '\\udcff'), and so do the
co_filename of every function imported from it, and any attribute, global or keyword name a
program makes with setattr or globals(). What a user relies on: jitted code from such a module,
and code that uses such names, captures and computes as plain Python does; jit_stats, explain,
the logs, the dumps, the summary and the report show the name escaped ('\\udcff'); a string
where a Python exception is the right answer raises one. Each run is a subprocess, so a crash
fails the test instead of taking the suite down."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import pijit as pj
from pijit import _C
from jit_compare import CAPTURE_OFF_WHY, CAPTURE_ON

HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "pyscripts")
ODD = b"odd\xffdir"          # not UTF-8: reaches Python as 'odd\udcffdir'
SHOWN = "odd\\udcffdir"      # how pijit's text shows it

# The module that lives in the odd directory. Names ODD_* are renamed in the code objects to
# names with lone surrogates (no source can spell them); '\\\\udcff' (a backslash, then 'udcff')
# is an ordinary name that reads like the escaped '\\udcff', so the two must stay apart.
MODULE = textwrap.dedent('''\
    import types

    import pijit as pj
    from pijit import nn, ops


    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(4, 2)

        def construct(self, x):
            return ops.relu(self.fc(x)) * 2


    def f(x):
        return ops.relu(x * 2) + 1


    def breaking(x):
        y = x * 2
        print("value", float(y.sum()))  # reads a tensor's value: a graph break
        return y + 1


    class Box(object):
        pass


    box = Box()
    setattr(box, "\\udcff", pj.Tensor([1.0, 2.0]))
    twins = Box()
    globals()["\\udcff"] = pj.Tensor([3.0, 5.0])


    def attrs(x):
        box.ODD_OUT = x * 3
        return x * box.ODD_IN + box.ODD_OUT


    def globs(x):
        global ODD_G_OUT
        ODD_G_OUT = x + 1
        return x * ODD_G_IN + ODD_G_OUT


    def twin_attrs(x):  # '\\udcff' and '\\\\udcff' are two attributes
        twins.ODD_A = x + 1
        twins.ODD_B = x + 2
        return twins.ODD_A * 10 + twins.ODD_B


    def twin_globs(x):
        global ODD_A, ODD_B
        ODD_A = x + 1
        ODD_B = x + 2
        return ODD_A * 10 + ODD_B


    def _kw_target(a, **kw):
        return a + kw["\\udcff"] * 2


    def keywords(x):
        return _kw_target(x, **{"\\udcff": x * 2})


    _NAMES = {"ODD_IN": "\\udcff", "ODD_OUT": "\\udcfe", "ODD_G_IN": "\\udcff", "ODD_G_OUT": "\\udcfe",
              "ODD_A": "\\udcff", "ODD_B": "\\\\udcff"}


    def _renamed(fn, name):
        co = fn.__code__
        names = tuple(_NAMES.get(n, n) for n in co.co_names)
        if hasattr(co, "replace"):
            co = co.replace(co_names=names, co_name=name)
        else:  # 3.7
            co = types.CodeType(co.co_argcount, co.co_kwonlyargcount, co.co_nlocals, co.co_stacksize,
                                co.co_flags, co.co_code, co.co_consts, names, co.co_varnames,
                                co.co_filename, name, co.co_firstlineno, co.co_lnotab, co.co_freevars,
                                co.co_cellvars)
        return types.FunctionType(co, globals(), name)


    # (function names with a lone surrogate too: they show in every log and report)
    attrs = _renamed(attrs, "attrs\\udcff")
    globs = _renamed(globs, "globs\\udcff")
    twin_attrs = _renamed(twin_attrs, "twin_attrs")
    twin_globs = _renamed(twin_globs, "twin_globs")
''')

# Run in the child: every function jitted and called three times against its plain run; the
# stats and texts come back as JSON (ASCII: json escapes the surrogates).
DRIVER = textwrap.dedent('''\
    import json
    import os
    import sys

    sys.path.insert(0, os.fsdecode(bytes.fromhex(sys.argv[1])))
    import pijit as pj
    import oddmod
    CAPTURE_OFF = sys.argv[2:] == ["capture-off"]

    def eager(fn, *args):
        if CAPTURE_OFF:  # (no stress mode to switch off: set_stress raises there)
            return fn(*args)
        level = pj.stress_stats()["level"]
        pj.set_stress(0)
        try:
            return fn(*args)
        finally:
            pj.set_stress(level)

    out = {"file": oddmod.__file__}
    net = oddmod.Net()
    cases = [("f", oddmod.f), ("breaking", oddmod.breaking), ("net", net), ("attrs", oddmod.attrs),
             ("globs", oddmod.globs), ("twin_attrs", oddmod.twin_attrs), ("twin_globs", oddmod.twin_globs),
             ("keywords", oddmod.keywords)]
    for name, fn in cases:
        jf = pj.jit(fn)
        got, want = [], []
        for k in range(3):
            x = pj.Tensor([1.0 + k, -2.0, 0.5, 3.0]) if name == "net" else pj.Tensor([1.0 + k, -2.0])
            want.append(eager(fn, x).tolist())
            got.append(jf(x).tolist())
        st = pj.jit_stats(jf)
        out[name] = {"got": got, "want": want, "graphs": st["graphs"], "breaks": st["breaks"],
                     "break_reasons": list(st["break_reasons"]), "compiles": st["compiles"],
                     "guards": [g for e in st["entries"] for g in e["guards"]]}
    out["explain"] = str(pj.explain(oddmod.breaking)(pj.Tensor([1.0, 2.0])))
    st = pj.stress_stats()
    out["stress"] = [st["level"], st["frames_rewritten"]]
    print(json.dumps(out))
''')

SCRIPT = textwrap.dedent('''\
    import pijit as pj
    from pijit import ops


    def step(x):
        return ops.relu(x * 2) - 1


    for k in range(3):
        print(step(pj.Tensor([1.0 + k, -2.0])).tolist())
''')


def run(args, env=None, no_stress=False):
    e = dict(os.environ, PYTHONPATH=PYSCRIPTS)
    if no_stress:
        e.pop("PIJIT_STRESS", None)  # what `pijit run` itself captures: the summary counts exactly that
    e.update(env or {})
    p = subprocess.run([sys.executable] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, timeout=300)
    return p.returncode, p.stdout.decode("utf-8", "backslashreplace"), p.stderr.decode("utf-8", "backslashreplace")


@unittest.skipUnless(sys.platform.startswith("linux"), "a file name that is not UTF-8 is a POSIX byte path")
class OddDirectory(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="pijit-odd-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.odd = os.path.join(os.fsencode(self.tmp), ODD)
        os.mkdir(self.odd)
        with open(os.path.join(self.odd, b"oddmod.py"), "w") as f:
            f.write(MODULE)
        self.driver = os.path.join(self.tmp, "driver.py")
        with open(self.driver, "w") as f:
            f.write(DRIVER)

    def drive(self, env=None, no_stress=False):
        rc, out, err = run([self.driver, self.odd.hex()] + ([] if CAPTURE_ON else ["capture-off"]), env, no_stress)
        self.assertEqual(rc, 0, err[-3000:])
        return json.loads(out.strip().splitlines()[-1]), err

    def check_results(self, r):
        self.assertEqual(r["file"], os.fsdecode(os.path.join(self.odd, b"oddmod.py")))
        self.assertIn("\udcff", r["file"])
        for name in ("f", "breaking", "net", "attrs", "globs", "twin_attrs", "twin_globs", "keywords"):
            self.assertEqual(r[name]["got"], r[name]["want"], name)
        # the names really are two: a lone surrogate and its escaped look-alike
        self.assertEqual(r["twin_attrs"]["want"][0], [23.0, -10.0])
        self.assertEqual(r["twin_globs"]["want"][0], [23.0, -10.0])
        if not CAPTURE_ON:  # (no capture: every function ran eagerly)
            for name in ("f", "breaking", "net", "attrs", "globs", "twin_attrs", "twin_globs", "keywords"):
                self.assertEqual((r[name]["compiles"], r[name]["graphs"], r[name]["break_reasons"]), (0, 0, []), name)
            return
        # captured, not refused: the counts a silent fallback would not reach
        self.assertEqual(r["f"]["graphs"], 1, r["f"])
        self.assertEqual(r["net"]["graphs"], 1, r["net"])
        self.assertEqual((r["breaking"]["graphs"], r["breaking"]["breaks"]), (1, 1), r["breaking"])
        for name in ("attrs", "globs", "twin_attrs", "twin_globs", "keywords"):
            self.assertEqual(r[name]["graphs"], 1, (name, r[name]))
            self.assertEqual(r[name]["breaks"], 0, (name, r[name]))
        # the break names the file, escaped
        (reason,) = r["breaking"]["break_reasons"]
        self.assertTrue(reason.startswith("B002 DataDependent at "), reason)
        self.assertIn(SHOWN + "/oddmod.py:22 in breaking", reason)
        # a guard on an odd attribute name shows it escaped
        self.assertTrue(any("box.\\udcff" in g for g in r["attrs"]["guards"]), r["attrs"]["guards"])
        self.assertIn(SHOWN + "/oddmod.py:", r["explain"])
        self.assertIn("function breaking (", r["explain"])
        self.assertIn("1 break(s)", r["explain"])

    def test_jitted_code_from_an_odd_directory(self):
        r, _ = self.drive()
        self.check_results(r)
        level = {"": 0, "0": 0, "1": 1}.get(os.environ.get("PIJIT_STRESS", ""), 2)
        self.assertEqual(r["stress"][0], level)  # under PIJIT_STRESS the child captured every frame too
        if level:
            self.assertGreater(r["stress"][1], 100)

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (what capture logs, dumps and traces)
    def test_logs_dumps_and_trace(self):
        # (without stress: under it every standard library frame is logged and dumped, 90 s on two
        # cores; the test above runs the same module under stress)
        dump = os.path.join(os.fsencode(self.tmp), b"dump\xfe")
        trace = os.path.join(self.odd, b"trace.json")
        r, err = self.drive(no_stress=True, env={"PIJIT_LOGS": "breaks,guards,recompiles,bytecode", "PIJIT_DUMP_DIR": os.fsdecode(dump),
                             "PIJIT_TRACE": os.fsdecode(trace)})
        self.check_results(r)
        where = os.path.join(self.tmp, SHOWN, "oddmod.py")
        self.assertIn("[pijit breaks] graph break: B002 DataDependent at %s:22 in breaking" % where, err)
        self.assertIn("[pijit bytecode] rewritten attrs\\udcff (%s:36)" % where, err)
        self.assertIn("LOAD_ATTR                2 (\\udcff)", err)
        self.assertIn("[pijit guards] installed for attrs\\udcff (%s:36):" % where, err)
        for bad in ("UnicodeEncodeError", "UnicodeDecodeError", "Traceback", "dump: cannot write"):
            self.assertNotIn(bad, err)
        self.assertTrue(os.path.isfile(trace))
        with open(os.path.join(dump, b"run.json")) as f:
            run_json = json.load(f)
        fns = {f["function"]: f for f in run_json["functions"]}
        self.assertEqual(fns["breaking"]["file"], os.path.join(self.tmp, SHOWN, "oddmod.py"))
        self.assertEqual(fns["attrs\\udcff"]["graphs"], 1)
        folders = [n for n in os.listdir(dump) if os.path.isdir(os.path.join(dump, n))]
        self.assertTrue(any(n.endswith(b"_attrs_udcff_oddmod_%d" % fns["attrs\\udcff"]["line"]) for n in folders),
                        folders)

    def test_pijit_run_of_a_script_in_an_odd_directory(self):
        script = os.path.join(self.odd, b"oddscript.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        want = "[1.0, -1.0]\n[3.0, -1.0]\n[5.0, -1.0]\n"
        rc, out, err = run(["-m", "pijit", "run", "--summary", os.fsdecode(script)], no_stress=True)
        self.assertEqual((rc, out), (0, want), err)
        if CAPTURE_ON:
            self.assertIn("pijit summary: 1 functions captured", err)
            self.assertIn("step (oddscript.py:5): 1 graphs, 0 breaks", err)
        else:  # (step ran eagerly)
            self.assertIn("pijit summary: 0 functions captured", err)
        rc, out, err = run(["-m", "pijit", "explain", os.fsdecode(script)], no_stress=True)
        self.assertEqual((rc, out), (0, want), err)
        if CAPTURE_ON:
            self.assertIn("function step (%s/oddscript.py:5): 1 graph(s)" % os.path.join(self.tmp, SHOWN), err)
        page = os.path.join(self.tmp, "report.html")
        rc, out, err = run(["-m", "pijit", "run", "--report", page, os.fsdecode(script)], no_stress=True)
        self.assertEqual((rc, out), (0, want), err)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertIn("<code>%s/oddscript.py</code>" % os.path.join(self.tmp, SHOWN), html)
        self.assertNotIn("source file missing", html)  # the source is read from the file itself
        if CAPTURE_ON:
            self.assertIn('<div class="line captured" data-line="6"><span class="ln">6</span><code>    return ops.relu', html)


class OddStrings(unittest.TestCase):
    """Strings the C++ side is handed directly: an exception where one is right, never a crash."""

    def test_log_categories(self):
        with self.assertRaisesRegex(ValueError, "unknown log category"):
            pj.set_logs("breaks,\udcff")
        with self.assertRaisesRegex(ValueError, r"set_jit_config: log holds a character that is not valid text: "
                                                r"'breaks,\\udcff'"):
            _C.set_jit_config(log="breaks,\udcff")

    @unittest.skipUnless(sys.platform.startswith("linux"), "a file name that is not UTF-8 is a POSIX byte path")
    def test_trace_path_is_a_file_system_path(self):
        tmp = tempfile.mkdtemp(prefix="pijit-odd-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(os.fsencode(tmp), b"trace\xff.json")
        self.assertGreaterEqual(_C.trace_write(os.fsdecode(path)), 0)
        self.assertTrue(os.path.isfile(path))
        with self.assertRaisesRegex(OSError, r"cannot open .*missing\\xff/t.json"):
            _C.trace_write(os.fsdecode(os.path.join(os.fsencode(tmp), b"missing\xff/t.json")))
        with self.assertRaisesRegex(ValueError, "embedded null"):
            _C.trace_write(tmp + "/a\0b")

    def test_op_attribute_names(self):
        x = pj.Tensor([1.0, 2.0])
        with self.assertRaisesRegex(TypeError, "op attrs: names must be str, not int"):
            _C.op("full_like", (x,), {1: 2.0})
        with self.assertRaises((TypeError, ValueError)):
            _C.op("full_like", (x,), {"value": 1.0, "dtype": "float\udcff"})


if __name__ == "__main__":
    unittest.main()
