"""MindSpore's semantics for gradients, Cells, Parameters, optimizers and training wrappers (issue 42).

What a user relies on: grad/value_and_grad with return_ids, structured (tuple, dict) outputs and
has_aux as MindSpore 2.5 documents them (values checked in closed form and by finite differences);
a (1,) sensitivity for a scalar loss; Parameter.value() and register_hook; Cell.__setattr__'s
rebinding rules and the attributes MindSpore's helpers read; optimizer parameter groups with
per-group learning rates, weight decay, gradient centralization and order_params (updated values
checked exactly); TrainOneStepCell subclasses written as model-zoo code writes them, trained
eagerly and jitted with equal results and one graph."""
import unittest

import pijit as pj
from pijit import nn, ops
from pijit.autodiff import get_grad
from pijit.nn.wrap import ForwardValueAndGrad
import pijit.ops.composite as C
import pijit.ops.functional as F
import pijit.ops.operations as P
from jit_compare import CAPTURE_ON, assert_ran_eagerly


class XYZ(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = pj.Parameter(pj.Tensor([6.0]), name="w")
        self.b = pj.Parameter(pj.Tensor([2.0]), name="b")

    def construct(self, x, y, z):
        return self.w * x + self.b * y + z


def values(t):
    return [float(v) for v in t.reshape((-1,)).tolist()]


class GradIds(unittest.TestCase):
    def setUp(self):
        self.net = XYZ()
        self.x, self.y, self.z = pj.Tensor([10.0]), pj.Tensor([20.0]), pj.Tensor([30.0])

    def test_return_ids_pairs_positions_and_parameter_names(self):
        net, x, y, z = self.net, self.x, self.y, self.z
        (i1, g1), (i2, g2) = pj.grad(net, (1, 2), return_ids=True)(x, y, z)
        self.assertEqual((i1, values(g1), i2, values(g2)), (1, [2.0], 2, [1.0]))
        i0, g0 = pj.grad(net, 0, return_ids=True)(x, y, z)
        self.assertEqual((i0, values(g0)), (0, [6.0]))
        (i0, g0), (name, gw) = pj.grad(net, 0, net.w, return_ids=True)(x, y, z)
        self.assertEqual((i0, values(g0), name, values(gw)), (0, [6.0], "w", [10.0]))
        out = pj.grad(net, 0, net.trainable_params(), return_ids=True)(x, y, z)
        self.assertEqual([k for k, _ in out[1]], ["w", "b"])
        self.assertEqual(values(get_grad(out, net.b)), [20.0])
        self.assertEqual(values(get_grad(out, 0)), [6.0])
        with self.assertRaisesRegex(RuntimeError, "no gradient for 3"):
            get_grad(out, 3)
        (name_w, gw), (name_b, gb) = pj.grad(net, None, net.trainable_params(), return_ids=True)(x, y, z)
        self.assertEqual((name_w, values(gw), name_b, values(gb)), ("w", [10.0], "b", [20.0]))
        loss, ((i, g),) = pj.value_and_grad(net, (2,), return_ids=True)(x, y, z)
        self.assertEqual((values(loss), i, values(g)), ([130.0], 2, [1.0]))

    def test_empty_and_duplicate_positions(self):
        net = self.net
        fn = pj.grad(net, (), net.trainable_params())  # MindSpore refuses it when called
        with self.assertRaisesRegex(RuntimeError, "grad_position should not be empty"):
            fn(self.x, self.y, self.z)
        with self.assertRaisesRegex(ValueError, "duplicate positions"):
            pj.grad(net, (0, 0))
        gx, gy = pj.grad(net, (False, True))(self.x, self.y, self.z)  # bools are positions 0 and 1
        self.assertEqual((values(gx), values(gy)), ([6.0], [2.0]))

    def test_return_ids_jitted_equals_eager_in_one_graph(self):
        net = self.net
        params = pj.ParameterTuple(net.trainable_params())  # (MindSpore forbids the call jitted)

        def step(x, y, z):
            return pj.grad(net, (0, 1), params, return_ids=True)(x, y, z)
        eager = step(self.x, self.y, self.z)
        before = pj.jit_stats(step)  # (under PIJIT_STRESS the eager call was captured too)
        jf = pj.jit(step)
        for _ in range(2):
            got = jf(self.x, self.y, self.z)
            self.assertEqual([i for i, _ in got[0]] + [n for n, _ in got[1]], [0, 1, "w", "b"])
            self.assertEqual([values(g) for _, g in got[0] + got[1]],
                             [values(g) for _, g in eager[0] + eager[1]])
        if CAPTURE_ON:
            st = pj.jit_stats(jf)  # one graph for the code, the jitted calls after its capture hit it
            self.assertEqual([st["graphs"], st["breaks"], st["cache_hits"] - before["cache_hits"]],
                             [1, 0, 1 + before["graphs"]], st["break_reasons"])
        else:
            assert_ran_eagerly(self, jf)


class StructuredOutputs(unittest.TestCase):
    def test_tuple_and_dict_outputs_add_their_gradients(self):
        x = pj.Tensor([1.0, 2.0])
        # d/dx sum(x^2) + sum(3x) = 2x + 3
        self.assertEqual(values(pj.grad(lambda x: (x * x, x * 3))(x)), [5.0, 7.0])
        self.assertEqual(values(pj.grad(lambda x: {"a": x * x, "b": x * 3})(x)), [5.0, 7.0])
        self.assertEqual(values(pj.grad(lambda x: [x * x, (x * 3, {"c": x})])(x)), [6.0, 8.0])

    def test_has_aux_returns_other_outputs_untouched(self):
        x = pj.Tensor([1.0, 2.0])

        def f(x):
            return (x * x).sum(), {"logits": x + 1}
        (loss, aux), g = pj.value_and_grad(f, has_aux=True)(x)
        self.assertEqual((float(loss), values(aux["logits"]), values(g)), (5.0, [2.0, 3.0], [2.0, 4.0]))
        g, (aux,) = pj.grad(f, has_aux=True)(x)
        self.assertEqual((values(g), sorted(aux)), ([2.0, 4.0], ["logits"]))

    def test_sens_of_shape_1_for_a_scalar_loss(self):
        x = pj.Tensor([1.0, 2.0])
        g = ops.GradOperation(sens_param=True)(lambda x: (x * x).sum())(x, pj.Tensor([3.0]))
        self.assertEqual(values(g), [6.0, 12.0])
        with self.assertRaisesRegex(ValueError, r"sens 0 has shape \(2,\), but output 0 has shape \(\)"):
            ops.GradOperation(sens_param=True)(lambda x: (x * x).sum())(x, pj.Tensor([1.0, 1.0]))

    def test_finite_differences_inputs_and_weights(self):
        w = pj.Parameter(pj.Tensor([0.3, -0.7, 1.1], pj.float64), name="w")

        def f(x, y):
            return (ops.tanh(x * w) * ops.exp(y)).sum() + (w * w * y).sum()
        x = pj.Tensor([0.5, 1.5, -2.0], pj.float64)
        y = pj.Tensor([0.2, -0.1, 0.4], pj.float64)
        (gx, gy), (gw,) = pj.grad(f, (0, 1), [w])(x, y)
        eps = 1e-6

        def fd(vals, k, call):
            up, dn = list(vals), list(vals)
            up[k] += eps
            dn[k] -= eps
            return (call(up) - call(dn)) / (2 * eps)
        xs, ys, ws = values(x), values(y), values(w)
        for k in range(3):
            self.assertAlmostEqual(values(gx)[k], fd(xs, k, lambda v: float(f(pj.Tensor(v, pj.float64), y))), 6)
            self.assertAlmostEqual(values(gy)[k], fd(ys, k, lambda v: float(f(x, pj.Tensor(v, pj.float64)))), 6)

            def at_w(v):
                old = pj.Tensor(w)
                w.set_data(pj.Tensor(v, pj.float64))
                r = float(f(x, y))
                w.set_data(old)
                return r
            self.assertAlmostEqual(values(gw)[k], fd(ws, k, at_w), 6)

    def test_forward_value_and_grad(self):
        net = XYZ()
        x, y, z = pj.Tensor([10.0]), pj.Tensor([20.0]), pj.Tensor([30.0])
        loss, (gw, gb) = ForwardValueAndGrad(net, net.trainable_params(), get_by_list=True)(x, y, z)
        self.assertEqual((values(loss), values(gw), values(gb)), ([130.0], [10.0], [20.0]))
        loss, ((gx, gy, gz), (gw, gb)) = ForwardValueAndGrad(
            net, pj.ParameterTuple(net.trainable_params()), get_all=True, get_by_list=True, sens_param=True)(
                x, y, z, pj.Tensor([2.0]))
        self.assertEqual([values(t) for t in (loss, gx, gy, gz, gw, gb)],
                         [[130.0], [12.0], [4.0], [2.0], [20.0], [40.0]])
        self.assertEqual(values(ForwardValueAndGrad(net)(x, y, z)[1]), [6.0])
        with self.assertRaisesRegex(TypeError, "weights must be a ParameterTuple"):
            ForwardValueAndGrad(net, get_by_list=True)
        fvg = pj.jit(ForwardValueAndGrad(net, net.trainable_params(), get_by_list=True))
        for _ in range(2):
            loss, (gw, gb) = fvg(x, y, z)
            self.assertEqual((values(loss), values(gw), values(gb)), ([130.0], [10.0], [20.0]))
        if CAPTURE_ON:
            st = pj.jit_stats(fvg)
            self.assertEqual((st["graphs"], st["breaks"]), (1, 0), st["break_reasons"])
        else:
            assert_ran_eagerly(self, fvg)


class ParameterMethods(unittest.TestCase):
    def test_value_is_a_tensor_the_gradient_flows_through(self):
        w = pj.Parameter(pj.Tensor([1.0, -2.0]), name="w")
        v = w.value()
        self.assertIs(type(v), pj.Tensor)
        self.assertEqual(values(v), [1.0, -2.0])
        g = pj.grad(lambda x: (w.value() * w.value() * x).sum(), None, w)(pj.Tensor([3.0, 1.0]))
        self.assertEqual(values(g), [6.0, -4.0])

    def test_register_hook_sees_and_replaces_the_gradient(self):
        w = pj.Parameter(pj.Tensor([1.0, 2.0]), name="w")
        seen = []

        def f(x):
            return (w * x).sum()
        x = pj.Tensor([3.0, 4.0])
        h1 = w.register_hook(lambda g: seen.append(values(g)))  # returns None: keeps it
        h2 = w.register_hook(lambda g: g * 10)
        self.assertEqual(values(pj.grad(f, None, w)(x)), [30.0, 40.0])
        self.assertEqual(seen, [[3.0, 4.0]])
        h2.remove()
        self.assertEqual(values(pj.grad(f, None, w)(x)), [3.0, 4.0])
        h1.remove()
        h1.remove()  # twice: nothing more to take off
        self.assertEqual(values(pj.grad(f, None, w)(x)), [3.0, 4.0])
        self.assertEqual(len(seen), 2)
        with self.assertRaisesRegex(TypeError, "register_hook expects a function"):
            w.register_hook(3)

    def test_a_hook_in_a_training_step(self):
        net = XYZ()
        h = net.w.register_hook(lambda g: g * 0)  # freezes w
        step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.5))
        step(pj.Tensor([1.0]), pj.Tensor([2.0]), pj.Tensor([0.0]))
        self.assertEqual((values(net.w), values(net.b)), ([6.0], [1.0]))  # b -= 0.5 * 2
        h.remove()


class CellSetattr(unittest.TestCase):
    def test_none_then_a_cell_rebinds(self):
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.layer = None
                self.scale = None
                self.layer = nn.SequentialCell(nn.Dense(2, 3), nn.ReLU())
                self.scale = pj.Parameter(pj.Tensor([2.0]), name="scale")

            def construct(self, x):
                return self.layer(x) * self.scale
        net = Net()
        self.assertIsInstance(net.layer, nn.SequentialCell)
        self.assertNotIn("layer", net.__dict__)
        self.assertEqual([n for n, _ in net.parameters_and_names()], ["scale", "layer.0.weight", "layer.0.bias"])
        x = pj.Tensor([[1.0, -1.0]])
        out = net(x)
        self.assertEqual(out.shape, (1, 3))
        jn = pj.jit(net)
        self.assertEqual(values(jn(x)), values(out))
        if CAPTURE_ON:
            self.assertEqual(pj.jit_stats(jn)["graphs"], 1)
        else:
            assert_ran_eagerly(self, jn)

    def test_rebinding_between_plain_values_cells_and_parameters(self):
        net = nn.Cell()
        net.a = 1
        net.a = "two"
        self.assertEqual(net.a, "two")
        net.child = nn.ReLU()
        net.child = None  # MindSpore keeps the name, empty
        self.assertIsNone(net.child)
        self.assertEqual(list(net.name_cells()), [])
        with self.assertRaisesRegex(TypeError, "child cell 'child' already exists; cannot assign a int"):
            net.child = 3
        net.child = nn.Tanh()
        self.assertIsInstance(net.child, nn.Tanh)
        net.p = pj.Parameter(pj.Tensor([1.0, 2.0]), name="p")
        p = net.p
        net.p = pj.Tensor([5.0, 6.0])  # set_data
        self.assertIs(net.p, p)
        self.assertEqual(values(p), [5.0, 6.0])
        with self.assertRaisesRegex(TypeError, "parameter 'p' already exists; cannot assign a str"):
            net.p = "x"
        net.p = None
        self.assertIsNone(net.p)
        self.assertEqual(net.trainable_params(), [])
        net.p = pj.Parameter(pj.Tensor([0.0]), name="q")
        self.assertEqual([x.name for x in net.trainable_params()], ["q"])
        with self.assertRaisesRegex(KeyError, "'child' is a child cell"):
            net.child = pj.Parameter(pj.Tensor([0.0]))
        with self.assertRaisesRegex(KeyError, "'p' is a parameter"):
            net.p = nn.ReLU()
        net.a = nn.ReLU()  # a plain attribute becomes a child cell
        self.assertEqual(list(net.name_cells()), ["child", "a"])
        del net.a, net.p
        self.assertEqual(list(net.name_cells()), ["child"])
        self.assertEqual(net.trainable_params(), [])
        net.plain = 1
        del net.plain
        self.assertFalse(hasattr(net, "plain"))

    def test_the_attributes_mindsporess_helpers_read(self):
        class Net(nn.Cell):
            def __init__(self):
                super().__init__(flags={"fp16": False})
                self.body = nn.SequentialCell(nn.Dense(2, 2), nn.BatchNorm1d(2))
                self.same = self.body  # one child under two names

            def construct(self, x):
                return self.body(x)
        net = Net()
        self.assertIsNone(net._dynamic_shape_inputs)
        sig = pj.Tensor(shape=[None, 2], dtype=pj.float32)
        net.set_inputs(sig)
        self.assertIs(net._dynamic_shape_inputs[0], sig)
        self.assertEqual((net.phase, net.cls_name, net.param_prefix, net.requires_grad, net.training),
                         ("train", "Net", "", False, False))
        net.phase = "predict"
        self.assertEqual(net.phase, "predict")
        with self.assertRaises(TypeError):
            net.phase = 1
        self.assertEqual(net.get_flags(), {"fp16": False})
        net.add_flags_recursive(tag=1)
        self.assertEqual(net.body[0].tag, 1)
        self.assertIs(net.set_grad(), net)
        self.assertTrue(net.requires_grad)
        net.set_train()
        self.assertTrue(all(c.training for _, c in net.cells_and_names()))
        self.assertEqual(list(net.name_cells()), ["body"])
        self.assertEqual([n for n, _ in net.cells_and_names()], ["", "body", "body.0", "body.1"])
        net.update_cell_prefix()
        self.assertEqual(net.body[1].param_prefix, "body.1")
        frozen = net.untrainable_params()
        self.assertEqual((len(frozen), [p.requires_grad for p in frozen]), (2, [False, False]))
        self.assertEqual(len(list(net.get_parameters())), len(net.trainable_params()) + len(net.untrainable_params()))
        names = []
        self.assertIs(net.apply(lambda c: names.append(c.cls_name)), net)
        self.assertEqual(names, ["Dense", "BatchNorm1d", "SequentialCell", "Net"])
        net.check_names()
        extra = nn.Cell()
        extra.insert_child_to_cell("head", nn.Dense(2, 1))
        self.assertEqual([n for n, _ in extra.parameters_and_names()], ["head.weight", "head.bias"])


def exact_groups_net():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.a = pj.Parameter(pj.Tensor([1.0, 2.0]), name="a")
            self.conv = pj.Parameter(pj.ones(2, 16), name="conv")
            self.gamma = pj.Parameter(pj.Tensor([4.0]), name="gamma")

        def construct(self, x):
            return (self.a * x).sum() + self.conv.sum() * x[0] + (self.gamma * x[1]).sum()
    return Net()


class OptimizerGroups(unittest.TestCase):
    def test_momentum_groups_apply_their_own_lr_and_weight_decay(self):
        a = pj.Parameter(pj.Tensor([1.0, 2.0]), name="a")
        b = pj.Parameter(pj.Tensor([4.0]), name="b")
        opt = nn.Momentum([{"params": [a], "lr": 0.5, "weight_decay": 0.25}, {"params": [b]}],
                          learning_rate=0.125, momentum=0.5)
        self.assertEqual(opt.get_lr_parameter([a, b]), [0.5, 0.125])
        ga, gb = pj.Tensor([1.0, -1.0]), pj.Tensor([2.0])
        acc_a, acc_b = [0.0, 0.0], [0.0]
        wa, wb = [1.0, 2.0], [4.0]
        for _ in range(2):
            opt((ga, gb))
            da = [g + 0.25 * w for g, w in zip([1.0, -1.0], wa)]  # group weight decay
            acc_a = [0.5 * m + d for m, d in zip(acc_a, da)]
            wa = [w - 0.5 * m for w, m in zip(wa, acc_a)]
            acc_b = [0.5 * acc_b[0] + 2.0]
            wb = [wb[0] - 0.125 * acc_b[0]]
            self.assertEqual((values(a), values(b)), (wa, wb))

    def test_order_params_orders_parameters_and_gradients(self):
        a = pj.Parameter(pj.Tensor([1.0]), name="a")
        b = pj.Parameter(pj.Tensor([1.0]), name="b")
        c = pj.Parameter(pj.Tensor([1.0]), name="c")
        opt = nn.SGD([{"params": [a, b], "lr": 0.5}, {"params": [c], "lr": 0.25}, {"order_params": [c, a, b]}],
                     learning_rate=0.1)
        self.assertEqual([p.name for p in opt.parameters], ["c", "a", "b"])
        self.assertTrue(opt.is_group and opt.is_group_lr and opt.is_group_params_ordered)
        opt((pj.Tensor([4.0]), pj.Tensor([2.0]), pj.Tensor([1.0])))  # c, a, b
        self.assertEqual((values(a), values(b), values(c)), ([0.0], [0.5], [0.0]))

    def test_grad_centralization_and_the_default_decay_filter(self):
        net = exact_groups_net()
        conv = [net.conv]
        rest = [net.a, net.gamma]
        opt = nn.SGD([{"params": conv, "grad_centralization": True}, {"params": rest, "weight_decay": 0.5}], 0.5)
        self.assertEqual(opt.grad_centralization_flags, (True, False, False))
        self.assertEqual(opt.decay_flags, (False, True, True))  # a group's decay reaches gamma too
        g_conv = pj.Tensor([[float(i) for i in range(16)]] * 2)
        opt((g_conv, pj.Tensor([0.0, 0.0]), pj.Tensor([0.0])))
        self.assertEqual(values(net.conv)[:3], [1.0 + 0.5 * 7.5, 1.0 + 0.5 * 6.5, 1.0 + 0.5 * 5.5])  # g - mean
        self.assertEqual((values(net.a), values(net.gamma)), ([0.75, 1.5], [3.0]))
        net = exact_groups_net()
        opt = nn.SGD(net.trainable_params(), 0.5, weight_decay=0.5)  # not grouped: gamma is not decayed
        self.assertEqual(opt.decay_flags, (True, True, False))
        opt((pj.Tensor([0.0, 0.0]), pj.zeros(2, 16), pj.Tensor([0.0])))
        self.assertEqual((values(net.a), values(net.conv)[0], values(net.gamma)), ([0.75, 1.5], 0.75, [4.0]))

    def test_adam_groups_and_group_errors(self):
        a = pj.Parameter(pj.Tensor([1.0]), name="a")
        b = pj.Parameter(pj.Tensor([1.0]), name="b")
        opt = nn.Adam([{"params": [a], "lr": 0.5}, {"params": [b]}], learning_rate=0.25)
        opt((pj.Tensor([3.0]), pj.Tensor([-2.0])))
        # Adam's first step moves each parameter by lr * g / |g| (up to eps)
        self.assertAlmostEqual(values(a)[0], 0.5, 5)
        self.assertAlmostEqual(values(b)[0], 1.25, 5)
        with self.assertRaisesRegex(KeyError, "got \\['momentum'\\]"):
            nn.SGD([{"params": [a], "momentum": 0.9}], 0.1)
        with self.assertRaisesRegex(RuntimeError, "the parameter a is in more than one group"):
            nn.SGD([{"params": [a]}, {"params": [a, b]}], 0.1)
        with self.assertRaisesRegex(ValueError, "order_params group must hold only"):
            nn.SGD([{"params": [a]}, {"order_params": [a], "lr": 0.1}], 0.1)
        with self.assertRaisesRegex(ValueError, "order_params has 1 parameters, the groups hold 2"):
            nn.SGD([{"params": [a, b]}, {"order_params": [a]}], 0.1)
        with self.assertRaisesRegex(TypeError, "all elements of parameters must be Parameters or all group dicts"):
            nn.SGD([a, {"params": [b]}], 0.1)
        with self.assertRaisesRegex(TypeError, "grad_centralization of group 0 must be a bool"):
            nn.SGD([{"params": [a], "grad_centralization": 1}], 0.1)


class ClipGradStep(nn.TrainOneStepCell):
    """Model-zoo style: fills sens from the loss, reads self.grad / self.weights / self.grad_reducer
    / self.reducer_flag, clips by the global norm and applies the optimizer through F.depend."""

    def __init__(self, network, optimizer, sens=1.0, clip_norm=0.5):
        super(ClipGradStep, self).__init__(network, optimizer, sens)
        self.hyper_map = C.HyperMap()
        self.clip_norm = clip_norm

    def construct(self, *inputs):
        weights = self.weights
        loss = self.network(*inputs)
        sens = P.Fill()(P.DType()(loss), P.Shape()(loss), self.sens)
        grads = self.grad(self.network, weights)(*inputs, sens)
        sq = self.hyper_map(lambda g: P.ReduceSum()(P.Square()(g)), grads)
        norm = P.Sqrt()(P.AddN()(sq))
        scale = self.clip_norm / P.Maximum()(norm, self.clip_norm)
        grads = self.hyper_map(lambda g: g * scale, grads)
        if self.reducer_flag:
            grads = self.grad_reducer(grads)
        else:
            grads = self.grad_reducer(grads)  # an Identity Cell in one process
        return F.depend(loss, self.optimizer(grads))


class SensTensorStep(nn.TrainOneStepCell):
    """A (1,) sensitivity Tensor for a scalar loss (loss scaling), unscaled by the optimizer."""

    def __init__(self, network, optimizer):
        super(SensTensorStep, self).__init__(network, optimizer)
        self.scale_sens = pj.Tensor([4.0])

    def construct(self, x, y):
        loss = self.network(x, y)
        grads = self.grad(self.network, self.weights)(x, y, self.scale_sens)
        grads = self.grad_reducer(grads)
        self.optimizer(grads)
        return loss


class CustomTrainOneStep(unittest.TestCase):
    def train(self, step_cls, opt_kw, jit, steps=6):
        pj.set_seed(3)
        net = nn.Dense(4, 3)
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9, **opt_kw)
        step = step_cls(nn.WithLossCell(net, nn.MSELoss()), opt)
        self.assertIs(step.weights[0], net.weight)
        self.assertEqual((step.sens, step.reducer_flag), (1.0, False))
        run = pj.jit(step) if jit else step
        pj.set_seed(4)
        x, y = pj.randn(8, 4), pj.randn(8, 3)
        losses = [float(run(x, y)) for _ in range(steps)]
        return net, run, losses

    def check(self, step_cls, opt_kw):
        eager, _, le = self.train(step_cls, opt_kw, False)
        before = pj.jit_stats(step_cls.construct)  # (under PIJIT_STRESS the eager steps were captured too)
        jitted, run, lj = self.train(step_cls, opt_kw, True)
        self.assertLess(le[-1], le[0] * 0.9, le)
        self.assertEqual(le, lj)
        for a, b in zip(eager.get_parameters(), jitted.get_parameters()):
            self.assertEqual(values(a), values(b), a.name)
        if CAPTURE_ON:
            st = pj.jit_stats(run)
            self.assertEqual([st[k] - before[k] for k in ("graphs", "breaks", "cache_hits")], [1, 0, 5],
                             st["break_reasons"])
        else:
            assert_ran_eagerly(self, run)

    def test_clip_by_global_norm_step(self):
        self.check(ClipGradStep, {})

    def test_sens_tensor_of_shape_1_with_loss_scale(self):
        self.check(SensTensorStep, {"loss_scale": 4.0})

    def test_return_grad(self):
        net = XYZ()
        step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), 0.5), return_grad=True)
        loss, (gw, gb) = step(pj.Tensor([1.0]), pj.Tensor([2.0]), pj.Tensor([0.0]))
        self.assertEqual((values(loss), values(gw), values(gb)), ([10.0], [1.0], [2.0]))
        self.assertEqual((values(net.w), values(net.b)), ([5.5], [1.0]))


if __name__ == "__main__":
    unittest.main()
