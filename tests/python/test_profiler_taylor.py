"""ops.jet and ops.derivative (MindSpore's Taylor-mode higher derivatives): MindSpore's documented
sin/exp example, hand-derived derivatives of chains, several inputs and outputs, int inputs, a
jitted function, and MindSpore's errors."""
import math
import unittest

import pijit as ms
from pijit import Tensor, nn, ops


class SinExp(nn.Cell):
    """MindSpore's documented example network: exp(sin(x))."""

    def __init__(self):
        super().__init__()
        self.sin = ops.Sin()
        self.exp = ops.Exp()

    def construct(self, x):
        return self.exp(self.sin(x))


def d_exp_sin(x):
    """exp(sin x) and its first three derivatives, by hand."""
    s, c, e = math.sin(x), math.cos(x), math.exp(math.sin(x))
    return [e, c * e, (c * c - s) * e, (c ** 3 - 3 * s * c - c) * e]


def flat(t):
    v = t.tolist()
    while v and isinstance(v[0], list):
        v = [a for row in v for a in row]
    return v


class DocumentedExample(unittest.TestCase):
    X = [[1.0, 2.0], [3.0, 4.0]]
    # MindSpore's printed values (float32)
    PRIMALS = [2.319777, 2.4825778, 1.1515628, 0.4691642]
    SERIES = [[1.2533808, -1.0331168, -1.1400385, -0.3066662],
              [-1.2748207, -1.8274734, 0.966121, 0.55551505],
              [-4.0515366, 3.6724353, 0.5053504, -0.52061415]]

    def close(self, got, want, rel=3e-6):
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertLessEqual(abs(g - w), rel * max(1.0, abs(w)), (got, want))

    def test_jet(self):
        primals = Tensor(self.X, ms.float32)
        series = Tensor([[[1, 1], [1, 1]], [[0, 0], [0, 0]], [[0, 0], [0, 0]]], ms.float32)
        out_primals, out_series = ops.jet(SinExp(), primals, series)
        self.assertEqual(out_primals.shape, (2, 2))
        self.assertEqual(out_series.shape, (3, 2, 2))
        self.assertEqual(out_series.dtype, ms.float32)
        self.close(flat(out_primals), self.PRIMALS)
        for k in range(3):
            self.close(flat(out_series[k]), self.SERIES[k])

    def test_derivative(self):
        out_primals, out_series = ops.derivative(SinExp(), Tensor(self.X, ms.float32), 3)
        self.close(flat(out_primals), self.PRIMALS)
        self.assertEqual(out_series.shape, (2, 2))
        self.close(flat(out_series), self.SERIES[2])

    def test_hand_derived_in_float64(self):
        xs = [0.3, -1.2, 2.5]
        _, s = ops.jet(lambda x: ops.exp(ops.sin(x)), Tensor(xs, ms.float64),
                       Tensor([[1.0] * 3, [0.0] * 3, [0.0] * 3], ms.float64))
        for k in range(3):
            for i, x in enumerate(xs):
                self.assertAlmostEqual(s[k].tolist()[i], d_exp_sin(x)[k + 1], places=12)

    def test_jitted_function(self):
        f = ms.jit(lambda x: ops.exp(ops.sin(x)))
        p, s = ops.derivative(f, Tensor(self.X, ms.float32), 3)
        self.close(flat(s), self.SERIES[2])
        self.close(flat(p), self.PRIMALS)


class Semantics(unittest.TestCase):
    def test_series_are_derivatives_along_the_path(self):
        # x(t) = x0 + a t + b t^2/2: d2/dt2 sin(x(t)) at 0 = -sin(x0) a^2 + cos(x0) b
        x0, a, b = 0.7, 2.0, -3.0
        _, s = ops.jet(ops.sin, Tensor([x0], ms.float64), Tensor([[a], [b]], ms.float64))
        self.assertAlmostEqual(s.tolist()[0][0], math.cos(x0) * a, places=12)
        self.assertAlmostEqual(s.tolist()[1][0], -math.sin(x0) * a * a + math.cos(x0) * b, places=12)

    def test_polynomial_and_quotient(self):
        # f = x^3 / (1 + x): hand-derived derivatives at x = 2
        f = lambda x: x * x * x / (1.0 + x)  # noqa: E731
        _, d1 = ops.derivative(f, Tensor([2.0], ms.float64), 1)
        _, d2 = ops.derivative(f, Tensor([2.0], ms.float64), 2)
        # f' = (3x^2(1+x) - x^3)/(1+x)^2 = (2x^3+3x^2)/(1+x)^2; f'' = 2x(x^2+3x+3)/(1+x)^3
        self.assertAlmostEqual(d1.tolist()[0], (16 + 12) / 9.0, places=12)
        self.assertAlmostEqual(d2.tolist()[0], 4 * (4 + 6 + 3) / 27.0, places=12)

    def test_beyond_the_polynomial_degree_is_zero(self):
        p, s = ops.derivative(lambda x: x * 2.0, Tensor([1.0, 3.0]), 2)
        self.assertEqual(p.tolist(), [2.0, 6.0])
        self.assertEqual(s.tolist(), [0.0, 0.0])

    def test_two_inputs_move_together(self):
        # derivative moves every input at unit speed: d/dt (x+t)(y+t) = x + y, d2 = 2
        x, y = Tensor([1.0, 2.0]), Tensor([5.0, -1.0])
        p, d1 = ops.derivative(lambda a, b: a * b, (x, y), 1)
        self.assertEqual(p.tolist(), [5.0, -2.0])
        self.assertEqual(d1.tolist(), [6.0, 1.0])
        _, d2 = ops.derivative(lambda a, b: a * b, (x, y), 2)
        self.assertEqual(d2.tolist(), [2.0, 2.0])

    def test_jet_of_two_inputs_and_two_outputs(self):
        x, y = Tensor([1.0]), Tensor([2.0])
        sx, sy = Tensor([[1.0], [0.0]]), Tensor([[0.0], [1.0]])
        p, s = ops.jet(lambda a, b: (a * b, a + b), (x, y), (sx, sy))
        self.assertIsInstance(p, list)
        self.assertEqual([t.tolist() for t in p], [[2.0], [3.0]])
        # a(t) = 1 + t, b(t) = 2 + t^2/2: (ab)' = 2, (ab)'' = 2*1*0 + 1*1 + ... = a''b + 2a'b' + ab'' = 1
        self.assertEqual(s[0].tolist(), [[2.0], [1.0]])
        self.assertEqual(s[1].tolist(), [[1.0], [1.0]])

    def test_int_inputs_compute_in_float32(self):
        p, s = ops.derivative(lambda x: x * x, Tensor([3], ms.int32), 1)
        self.assertEqual(p.dtype, ms.float32)
        self.assertEqual(s.tolist(), [6.0])

    def test_series_without_the_leading_axis(self):
        _, s = ops.jet(ops.exp, Tensor([0.0]), Tensor([2.0]))
        self.assertEqual(s.shape, (1, 1))
        self.assertEqual(s.tolist(), [[2.0]])


class Errors(unittest.TestCase):
    def test_order(self):
        with self.assertRaisesRegex(TypeError, "the type of order must be int"):
            ops.derivative(ops.sin, Tensor([1.0]), 2.0)
        with self.assertRaisesRegex(ValueError, "order should not be less than 1, but got 0"):
            ops.derivative(ops.sin, Tensor([1.0]), 0)

    def test_jet_inputs(self):
        with self.assertRaisesRegex(TypeError, "must be both Tensor or tuple"):
            ops.jet(ops.sin, Tensor([1.0]), (Tensor([[1.0]]),))
        with self.assertRaisesRegex(ValueError, "shape of each element must be the same as the primals"):
            ops.jet(ops.sin, Tensor([1.0, 2.0]), Tensor([[1.0, 2.0, 3.0]]))
        with self.assertRaisesRegex(ValueError, "lengths of primals and series must be the same"):
            ops.jet(ops.add, (Tensor([1.0]), Tensor([1.0])), (Tensor([[1.0]]),))
        with self.assertRaisesRegex(TypeError, "int32, int64, float32 or float64"):
            ops.jet(ops.sin, Tensor([True]), Tensor([[True]]))

    def test_non_elementwise_function_is_refused(self):
        with self.assertRaisesRegex(ValueError, "elementwise"):
            ops.derivative(lambda x: x.sum(), Tensor([1.0, 2.0]), 1)


if __name__ == "__main__":
    unittest.main()
