"""The MindSpore API table (docs/mindspore_api.md, tools/mindspore_api/status.json) against pijit as
it is now: a name recorded as implemented never goes back to missing, and the committed table is
the generator's output (regenerate with tools/mindspore_api/gen_api_table.py --write)."""
import json
import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "mindspore_api"))

import gen_api_table as G  # noqa: E402


def _committed_status():
    with open(G.STATUS) as f:
        return json.load(f)


class ApiTable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.names = G.load_names()
        cls.table = G.classify(cls.names)
        cls.now = G.status_dict(cls.table)

    def test_no_implemented_name_regresses(self):
        lost = []
        for module, states in sorted(_committed_status().items()):
            listed = self.names.get(module, {})
            for name in states.get("implemented", []):
                if name not in listed:
                    continue  # (dropped from names.txt: the staleness test reports it)
                state, detail = self.table[module][name]
                if state != "implemented":
                    lost.append("%s.%s is now %s (%s)" % (module, name, state, detail))
        self.assertEqual(lost, [], "names recorded as implemented in tools/mindspore_api/status.json no "
                         "longer are:\n  " + "\n  ".join(lost))

    def test_committed_table_is_current(self):
        old = _committed_status()
        changes = []
        for module in sorted(set(old) | set(self.now)):
            was = {n: s for s, names in old.get(module, {}).items() for n in names}
            now = {n: s for s, names in self.now.get(module, {}).items() for n in names}
            for name in sorted(set(was) | set(now)):
                if was.get(name) != now.get(name):
                    changes.append("%s.%s: %s -> %s" % (module, name, was.get(name, "(not listed)"),
                                                         now.get(name, "(not listed)")))
        stale = [os.path.relpath(p, ROOT) for p, _, _ in G.stale(self.table)]
        self.assertEqual(stale, [], "the committed API table is stale; run `%s` and commit "
                         "docs/mindspore_api.md, tools/mindspore_api/status.json and untested.txt. What changed:\n  %s"
                         % (G.REGENERATE, "\n  ".join(changes) or "(the rendering only)"))

    def test_names_file_is_sorted_and_unique(self):
        rows = G._rows(G.NAMES, 3)
        keys = [(m, n) for m, n, _ in rows]
        self.assertEqual(keys, sorted(keys))
        self.assertEqual(len(keys), len(set(keys)))
        for _, _, kind in rows:
            self.assertIn(kind, ("function", "class", "primitive", "module", "constant"))

    def test_ignored_names_are_listed_and_explained(self):
        for (module, name), reason in G.load_ignored().items():
            with self.subTest(module=module, name=name):
                self.assertIn(name, self.names.get(module, {}))
                self.assertTrue(reason.strip())

    def test_summary_counts_add_up(self):
        md = G.render_markdown(self.table, self.names)
        total = sum(len(v) for v in self.names.values())
        row = [line for line in md.splitlines() if line.startswith("| **all** |")]
        self.assertEqual(len(row), 1)
        cells = [c.strip() for c in row[0].strip("|").split("|")]
        impl, ign, miss, tot = (int(c) for c in cells[1:5])
        self.assertEqual(impl + ign + miss, tot)
        self.assertEqual(tot, total)


class Placeholders(unittest.TestCase):
    def test_a_function_that_only_raises_is_missing(self):
        def stub(x):
            """Not yet."""
            raise NotImplementedError("stub")

        def real(x):
            if x is None:
                raise NotImplementedError("None")
            return x
        self.assertTrue(G.is_placeholder(stub))
        self.assertFalse(G.is_placeholder(real))

    def test_marked_objects_and_base_call_primitives_are_missing(self):
        from pijit.ops.primitives import Primitive

        class NoCall(Primitive):
            pass

        class WithCall(Primitive):
            def __call__(self, x):
                return x

        class Marked(object):
            __pijit_placeholder__ = True
        self.assertTrue(G.is_placeholder(NoCall))
        self.assertFalse(G.is_placeholder(WithCall))
        self.assertTrue(G.is_placeholder(Marked))
        self.assertFalse(G.is_placeholder(Primitive))

    def test_classify_reports_each_state(self):
        names = {"mindspore.ops": {"Mul": "primitive", "TBERegOp": "class", "NoSuchOp": "primitive"},
                 "mindspore.no_such_module": {"x": "function"}}
        ignored = {("mindspore.ops", "TBERegOp"): "Ascend's kernel compiler"}
        t = G.classify(names, ignored)
        self.assertEqual(t["mindspore.ops"]["Mul"], ("implemented", ""))
        self.assertEqual(t["mindspore.ops"]["TBERegOp"], ("ignored", "Ascend's kernel compiler"))
        self.assertEqual(t["mindspore.ops"]["NoSuchOp"], ("missing", "not defined"))
        state, detail = t["mindspore.no_such_module"]["x"]
        self.assertEqual(state, "missing")
        self.assertIn("module does not import", detail)


if __name__ == "__main__":
    unittest.main()
