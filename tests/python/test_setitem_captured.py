"""`t[key] = value` on a tensor the captured code made (issue 18, frame-local tensors): the graph
takes the functional index_put and the name holds its result, as `t += v` does. A tensor a caller
can see (an argument) or one that aliases another (a view, or one a view was taken of and is read
after the write) keeps its eager semantics by running eagerly, with the reason; a Parameter is
written back after the graph. Errors are eager's."""
import sys
import unittest

import pijit as pj
from jit_compare import no_stress, same_bits, same_raise

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor


def x3():
    return T([1.0, 2.0, 3.0])


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class SetItem(unittest.TestCase):
    def same(self, f, make_args, calls=3):
        jf = pj.jit(f)
        for _ in range(calls):
            args = make_args()
            with no_stress():
                want = f(*make_args())
            got = jf(*args)
            self.assertTrue(same_bits(want, got), (want, got))
        return pj.jit_stats(jf)

    def test_local_tensor_updates(self):
        def f(x):
            y = x * 2.0
            y += 1.0
            y[0] = 5.0
            y[1:] = x[1:] * 10.0
            z = pj.ops.zeros((2, 3), pj.float32)
            z[1] = x
            z[0, 2] = x[0]
            return y, z
        st = self.same(f, lambda: (x3(),))
        self.assertEqual((st["graphs"], st["breaks"], st["break_reasons"]), (1, 0, []))

    def test_aliasing_stays_eager(self):
        def view_read_after(x):
            y = x * 1.0
            v = y[0:2]
            y[0] = 9.0
            return v          # eager: the view sees the write

        def argument(x):
            x[0] = 9.0        # the caller's tensor
            return x

        def through_a_view(x):
            z = pj.ops.zeros((2, 3), pj.float32)
            z[:, 0] += x[0]   # z[:, 0] is a view, updated in place, then stored back
            return z

        for f, text in ((view_read_after, "a view of a tensor written in place since"),
                        (argument, "of a tensor argument")):
            st = self.same(f, lambda: (x3(),))
            self.assertTrue(any(text in r for r in st["break_reasons"]), (text, st["break_reasons"]))
        # `z[:, 0] += v` writes into the view only under MindSpore's JIT_ENABLE_AUGASSIGN_INPLACE;
        # by default it is `z[:, 0] = z[:, 0] + v`, an index_put in the graph.
        from pijit._extends.parse import compile_config
        saved = compile_config.JIT_ENABLE_AUGASSIGN_INPLACE
        self.addCleanup(setattr, compile_config, "JIT_ENABLE_AUGASSIGN_INPLACE", saved)
        st = self.same(through_a_view, lambda: (x3(),))
        self.assertEqual((st["graphs"], st["breaks"]), (1, 0), st["break_reasons"])
        compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = '1'
        pj.reset(through_a_view)
        st = self.same(through_a_view, lambda: (x3(),))
        self.assertTrue(any("INPLACE_ADD of a view" in r for r in st["break_reasons"]), st["break_reasons"])

    def test_errors_are_eager_s(self):
        def out_of_range(x):
            y = x * 1.0
            y[5] = 1.0
            return y

        def bad_value(x):
            y = x * 1.0
            y[0] = "a"
            return y

        for f, exc in ((out_of_range, IndexError), (bad_value, TypeError)):
            same_raise(self, f, lambda: (x3(),), exc)


if __name__ == "__main__":
    unittest.main()
