"""Gradients (issue 13): ops.GradOperation, grad, value_and_grad, stop_gradient and Cell.bprop,
eager (a tape) and jitted (one forward+backward graph). What a user relies on: the gradients are
right (finite differences in float64), MindSpore's return conventions and errors, jitted
gradients equal eager ones, and a jitted grad call is one graph without breaks."""
import math
import struct
import unittest

import pijit as pj
from pijit import nn, ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def f64(data):
    return pj.Tensor(data, pj.float64)


def struct_bits(t):
    return [struct.pack("<d", v) for v in flat(t)]


def flat(t):
    return [float(v) for v in t.reshape((-1,)).tolist()] if t.ndim else [float(t.tolist())]


def numeric_grad(fn, args, k, eps=1e-6):
    """Central differences of the scalar fn(*args) with respect to args[k] (float64)."""
    x = args[k]
    base = flat(x)
    out = []
    for i in range(len(base)):
        vals = []
        for d in (eps, -eps):
            moved = list(base)
            moved[i] += d
            a = list(args)
            a[k] = f64(moved).reshape(tuple(x.shape))
            vals.append(float(fn(*a).tolist()))
        out.append((vals[0] - vals[1]) / (2 * eps))
    return out


class Close(unittest.TestCase):
    def assertClose(self, got, want, tol=1e-6):
        got, want = flat(got) if hasattr(got, "shape") else got, flat(want) if hasattr(want, "shape") else want
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertTrue(abs(g - w) <= tol * (1 + abs(w)), "%r != %r (all: %r vs %r)" % (g, w, got, want))


class SeedNet(nn.Cell):
    """Seed 001's network: x * z (a Parameter) matrix-multiplied by y."""

    def __init__(self):
        super().__init__()
        self.matmul = ops.MatMul()
        self.z = pj.Parameter(pj.Tensor([2.0]), name="z")

    def construct(self, x, y):
        return self.matmul(x * self.z, y)


class GradNetWrtX(nn.Cell):
    """Seed 001's gradient cell: GradOperation(get_by_list=True) over the net's ParameterTuple."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.params = pj.ParameterTuple(net.trainable_params())
        self.grad_op = ops.GradOperation(get_by_list=True)

    def construct(self, x, y):
        return self.grad_op(self.net, self.params)(x, y)


class SeedExamples(Close):
    """The seed documents' gradient programs print what the documents show."""

    def test_grad_by_list_of_a_net_with_a_parameter(self):
        x = pj.Tensor([[0.8, 0.6, 0.2], [1.8, 1.3, 1.1]])
        y = pj.Tensor([[0.11, 3.3, 1.1], [1.1, 0.2, 1.4], [1.1, 2.2, 0.3]])
        out = GradNetWrtX(SeedNet())(x, y)
        self.assertIsInstance(out, tuple)
        self.assertEqual(len(out), 1)
        self.assertClose(out[0], [21.536], 1e-6)
        dx = ops.GradOperation()(SeedNet())(x, y)
        self.assertClose(dx, [9.02, 5.4, 7.2, 9.02, 5.4, 7.2], 1e-6)

    def test_get_all_of_an_add_cell(self):
        class Add(nn.Cell):
            def construct(self, x, y):
                return x + y

        x, y = pj.Tensor([1.0, 2.0, 3.0]), pj.Tensor([4.0, 5.0, 6.0])
        gx, gy = ops.GradOperation(get_all=True)(Add())(x, y)
        self.assertEqual(gx.tolist(), [1.0, 1.0, 1.0])
        self.assertEqual(gy.tolist(), [1.0, 1.0, 1.0])

    def test_bprop_replaces_the_cells_own_gradient(self):
        class Mul(nn.Cell):
            def construct(self, x, y):
                return x * y

            def bprop(self, x, y, out, dout):
                return y * dout * 2, x * dout * 3

        x, y = pj.Tensor([1.0, 2.0]), pj.Tensor([3.0, 5.0])
        gx, gy = ops.GradOperation(get_all=True)(Mul())(x, y)
        self.assertEqual(gx.tolist(), [6.0, 10.0])
        self.assertEqual(gy.tolist(), [3.0, 6.0])

        def outer(a, b):  # the bprop cell inside other ops: the chain rule goes through it
            return (Mul()(a * 2, b) ** 2).sum()
        ga = pj.grad(outer)(x, y)
        # d/da (2ab)^2 with the bprop's factor 2 on its x-gradient: 2 * (2ab) * b * 2 * 2
        self.assertEqual(ga.tolist(), [2 * (2 * 1 * 3) * 3 * 2 * 2, 2 * (2 * 2 * 5) * 5 * 2 * 2])

    def test_bprop_errors_name_the_cell(self):
        class Bad(nn.Cell):
            def construct(self, x):
                return x * 2

            def bprop(self, x, out, dout):
                return dout.reshape((1, -1))

        with self.assertRaisesRegex(ValueError, "Bad.bprop: the gradient of input 0 has shape"):
            pj.grad(Bad())(pj.Tensor([1.0, 2.0]))


class Conventions(Close):
    def setUp(self):
        self.x = pj.Tensor([1.0, 2.0])
        self.y = pj.Tensor([3.0, -1.0])

        def f(x, y):
            return (x * x * y).sum()
        self.f = f

    def test_grad_position_int_tuple_and_weights(self):
        gx = pj.grad(self.f)(self.x, self.y)
        self.assertEqual(gx.tolist(), [6.0, -4.0])
        gx, gy = pj.grad(self.f, (0, 1))(self.x, self.y)
        self.assertEqual(gy.tolist(), [1.0, 4.0])
        (gy2,) = pj.grad(self.f, (1,))(self.x, self.y)
        self.assertEqual(gy2.tolist(), [1.0, 4.0])
        self.assertEqual(pj.grad(self.f, -1)(self.x, self.y).tolist(), [1.0, 4.0])

        w = pj.Parameter(pj.Tensor([0.5, 2.0]), name="w")

        def g(x):
            return (x * w).sum()
        self.assertEqual(pj.grad(g, None, w)(self.x).tolist(), [1.0, 2.0])
        (gw,) = pj.grad(g, None, [w])(self.x)
        self.assertEqual(gw.tolist(), [1.0, 2.0])
        gx, gws = pj.grad(g, 0, pj.ParameterTuple([w]))(self.x)
        self.assertEqual(gx.tolist(), [0.5, 2.0])
        self.assertEqual(gws[0].tolist(), [1.0, 2.0])

    def test_value_and_grad_and_has_aux(self):
        def f(x):
            return (x * x).sum(), x + 1
        (loss, aux), gx = pj.value_and_grad(f, has_aux=True)(self.x)
        self.assertEqual(float(loss), 5.0)
        self.assertEqual(aux.tolist(), [2.0, 3.0])
        self.assertEqual(gx.tolist(), [2.0, 4.0])  # only the first output is differentiated
        gx, aux = pj.grad(f, has_aux=True)(self.x)
        self.assertEqual(gx.tolist(), [2.0, 4.0])
        self.assertIsInstance(aux, tuple)
        self.assertEqual(aux[0].tolist(), [2.0, 3.0])
        # Without has_aux every output is differentiated (sensitivity ones each).
        self.assertEqual(pj.grad(f)(self.x).tolist(), [3.0, 5.0])

    def test_sens_param(self):
        def f(x):
            return x * x
        g = ops.GradOperation(sens_param=True)(f)(self.x, pj.Tensor([10.0, 0.5]))
        self.assertEqual(g.tolist(), [20.0, 2.0])
        with self.assertRaisesRegex(ValueError, r"sens 0 has shape \(3,\), but output 0 has shape \(2,\)"):
            ops.GradOperation(sens_param=True)(f)(self.x, pj.Tensor([1.0, 1.0, 1.0]))

    def test_gradients_that_are_zero(self):
        i = pj.Tensor([1, 2])
        gx, gi = pj.grad(lambda x, i: (x * 2).sum(), (0, 1))(self.x, i)
        self.assertEqual(gx.tolist(), [2.0, 2.0])
        self.assertEqual(gi.dtype, pj.int64)  # integer inputs: zeros of their own dtype
        self.assertEqual(gi.tolist(), [0, 0])
        self.assertEqual(pj.grad(lambda x, y: (y * 3).sum(), 0)(self.x, self.y).tolist(), [0.0, 0.0])
        self.assertEqual(pj.grad(lambda x: (ops.stop_gradient(x) * x).sum())(self.x).tolist(), [1.0, 2.0])
        self.assertEqual(pj.grad(lambda x: (x > 1).astype(pj.float32).sum() + x.sum())(self.x).tolist(), [1.0, 1.0])

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "grad_position and weights cannot both be None"):
            pj.grad(self.f, None)
        with self.assertRaisesRegex(TypeError, "grad_position must be None, an int or a non-empty tuple"):
            pj.grad(self.f, [0])
        with self.assertRaisesRegex(IndexError, "grad_position 2 is out of range for 2 inputs"):
            pj.grad(self.f, 2)(self.x, self.y)
        with self.assertRaisesRegex(TypeError, "input 1 is a float; only Tensor inputs have gradients"):
            pj.grad(lambda x, s: (x * s).sum(), (0, 1))(self.x, 2.0)
        with self.assertRaisesRegex(TypeError, "weights must be a Parameter"):
            pj.grad(self.f, 0, self.x)
        with self.assertRaisesRegex(TypeError, "weights\\[0\\] is a Tensor, not a Parameter"):
            pj.grad(self.f, 0, [self.x])
        with self.assertRaisesRegex(ValueError, "has_aux=True needs a function that returns more than one output"):
            pj.grad(self.f, has_aux=True)(self.x, self.y)
        with self.assertRaisesRegex(TypeError, "get_all must be a bool"):
            ops.GradOperation(get_all=1)
        with self.assertRaisesRegex(TypeError, "cannot differentiate through 'interpolate': it has no gradient rule"):
            pj.grad(lambda x: ops.interpolate(x.reshape((1, 1, 1, 2)), size=(1, 4)).sum())(self.x)


class Correctness(Close):
    """Composite functions against central differences, float64."""

    def check(self, fn, *args):
        for k in range(len(args)):
            got = pj.grad(fn, k)(*args)
            self.assertClose(got, numeric_grad(fn, args, k), 1e-5)

    def test_elementwise_and_broadcasting(self):
        x = f64([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]])
        b = f64([0.5, -0.25, 1.5])
        self.check(lambda x, b: (ops.tanh(x * b + 1) * ops.exp(-x * x) / (1 + ops.sigmoid(b))).sum(), x, b)
        self.check(lambda x, b: (ops.log(ops.abs(x) + 1) ** 2 - ops.sqrt(b * b + 1)).mean(), x, b)

    def test_reductions_shapes_and_matmul(self):
        x = f64([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]])
        w = f64([[1.0, 0.5], [-0.3, 0.2], [0.8, -1.1]])
        self.check(lambda x, w: (ops.matmul(x, w).reshape((4,)) * f64([1, 2, 3, 4])).max(), x, w)
        self.check(lambda x, w: ops.softmax(ops.matmul(x, w), axis=-1)[:, 0].sum() + x.T.sum(axis=0)[1], x, w)
        self.check(lambda x, w: ops.concat((x, w.T * 2), axis=0)[1:, ::2].sum() + ops.stack((x, x * x))[1, 0, 2], x, w)

    def test_convolutions(self):
        # conv2d's weight gradient is its own kernel (conv2d_weight_grad); a transposed convolution
        # whose output_padding reaches its stride takes the convolution-written one
        pj.set_seed(5)
        x, w, b = (pj.randn(2, 4, 5, 6).astype(pj.float64), pj.randn(6, 2, 3, 2).astype(pj.float64),
                   pj.randn(6).astype(pj.float64))
        self.check(lambda x, w, b: (ops.conv2d(x, w, b, stride=(2, 1), pad_mode="pad", padding=(1, 0, 2, 1),
                                               dilation=(1, 2), groups=2) ** 2).sum(), x, w, b)
        y, wt = pj.randn(1, 2, 3, 3).astype(pj.float64), pj.randn(2, 3, 2, 2).astype(pj.float64)
        self.check(lambda y, wt: (ops.conv_transpose2d(y, wt, stride=1, output_padding=1, dilation=2) ** 2).sum(), y, wt)

    def test_second_derivative_through_a_convolutions_weight_gradient(self):
        pj.set_seed(6)
        x, w = pj.randn(2, 2, 4, 4).astype(pj.float64), pj.randn(3, 2, 3, 3).astype(pj.float64)
        v = pj.randn(3, 2, 3, 3).astype(pj.float64)

        def weight_grad_dot_v(x, w):  # linear in the weight gradient, whose gradient is checked
            gw = pj.grad(lambda w: (ops.conv2d(x, w, stride=2, pad_mode="pad", padding=1) ** 2).sum())(w)
            return (gw * v).sum()
        self.check(weight_grad_dot_v, x, w)

    def test_training_batch_norm_backward_takes_two_sums_per_channel(self):
        # PyTorch's order: sum(dy) and sum(dy * xhat) per channel give dbeta, dgamma and dx alike
        # (sum(dy * gamma) is gamma * sum(dy)); the gradients of x, gamma and beta match central
        # differences in float64, eagerly and jitted, and the jitted graph holds those two sums only.
        from pijit.ops import nn_functional as NF
        pj.set_seed(11)
        x = pj.randn(3, 2, 4, 5).astype(pj.float64)
        gamma, beta = f64([1.5, -0.5]), f64([0.25, 2.0])
        w = pj.randn(3, 2, 4, 5).astype(pj.float64)

        def loss(x, gamma, beta):
            return (NF.batch_norm(x, ops.zeros((2,), pj.float64), ops.ones((2,), pj.float64), gamma, beta,
                                  training=True) * w).sum()
        self.check(loss, x, gamma, beta)

        def grads(x, gamma, beta):
            return pj.grad(loss, (0, 1, 2))(x, gamma, beta)
        jgrads = pj.jit(grads)
        wants = grads(x, gamma, beta)
        hits = []
        for _ in range(2):  # a compile, then a cache hit
            for got, want in zip(jgrads(x, gamma, beta), wants):
                self.assertEqual(flat(got), flat(want))
            hits.append(pj.jit_stats(grads)["cache_hits"])
        if CAPTURE_ON:
            st = pj.jit_stats(grads)
            self.assertEqual([st[k] for k in ("graphs", "breaks", "recompiles")], [1, 0, 0], st)
            self.assertEqual(hits[1] - hits[0], 1)
            compiled = st["entries"][0]["compiled"]
            self.assertEqual(compiled.count("axis=(0, 2, 3)"), 2, compiled)
        else:
            assert_ran_eagerly(self, grads)

    def test_product_with_zeros(self):
        for vals in ([0.5, -2.0, 3.0], [0.5, 0.0, 3.0], [0.0, 0.0, 3.0]):
            x = f64(vals)
            self.check(lambda x: x.prod() * 2, x)

    def test_advanced_indexing_accumulates_repeated_positions(self):
        x = f64([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]])
        rows, cols = pj.Tensor([0, 1, 0, 0]), pj.Tensor([2, 0, 2, 1])
        self.check(lambda x: (x[rows, cols] ** 2).sum() + x[pj.Tensor([1, 1])].sum() + (x[x > 0] * 3).sum(), x)

    def test_in_place_updates(self):
        def f(x):
            y = x * 1.0
            y += x * x          # rebinds y: later reads see y + x^2
            y[0] = y[1] * 3     # functional index_put under the tape
            return (y * y).sum()
        x = f64([0.5, -1.5, 2.0])
        self.assertClose(pj.grad(f)(x), numeric_grad(f, [x], 0), 1e-5)

    def test_tensors_written_in_place_then_dropped(self):
        # Each temporary written in place dies at the next iteration; the tensors made later must
        # not be taken for it (the tape keys tracked tensors by identity).
        def f(x):
            for _ in range(40):
                t = x * 1.0
                t += 1.0
                t[0] = t[1] * 0.5
                x = t * 0.5
            return (x * x).sum()
        x = f64([0.3, -0.7, 1.1])
        self.assertClose(pj.grad(f)(x), numeric_grad(f, [x], 0), 1e-5)

    def test_in_place_write_after_a_read_keeps_the_value_read(self):
        def f(x):
            y = x * 1.0
            z = y * y
            y += 1              # z's gradient needs the y it read: the tape kept a copy
            w = pj.Tensor([2.0, 3.0])
            z = z * w
            w[0] = 100.0        # an untracked tensor read before the write, too
            return z.sum() + (y * w).sum()
        x = f64([1.0, 2.0])
        self.assertClose(pj.grad(f)(x), numeric_grad(f, [x], 0), 1e-5)

    def test_integer_inputs_asked_for_have_gradients(self):
        # MindSpore's seed program (003, markdown cell 47): d/dx sum_i x * w_i over int32
        w = pj.Parameter(pj.Tensor(0, pj.int32), name="w")

        def f(x):
            out = 0
            for i in range(3):
                ops.assign(w, i)
                out = x * w + out
            return out
        (g,) = ops.GradOperation(get_all=True)(f)(pj.Tensor(1, pj.int32))
        self.assertEqual((g.dtype, g.tolist()), (pj.int32, 3))

    def test_integer_input_of_an_op_computing_in_floating_point(self):
        # softmax, log_softmax and sqrt take an int64 tensor and compute in float32: the gradient
        # comes back as int64 (aborted the process before: fuzz 4402848), eager and jitted alike
        x = pj.Tensor([[1, 3], [2, 2]], pj.int64)
        for fn in (ops.softmax, ops.log_softmax, ops.sqrt, lambda t: ops.log_softmax(t) * 4.0 + t):
            def loss(t):
                return fn(t).sum()
            eager = pj.grad(loss)(x)
            jitted = pj.grad(pj.jit(loss))(x)
            self.assertEqual(eager.dtype, pj.int64)
            self.assertEqual((jitted.dtype, jitted.tolist()), (eager.dtype, eager.tolist()))
        # 4 * (1 - 2 * softmax) + 1 per row: [[4.05, -2.05], [1, 1]] in float, cast to int64
        self.assertEqual(pj.grad(lambda t: (ops.log_softmax(t) * 4.0 + t).sum())(x).tolist(), [[4, -2], [1, 1]])

    def test_second_derivative(self):
        x = f64([0.5, -1.0, 2.0])
        g2 = pj.grad(lambda x: pj.grad(lambda t: (t * t * t).sum())(x).sum())(x)
        self.assertClose(g2, [6 * v for v in flat(x)], 1e-12)

    def test_relu_gradient_is_one_relu_grad_op_with_pytorchs_values(self):
        # x > 0 passes the gradient (its NaN and -0.0 too), x <= 0 or NaN gives +0 (relu'(0) = 0),
        # eagerly and in a jitted graph alike, bit for bit; the graph holds one relu_grad where
        # gt + where took two nodes and a boolean mask. Its own gradient (a second derivative
        # through relu) is relu_grad again: linear in the incoming gradient.
        nan = float("nan")
        for dtype in (pj.float32, pj.float64):
            x = pj.Tensor([nan, -0.0, 0.0, -2.0, 3.0, 1e-30, 4.0, 5.0]).astype(dtype)
            w = pj.Tensor([1.5, 2.0, 3.0, 4.0, -0.0, -6.0, nan, 7.0]).astype(dtype)

            def f(x, w):
                return pj.grad(lambda t: (ops.relu(t) * w).sum())(x)
            want = f(x, w)
            jf = pj.jit(f)
            hits = []
            for _ in range(2):  # a compile, then a cache hit
                got = jf(x, w)
                hits.append(pj.jit_stats(f)["cache_hits"])
                self.assertEqual([repr(v) for v in got.tolist()],
                                 ["0.0", "0.0", "0.0", "0.0", "-0.0", "-6.0", "nan", "7.0"])
                self.assertEqual(struct_bits(got), struct_bits(want))
            if CAPTURE_ON:
                self.assertEqual(hits[1] - hits[0], 1)
        if CAPTURE_ON:
            st = pj.jit_stats(f)
            # one graph per dtype (the second a recompile on the new dtype), no break
            self.assertEqual([st[k] for k in ("graphs", "breaks", "recompiles")], [2, 0, 1], st)
            compiled = st["entries"][0]["compiled"]
            self.assertIn("relu_grad(", compiled)
            self.assertNotIn("gt(", compiled)
            self.assertNotIn("where(", compiled)
        else:
            assert_ran_eagerly(self, jf)
        x = f64([0.5, -1.0, 2.0])
        # d/dx sum(relu'(x) * x) = relu'(x) (relu'' = 0 almost everywhere)
        g2 = pj.grad(lambda x: (pj.grad(lambda t: (ops.relu(t) * t).sum())(x)).sum())(x)
        self.assertClose(g2, [2.0, 0.0, 2.0], 1e-12)

    def test_net_with_parameters(self):
        pj.set_seed(3)
        net = nn.SequentialCell([nn.Dense(4, 5, activation="tanh"), nn.Dense(5, 3)])
        x = pj.Tensor([[0.1, -0.2, 0.3, 0.4], [1.0, 0.5, -0.5, 0.0]])
        labels = pj.Tensor([2, 0])
        loss_fn = nn.CrossEntropyLoss()
        params = net.trainable_params()
        grads = pj.grad(lambda x: loss_fn(net(x), labels), None, params)(x)
        self.assertEqual([tuple(g.shape) for g in grads], [tuple(p.shape) for p in params])
        # float64 copies of the parameters: central differences of the same loss
        for k, p in enumerate(params):
            base = flat(p)
            for i in (0, len(base) - 1):
                vals = []
                for d in (1e-3, -1e-3):
                    moved = list(base)
                    moved[i] += d
                    saved = p.copy()
                    p.set_data(pj.Tensor(moved).reshape(tuple(p.shape)))
                    vals.append(float(loss_fn(net(x), labels).tolist()))
                    p.set_data(saved)
                self.assertTrue(abs(flat(grads[k])[i] - (vals[0] - vals[1]) / 2e-3) < 2e-3)


class Jitted(Close):
    def test_grad_with_respect_to_a_tensor_made_in_the_captured_code(self):
        # a literal is a constant to the graph, which the tape cannot follow: the grad call runs
        # as Python runs it (it came out zero, then raised on a dead reference)
        def h():
            return pj.grad(lambda x: ops.sin(x).sum())(pj.Tensor([0.0, 1.0]))

        jh = pj.jit(h)
        for _ in range(2):
            self.assertEqual(jh().tolist(), h().tolist())
        self.assertAlmostEqual(jh().tolist()[1], math.cos(1.0), places=6)
        if CAPTURE_ON:
            self.assertIn("differentiates with respect to a tensor made inside the captured code",
                          pj.jit_stats(jh)["break_reasons"][0])
        else:
            assert_ran_eagerly(self, jh)

    def test_an_input_without_a_gradient_rule_refuses_only_its_own_gradient(self):
        # reflect padding has no gradient rule: a captured graph reading it still gives the other
        # inputs' gradients, and names the op when its own gradient is asked for (as eager does)
        def f(x, y):
            return (x * 2).sum() + ops.pad(y, (1, 1), mode="reflect").sum()

        x, y = pj.Tensor([1.0, 2.0]), pj.Tensor([1.0, 2.0, 3.0])
        jf = pj.jit(f)
        self.assertEqual(pj.grad(jf, 0)(x, y).tolist(), [2.0, 2.0])
        self.assertEqual(pj.grad(jf, 0)(x, y).tolist(), pj.grad(f, 0)(x, y).tolist())
        with self.assertRaisesRegex(TypeError, "cannot differentiate through 'pad' with mode 'reflect'"):
            pj.grad(jf, 1)(x, y)
        with self.assertRaisesRegex(TypeError, "cannot differentiate through 'pad' with mode 'reflect'"):
            pj.grad(f, 1)(x, y)
        if CAPTURE_ON:
            self.assertEqual(pj.jit_stats(jf)["graphs"], 1)
        else:
            assert_ran_eagerly(self, jf)

    """A grad call inside a jitted function is one forward+backward graph, equal to eager."""

    def test_one_graph_equal_to_eager(self):
        pj.set_seed(5)
        net = nn.SequentialCell([nn.Dense(6, 8, activation="relu"), nn.Dense(8, 2)])
        params = pj.ParameterTuple(net.trainable_params())
        grad_fn = ops.GradOperation(get_all=True, get_by_list=True)(net, params)

        def step(x):
            return grad_fn(x)
        jstep = pj.jit(step)
        x = pj.randn(4, 6)
        want = step(x)
        for _ in range(2):
            got = jstep(x)
        if CAPTURE_ON:
            st = pj.jit_stats(jstep)
            self.assertEqual((st["graphs"], st["breaks"], st["recompiles"]), (1, 0, 0), st["break_reasons"])
        else:
            assert_ran_eagerly(self, jstep)
        for g, w in zip(got[0] + got[1], want[0] + want[1]):
            self.assertClose(g, w, 1e-6)

    def test_weights_given_as_a_parameter_tuple(self):
        # The tape must watch the graph values the network reads, also when the weights reach
        # the grad call through a ParameterTuple (a container capture does not read item by item).
        g = GradNetWrtX(SeedNet())
        jg = pj.jit(g.construct)
        x, y = pj.randn(2, 3), pj.randn(3, 3)
        want, got = g(x, y), jg(x, y)
        self.assertClose(got[0], want[0], 1e-6)
        self.assertNotEqual(flat(want[0]), [0.0])
        if CAPTURE_ON:
            st = pj.jit_stats(jg)  # (the code object is shared with the seed test: no exact counts)
            self.assertGreaterEqual(st["graphs"], 1)
            self.assertEqual((st["breaks"], st["break_reasons"]), (0, []))
        else:
            assert_ran_eagerly(self, jg)

    def test_dense_over_no_input_features_has_zero_gradients_eager_and_jitted(self):
        # (fuzz program 2200102120: the weight gradient reshaped x to numel / K rows, 0 for K = 0,
        # and the backward raised a ValueError eagerly and a TypeError jitted)
        def f(x, w):
            return (ops.dense(x, w) + 1.0).sum()

        def g(x, w):  # (its own code object: PIJIT_STRESS also captures f's eager calls)
            return (ops.dense(x, w) + 1.0).sum()
        jf = pj.jit(g)
        x, w = pj.zeros((3, 0)), pj.zeros((2, 0))
        for fn in (f, jf, jf):
            out, (gx, gw) = pj.value_and_grad(fn, (0, 1))(x, w)
            self.assertEqual((float(out), gx.shape, gw.shape), (6.0, (3, 0), (2, 0)))
        x3 = pj.zeros((4, 3, 0))  # batch dims before the features
        _, (gx, gw) = pj.value_and_grad(f, (0, 1))(x3, w)
        self.assertEqual((gx.shape, gw.shape), ((4, 3, 0), (2, 0)))
        if CAPTURE_ON:
            st = pj.jit_stats(jf)
            self.assertEqual((st["graphs"], st["breaks"], st["recompiles"]), (1, 0, 0), st["break_reasons"])
        else:
            assert_ran_eagerly(self, jf)

    def test_grad_made_inside_the_jitted_function(self):
        def loss(x, w):
            return (ops.tanh(x * w) ** 2).mean()

        def step(x, w):
            l, (gx, gw) = pj.value_and_grad(loss, (0, 1))(x, w)
            return l, gx, gw
        jstep = pj.jit(step)
        x, w = pj.randn(3, 4), pj.randn(4)
        want = step(x, w)
        got = jstep(x, w)
        if CAPTURE_ON:
            st = pj.jit_stats(jstep)
            self.assertEqual((st["graphs"], st["breaks"]), (1, 0), st["break_reasons"])
        else:
            assert_ran_eagerly(self, jstep)
        for g, e in zip(got, want):
            self.assertClose(g, e, 1e-6)

    def test_jitted_net_inside_an_eager_grad(self):
        w = pj.Parameter(pj.Tensor([1.5, -2.0]), name="w")

        @pj.jit
        def f(x):
            return (x * w * x).sum()
        x = pj.Tensor([1.0, 3.0])
        f(x)  # compiled and cached
        before = pj.jit_stats(f)
        gx, gw = pj.grad(f, 0, w)(x)
        self.assertEqual(gx.tolist(), [3.0, -12.0])
        self.assertEqual(gw.tolist(), [1.0, 9.0])
        if CAPTURE_ON:
            # the graph ran, as one node on the tape (its backward is the graph's gradient)
            after = pj.jit_stats(f)
            self.assertEqual((after["cache_hits"] - before["cache_hits"], after["frames_default"] - before["frames_default"]),
                             (1, 0))
        else:
            assert_ran_eagerly(self, f)

    def test_jitted_graphs_on_the_tape_match_eager_gradients(self):
        pj.set_seed(2)

        class Net(nn.Cell):  # its own construct: jit statistics are per code object
            def __init__(self):
                super().__init__()
                self.a, self.b = nn.Dense(5, 7, activation="tanh"), nn.Dense(7, 3)

            def construct(self, x):
                return self.b(self.a(x))
        net = Net()
        jnet = pj.jit(net)
        x, labels = pj.randn(4, 5), pj.Tensor([0, 2, 1, 2])
        loss = nn.CrossEntropyLoss()
        params = net.trainable_params()
        want = pj.grad(lambda x: loss(net(x), labels), (0,), params)(x)
        jnet(x)
        got = pj.grad(lambda x: loss(jnet(x), labels), (0,), params)(x)
        for g, w in zip(got[0] + got[1], want[0] + want[1]):
            self.assertClose(g, w, 1e-6)
        # an impure graph (dropout draws) runs as it is under a tape: its ops are recorded one by one
        drop = nn.Dropout(p=0.5)
        drop.set_train(True)

        @pj.jit
        def noisy(x):
            return drop(x) * 2
        noisy(x)
        before = pj.jit_stats(noisy)["frames_default"]
        pj.set_seed(9)
        g = pj.grad(lambda x: noisy(x).sum())(x)
        if CAPTURE_ON:
            self.assertEqual(pj.jit_stats(noisy)["frames_default"] - before, 1)
        else:
            assert_ran_eagerly(self, noisy)
        kept = [v != 0 for v in flat(g)]
        self.assertTrue(any(kept) and not all(kept))
        self.assertEqual(set(round(v, 5) for v in flat(g)), {0.0, 4.0})

    def test_bprop_cell_under_jit_runs_its_bprop(self):
        class Mul(nn.Cell):
            def construct(self, x, y):
                return x * y

            def bprop(self, x, y, out, dout):
                return dout * 0 + 7, dout * 0 + 9
        g = ops.GradOperation(get_all=True)(Mul())

        @pj.jit
        def step(x, y):
            return g(x, y)
        gx, gy = step(pj.Tensor([1.0]), pj.Tensor([2.0]))
        self.assertEqual((gx.tolist(), gy.tolist()), ([7.0], [9.0]))

    def test_custom_bprop_is_captured_into_the_backward_graph(self):
        # The bprop is ordinary tensor code: it is simulated when the backward reaches its call,
        # so the jitted grad is one graph (no B008), its print is replayed every call, and the
        # gradients are the eager ones bit for bit.
        printed = []

        class CustomMul(nn.Cell):
            def construct(self, x, y):
                return x * y

            def bprop(self, x, y, out, dout):
                printed.append(tuple(dout.shape))
                return y * dout * 2, x * dout * 3
        m = CustomMul()

        def loss(x, y):
            return (m(x * 2, y) ** 2).sum()
        g = ops.GradOperation(get_all=True)(loss)

        @pj.jit
        def step(x, y):
            return g(x, y)
        x, y = pj.Tensor([1.0, 2.0]), pj.Tensor([3.0, 5.0])
        want = [t.tolist() for t in g(x, y)]
        self.assertEqual(want, [[144.0, 800.0], [72.0, 480.0]])
        for _ in range(3):
            self.assertEqual([t.tolist() for t in step(x, y)], want)
        self.assertEqual(printed, [(2,)] * 4)  # the eager call's, then one per jitted call
        if CAPTURE_ON:
            s = pj.jit_stats(step)
            self.assertEqual((s["graphs"], s["breaks"], s["recompiles"]), (1, 0, 0), s["break_reasons"])
            self.assertEqual(s["frames_captured"] if "frames_captured" in s else s["frames_rewritten"], 3)
        # the class's bprop is guarded: replacing it recompiles and the new one is used
        CustomMul.bprop = lambda self, x, y, out, dout: (dout, dout)
        self.assertEqual([t.tolist() for t in step(x, y)], [[24.0, 80.0], [12.0, 40.0]])
        if CAPTURE_ON:
            self.assertEqual(pj.jit_stats(step)["recompiles"], 1)

    def test_a_bprop_capture_cannot_follow_breaks_there_and_matches_eager(self):
        class Scaled(nn.Cell):
            def construct(self, x):
                return x * 2

            def bprop(self, x, out, dout):
                k = dout.sum().item()  # a value read: the interpreter runs it
                return (dout * (k + 1.0),)
        c = Scaled()
        g = ops.GradOperation()(lambda x: c(x).sum() * 3)

        @pj.jit
        def step(x):
            return g(x) + 1
        x = pj.Tensor([1.0, 2.0])
        want = g(x).tolist()
        for _ in range(2):
            self.assertEqual((step(x) - 1).tolist(), want)
        self.assertEqual(want, [21.0, 21.0])
        if CAPTURE_ON:  # the break names the bprop's line, the chain that led there
            s = pj.jit_stats(step)
            self.assertEqual(s["breaks"], 1)
            self.assertIn("in bprop: reads the data of a tensor", s["break_reasons"][0])
            self.assertEqual([f[0] for f in s["break_records"][0]["frames"]], ["step", "bprop"])

    def test_a_bprop_that_raises_raises_as_eagerly(self):
        class Picky(nn.Cell):
            def construct(self, x):
                return x * 2

            def bprop(self, x, out, dout):
                if dout.shape[0] > 1:
                    raise ValueError("Picky.bprop takes one element, got %d" % dout.shape[0])
                return (dout,)
        c = Picky()
        g = ops.GradOperation()(lambda x: c(x).sum())

        @pj.jit
        def step(x):
            return g(x) + 1
        self.assertEqual(step(pj.Tensor([1.0])).tolist(), [2.0])
        for _ in range(2):
            with self.assertRaisesRegex(ValueError, "Picky.bprop takes one element, got 2"):
                step(pj.Tensor([1.0, 2.0]))

    def test_a_network_held_by_a_grad_function_runs_every_call(self):
        # GradOperation's function keeps the network in its closure: the network's Python runs
        # (simulated) on every call, its effects replayed, not once while capturing.
        calls = []
        w = pj.Tensor([2.0, 3.0])

        def net(x):
            calls.append(len(calls))
            return (x * w).sum()
        g = ops.GradOperation()(net)

        @pj.jit
        def step(x):
            return g(x)
        for _ in range(3):
            self.assertEqual(step(pj.Tensor([1.0, 1.0])).tolist(), [2.0, 3.0])
        self.assertEqual(calls, [0, 1, 2])


if __name__ == "__main__":
    unittest.main()
