"""A gradient of a gradient through a jitted function equals the eager one: under two recording
tapes the captured graph (whose backward is one compiled plan the outer tape cannot see through)
runs eagerly instead, so every op is recorded on every tape. First-order gradients keep the graph."""
import unittest

import pijit as ms
from pijit import Tensor, ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def cube_sum(a):
    return (a ** 3).sum()


class SecondOrderThroughJit(unittest.TestCase):
    def test_grad_of_grad_of_a_jitted_function(self):
        x = Tensor([1.0, 2.0])
        eager = ms.grad(lambda a: ms.grad(cube_sum)(a).sum())(x).tolist()
        jf = ms.jit(cube_sum)
        jitted = ms.grad(lambda a: ms.grad(jf)(a).sum())(x).tolist()
        self.assertEqual(eager, [6.0, 12.0])
        self.assertEqual(jitted, eager)

    def test_mixed_terms_and_a_network(self):
        def f(a, b):
            return (ops.sin(a) * b * b).sum()
        jf = ms.jit(f)
        x, y = Tensor([0.5, 1.5]), Tensor([2.0, -1.0])
        want = ms.grad(lambda a, b: ms.grad(f, grad_position=1)(a, b).sum(), grad_position=(0, 1))(x, y)
        got = ms.grad(lambda a, b: ms.grad(jf, grad_position=1)(a, b).sum(), grad_position=(0, 1))(x, y)
        for w, g in zip(want, got):
            self.assertEqual([round(v, 6) for v in g.tolist()], [round(v, 6) for v in w.tolist()])

    def test_first_order_still_runs_the_graph(self):
        jf = ms.jit(cube_sum)
        for _ in range(3):
            self.assertEqual(ms.grad(jf)(Tensor([1.0, 2.0])).tolist(), [3.0, 12.0])
        if CAPTURE_ON:
            stats = ms.jit_stats(jf)
            self.assertEqual(stats["graph_failures"], 0)
            self.assertGreaterEqual(stats["cache_hits"], 2)
        else:
            assert_ran_eagerly(self, jf)


if __name__ == "__main__":
    unittest.main()
