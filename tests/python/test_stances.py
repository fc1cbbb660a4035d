"""pijit.set_stance (issue 45): how jitted code runs, switched at run time without clearing the
caches. What a user relies on: each stance's rule (force_eager runs everything eagerly,
eager_on_recompile and fail_on_recompile leave passing entries and first captures alone,
eager_then_compile runs each function's first call eagerly), results equal to plain Python under
every stance, the counts in jit_stats, the stance coming back after a `with` block or a decorated
call (also when it raises), and clear errors for bad names."""
import unittest

import pijit as pj
from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY


_made = [0]


def fresh():
    """A new jitted function f with its own code object (stats and caches are per code object)."""
    _made[0] += 1
    ns = {}
    exec(compile("def f(x):\n    return x * 2 + 1\n", "<stances %d>" % _made[0], "exec"), ns)
    return pj.jit(ns["f"])


class Api(unittest.TestCase):
    def tearDown(self):
        pj.set_stance("default")

    def test_plain_call_context_manager_and_decorator(self):
        self.assertEqual(pj.get_stance(), "default")
        pj.set_stance("force_eager")
        self.assertEqual(pj.get_stance(), "force_eager")
        with pj.set_stance("fail_on_recompile"):
            self.assertEqual(pj.get_stance(), "fail_on_recompile")
            with pj.set_stance("eager_then_compile"):
                self.assertEqual(pj.get_stance(), "eager_then_compile")
            self.assertEqual(pj.get_stance(), "fail_on_recompile")
        self.assertEqual(pj.get_stance(), "force_eager")
        with self.assertRaises(ZeroDivisionError):
            with pj.set_stance("default"):
                1 / 0
        self.assertEqual(pj.get_stance(), "force_eager")
        pj.set_stance()  # default

        seen = []

        @pj.set_stance("eager_on_recompile")
        def inside(fail):
            seen.append(pj.get_stance())
            if fail:
                raise KeyError("k")
            return 5
        self.assertEqual(pj.get_stance(), "default")  # decorating changes nothing yet
        self.assertEqual(inside(False), 5)
        with self.assertRaises(KeyError):
            inside(True)
        self.assertEqual(seen, ["eager_on_recompile"] * 2)
        self.assertEqual(pj.get_stance(), "default")
        self.assertEqual(inside.__name__, "inside")

    def test_bad_input_names_the_problem_and_changes_nothing(self):
        pj.set_stance("force_eager")
        with self.assertRaisesRegex(ValueError, r"set_stance: unknown stance 'eager'; expected one of 'default', "
                                                r"'force_eager', 'eager_on_recompile', 'fail_on_recompile', "
                                                r"'eager_then_compile'"):
            pj.set_stance("eager")
        with self.assertRaisesRegex(TypeError, "set_stance: expected a stance name \\(str\\), got int"):
            pj.set_stance(1)
        self.assertEqual(pj.get_stance(), "force_eager")
        with self.assertRaisesRegex(TypeError, "For 'set_stance', the type of 'fn' should be a callable"):
            pj.set_stance("default")(3)


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class Rules(unittest.TestCase):
    def tearDown(self):
        pj.set_stance("default")

    def stats(self, f):
        s = pj.jit_stats(f)
        return s["compiles"], s["recompiles"], len(s["entries"])

    def test_force_eager_runs_everything_eagerly_and_keeps_the_cache(self):
        f = fresh()
        x = pj.Tensor([1.0, 2.0])
        with pj.set_stance("force_eager"):
            self.assertEqual(f(x).tolist(), [3.0, 5.0])
            self.assertEqual(self.stats(f), (0, 0, 0))  # not even a first capture
        self.assertEqual(f(x).tolist(), [3.0, 5.0])
        self.assertEqual(self.stats(f), (1, 0, 1))
        with pj.set_stance("force_eager"):
            for _ in range(3):
                self.assertEqual(f(x).tolist(), [3.0, 5.0])
        hits = pj.jit_stats(f)["cache_hits"]
        self.assertEqual(f(x).tolist(), [3.0, 5.0])  # the entry is still there
        s = pj.jit_stats(f)
        self.assertEqual((s["compiles"], s["cache_hits"]), (1, hits + 1))
        self.assertEqual(s["stance_calls"]["force_eager"], 4)
        self.assertEqual(s["frames_default"], 4)

    def test_eager_on_recompile_runs_a_miss_eagerly_and_hits_still_run_graphs(self):
        f = fresh()
        with pj.set_stance("eager_on_recompile"):
            self.assertEqual(f(pj.Tensor([1.0, 2.0])).tolist(), [3.0, 5.0])  # a first capture compiles
            self.assertEqual(f(pj.Tensor([1.0, 2.0, 3.0])).tolist(), [3.0, 5.0, 7.0])  # new shape: eager
            self.assertEqual(f(pj.Tensor([0.0, 0.0])).tolist(), [1.0, 1.0])  # the graph
        s = pj.jit_stats(f)
        self.assertEqual(self.stats(f), (1, 0, 1))
        self.assertEqual((s["cache_hits"], s["stance_calls"]["eager_on_recompile"]), (1, 1))
        self.assertEqual(f(pj.Tensor([1.0, 2.0, 3.0])).tolist(), [3.0, 5.0, 7.0])  # default: recompiles
        self.assertEqual(self.stats(f), (2, 1, 2))

    def test_fail_on_recompile_raises_naming_the_guard_and_adds_no_entry(self):
        f = fresh()
        f(pj.Tensor([1.0, 2.0]))
        with pj.set_stance("fail_on_recompile"):
            self.assertEqual(f(pj.Tensor([4.0, 5.0])).tolist(), [9.0, 11.0])
            with self.assertRaisesRegex(RuntimeError, r"pijit: f \(<stances \d+>:1\) would recompile, and the "
                                                      r"stance is 'fail_on_recompile' \(guard failure: "
                                                      r"x.shape: \(2,\) -> \(1, 1\)\)"):
                f(pj.Tensor([[1.0]]))
            g = fresh()  # a function never captured compiles
            self.assertEqual(g(pj.Tensor([1.0])).tolist(), [3.0])
        self.assertEqual(self.stats(f), (1, 0, 1))
        self.assertEqual(pj.jit_stats(f)["stance_calls"]["fail_on_recompile"], 1)

    def test_eager_then_compile_runs_each_first_call_eagerly(self):
        f, g = fresh(), fresh()
        x = pj.Tensor([1.0])
        with pj.set_stance("eager_then_compile"):
            self.assertEqual(f(x).tolist(), [3.0])
            self.assertEqual(self.stats(f), (0, 0, 0))
            self.assertEqual(f(x).tolist(), [3.0])
            self.assertEqual(f(x).tolist(), [3.0])
            self.assertEqual(self.stats(f), (1, 0, 1))
            self.assertEqual(g(x).tolist(), [3.0])
            self.assertEqual(self.stats(g), (0, 0, 0))
        self.assertEqual(pj.jit_stats(f)["stance_calls"]["eager_then_compile"], 1)
        self.assertEqual(pj.jit_stats(f)["cache_hits"], 1)

    def test_a_stance_set_inside_jitted_code_takes_effect_as_in_python(self):
        @pj.jit
        def switch(x):
            y = x + 1
            pj.set_stance("force_eager")
            return y * 2
        self.assertEqual(switch(pj.Tensor([1.0])).tolist(), [4.0])
        self.assertEqual(pj.get_stance(), "force_eager")
        pj.set_stance("default")
        self.assertEqual(switch(pj.Tensor([2.0])).tolist(), [6.0])
        self.assertEqual(pj.get_stance(), "force_eager")


if __name__ == "__main__":
    unittest.main()
