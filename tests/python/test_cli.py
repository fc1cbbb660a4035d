"""`python -m pijit run` runs an unchanged MindSpore-style script; `import mindspore` is pijit."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_pijit(*args, **kw):
    env = dict(os.environ)
    if kw.pop("no_stress", False):
        env.pop("PIJIT_STRESS", None)  # the summary is about what `pijit run` itself captures
    env["PYTHONPATH"] = os.path.join(ROOT, "pyscripts")
    return subprocess.run([sys.executable, "-m", "pijit"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env, **kw)


class TestRun(unittest.TestCase):
    def test_quickstart_prints_the_seed_result(self):
        p = run_pijit("run", os.path.join(ROOT, "pyscripts", "examples", "quickstart.py"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("x:\n [[1024. 1024. 1024.]\n [1024. 1024. 1024.]\n [1024. 1024. 1024.]]",
                      p.stdout)
        self.assertIn("[5. 7. 9.]", p.stdout)

    def test_lenet_example_runs_unchanged(self):
        p = run_pijit("run", os.path.join(ROOT, "pyscripts", "examples", "lenet.py"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("logits shape: (4, 10)", p.stdout)
        self.assertIn("parameters: 61684", p.stdout)  # conv1 150 + conv2 2400 + fc 48120+10164+850
        self.assertIn("(conv1): Conv2d<input_channels=1, output_channels=6, kernel_size=(5, 5)",
                      p.stdout)

    def test_mlp_example_runs_unchanged(self):
        p = run_pijit("run", os.path.join(ROOT, "pyscripts", "examples", "mlp.py"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("train mode moved the BatchNorm statistics: True", p.stdout)
        self.assertIn("'body.1.gamma'", p.stdout)

    def test_mindspore_alias_and_argv(self):
        src = textwrap.dedent("""
            import sys
            import mindspore as ms
            import mindspore.ops as ops
            from mindspore import Tensor
            import pijit
            assert ms is pijit and ops is pijit.ops and Tensor is pijit.Tensor
            assert ms.__spec__.name == "pijit"
            print("argv", sys.argv[1:], __name__)
        """)
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(src)
        try:
            p = run_pijit("run", f.name, "a", "--b")
        finally:
            os.unlink(f.name)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "argv ['a', '--b'] __main__")

    def test_missing_script(self):
        p = run_pijit("run", "/nonexistent/x.py")
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such file", p.stderr)

    def test_script_exception_propagates_with_traceback(self):
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write("import mindspore as ms\nms.Tensor([1.0, 2.0]) + ms.Tensor([1.0, 2.0, 3.0])\n")
        try:
            p = run_pijit("run", f.name)
        finally:
            os.unlink(f.name)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("ValueError: operands could not be broadcast together with shapes (2,) (3,)",
                      p.stderr)
        self.assertIn("line 2", p.stderr)

    def test_info(self):
        p = run_pijit("info")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ops in registry", p.stdout)

    def test_sysinfo(self):
        p = run_pijit("sysinfo")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout
        self.assertRegex(out, r"Python 3\.\d+\.\d+")
        self.assertRegex(out, r"oneDNN \d+\.\d+\.\d+ \(built with \d+\.\d+\), AsmJit \d+\.\d+\.\d+")
        self.assertIn("vector extensions:", out)
        if CAPTURE_ON:
            self.assertIn("capture: on (pijit captures on Python 3.7-3.11", out)
        else:
            self.assertIn("capture: off, functions given to pj.jit run eagerly (pijit captures on Python 3.7-3.11", out)
        self.assertRegex(out, r"fused elementwise kernels: (asmjit-avx512|asmjit-avx2|interpreter)")
        # the GPU backend: what it was built with and what it finds (a CPU machine: why no GPU)
        self.assertRegex(out, r"GPU backend: (not built \(.+\)|built with CUDA \d+\.\d+, cuDNN [\d.]+, cuBLAS [\d.]+; "
                              r"found: CUDA runtime (\d+\.\d+|not found), driver for CUDA (\d+\.\d+|not found), )")
        if "no usable GPU" not in out and "not built" not in out:
            self.assertRegex(out, r"  GPU 0: .+, sm_\d+, [\d.]+ GiB, \d+ multiprocessors")


if __name__ == "__main__":
    unittest.main()


class TestSeedMsFunction(unittest.TestCase):
    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_ms_function_examples_print_what_python_prints(self):
        p = run_pijit("run", os.path.join(ROOT, "pyscripts", "examples", "ms_function.py"))
        self.assertEqual(p.returncode, 0, p.stderr)
        twos = "[[2. 2. 2.]\n [2. 2. 2.]\n [2. 2. 2.]]"
        self.assertEqual(p.stdout, twos + "\n" + "[[1024. 1024. 1024.]\n [1024. 1024. 1024.]\n"
                         " [1024. 1024. 1024.]]\n5\n" + twos + "\n")


class TestAutoCapture(unittest.TestCase):
    """`python -m pijit run` captures the script's own functions, with no decorator."""

    SCRIPT = textwrap.dedent("""
        import sys
        import pijit as pj
        from pijit import ops
        from helper import scale

        LOG = []

        def pure(n):
            return sum(i * i for i in range(n))

        def model(x, w):
            h = ops.relu(scale(x @ w, 2.0))
            print("hidden", h.shape)
            LOG.append(h.sum().tolist())
            return ops.softmax(h, -1)

        x, w = pj.ones((2, 3)), pj.ones((3, 4))
        for i in range(3):
            y = model(x, w)
        print(y.tolist(), LOG, pure(10), sys.argv[1:])
    """)

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        with open(os.path.join(self.dir, "helper.py"), "w") as f:
            f.write("def scale(x, k):\n    return x * k + 1.0\n")
        self.script = os.path.join(self.dir, "script.py")
        with open(self.script, "w") as f:
            f.write(self.SCRIPT)

    def plain(self):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "pyscripts"))
        env.pop("PIJIT_STRESS", None)
        return subprocess.run([sys.executable, self.script, "a"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=env)

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_functions_are_captured_and_output_is_unchanged(self):
        p = run_pijit("run", "--summary", self.script, "a", no_stress=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, self.plain().stdout)
        self.assertIn("pijit summary: 1 functions captured", p.stderr)
        # the print is replayed by the graph's entry
        self.assertRegex(p.stderr, r"  model \(script.py:\d+\): 1 graphs, 1 breaks, 0 recompiles, 1 side effects replayed")
        # the print is replayed after the graph; reading a value out of a tensor is the break
        self.assertIn("B002 DataDependent at %s:15 in model" % self.script, p.stderr)
        self.assertNotIn("pure", p.stderr)  # no tensor work: runs as it is

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_a_loop_reading_a_value_each_step_runs_its_body_as_a_function(self):
        loop = os.path.join(self.dir, "loop.py")
        with open(loop, "w") as f:
            f.write("import pijit as pj\n\n\ndef train(x, n):\n    total = 0.0\n    for i in range(n):\n"
                    "        x = x * 0.5 + 1.0\n        total += float(x.sum())\n    return total\n\n\n"
                    "print(train(pj.Tensor([1.0, 2.0]), 5), train(pj.Tensor([1.0, 2.0]), 5))\n")
        p = run_pijit("run", "--summary", loop, no_stress=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "19.03125 19.03125\n")
        self.assertIn("pijit summary: 1 functions captured", p.stderr)
        self.assertRegex(p.stderr, r"  loop body of train \(loop.py:4\): 1 graphs, 1 breaks, 0 recompiles")
        self.assertRegex(p.stderr, r"  train \(loop.py:4\): 0 graphs, 0 breaks, 0 recompiles, "
                                   r"1 loop\(s\) with the body run as a function")

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_logs_guards_shows_every_captured_functions_guards(self):
        p = run_pijit("run", "--logs=guards", self.script, "a", no_stress=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, self.plain().stdout)
        self.assertRegex(p.stderr, r"\[pijit guards\] installed for model \(.*script.py:\d+\):\n"
                                   r"  context mode is PYNATIVE_MODE\n")
        self.assertIn("\n  x: Tensor Float32[2, 3]\n  w: Tensor Float32[3, 4]\n", p.stderr)
        # model and the two resume functions its break at tolist() makes (the second after
        # LOG.append, which is handed on as a method of LOG, not an object that is new each call):
        # one guard set each over the script's three calls
        self.assertEqual(p.stderr.count("installed for model ("), 3, p.stderr)
        self.assertIn("  __pijit_stack1.__name__ == 'append'\n", p.stderr)
        self.assertNotIn("installed for pure", p.stderr)  # no tensor work: not captured, no guards

    def test_no_capture(self):
        p = run_pijit("run", "--no-capture", "--summary", self.script, "a", no_stress=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, self.plain().stdout)
        self.assertIn("pijit summary: 0 functions captured", p.stderr)

