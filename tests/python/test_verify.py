"""Verify mode (issue 45): pj.jit(fn, verify=N) / PIJIT_VERIFY=N runs every Nth call captured and
plain from one state and compares them. What a user relies on: a wrong jitted result is reported
with the function, the call, where it differs, and the graph and guards that ran; a correct
program behaves exactly as without verify (its effects happen once, its output is printed once,
the program goes on from plain Python's state); exceptions are the plain call's; bad settings
are refused with a clear error."""
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

import pijit as pj
from pijit import nn, ops
from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY

HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "pyscripts")

COUNTER = [0]
LOCK = threading.Lock()


def run_program(text, *run, **env):
    """The program in a subprocess; `run`: under `python -m pijit run` with these options."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "prog.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        full = dict(os.environ, PYTHONPATH=PYSCRIPTS, **env)
        for k in ("PIJIT_STRESS", "PIJIT_LOGS", "PIJIT_VERIFY", "PIJIT_TEST_ONLY_WRONG_RESULTS"):
            if k not in env:
                full.pop(k, None)
        cmd = [sys.executable] + (["-m", "pijit", "run"] + list(run) if run else []) + [path]
        return subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=300, cwd=tmp)


SCRIPT = """\
    import mindspore as ms
    from mindspore import nn, ops

    ms.set_seed(3)
    net = nn.Dense(3, 2)
    hist = []

    def step(x, scale=2.0):
        y = ops.relu(net(x)) * scale
        hist.append(len(hist))
        return y.sum()

    def helper(a, *rest, k=1, **kw):
        return a * k + sum(rest) + len(kw)

    for i in range(3):
        print(round(float(step(ops.ones((4, 3), ms.float32))), 4), hist, helper(ms.Tensor([1.0]), 1, 2, k=3, z=1))
    """


PROGRAM = """\
    import pijit as pj
    from pijit import nn, ops

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(3, 2)

        def construct(self, x):
            return ops.relu(self.fc(x)).sum()

    def scaled(x, lst):
        lst.append(len(lst))
        return x * 2 + 1

    pj.set_seed(1)
    net = pj.jit(Net())
    f = pj.jit(scaled)
    L = []
    for i in range(3):
        print(round(float(net(pj.ones((4, 3)))), 4), f(pj.ones((2,)), L).tolist(), L)
    """


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class FindsWrongResults(unittest.TestCase):
    def test_an_injected_wrong_result_is_reported_with_its_graph_and_guards(self):
        r = run_program(PROGRAM, PIJIT_VERIFY="1", PIJIT_TEST_ONLY_WRONG_RESULTS="__main__:scaled")
        self.assertEqual(r.returncode, 1)
        self.assertIn("pijit._verify.VerifyError: pijit verify: scaled (", r.stderr)
        self.assertIn("prog.py:12), call 1: the jitted call differs from plain Python at the result: "
                      "element 0 is 4.0 jitted, 3.0 plain (Float32)", r.stderr)
        self.assertIn("the entry that ran: its graph\ngraph(%0: Float32[2] x) {", r.stderr)
        self.assertIn("its guards:\n  ", r.stderr)
        self.assertIn("len(lst) == 0", r.stderr)

    def test_a_wrong_cell_result_is_found_on_the_nth_call(self):
        r = run_program(PROGRAM, PIJIT_VERIFY="2", PIJIT_TEST_ONLY_WRONG_RESULTS="__main__:construct")
        self.assertEqual(r.returncode, 1)
        self.assertIn("pijit verify: construct (", r.stderr)
        self.assertIn("call 2: the jitted call differs from plain Python at the result: element 0 is", r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 1)  # the first call was not verified

    def test_a_correct_program_prints_and_changes_exactly_what_it_does_without_verify(self):
        plain = run_program(PROGRAM)
        self.assertEqual(plain.returncode, 0, plain.stderr)
        for every in ("1", "2"):
            r = run_program(PROGRAM, PIJIT_VERIFY=every)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, plain.stdout)


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class RunVerify(unittest.TestCase):
    """python -m pijit run --verify: the script's functions, which no pj.jit wraps."""

    def test_a_correct_script_runs_as_without_verify(self):
        plain = run_program(SCRIPT, "--no-capture")
        self.assertEqual(plain.returncode, 0, plain.stderr)
        for opts in (["--verify"], ["--verify", "2"], ["--verify=3"]):
            r = run_program(SCRIPT, *opts)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, plain.stdout, opts)

    def test_a_wrong_result_stops_the_script_naming_the_function_and_call(self):
        r = run_program(SCRIPT, "--verify", "2", PIJIT_TEST_ONLY_WRONG_RESULTS="__main__:step")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stdout.splitlines()), 1)  # call 1 was not verified, call 2 was
        self.assertRegex(r.stderr, r"VerifyError: pijit verify: step \(.*prog.py:8\), call 2: the jitted call differs "
                                   r"from plain Python at the result: element 0 is [\d.]+ jitted, [\d.]+ plain")
        self.assertIn("net._params['weight']: Parameter Float32[2, 3]", r.stderr)  # a guard of the entry

    def test_a_bad_number_is_refused(self):
        r = run_program(SCRIPT, "--verify=-2")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--verify takes a number of calls >= 0 (every Nth call is verified; 0: off)", r.stderr)


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class KeepsPlainBehaviour(unittest.TestCase):
    def test_effects_happen_once_and_state_goes_on_from_the_plain_run(self):
        printed = []

        class Counter(nn.Cell):
            def __init__(self):
                super().__init__()
                self.w = pj.Parameter(pj.Tensor([1.0, 2.0]), name="w")
                self.steps = 0

            def construct(self, x):
                self.steps += 1
                COUNTER[0] += 1
                printed.append(self.steps)
                ops.assign(self.w, self.w * 2)
                return (x * self.w).sum()
        COUNTER[0] = 0
        c = Counter()
        f = pj.jit(c, verify=1)
        outs = [float(f(pj.Tensor([1.0, 1.0]))) for _ in range(3)]
        self.assertEqual(outs, [6.0, 12.0, 24.0])
        self.assertEqual(c.w.tolist(), [8.0, 16.0])
        self.assertEqual((c.steps, COUNTER[0], printed), (3, 3, [1, 2, 3]))
        self.assertEqual(f.verify, 1)

    def test_random_draws_are_the_same_in_both_runs(self):
        drop = nn.Dropout(p=0.5)
        drop.set_train(True)

        def noisy(x):
            return drop(x) * 2
        pj.set_seed(5)
        want = [noisy(pj.ones((64,))).tolist() for _ in range(2)]
        pj.set_seed(5)
        f = pj.jit(noisy, verify=1)
        self.assertEqual([f(pj.ones((64,))).tolist() for _ in range(2)], want)

    def test_the_plain_exception_is_raised(self):
        def picky(x, k):
            if k > 1:
                raise ValueError("k too large: %d" % k)
            return x + k
        f = pj.jit(picky, verify=1)
        self.assertEqual(f(pj.Tensor([1.0]), 1).tolist(), [2.0])
        with self.assertRaisesRegex(ValueError, "k too large: 2"):
            f(pj.Tensor([1.0]), 2)

    def test_state_that_cannot_be_copied_runs_once_with_a_warning(self):
        def locked(x):
            with LOCK:
                return x + 1
        f = pj.jit(locked, verify=1)
        with self.assertLogs("pijit", "WARNING") as logs:
            self.assertEqual(f(pj.Tensor([1.0])).tolist(), [2.0])
        self.assertIn("the call's state cannot be copied", logs.output[0])


class Settings(unittest.TestCase):
    def test_bad_values_are_refused(self):
        with self.assertRaisesRegex(ValueError, r"For 'jit', the 'verify' should be >= 0"):
            pj.jit(lambda x: x, verify=-1)
        with self.assertRaisesRegex(TypeError, "For 'jit', the type of 'verify' should be int or None"):
            pj.jit(lambda x: x, verify="2")
        with self.assertRaisesRegex(TypeError, "should be int or None"):
            pj.jit(lambda x: x, verify=True)
        old = os.environ.get("PIJIT_VERIFY")
        os.environ["PIJIT_VERIFY"] = "often"
        try:
            with self.assertRaisesRegex(ValueError, "PIJIT_VERIFY must be a number of calls"):
                pj.jit(lambda x: x)
        finally:
            if old is None:
                del os.environ["PIJIT_VERIFY"]
            else:
                os.environ["PIJIT_VERIFY"] = old

    def test_off_by_default(self):
        self.assertEqual(pj.jit(lambda x: x).verify, 0 if not os.environ.get("PIJIT_VERIFY") else
                         int(os.environ["PIJIT_VERIFY"]))


if __name__ == "__main__":
    unittest.main()
