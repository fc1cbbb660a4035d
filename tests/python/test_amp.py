"""Mixed precision: Cell.to_float (inputs and trainable weights cast, a child converted back keeps
float32, captured as one graph equal to eager, guarded), mindspore.amp (auto_mixed_precision
O0-O3, build_train_network, the loss scale managers and scalers, all_finite, init_status) and
nn.TrainOneStepWithLossScaleCell with its update cells (overflow skips the step and lowers the
scale), against MindSpore's documented behaviour with exact values."""
import sys
import unittest

import pijit as pj
from pijit import amp, nn, ops
from pijit import alias
from jit_compare import assert_ran_eagerly, eager, no_stress, same_bits

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
F16, F32 = pj.float16, pj.float32
INF = float("inf")


class Probe(nn.Cell):
    """Records the dtypes its construct sees (input, its weight as read) in `seen`."""

    def __init__(self, n=3):
        super().__init__()
        self.w = pj.Parameter(pj.ones(n, n), name="w")
        self.seen = []

    def construct(self, x):
        self.seen.append((x.dtype, self.w.dtype))
        return x @ self.w


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Dense(8, 2)

    def construct(self, x):
        return self.fc2(ops.relu(self.bn(self.fc1(x))))


class Mlp(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.fc2 = nn.Dense(8, 2)

    def construct(self, x):
        return self.fc2(ops.relu(self.fc1(x)))


def net(cls=Net, seed=7):
    pj.set_seed(seed)
    return cls()


def data(seed=3):
    pj.set_seed(seed)
    return pj.randn(6, 4), pj.randn(6, 2)


def values(t):
    return t.astype(F32).reshape(-1).tolist()


class ToFloat(unittest.TestCase):
    def test_outputs_float16_equal_to_a_float16_copy_of_the_weights(self):
        x, _ = data()
        ref = net(Mlp)
        half = net(Mlp)
        for d in (half.fc1, half.fc2):  # the same network with float16 weights
            d.weight = pj.Parameter(d.weight.astype(F16), name=d.weight.name)
            d.bias = pj.Parameter(d.bias.astype(F16), name=d.bias.name)
        y32 = ref(x)
        ref.to_float(F16)
        y = ref(x)
        self.assertIs(y.dtype, F16)
        self.assertTrue(same_bits(y, half(x.astype(F16))))
        # within float16's precision of the float32 computation
        for a, b in zip(values(y), values(y32)):
            self.assertAlmostEqual(a, b, delta=2e-2 * max(1.0, abs(b)))

    def test_parameters_keep_their_dtype_and_identity_outside_construct(self):
        m = net(Mlp).to_float(F16)
        w = m.fc1._params["weight"]
        self.assertIs(m.fc1.weight, w)
        self.assertIs(w.dtype, F32)
        m(pj.ones(1, 4))
        self.assertIs(m.fc1.weight.dtype, F32)

    def test_inside_construct_inputs_and_trainable_weights_are_cast(self):
        p = Probe()
        p.to_float(F16)
        self.assertIs(p(pj.ones(2, 3)).dtype, F16)
        self.assertEqual(p.seen, [(F16, F16)])
        frozen = Probe()
        frozen.w.requires_grad = False
        frozen.to_float(F16)
        frozen(pj.ones(2, 3))
        self.assertEqual(frozen.seen, [(F16, F32)])

    def test_a_child_converted_back_keeps_float32(self):
        class Two(nn.Cell):
            def __init__(self):
                super().__init__()
                self.a = Probe()
                self.b = Probe()

            def construct(self, x):
                return self.b(self.a(x))

        t = Two().to_float(F16)
        t.b.to_float(F32)
        out = t(pj.ones(2, 3))
        self.assertEqual(t.a.seen, [(F16, F16)])
        self.assertEqual(t.b.seen, [(F32, F32)])
        self.assertIs(out.dtype, F32)

    def test_a_child_without_its_own_setting_inherits_the_running_cells(self):
        class Holder(nn.Cell):
            def __init__(self):
                super().__init__()
                self.p = Probe()

            def construct(self, x):
                return self.p(x)

        h = Holder().to_float(F16)
        object.__delattr__(h.p, "_cast_inputs_to")  # as a child added after to_float would be
        h(pj.ones(2, 3))
        self.assertEqual(h.p.seen, [(F16, F16)])

    def test_batchnorm_statistics_are_updated_under_float16(self):
        n = net()
        n.set_train()
        n.to_float(F16)
        before = n.bn.moving_mean.tolist()
        n(data()[0])
        self.assertIs(n.bn.moving_mean.dtype, F32)
        self.assertNotEqual(n.bn.moving_mean.tolist(), before)

    def test_gradients_reach_the_float32_weights(self):
        m = net(Mlp).to_float(F16)
        x, y = data()
        step = nn.TrainOneStepCell(nn.WithLossCell(m, nn.MSELoss()), nn.SGD(m.trainable_params(), 0.1))
        w0 = m.fc1.weight.tolist()
        loss = step(x, y)
        self.assertIs(m.fc1.weight.dtype, F32)
        self.assertNotEqual(m.fc1.weight.tolist(), w0)
        self.assertIs(loss.dtype, F32)  # MSELoss is not converted: float16 output, float32 label -> float32

    def test_dst_type_and_flags(self):
        m = Mlp()
        for bad in (pj.int32, "float16", 1.0):
            with self.assertRaisesRegex(ValueError, "For 'to_float', the argument 'dst_type' should be"):
                m.to_float(bad)
        self.assertIs(m.to_float(pj.bfloat16), m)
        self.assertIs(m.fc1(pj.ones(1, 4)).dtype, pj.bfloat16)
        self.assertEqual({k: m.fc2.get_flags()[k] for k in ("fp16", "fp32", "bf16")},
                         {"fp16": False, "fp32": False, "bf16": True})
        self.assertTrue(m.to_float(F16).fp16)


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class ToFloatCaptured(unittest.TestCase):
    def one_graph(self, st, compiles=1):
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (compiles, 0, compiles), st["break_reasons"])

    def test_the_running_cells_dtype_is_each_threads_own(self):
        # A jitted construct called inside a converted cell computes in its dst_type (the weights
        # it reads are cast), called outside it in float32: the dtype is per thread and guarded.
        import threading

        class Outer(nn.Cell):
            def __init__(self, f):
                super().__init__()
                self.f = f

            def construct(self, x):
                return self.f(x)

        inner = net(Mlp)
        jf = pj.jit(inner.construct)
        x = data()[0]
        want32, want16 = eager(inner.construct, x), eager(Outer(inner.construct).to_float(F16), x)
        self.assertIs(want16.dtype, F16)
        got, inside, leave = {}, threading.Event(), threading.Event()

        def parked(y):  # (the worker stays inside its converted cell while the main thread calls)
            inside.set()
            leave.wait(10)
            return jf(y)

        def converted():
            got["16"] = [Outer(jf).to_float(F16)(x) for _ in range(3)] + [Outer(parked).to_float(F16)(x)]
        for _ in range(2):
            inside.clear()
            leave.clear()
            t = threading.Thread(target=converted)
            t.start()
            self.assertTrue(inside.wait(10))
            for _ in range(3):
                self.assertTrue(same_bits(jf(x), want32))
            leave.set()
            t.join()
            for y in got["16"]:
                self.assertTrue(same_bits(y, want16))
        self.assertIs(pj._C.amp_dtype(), None)
        if pj.stress_stats()["level"] == 0:  # (under stress, other frames compile this code too)
            self.assertEqual(pj.jit_stats(jf)["compiles"], 2)  # (one graph per dtype, each reused)

    def test_jitted_network_is_one_graph_equal_to_eager(self):
        class Own(Net):  # a construct of its own: under stress, Net's code has other tests' graphs
            def construct(self, x):
                return self.fc2(ops.relu(self.bn(self.fc1(x))))

        n = net(Own).to_float(F16)
        n.bn.to_float(F32)
        j = pj.jit(n)
        for seed in range(3):
            x, _ = data(seed)
            want = eager(n, x)
            got = j(x)
            self.assertIs(got.dtype, F16)
            self.assertTrue(same_bits(want, got))
        self.one_graph(pj.jit_stats(j))

    def test_inlined_into_a_function(self):
        n = net(Mlp).to_float(F16)

        def f(x):
            return n(x) * 2

        jf = pj.jit(f)
        for seed in range(3):
            x, _ = data(seed)
            self.assertTrue(same_bits(eager(f, x), jf(x)))
        self.one_graph(pj.jit_stats(jf))
        n.to_float(F32)  # the guard on _cast_inputs_to: a new graph, in float32
        x, _ = data()
        got = jf(x)
        self.assertIs(got.dtype, F32)
        self.assertTrue(same_bits(eager(f, x), got))
        self.one_graph(pj.jit_stats(jf), compiles=2)

    def test_a_graph_made_inside_a_converted_cell_is_not_reused_outside(self):
        lin = Probe()

        def f(x):
            return x @ lin.w  # a Parameter read through a Cell attribute

        jf = pj.jit(f)

        class Outer(nn.Cell):
            def construct(self, x):
                return jf(x)

        outer = Outer().to_float(F16)
        x = pj.ones(2, 3)
        with no_stress():
            inside = outer(x)
        self.assertIs(inside.dtype, F16)
        outside = jf(x.astype(F16))
        self.assertIs(outside.dtype, F32)  # float16 @ float32: float32
        self.assertTrue(same_bits(outside, eager(f, x.astype(F16))))
        st = pj.jit_stats(jf)
        self.assertEqual((st["graphs"], st["breaks"], st["compiles"]), (2, 0, 2), st["break_reasons"])

    def test_jitted_training_step_equals_eager(self):
        def make():
            m = net().to_float(F16)
            m.bn.to_float(F32)
            m.set_train()
            step = nn.TrainOneStepCell(nn.WithLossCell(m, nn.MSELoss()), nn.Momentum(m.trainable_params(), 0.05, 0.9))
            return step, m

        (s1, m1), (s2, m2) = make(), make()
        j = pj.jit(s2)
        losses = []
        for i in range(4):
            x, y = data(i % 2)
            want = eager(s1, x, y)
            got = j(x, y)
            self.assertTrue(same_bits(want, got), (want, got))
            losses.append(got.tolist())
        for a, b in zip(m1.get_parameters(), m2.get_parameters()):
            self.assertTrue(same_bits(a, b), a.name)
        self.one_graph(pj.jit_stats(j))


class AutoMixedPrecision(unittest.TestCase):
    def test_o0_returns_the_network(self):
        n = Net()
        self.assertIs(amp.auto_mixed_precision(n, "O0"), n)
        self.assertNotIn("_cast_inputs_to", n.fc1.__dict__)

    def test_o3_converts_everything_and_casts_the_outputs_to_float32(self):
        p = Probe()
        wrapped = amp.auto_mixed_precision(p, "O3")
        self.assertIsNot(wrapped, p)
        out = wrapped(pj.ones(2, 3))
        self.assertIs(out.dtype, F32)
        self.assertEqual(p.seen, [(F16, F16)])
        self.assertEqual([q.name for q in wrapped.get_parameters()], ["w"])

    def test_o2_keeps_batchnorm_in_float32(self):
        n = Net()
        bn = n.bn
        wrapped = amp.auto_mixed_precision(n, "O2")
        self.assertIs(n._cells["bn"]._backbone, bn)
        self.assertIs(bn.__dict__["_cast_inputs_to"], F32)
        self.assertIs(n.fc1.__dict__["_cast_inputs_to"], F16)
        self.assertIs(n.bn(pj.ones(2, 8)).dtype, F16)  # kept float32 inside, float16 out
        self.assertIs(wrapped(pj.ones(2, 4)).dtype, F32)
        self.assertEqual([p.name for p in n.get_parameters()],
                         ["fc1.weight", "fc1.bias", "bn.gamma", "bn.beta", "bn.mean",
                          "bn.variance", "fc2.weight", "fc2.bias"])

    def test_o1_converts_the_white_list_only(self):
        n = Net()
        fc1 = n.fc1
        same = amp.auto_mixed_precision(n, "O1")
        self.assertIs(same, n)
        self.assertIs(n._cells["fc1"]._backbone, fc1)
        self.assertIs(fc1.__dict__["_cast_inputs_to"], F16)
        self.assertNotIn("_cast_inputs_to", n.bn.__dict__)
        self.assertIs(n._cells["fc1"](pj.ones(2, 4)).dtype, F32)
        d = nn.Dense(2, 2)
        self.assertIs(amp.auto_mixed_precision(d, "O1")._backbone, d)

    def test_bfloat16_and_errors(self):
        p = Probe()
        amp.auto_mixed_precision(p, "O3", dtype=pj.bfloat16)(pj.ones(1, 3))
        self.assertEqual(p.seen, [(pj.bfloat16, pj.bfloat16)])
        with self.assertRaisesRegex(TypeError, "The network type should be Cell."):
            amp.auto_mixed_precision(lambda x: x, "O2")
        with self.assertRaisesRegex(ValueError, "The amp level O4 is not supported"):
            amp.auto_mixed_precision(Net(), "O4")
        with self.assertRaisesRegex(ValueError, "The dtype should be one of"):
            amp.auto_mixed_precision(Net(), "O2", dtype=F32)

    def test_lists(self):
        white, black = amp.get_white_list(), amp.get_black_list()
        for cls in (nn.Dense, nn.Conv2d, nn.LSTMCell, nn.GRUCell, nn.RNNCell):
            self.assertIn(cls, white)
        for cls in (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm):
            self.assertIn(cls, black)
        white.clear()
        self.assertIn(nn.Dense, amp.get_white_list())

    def test_custom_mixed_precision(self):
        n = Net()
        amp.custom_mixed_precision(n, white_list=[nn.BatchNorm1d])
        self.assertIs(n._cells["bn"]._backbone.__dict__["_cast_inputs_to"], F16)
        self.assertNotIn("_cast_inputs_to", n.fc1.__dict__)
        m = Net()
        out = amp.custom_mixed_precision(m, black_list=[nn.Dense])
        self.assertIs(m._cells["fc1"]._backbone.__dict__["_cast_inputs_to"], F32)
        self.assertIs(out(pj.ones(2, 4)).dtype, F32)
        with self.assertRaisesRegex(ValueError, "one of white_list and black_list must be provided"):
            amp.custom_mixed_precision(Net())
        with self.assertRaisesRegex(ValueError, "cannot be provided at the same time"):
            amp.custom_mixed_precision(Net(), white_list=[], black_list=[])
        with self.assertRaisesRegex(TypeError, "should be a class"):
            amp.custom_mixed_precision(Net(), white_list=[nn.Dense(1, 1)])

    def test_mindspore_amp_is_this_module(self):
        alias.install_mindspore_alias()
        import mindspore.amp as ms_amp
        self.assertIs(ms_amp, amp)
        self.assertIs(ms_amp.DynamicLossScaleManager, amp.DynamicLossScaleManager)
        import mindspore.nn as ms_nn
        self.assertIs(ms_nn.TrainOneStepWithLossScaleCell, nn.TrainOneStepWithLossScaleCell)


class LossScaleManagers(unittest.TestCase):
    def test_dynamic_manager_on_the_host(self):
        m = amp.DynamicLossScaleManager(8, 2, 2)
        seen = []
        for overflow in (False, False, True, False, False, False):
            m.update_loss_scale(overflow)
            seen.append(m.get_loss_scale())
        self.assertEqual(seen, [8, 16, 8.0, 8.0, 16.0, 16.0])
        self.assertTrue(m.get_drop_overflow_update())
        self.assertEqual(amp.DynamicLossScaleManager().get_loss_scale(), 2 ** 24)
        low = amp.DynamicLossScaleManager(1, 2, 5)
        low.update_loss_scale(True)
        self.assertEqual(low.get_loss_scale(), 1)
        cell = m.get_update_cell()
        self.assertIsInstance(cell, nn.DynamicLossScaleUpdateCell)
        self.assertEqual(cell.get_loss_scale(), 16.0)
        with self.assertRaisesRegex(ValueError, "'init_loss_scale' must be > 1"):
            amp.DynamicLossScaleManager(0.5)
        with self.assertRaisesRegex(ValueError, "scale_window"):
            amp.DynamicLossScaleManager(8, 2, 0)

    def test_fixed_manager(self):
        m = amp.FixedLossScaleManager()
        self.assertEqual((m.get_loss_scale(), m.get_drop_overflow_update()), (128.0, True))
        self.assertIsInstance(m.get_update_cell(), nn.FixedLossScaleUpdateCell)
        self.assertEqual(m.get_update_cell().get_loss_scale(), 128.0)
        m.update_loss_scale(True)
        self.assertEqual(m.get_loss_scale(), 128.0)
        self.assertIsNone(amp.FixedLossScaleManager(1024.0, False).get_update_cell())
        with self.assertRaisesRegex(ValueError, "'loss_scale' must be >= 1"):
            amp.FixedLossScaleManager(0.5)
        self.assertIsInstance(m, amp.LossScaleManager)

    def test_dynamic_update_cell_sequence(self):
        cell = nn.DynamicLossScaleUpdateCell(loss_scale_value=8.0, scale_factor=2, scale_window=2)
        scale = pj.Parameter(pj.Tensor(8.0, F32), name="s", requires_grad=False)
        seen = []
        for overflow in (False, False, True, False, False, False):
            out = cell(scale, pj.Tensor(overflow))
            self.assertEqual(out.tolist(), overflow)
            seen.append(scale.tolist())
        self.assertEqual(seen, [8.0, 16.0, 8.0, 8.0, 16.0, 16.0])
        self.assertEqual((cell.cur_iter.tolist(), cell.last_overflow_iter.tolist()), (7, 5))
        one = pj.Parameter(pj.Tensor(1.0, F32), name="one", requires_grad=False)
        cell(one, pj.Tensor(True))
        self.assertEqual(one.tolist(), 1.0)

    def test_fixed_update_cell(self):
        cell = nn.FixedLossScaleUpdateCell(64.0)
        scale = pj.Parameter(pj.Tensor(64.0, F32), name="s", requires_grad=False)
        self.assertTrue(cell(scale, pj.Tensor(True)).tolist())
        self.assertEqual(scale.tolist(), 64.0)


class LossScalers(unittest.TestCase):
    def test_static(self):
        s = amp.StaticLossScaler(1024)
        self.assertEqual(s.scale(pj.Tensor([1.0, 2.0])).tolist(), [1024.0, 2048.0])
        a, b = s.scale((pj.Tensor([1.0]), pj.Tensor([0.5], F16)))
        self.assertEqual((a.tolist(), b.tolist(), b.dtype), ([1024.0], [512.0], F16))
        self.assertEqual(s.unscale([pj.Tensor([2048.0])])[0].tolist(), [2.0])
        self.assertIsNone(s.adjust(pj.Tensor(False)))
        self.assertEqual(s.scale_value.tolist(), 1024.0)
        self.assertIsInstance(s.scale_value, pj.Parameter)
        with self.assertRaisesRegex(ValueError, "'scale_value' must be > 1"):
            amp.StaticLossScaler(0.5)
        with self.assertRaisesRegex(NotImplementedError, ""):
            amp.LossScaler().scale(1)

    def test_dynamic_adjust(self):
        s = amp.DynamicLossScaler(1024, 2, 3)
        seen = []
        for finite in (True, True, True, True, False, True):
            self.assertIs(s.adjust(pj.Tensor(finite)), True)
            seen.append((s.scale_value.tolist(), s.counter.tolist()))
        self.assertEqual(seen, [(1024.0, 1), (1024.0, 2), (2048.0, 0), (2048.0, 1), (1024.0, 0), (1024.0, 1)])
        self.assertNotIsInstance(s, amp.StaticLossScaler)
        edge = amp.DynamicLossScaler(2.0 ** 127, 2, 1)  # growing would overflow float32: kept
        edge.adjust(pj.Tensor(True))
        self.assertEqual(edge.scale_value.tolist(), 2.0 ** 127)
        low = amp.DynamicLossScaler(1, 2, 1)
        low.adjust(pj.Tensor(False))
        self.assertEqual(low.scale_value.tolist(), 1.0)
        with self.assertRaisesRegex(ValueError, "scale_window"):
            amp.DynamicLossScaler(8, 2, 0)

    def test_all_finite_and_init_status(self):
        self.assertIs(amp.all_finite((pj.Tensor([1.0, 2.0]), pj.Tensor([3.0], F16))).tolist(), True)
        for bad in (INF, -INF, float("nan")):
            r = amp.all_finite([pj.Tensor([1.0]), pj.Tensor([2.0, bad])])
            self.assertEqual((r.tolist(), r.dtype, r.shape), (False, pj.bool_, ()))
        self.assertTrue(amp.all_finite(pj.Tensor([1, 2])).tolist())
        self.assertFalse(amp.all_finite(pj.Tensor([65504.0], F16) * 2).tolist())
        st = amp.init_status()
        self.assertEqual((st.tolist(), st.dtype), ([0.0] * 8, F32))


class LossScaleTraining(unittest.TestCase):
    def test_scale_sense_checks(self):
        n = net(Mlp)
        wl = nn.WithLossCell(n, nn.MSELoss())
        opt = nn.SGD(n.trainable_params(), 0.1)
        with self.assertRaisesRegex(ValueError, r"the shape of 'scale_sense' must be \(1,\) or \(\)"):
            nn.TrainOneStepWithLossScaleCell(wl, opt, pj.Tensor([1.0, 2.0]))
        with self.assertRaisesRegex(TypeError, "the 'scale_sense' must be Cell or Tensor"):
            nn.TrainOneStepWithLossScaleCell(wl, opt, 1024.0)
        step = nn.TrainOneStepWithLossScaleCell(wl, opt, pj.Tensor([1024.0]))
        step.set_sense_scale(pj.Tensor([8.0]))
        self.assertEqual(step.scale_sense.tolist(), [8.0])
        with self.assertRaisesRegex(TypeError, "the type of 'sens' must be Tensor"):
            step.set_sense_scale(8.0)

    def test_a_tensor_scale_trains_as_the_plain_step(self):
        x, y = data()
        a, b = net(Mlp), net(Mlp)
        plain = nn.TrainOneStepCell(nn.WithLossCell(a, nn.MSELoss()), nn.SGD(a.trainable_params(), 0.1))
        scaled = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(b, nn.MSELoss()), nn.SGD(b.trainable_params(), 0.1),
                                                  pj.Tensor(1024.0))
        for _ in range(2):
            want = plain(x, y)
            loss, overflow, scale = scaled(x, y)
            self.assertTrue(same_bits(want, loss))
            self.assertEqual((overflow.tolist(), overflow.shape, scale.tolist()), (False, (), 1024.0))
        for p, q in zip(a.get_parameters(), b.get_parameters()):
            for u, v in zip(p.reshape(-1).tolist(), q.reshape(-1).tolist()):
                self.assertAlmostEqual(u, v, delta=1e-6)

    def test_overflow_skips_the_update_and_lowers_the_scale(self):
        n = net(Mlp)
        step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(n, nn.MSELoss()), nn.Momentum(n.trainable_params(), 0.1, 0.9),
                                                amp.DynamicLossScaleManager(1024, 2, 1000).get_update_cell())
        x, y = data()
        before = [p.tolist() for p in n.get_parameters()]
        bad = x.copy()
        bad[0, 0] = INF
        loss, overflow, scale = step(bad, y)
        self.assertEqual((overflow.tolist(), scale.tolist(), step.scale_sense.tolist()), (True, 1024.0, 512.0))
        self.assertEqual([p.tolist() for p in n.get_parameters()], before)
        loss, overflow, scale = step(x, y)
        self.assertEqual((overflow.tolist(), scale.tolist()), (False, 512.0))
        self.assertNotEqual([p.tolist() for p in n.get_parameters()], before)


class BuildTrainNetwork(unittest.TestCase):
    def opt(self, n):
        return nn.Momentum(n.trainable_params(), 0.05, 0.9)

    def test_levels_and_kwargs(self):
        n = Net()
        t = amp.build_train_network(n, self.opt(n), nn.MSELoss(), level="O2")
        self.assertIsInstance(t, nn.TrainOneStepWithLossScaleCell)
        self.assertIsInstance(t.loss_scaling_manager, nn.DynamicLossScaleUpdateCell)
        self.assertEqual(t.scale_sense.tolist(), 2.0 ** 24)
        self.assertTrue(t.training)
        self.assertIs(n.fc1.__dict__["_cast_inputs_to"], F16)
        self.assertIs(n._cells["bn"]._backbone.__dict__["_cast_inputs_to"], F32)
        m = Net()
        t = amp.build_train_network(m, self.opt(m), nn.MSELoss(), level="O3")
        self.assertIs(type(t), nn.TrainOneStepCell)
        self.assertIs(m.bn.__dict__["_cast_inputs_to"], F16)
        k = Net()
        t = amp.build_train_network(k, self.opt(k), level="O2", loss_scale_manager=amp.FixedLossScaleManager(64.0, False),
                                    keep_batchnorm_fp32=False)
        self.assertIs(type(t), nn.TrainOneStepCell)
        self.assertEqual(t.sens, 64.0)
        self.assertIs(k.bn.__dict__["_cast_inputs_to"], F16)
        o = Net()
        t = amp.build_train_network(o, self.opt(o), nn.MSELoss(), level="O0")
        self.assertIs(type(t), nn.TrainOneStepCell)
        self.assertNotIn("_cast_inputs_to", o.fc1.__dict__)

    def test_errors(self):
        n = Net()
        with self.assertRaisesRegex(ValueError, "Unsupported arg 'foo'"):
            amp.build_train_network(n, self.opt(n), level="O2", foo=1)
        with self.assertRaisesRegex(TypeError, "The argument `level` must be a string"):
            amp.build_train_network(n, self.opt(n), level=2)
        with self.assertRaisesRegex(ValueError, "Level `auto` only support when `device_target` is GPU or Ascend"):
            amp.build_train_network(n, self.opt(n), level="auto")
        with self.assertRaisesRegex(TypeError, "'optimizer' must be an nn.Optimizer"):
            amp.build_train_network(n, None)
        with self.assertRaisesRegex(TypeError, "loss_scale_manager must be a LossScaleManager"):
            amp.build_train_network(n, self.opt(n), loss_scale_manager=8.0)

    def train(self, level, jitted):
        n = net()
        n.set_train()
        step = amp.build_train_network(n, self.opt(n), nn.MSELoss(), level=level,
                                       loss_scale_manager=amp.DynamicLossScaleManager(2.0 ** 10, 2, 3))
        run = pj.jit(step) if jitted else (lambda *a: eager(step, *a))
        out = []
        for i in range(8):
            x, y = data(i % 2)
            out.append(run(x, y))
        return out, n, run

    def test_float16_training_lowers_the_loss_eagerly_and_jitted(self):
        for level in ("O2", "O3"):
            want, n1, _ = self.train(level, False)
            got, n2, j = self.train(level, True)
            self.assertTrue(same_bits(want, got), level)
            losses = [loss.tolist() for loss, _, _ in got]
            self.assertLess(losses[-2], losses[0], (level, losses))
            self.assertEqual([s.tolist() for _, _, s in got], [1024.0] * 3 + [2048.0] * 3 + [4096.0] * 2)
            self.assertEqual([o.tolist() for _, o, _ in got], [False] * 8)
            for a, b in zip(n1.get_parameters(), n2.get_parameters()):
                self.assertTrue(same_bits(a, b), (level, a.name))
            if SUPPORTED:
                st = pj.jit_stats(j)
                # (the step's code is shared by both levels: O3 recompiles once for O2's structure)
                compiles = {"O2": 1, "O3": 2}[level]
                self.assertEqual(st["compiles"], compiles, st["recompile_reasons"])
                # the step skips its update on an overflow: one branch on the overflow flag per compile
                self.assertEqual(st["breaks"], compiles, st["break_reasons"])
                for reason in st["break_reasons"]:
                    self.assertTrue(reason.startswith("B003 ") and "wrap.py" in reason, reason)
            else:
                assert_ran_eagerly(self, j)


if __name__ == "__main__":
    unittest.main()
