"""Break reasons as records (STYLE.md 17): what a user relies on is that jit_stats(f)["break_records"],
capture_summary rows, pijit.explain's Break and the dump's run.json breaks carry each break's id,
name, message, file, line, function, inline chain and kind as fields that capture made, exactly,
even where the message or the file name holds colons (nothing parses the text back); a run-time
refusal (the recompile limit) is a record of kind "runtime" with no place."""
import importlib.util
import logging
import os
import shutil
import tempfile
import unittest

import pijit as pj
from pijit import _C, dump, ops
from jit_compare import CAPTURE_OFF_WHY, CAPTURE_ON

SETS_ATTR = '''import pijit
from pijit import ops


def sets_attr(x):
    y = ops.relu(x * 2)
    setattr(y, "a: b: c", 1)  # a side effect (B005): a graph break here
    return y + 1


def reads_attr(x, bad):
    y = ops.relu(x * 2)
    if bad:
        y = getattr(y, "no: such: attr")  # raises AttributeError (B007)
    return y
'''

DESCR_B005 = "changes state outside the function (attribute, global, input container)"
DESCR_B007 = "raises an exception"
DESCR_B002 = "reads the data of a tensor (bool(), float(), item(), print, numpy)"


def inner(y):
    return y * float(y.sum())  # reads a value before any op: the frame is refused


def middle(y):
    return inner(y) - 1


def outer(x):
    return middle(x)


def checks(y):
    if y.shape[0] > 1:
        raise ValueError("too long: %d" % y.shape[0])  # no simulated handler catches it
    return y


def calls_checks(x):
    y = ops.relu(x * 2)
    return checks(y) + 1


def adds(x, k):
    return x + k


_tmp = []


def setUpModule():
    _tmp.append(tempfile.mkdtemp())
    path = os.path.join(_tmp[0], "mod:breaks.py")  # a file name with a colon
    with open(path, "w") as f:
        f.write(SETS_ATTR)
    spec = importlib.util.spec_from_file_location("mod_breaks", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _tmp.append(mod)


def tearDownModule():
    shutil.rmtree(_tmp[0], ignore_errors=True)


def module():
    return _tmp[1]


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class BreakRecords(unittest.TestCase):
    def assertSameAsStats(self, fn):
        """jit_stats' records, capture_summary's and the text lists agree, one record per text."""
        st = pj.jit_stats(fn)
        self.assertEqual([r["text"] for r in st["break_records"]], st["break_reasons"])
        row = [r for r in _C.capture_summary([fn.__code__]) if r["code"] is fn.__code__][0]
        self.assertEqual(row["break_records"], st["break_records"])
        self.assertEqual([r["chain"] for r in row["break_records"]], row["break_chains"])
        for r in st["break_records"]:
            self.assertEqual(set(r), {"id", "name", "message", "detail", "file", "line", "function", "chain",
                                      "frames", "kind", "text"})
            self.assertEqual(r["chain"], " -> ".join("%s (%s:%d)" % tuple(f) for f in r["frames"]))
        return st["break_records"]

    def test_a_message_and_a_file_name_with_colons_keep_their_fields(self):
        fn = module().sets_attr
        pj.reset(fn)
        report = pj.explain(fn)(pj.Tensor([1.0, 2.0]))
        self.assertEqual(report.outputs[0].tolist(), [3.0, 5.0])
        self.assertEqual(len(report.breaks), 1, str(report))
        b = report.breaks[0]
        path = os.path.join(_tmp[0], "mod:breaks.py")
        line = fn.__code__.co_firstlineno + 2
        detail = "assigns attribute 'a: b: c' of a Tensor"
        self.assertEqual((b.id, b.name, b.kind), ("B005", "SideEffect", "break"))
        self.assertEqual((b.file, b.line, b.function), (path, line, "sets_attr"))
        self.assertEqual(b.detail, detail)
        self.assertEqual(b.message, DESCR_B005 + ": " + detail)
        self.assertEqual(b.chain, [])
        self.assertEqual(b.text, "B005 SideEffect at %s:%d in sets_attr: %s: %s" % (path, line, DESCR_B005, detail))
        self.assertEqual((str(b), repr(b)), (b.text, "Break(%r)" % b.text))
        records = self.assertSameAsStats(fn)
        self.assertEqual(records, [{"id": "B005", "name": "SideEffect", "message": b.message, "detail": detail,
                                    "file": path, "line": line, "function": "sets_attr", "chain": "", "frames": [],
                                    "kind": "break", "text": b.text}])

    def test_an_exception_message_with_colons_keeps_its_fields(self):
        fn = module().reads_attr
        pj.reset(fn)
        ex = pj.explain(fn)
        x = pj.Tensor([1.0])
        ex(x, False)  # captured whole
        with self.assertRaisesRegex(AttributeError, "has no attribute 'no: such: attr'"):
            ex(x, True)  # a new guard set: captured with a break where it raises
        report = ex(x, False)
        self.assertEqual(len(report.breaks), 1, str(report))
        b = report.breaks[0]
        path = os.path.join(_tmp[0], "mod:breaks.py")
        self.assertEqual((b.id, b.name, b.kind), ("B007", "Raises", "break"))
        self.assertEqual((b.file, b.line, b.function), (path, fn.__code__.co_firstlineno + 3, "reads_attr"))
        detail = "AttributeError: 'Tensor' object has no attribute 'no: such: attr' (in reading .no: such: attr)"
        self.assertEqual(b.detail, detail)
        self.assertEqual(b.message, DESCR_B007 + ": " + detail)
        self.assertSameAsStats(fn)

    def test_a_refusal_inside_inlined_code_has_its_chain(self):
        pj.reset(outer)
        report = pj.explain(outer)(pj.Tensor([1.0, 2.0]))
        self.assertEqual(report.outputs[0].tolist(), [2.0, 5.0])
        b = [f for f in report.functions if f.function == "outer"][0].breaks[0]
        here = __file__.replace(".pyc", ".py")
        line = inner.__code__.co_firstlineno + 1
        self.assertEqual((b.id, b.name, b.kind), ("B002", "DataDependent", "refusal"))
        self.assertEqual((b.file, b.line, b.function), (here, line, "inner"))
        self.assertEqual(b.message, DESCR_B002 + ": " + b.detail)
        self.assertIn("float()", b.detail)
        chain = ["outer (%s:%d)" % (here, outer.__code__.co_firstlineno + 1),
                 "middle (%s:%d)" % (here, middle.__code__.co_firstlineno + 1),
                 "inner (%s:%d)" % (here, line)]
        self.assertEqual(b.chain, chain)
        self.assertEqual(b.frames, [("outer", here, outer.__code__.co_firstlineno + 1),
                                    ("middle", here, middle.__code__.co_firstlineno + 1), ("inner", here, line)])
        records = self.assertSameAsStats(outer)
        self.assertEqual(records[0]["chain"], " -> ".join(chain))

    def test_an_exception_leaving_the_function_is_placed_where_it_was_raised(self):
        pj.reset(calls_checks)
        ex = pj.explain(calls_checks)
        with self.assertRaisesRegex(ValueError, "too long: 2"):
            ex(pj.Tensor([1.0, 2.0]))
        report = ex(pj.Tensor([1.0]))
        self.assertEqual(report.outputs[-1].tolist(), [3.0])
        breaks = [f for f in report.functions if f.function == "calls_checks"][0].breaks
        self.assertEqual(len(breaks), 1, str(report))
        b = breaks[0]
        here = __file__.replace(".pyc", ".py")
        line = checks.__code__.co_firstlineno + 2  # the raise, not either def line
        self.assertEqual((b.id, b.name, b.file, b.line, b.function), ("B007", "Raises", here, line, "checks"))
        self.assertEqual(b.detail, "ValueError: too long: 2")
        self.assertEqual(b.chain, ["calls_checks (%s:%d)" % (here, calls_checks.__code__.co_firstlineno + 2),
                                   "checks (%s:%d)" % (here, line)])
        self.assertSameAsStats(calls_checks)

    def test_capture_error_carries_the_record(self):
        def reads(x):
            return x * float(x.sum())  # B002, before any op

        jf = pj.jit(reads, fullgraph=True)
        for attempt in range(2):  # the capture's refusal, then the cache's refused entry
            with self.assertRaises(pj.CaptureError) as cm:
                jf(pj.Tensor([1.0, 2.0]))
            e = cm.exception
            self.assertIs(e.code, reads.__code__)
            self.assertEqual(e.reason_id, "B002")
            here = __file__.replace(".pyc", ".py")
            r = e.record
            self.assertEqual((r["id"], r["name"], r["kind"], r["file"], r["line"], r["function"]),
                             ("B002", "DataDependent", "refusal", here, reads.__code__.co_firstlineno + 1, "reads"))
            self.assertIn(r["text"], str(e))
            self.assertTrue(str(e).startswith("pijit cannot capture reads (%s:%d) as one graph"
                                              % (here, reads.__code__.co_firstlineno)), str(e))

    def test_the_recompile_limit_is_a_runtime_record_with_no_place(self):
        jf = pj.jit(adds, recompile_limit=2, dynamic=0)  # dynamic=0: each k a guarded constant
        pj.reset(jf)
        ex = pj.explain(jf)
        with self.assertLogs("pijit", logging.WARNING):
            for k in range(12):  # every call a new constant: every call misses
                report = ex(pj.ones((1,)), k)
                self.assertEqual(report.outputs[-1].tolist(), [1.0 + k])
        self.assertEqual(pj.jit_stats(jf)["mode"], "skip")
        runtime = [b for b in report.breaks if b.kind == "runtime"]
        self.assertEqual(len(runtime), 1, str(report))
        b = runtime[0]
        self.assertEqual((b.id, b.name), ("B020", "RecompileLimit"))
        self.assertEqual((b.file, b.line, b.function, b.chain), (None, None, None, []))
        self.assertEqual(b.message, b.text)
        self.assertIn("missed its cache 8 calls in a row (recompile_limit=2)", b.message)
        self.assertIn("k: 7 -> 8", b.message)
        records = self.assertSameAsStats(adds)
        self.assertEqual([r for r in records if r["kind"] == "runtime"][0]["line"], None)
        # the dump's run.json rows carry the same fields
        rows = [r for r in dump.run_summary()["functions"] if r["function"] == "adds"]
        self.assertEqual(len(rows), 1)
        got = [d for r in rows for d in r["breaks"] if d["kind"] == "runtime"][0]
        self.assertEqual((got["id"], got["name"], got["file"], got["line"], got["text"]),
                         ("B020", "RecompileLimit", None, None, b.text))

    def test_the_dump_reads_the_records(self):
        fn = module().sets_attr
        pj.reset(fn)
        pj.explain(fn)(pj.Tensor([1.0]))
        rows = [r for r in dump.run_summary()["functions"] if r["function"] == "sets_attr" and r["kind"] == "function"]
        self.assertEqual(len(rows), 1)
        b = rows[0]["breaks"][0]
        path = os.path.join(_tmp[0], "mod:breaks.py")
        self.assertEqual((b["id"], b["name"], b["file"], b["line"], b["function"], b["kind"], b["chain"]),
                         ("B005", "SideEffect", path, fn.__code__.co_firstlineno + 2, "sets_attr", "break", []))
        self.assertEqual(b["message"], DESCR_B005 + ": assigns attribute 'a: b: c' of a Tensor")


if __name__ == "__main__":
    unittest.main()
