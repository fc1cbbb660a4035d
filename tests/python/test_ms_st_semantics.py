"""MindSpore behaviours that its own PIJit system tests rely on (measured with
tools/ms_st/run_ms_st.py): GRAPH_MODE Cells with control flow on tensor values run (with graph
breaks) instead of raising, and gradients of constant outputs / numeric inputs are what MindSpore
returns (zeros, the empty tuple) instead of errors."""
import unittest

import pijit as pj
from pijit import nn, ops
from jit_compare import CAPTURE_OFF_WHY, CAPTURE_ON, assert_ran_eagerly

T = pj.Tensor


class _GraphMode(object):
    def setUp(self):
        pj.set_context(mode=pj.GRAPH_MODE)

    def tearDown(self):
        pj.set_context(mode=pj.PYNATIVE_MODE)


class GraphModeControlFlow(_GraphMode, unittest.TestCase):
    def test_loop_with_tensor_condition_equals_eager(self):
        class Net(nn.Cell):
            def construct(self, x):
                out = x
                for _ in range(3):
                    x = x - 1
                    if x < 5:
                        continue
                    out = out + x
                while x > 1:
                    out = out + x
                    x = x - 1
                return out
        net = Net()
        for start, want in ((7, 7 + 6 + 5 + 4 + 3 + 2), (3, 3), (1, 1)):
            self.assertEqual(net(T([start], pj.int32)).tolist(), [want])
            self.assertEqual(net.construct(T([start], pj.int32)).tolist(), [want])
        if CAPTURE_ON:
            st = pj.jit_stats(net)
            self.assertTrue(any("B003 BranchOnTensor" in r for r in st["break_reasons"]), st["break_reasons"])
            self.assertGreaterEqual(st["graphs"] + st["resume_graphs"], 1)
        else:
            assert_ran_eagerly(self, net)

    def test_side_effects_before_the_branch_happen_once(self):
        seen = []

        class Net(nn.Cell):
            def construct(self, x):
                seen.append(1)
                y = x * 2
                if y.sum() > 0:
                    return y
                return -y
        net = Net()
        self.assertEqual(net(T([1.0, 2.0])).tolist(), [2.0, 4.0])
        self.assertEqual(len(seen), 1)
        self.assertEqual(net(T([-1.0, -2.0])).tolist(), [2.0, 4.0])
        self.assertEqual(len(seen), 2)
        # another instance of the same class (the code's cache holds the broken entry) also runs
        self.assertEqual(Net()(T([3.0])).tolist(), [6.0])
        self.assertEqual(len(seen), 3)

    def test_print_of_a_tensor_value_runs(self):
        import io
        import contextlib

        class Net(nn.Cell):
            def construct(self, x):
                y = x + 1
                print(float(y.sum()))
                return y * 2
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            out = Net()(T([1.0, 2.0]))
        self.assertEqual(out.tolist(), [4.0, 6.0])
        self.assertEqual(buf.getvalue(), "5.0\n")

    def test_recompiles_past_the_limit_keep_running(self):
        class Net(nn.Cell):
            def __init__(self, a, b):
                super().__init__()
                self.a, self.b = a, b
                self.less = ops.Less()  # a new primitive per cell: each new cell recompiles

            def construct(self):
                return self.less(self.a, self.b)
        for i in range(60):
            a = ops.ones((i % 5 + 1, 2), pj.float32) * (i % 4)
            out = Net(a, 2)()
            self.assertEqual(out.shape, a.shape)
            self.assertEqual(bool(out.all()), i % 4 < 2)
        if CAPTURE_ON:
            self.assertTrue(any("recompile_limit" in r for r in pj.jit_stats(Net(a, 2))["break_reasons"]))
        else:
            assert_ran_eagerly(self, Net(a, 2))

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (CaptureError)
    def test_other_refusals_still_raise(self):
        class Net(nn.Cell):
            def construct(self, x):
                import os  # noqa: F401
                return x + 1
        with self.assertRaises(pj.CaptureError) as cm:
            Net()(T([1.0]))
        self.assertIn("B018 Import", str(cm.exception))

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (CaptureError)
    def test_fullgraph_jit_still_raises_on_a_tensor_branch(self):
        def f(x):
            if x.sum() > 0:
                return x
            return -x
        with self.assertRaises(pj.CaptureError) as cm:
            pj.jit(f, fullgraph=True)(T([1.0]))
        self.assertIn("B003 BranchOnTensor", str(cm.exception))


class ConstantGradients(unittest.TestCase):
    def setUp(self):
        self.x = T([1.0, 2.0])

    def test_constant_output_has_zero_gradient(self):
        g = pj.grad(lambda x: 1.0)(self.x)
        self.assertEqual(g.tolist(), [0.0, 0.0])
        self.assertEqual(g.dtype, pj.float32)
        g = ops.GradOperation()(lambda x: x.dtype)(self.x)
        self.assertEqual(g.tolist(), [0.0, 0.0])

    def test_constant_leaves_of_a_tuple_output_add_nothing(self):
        g = pj.grad(lambda x: (x * 3, 7, None))(self.x)
        self.assertEqual(g.tolist(), [3.0, 3.0])

    def test_number_inputs_give_the_empty_tuple(self):
        self.assertEqual(pj.grad(lambda a, b: a + b)(1, 2), ())
        value, g = pj.value_and_grad(lambda a, b: a * b)(3, 4)
        self.assertEqual((value, g), (12, ()))
        self.assertEqual(ops.GradOperation()(lambda: 3)(), ())
        self.assertEqual(ops.GradOperation()(lambda a: a * 2)(5), ())

    def test_positions_with_a_number_still_raise(self):
        with self.assertRaisesRegex(TypeError, "input 1 is a float; only Tensor inputs have gradients"):
            pj.grad(lambda x, s: (x * s).sum(), (0, 1))(self.x, 2.0)

    def test_get_all_with_constant_output(self):
        class Net(nn.Cell):
            def construct(self):
                return 3
        self.assertEqual(ops.GradOperation(get_all=True)(Net())(), ())

    def test_get_by_list_without_weights_gives_empty_weight_gradients(self):
        f = lambda x: (x * 3).sum()  # noqa: E731
        gx, gw = ops.GradOperation(get_all=True, get_by_list=True)(f, None)(self.x)
        self.assertEqual([g.tolist() for g in gx], [[3.0, 3.0]])
        self.assertEqual(gw, ())
        self.assertEqual(ops.GradOperation(get_by_list=True)(f)(self.x), ())

    def test_jitted_equals_eager(self):
        def step(x):
            return pj.grad(lambda v: (v * v, 2))(x)
        eager = step(self.x).tolist()
        self.assertEqual(pj.jit(step)(self.x).tolist(), eager)
        self.assertEqual(eager, [2.0, 4.0])


if __name__ == "__main__":
    unittest.main()


class CellAttrRegister(unittest.TestCase):
    def test_records_init_arguments_and_keeps_bprop(self):
        from pijit._extends import cell_attr_register  # mindspore._extends under the alias

        class Scale(nn.Cell):
            @cell_attr_register
            def __init__(self, k, bias=0.0):
                super().__init__()
                self.k = k
                self.bias = bias

            def construct(self, x):
                return x * self.k + self.bias

            def bprop(self, x, out, dout):
                return (dout * 10,)

        class Named(nn.Cell):
            @cell_attr_register(attrs=["k"])
            def __init__(self, k):
                super().__init__()
                self.k = k

            def construct(self, x):
                return x * self.k

        s = Scale(3, bias=1.0)
        self.assertEqual(s.cell_init_args, "Scale(3, bias=1.0)")
        self.assertEqual(Named(2).cell_init_args, "Named(k=2)")
        x = T([1.0, 2.0])
        self.assertEqual(s(x).tolist(), [4.0, 7.0])
        self.assertEqual(ops.GradOperation(get_all=True)(s)(x)[0].tolist(), [10.0, 10.0])
        with self.assertRaisesRegex(TypeError, "attrs must be a list or tuple"):
            cell_attr_register(attrs="k")
