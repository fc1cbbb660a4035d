"""MindSpore names met in MindSpore's own PIJit tests: _no_grad (eager, decorator, jitted),
Median / NanToNum primitives, Tensor.register_hook / amin / amax / minimum / maximum, CellDict's
methods and checks, AssignAdd's leading-1 broadcast, a bprop Cell with nested outputs,
mindspore.log and ops.functional.jvp. Values are hand computed."""
import contextlib
import io
import os
import unittest

import pijit as ms
from pijit import nn, ops, _C
from pijit.common.api import _no_grad
from pijit.ops.operations.math_ops import Median
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def _flat(t):
    v = t.tolist()
    out = []
    stack = [v]
    while stack:
        e = stack.pop(0)
        if isinstance(e, list):
            stack[0:0] = e
        else:
            out.append(e)
    return out


class NoGrad(unittest.TestCase):
    def setUp(self):
        self.w = ms.Parameter(ms.Tensor([5.0]), name="w")
        self.b = ms.Parameter(ms.Tensor([5.0]), name="b")

    def f(self, x):
        y = self.w * x + self.b           # 15 at x=2
        with _no_grad():
            m = y * self.w                # 75, a constant to the gradient
        return m * y

    def test_eager_block_is_constant(self):
        # d(m*y)/dx with m constant = m * w = 375 (with m recorded it would be 750)
        self.assertEqual(ops.grad(self.f)(ms.Tensor([2.0])).tolist(), [375.0])

    def test_jitted_equals_eager_and_breaks_at_the_block(self):
        g = ms.jit(self.f)
        self.assertEqual(g(ms.Tensor([2.0])).tolist(), [1125.0])
        for _ in range(2):
            self.assertEqual(ops.grad(g)(ms.Tensor([2.0])).tolist(), [375.0])
        self.assertEqual(ops.grad(ms.jit(lambda x: ops.grad(self.f)(x)))(ms.Tensor([2.0])).shape, (1,))
        if CAPTURE_ON:
            reasons = ms.jit_stats(g)["break_reasons"]
            self.assertTrue(any("pauses gradient recording" in r for r in reasons), reasons)
        else:
            assert_ran_eagerly(self, g)

    def test_decorator_and_nesting(self):
        @_no_grad()
        def k(x):
            return x * self.w
        # d(k(x) * x)/dx with k(x) constant = k(2) = 10
        self.assertEqual(ops.grad(lambda x: k(x) * x)(ms.Tensor([2.0])).tolist(), [10.0])

        def nested(x):
            with _no_grad():
                with _no_grad():
                    a = x * x
                b = a * x  # still paused
            return a + b + x * x
        self.assertEqual(ops.grad(nested)(ms.Tensor([3.0])).tolist(), [6.0])
        self.assertFalse(_C.tape_active())

    def test_resume_without_pause_raises(self):
        with self.assertRaisesRegex(RuntimeError, "no tape_pause is active"):
            _C.tape_resume()

    def test_top_level_name(self):
        self.assertIs(ms._no_grad, _no_grad)


class MedianPrimitive(unittest.TestCase):
    X = [[7.0, 1.0, 3.0], [2.0, 9.0, 4.0], [5.0, 0.0, 8.0]]

    def test_values_indices_and_gradient(self):
        for dt in (ms.float32, ms.float64, ms.int16, ms.int32, ms.int64):
            x = ms.Tensor(self.X, dt)
            y, i = Median(False, 0, True)(x)
            self.assertEqual(_flat(y), [5, 1, 4])
            self.assertEqual(y.dtype, dt)
            self.assertEqual(i.tolist(), [[2, 0, 1]])
            y, i = Median(False, 1, False)(x)
            self.assertEqual(_flat(y), [3, 4, 5])
            self.assertEqual(i.tolist(), [2, 2, 0])
            g = ops.GradOperation()(lambda t: Median(False, 0, True)(t))(x)
            self.assertEqual(_flat(g), [0, 1, 0, 0, 0, 1, 1, 0, 0])

    def test_global_median(self):
        y, i = Median(True)(ms.Tensor(self.X))
        self.assertEqual((y.shape, y.tolist(), i.shape), ((), 4.0, ()))  # sorted: 0 1 2 3 4 5 7 8 9

    def test_jitted_equals_eager(self):
        net = Median(False, -1, False)
        x = ms.Tensor(self.X)
        self.assertEqual(ms.jit(lambda t: net(t)[0])(x).tolist(), net(x)[0].tolist())

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, r"For primitive\[Median\], the axis must be in \[-2,2\), but got -3\."):
            Median(False, -3)(ms.Tensor(self.X))
        with self.assertRaisesRegex(TypeError, "For 'Median', the type of 'axis' should be 'int', but got type 'float'."):
            Median(False, 1.2)
        with self.assertRaisesRegex(TypeError, "the type of 'keep_dims' should be 'bool', but got type 'str'"):
            Median(False, 0, "False")


class NanToNumPrimitive(unittest.TestCase):
    def test_values(self):
        x = ms.Tensor([float("nan"), float("inf"), -float("inf"), 5.0])
        self.assertEqual(ops.NanToNum(1.0, 2.0, 3.0)(x).tolist(), [1.0, 2.0, 3.0, 5.0])
        d = ops.NanToNum()(x).tolist()
        self.assertEqual((d[0], d[3]), (0.0, 5.0))
        self.assertAlmostEqual(d[1] / 3.4028234663852886e38, 1.0, places=6)
        self.assertAlmostEqual(d[2] / -3.4028234663852886e38, 1.0, places=6)
        f = ms.jit(lambda t: ops.NanToNum(nan=1.0, posinf=2.0, neginf=3.0)(t))
        self.assertEqual(f(x).tolist(), [1.0, 2.0, 3.0, 5.0])
        with self.assertRaisesRegex(TypeError, "the type of 'nan' should be 'float'"):
            ops.NanToNum(nan="0")


class TensorMethods(unittest.TestCase):
    def test_min_max_methods(self):
        x = ms.Tensor([[1.0, 5.0], [3.0, 2.0]])
        self.assertEqual(x.amin().tolist(), 1.0)
        self.assertEqual(x.amin(1).tolist(), [1.0, 2.0])
        self.assertEqual(x.amax(0, True).tolist(), [[3.0, 5.0]])
        self.assertEqual(x.minimum(ms.Tensor([2.0, 2.0])).tolist(), [[1.0, 2.0], [2.0, 2.0]])
        self.assertEqual(x.maximum(2.5).tolist(), [[2.5, 5.0], [3.0, 2.5]])
        self.assertEqual(ms.jit(lambda t: t.amin() + t.minimum(2.0).sum())(x).tolist(), 8.0)

    def test_register_hook_on_input_tensors(self):
        x = ms.Tensor([[1.0, 5.0], [3.0, 2.0]])
        y = ms.Tensor([[2.0, 1.0], [1.0, 1.0]])
        h = x.register_hook(lambda g: g * 2)
        x.register_hook(lambda g: g * 3)
        gx, gy = ops.grad(lambda a, b: (a * b).sum(), (0, 1))(x, y)
        self.assertEqual(gx.tolist(), [[12.0, 6.0], [6.0, 6.0]])
        self.assertEqual(gy.tolist(), [[1.0, 5.0], [3.0, 2.0]])
        h.remove()
        self.assertEqual(ops.grad(lambda a, b: (a * b).sum())(x, y).tolist(), [[6.0, 3.0], [3.0, 3.0]])
        with self.assertRaises(TypeError):
            x.register_hook(3)


class CellDictMethods(unittest.TestCase):
    def test_clear_pop_update(self):
        relu, tanh = nn.ReLU(), nn.Tanh()
        d = nn.CellDict([["a", relu], ["b", tanh]])
        self.assertIs(d.pop("b"), tanh)
        self.assertEqual(list(d.keys()), ["a"])
        d.update({"c": tanh})
        d.update([("d", nn.ReLU())])
        self.assertEqual(list(d.keys()), ["a", "c", "d"])
        d.clear()
        self.assertEqual(len(d), 0)
        with self.assertRaises(KeyError):
            d.pop("a")

    def test_checks(self):
        d = nn.CellDict()
        with self.assertRaisesRegex(TypeError, "the type of key should be str, but got int"):
            d[1] = nn.ReLU()
        for key in ("", ".x", "_scope", "training"):
            with self.assertRaises(KeyError):
                d[key] = nn.ReLU()
        with self.assertRaises(TypeError):
            d["x"] = None
        with self.assertRaises(TypeError):
            d["x"] = 1
        for container in (nn.CellDict(), nn.CellList([]), nn.SequentialCell([nn.ReLU()])):
            with self.assertRaisesRegex(TypeError, "can not be a CellDict, CellList or SequentialCell"):
                d["x"] = container
        with self.assertRaisesRegex(TypeError, "iterable"):
            d.update(3)
        with self.assertRaises(ValueError):
            d.update([("a", nn.ReLU(), 1)])
        with self.assertRaises(TypeError):
            nn.CellList([nn.CellDict()])
        self.assertEqual(len(d), 0)


class AssignAddBroadcast(unittest.TestCase):
    def test_leading_ones_broadcast_away(self):
        p = ms.Parameter(ms.Tensor(1.0), name="p")
        ops.AssignAdd()(p, ms.Tensor([2.0]))
        self.assertEqual((p.shape, p.tolist()), ((), 3.0))
        ops.assign_sub(p, ms.Tensor([[1.0]]))
        self.assertEqual(p.tolist(), 2.0)
        with self.assertRaisesRegex(ValueError, r"shape \(2,\) does not broadcast"):
            ops.AssignAdd()(p, ms.Tensor([2.0, 3.0]))


class NestedBpropOutput(unittest.TestCase):
    def test_bprop_gets_nested_out_and_dout(self):
        seen = {}

        class Inner(nn.Cell):
            def construct(self, x, y):
                return x * y, (x + y, x - y)

            def bprop(self, x, y, out, dout):
                seen["out"] = (type(out).__name__, type(out[1]).__name__)
                seen["dout"] = (type(dout).__name__, type(dout[1]).__name__)
                # (only the first output reaches the loss: dout[1] holds zeros)
                return dout[0] * 10 + dout[1][0], dout[0] * 20 + dout[1][1]

        inner = Inner()
        gx, gy = ops.GradOperation(get_all=True)(lambda x, y: inner(x, y)[0].sum())(
            ms.Tensor([1.0, 2.0]), ms.Tensor([3.0, 4.0]))
        self.assertEqual((gx.tolist(), gy.tolist()), ([10.0, 10.0], [20.0, 20.0]))
        self.assertEqual(seen["out"], ("tuple", "tuple"))
        self.assertEqual(seen["dout"], ("tuple", "tuple"))


class LogModule(unittest.TestCase):
    def _capture(self, fn, level=None):
        old = os.environ.get("GLOG_v")
        if level is None:
            os.environ.pop("GLOG_v", None)
        else:
            os.environ["GLOG_v"] = level
        buf = io.StringIO()
        try:
            with contextlib.redirect_stderr(buf):
                fn()
        finally:
            if old is None:
                os.environ.pop("GLOG_v", None)
            else:
                os.environ["GLOG_v"] = old
        return buf.getvalue()

    def test_levels_and_format(self):
        from pijit import log as logger
        out = self._capture(lambda: (logger.info("hidden"), logger.warning("shown %d", 3)))
        self.assertNotIn("hidden", out)
        self.assertRegex(out, r"^\[WARNING\] ME\(\d+:\d+,MainProcess\):\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3} "
                              r"\[test_ms_gaps\.py:\d+\] shown 3\n$")
        out = self._capture(lambda: (logger.debug("d"), logger.info("i"), logger.error("e")), "1")
        self.assertEqual([line.split("]")[0] for line in out.splitlines()], ["[INFO", "[ERROR"])
        self.assertEqual(self._capture(lambda: logger.warning("w"), "3"), "")
        self.assertEqual(logger.get_level(), "2")
        self.assertEqual(logger.get_log_config()["GLOG_v"], "2")


class FunctionalJvp(unittest.TestCase):
    def test_jvp(self):
        from pijit.ops import functional as F
        self.assertIs(F.jvp, ops.jvp)
        x = ms.Tensor([1.0, 2.0])
        out, tangent = F.jvp(lambda t: t * t, x, ms.Tensor([1.0, 1.0]))
        self.assertEqual((out.tolist(), tangent.tolist()), ([1.0, 4.0], [2.0, 4.0]))
        with self.assertRaises(AttributeError):
            F.no_such_name  # noqa: B018



class ConstructIsAJitOfTheCell(unittest.TestCase):
    """MindSpore's tests write `net.construct = jit(net, ...)`: a call of net runs its class's
    construct through the jit (no recursion), eagerly, under a gradient and jitted alike."""

    def test_net_construct_assigned_its_own_jit(self):
        import pijit as ms
        from pijit import nn, ops, Tensor

        class Affine(nn.Cell):
            def __init__(self):
                super().__init__()
                self.dense = ops.Dense()

            def construct(self, x, w, b):
                return self.dense(x, w, b)

        x, w, b = Tensor([[1.0, 2.0, 3.0]]), Tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]), Tensor([0.5, -0.5])
        for mode in ("ast", "bytecode"):
            net = Affine()
            net.construct = ms.jit(net, capture_mode=mode)
            self.assertEqual(net(x, w, b).tolist(), [[4.5, 1.5]], mode)
            gx, gw = ms.grad(net, grad_position=(0, 1))(x, w, b)
            self.assertEqual(gx.tolist(), [[1.0, 1.0, 1.0]], mode)
            self.assertEqual(gw.tolist(), [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], mode)


if __name__ == "__main__":
    unittest.main()
