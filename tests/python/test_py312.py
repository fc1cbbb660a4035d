"""Python 3.12, before capture runs there: pijit imports, its tensors and ops work, pj.jit calls the
function unchanged (no frame-evaluation hook is installed, so the interpreter runs every frame,
sys.monitoring included), the capture entry points say why they refuse, and the opcode table and
decoder read 3.12's bytecode (test_opcodes checks them against dis). Skips elsewhere."""
import sys
import unittest

import pijit as pj
from pijit import _C, ops

PY312 = sys.version_info[:2] == (3, 12)


def body(x, n):
    y = x * 2
    for i in range(n):  # a loop (JUMP_BACKWARD, END_FOR), a comprehension (PEP 709 inlines it)
        y = y + i
    return y, [k * k for k in range(n)], x.shape


@unittest.skipUnless(PY312, "3.12's own behaviour (capture off there)")
class Py312RunsEagerly(unittest.TestCase):
    def test_jit_calls_the_function_unchanged(self):
        jf = pj.jit(body)
        x = pj.Tensor([[1.0, 2.0], [3.0, 4.0]])
        got, want = jf(x, 3), body(x, 3)
        self.assertEqual(got[0].tolist(), want[0].tolist())
        self.assertEqual(got[1:], want[1:])
        st = pj.jit_stats(jf)
        self.assertEqual((st["mode"], st["graphs"], st["frames_rewritten"]), ("never", 0, 0))

    def test_capture_entry_points_say_why(self):
        with self.assertRaises(NotImplementedError) as cm:
            _C._simulated_opcodes()
        self.assertIn("pijit captures on Python 3.7-3.11", str(cm.exception))

    def test_export_refuses_naming_why(self):
        # (export needs the network captured as one graph: test_export's round trips skip here)
        import os
        import tempfile
        from pijit import nn
        with self.assertRaises(NotImplementedError) as cm:
            pj.export(nn.Dense(3, 2), ops.ones((1, 3)), file_name=os.path.join(tempfile.gettempdir(), "pijit_py312_m"))  # (nothing is written)
        self.assertIn("capture did not run for this call on Python 3.12", str(cm.exception))

    def test_sys_monitoring_sees_every_call_of_a_jitted_function(self):
        mon = sys.monitoring
        tool = mon.PROFILER_ID
        mon.use_tool_id(tool, "pijit-test")
        seen = []
        try:
            mon.register_callback(tool, mon.events.PY_START, lambda code, offset: seen.append(code.co_name))
            mon.set_events(tool, mon.events.PY_START)
            jf = pj.jit(body)
            x = ops.ones((2, 2))
            for n in range(3):
                jf(x, n)
        finally:
            mon.set_events(tool, 0)
            mon.register_callback(tool, mon.events.PY_START, None)
            mon.free_tool_id(tool)
        self.assertEqual(seen.count("body"), 3)

    def test_recursion_through_jit_stops_at_the_c_recursion_limit_cleanly(self):
        # Each level enters pj.jit's C wrapper and a new C-level interpreter loop, which 3.12
        # caps (C_RECURSION_LIMIT) whatever sys.setrecursionlimit says, as it does for any
        # C-implemented wrapper (functools.partial): a RecursionError, never a crash. Capture on
        # 3.12 will run such frames in the caller's loop, as on 3.7-3.11 (test_limits.Depth).
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(20000)
        try:
            def r(k, n):
                return k if k >= n else jr(k + 1, n)
            jr = pj.jit(r)
            self.assertEqual(jr(0, 300), 300)
            with self.assertRaises(RecursionError):
                jr(0, 8000)
            self.assertEqual(jr(0, 300), 300)  # (and it works again afterwards)
        finally:
            sys.setrecursionlimit(old)

    def test_the_decoder_reads_inlined_comprehensions_and_new_opcodes(self):
        names = [row[1] for row in _C._decode(body.__code__)]
        for op in ("LOAD_FAST_AND_CLEAR", "END_FOR", "RETURN_VALUE", "CALL"):
            self.assertIn(op, names)


if __name__ == "__main__":
    unittest.main()
