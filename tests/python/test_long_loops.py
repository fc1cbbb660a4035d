"""Loops longer than the capture's loop limit (CaptureOptions::loop_limit, 1024 iterations) inside a
function the jitted one calls: capture breaks at the call (or, inside a loop of the caller, leaves
the caller to the interpreter), the callee is captured on its own when the interpreter calls it,
and its long loop runs each iteration as a captured function (codegen/outline.h). A short loop
is still unrolled into the caller's one graph.

Reference results are computed before anything is jitted: a callee captured on its own stays a
capture candidate wherever it is called."""
import contextlib
import io
import os
import re
import unittest

import pijit as pj
from pijit import nn, ops

from jit_compare import CAPTURE_ON, assert_ran_eagerly, eager, same_bits


def loop_line(fn):
    """The line of fn's first `for` statement."""
    code = fn.__code__
    src = open(code.co_filename).read().splitlines()
    return next(i + 1 for i in range(code.co_firstlineno - 1, len(src)) if src[i].strip().startswith("for "))


@contextlib.contextmanager
def break_log():
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        pj.set_logs("breaks")
        try:
            yield err
        finally:
            pj.set_logs(os.environ.get("PIJIT_LOGS", ""))


def stressed():
    return bool(pj.stress_stats()["level"])


class LongLoopInACallee(unittest.TestCase):
    def test_the_callees_loop_runs_per_iteration_as_graphs(self):
        def helper(x, w, n):
            # four ops an iteration: worth a captured call per iteration (simulator.cc, outlining)
            h = x
            for i in range(n):
                h = ops.tanh(h * w + 0.5) * 0.9 - 0.01
            return h

        def model(x, w, n):
            y = x * 2.0
            y = helper(y, w, n)
            return y + 1.0
        x, w = ops.ones((4,)) * 0.1, ops.ones((4,)) * 0.3
        want = eager(model, x, w, 2000)
        jf = pj.jit(model)
        with break_log() as log:
            got = [jf(x, w, 2000) for _ in range(2)]
        for g in got:
            self.assertTrue(same_bits(g, want))
        if not CAPTURE_ON:  # (no capture: jf ran eagerly, and logged no break)
            assert_ran_eagerly(self, jf)
            return
        text = log.getvalue()
        where = "%s:%d" % (helper.__code__.co_filename, loop_line(helper))
        # the log names the loop and says how it runs
        self.assertIn("the loop at %s runs each iteration as a function" % where, text)
        if stressed():
            return
        st = pj.jit_stats(jf)
        # model: the graph before the call, the call by the interpreter, the graph after it
        self.assertEqual((st["graphs"], st["breaks"], st["loop_bodies"]), (1, 1, 0), st)
        self.assertIn("B013", st["break_reasons"][0])
        self.assertIn("helper() is captured on its own", st["break_reasons"][0])
        self.assertGreaterEqual(st["resume_graphs"], 1, st)
        hs = pj.jit_stats(helper)
        # helper: its loop a function of its own, one graph for every iteration (no recompile)
        self.assertEqual((hs["loop_bodies"], hs["resume_graphs"]), (1, 1), hs)
        self.assertEqual(hs["entries"][0]["loop_body"], where)

    def test_a_loop_of_the_caller_around_the_call_is_not_run_per_iteration(self):
        # One call of helper alone runs past the limit: running model_in_a_loop's loop per
        # iteration would not help (each iteration would run past it again).
        def helper(x, w, n):
            h = x
            for i in range(n):
                h = ops.tanh(h * w + 0.5) * 0.9 - 0.01
            return h

        def model_in_a_loop(x, w, n):
            y = x * 2.0
            for k in range(2):
                y = helper(y, w, n) * 0.5
            return y + 1.0
        x, w = ops.ones((3,)) * 0.2, ops.ones((3,)) * -0.4
        want = eager(model_in_a_loop, x, w, 1500)
        jf = pj.jit(model_in_a_loop)
        for _ in range(2):
            self.assertTrue(same_bits(jf(x, w, 1500), want))
        if not CAPTURE_ON:
            assert_ran_eagerly(self, jf)
            return
        if stressed():
            return
        st = pj.jit_stats(jf)
        self.assertEqual(st["loop_bodies"], 0, st)
        self.assertIn("helper() is captured on its own", st["break_reasons"][0])
        hs = pj.jit_stats(helper)
        self.assertEqual(hs["loop_bodies"], 1, hs)
        self.assertGreaterEqual(hs["resume_graphs"], 1, hs)

    def test_short_callee_loops_over_a_caller_loop_still_outline_the_callers_loop(self):
        # 30 calls of 60 iterations each: no one call runs long, the caller's loop is the long
        # one, and its body (one call) runs per iteration as one graph.
        def helper(x, w, n):
            h = x
            for i in range(n):
                h = ops.tanh(h * w + 0.5) * 0.9 - 0.01
            return h

        def short(x, w):
            for k in range(30):
                x = helper(x, w, 60)
            return x
        x, w = ops.ones((2,)) * 0.3, ops.ones((2,)) * 0.7
        want = eager(short, x, w)
        jf = pj.jit(short)
        self.assertTrue(same_bits(jf(x, w), want))
        if not CAPTURE_ON:
            assert_ran_eagerly(self, jf)
            return
        if stressed():
            return
        st = pj.jit_stats(jf)
        self.assertEqual((st["loop_bodies"], st["resume_graphs"]), (1, 1), st)

    def test_a_short_loop_is_one_graph(self):
        def helper(x, w, n):
            h = x
            for i in range(n):
                h = ops.tanh(h * w + 0.5) * 0.9 - 0.01
            return h

        def short_model(x, w):
            return helper(x * 2.0, w, 100) + 1.0
        x, w = ops.ones((4,)) * 0.1, ops.ones((4,)) * 0.3
        want = eager(short_model, x, w)
        jf = pj.jit(short_model)
        self.assertTrue(same_bits(jf(x, w), want))
        if not CAPTURE_ON:
            assert_ran_eagerly(self, jf)
            return
        if stressed():
            return
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["breaks"], st["loop_bodies"], st["break_reasons"]), (1, 0, 0, []), st)


class LongRNN(unittest.TestCase):
    def test_lstm_over_1500_steps_runs_as_graphs(self):
        net = nn.LSTM(8, 16, num_layers=2)
        x = ops.ones((1500, 2, 8)) * 0.1
        want = eager(net, x)  # before the jit: _direction becomes a capture candidate
        jn = pj.jit(net)
        got = jn(x)
        self.assertTrue(same_bits(got, want))
        if not CAPTURE_ON:
            assert_ran_eagerly(self, jn)
            return
        if stressed():
            return
        st = pj.jit_stats(jn)
        self.assertEqual(st["loop_bodies"], 0, st)  # the layer loop is not run per iteration
        self.assertIn("_direction() is captured on its own", st["break_reasons"][0])
        ds = pj.jit_stats(net._direction)
        self.assertEqual(ds["loop_bodies"], 1, ds)  # the time loop, per step
        self.assertGreater(ds["resume_graphs"], 0, ds)
        # one graph serves every step (the loop walks the steps' tensors, not an index): 4
        # directions x 1500 steps ran through a handful of captures, not one capture a step
        self.assertLessEqual(ds["resume_graphs"], 4, ds)
        self.assertTrue(re.search(r"rnn\.py:\d+$", ds["entries"][0]["loop_body"] or ""), ds["entries"][0])


if __name__ == "__main__":
    unittest.main()
