"""Optimizer state as MindSpore keeps it: the learning rate is a Parameter ('learning_rate',
'learning_rate_group_<i>', a table's 1-D one), the step count 'global_step', and each optimizer's
moments and accumulators are Parameters under MindSpore's names ('moments.<param>', 'moment1.<param>',
'beta1_power', 'accum.<param>', ...), in parameters_dict() and so in checkpoints. A resumed run
keeps its momentum; a new learning rate written between jitted steps is read without a recompile."""
import os
import shutil
import tempfile
import unittest

import pijit as pj
from pijit import nn, ops, Tensor, Parameter
from pijit import dtype as mstype
from jit_compare import CAPTURE_ON, assert_ran_eagerly


def flat(t):
    return [float(v) for v in t.reshape((-1,)).tolist()]


def weights(net):
    return {p.name: flat(p) for p in net.get_parameters()}


def small_net(seed):
    pj.set_seed(seed)
    return nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2)])


def data():
    pj.set_seed(99)
    return [(pj.randn(5, 3), pj.randn(5, 2)) for _ in range(3)]


def names(opt):
    return list(opt.parameters_dict().keys())


class Names(unittest.TestCase):
    def test_state_names_as_mindspore(self):
        net = nn.Dense(3, 2)
        w = ["weight", "bias"]

        def state(prefix):
            return [prefix + "." + n for n in w]
        cases = [
            (nn.Momentum(net.trainable_params(), 0.1, 0.9), state("moments")),
            (nn.Adam(net.trainable_params(), 0.1), ["beta1_power", "beta2_power"] + state("moment1") + state("moment2")),
            (nn.SGD(net.trainable_params(), 0.1, momentum=0.9), state("accum") + state("stat")),
            (nn.Adagrad(net.trainable_params()), state("accum")),
            (nn.RMSProp(net.trainable_params(), centered=True), state("mean_grad") + state("mean_square") + state("moment")),
            (nn.AdamWeightDecay(net.trainable_params()), state("adam_m") + state("adam_v")),
            (nn.FTRL(net.trainable_params()), state("moments") + state("linear")),
            (nn.Lamb(net.trainable_params(), 0.1), state("lamb_m") + state("lamb_v")),
            (nn.Adadelta(net.trainable_params()), state("accum") + state("accum_update")),
        ]
        for opt, expect in cases:
            got = names(opt)
            self.assertEqual(got[:4], w + ["global_step", "learning_rate"], type(opt).__name__)
            self.assertEqual(sorted(got[4:]), sorted(expect), type(opt).__name__)
            self.assertEqual(names(opt), [p.name for p in opt.get_parameters()])
            for p in opt.get_parameters():
                if p.name not in w:
                    self.assertFalse(p.requires_grad, p.name)  # state is not trained
        opt = nn.Adam(net.trainable_params(), 0.1)
        self.assertEqual((opt.global_step.shape, opt.global_step.dtype), ((1,), mstype.int32))
        self.assertEqual((opt.learning_rate.shape, opt.learning_rate.dtype), ((), mstype.float32))
        self.assertEqual((opt.beta1_power.shape, flat(opt.beta1_power)), ((1,), [1.0]))

    def test_train_network_holds_the_optimizer_state(self):
        net = nn.Dense(3, 2)
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
        train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
        self.assertEqual(names(train), ["weight", "bias", "global_step", "learning_rate", "moments.weight",
                                        "moments.bias"])
        self.assertEqual([p.name for p in train.trainable_params()], ["weight", "bias"])

    def test_learning_rate_forms(self):
        net = nn.Dense(2, 2)
        opt = nn.SGD(net.trainable_params(), [0.3, 0.2, 0.1])
        self.assertTrue(opt.dynamic_lr)
        table = opt.learning_rate.learning_rate  # MindSpore's _IteratorLearningRate holds the Parameter
        self.assertIsInstance(table, Parameter)
        self.assertEqual((table.name, table.shape), ("learning_rate", (3,)))
        self.assertIn("learning_rate", names(opt))
        self.assertIs(opt.get_lr_parameter(net.weight), table)
        lrs = []
        for _ in range(4):
            lrs.append(round(float(opt.get_lr()), 6))
            opt((ops.zeros_like(net.weight), ops.zeros_like(net.bias)))
        self.assertEqual(lrs, [0.3, 0.2, 0.1, 0.1])  # the last value holds after the table
        sched = nn.ExponentialDecayLR(0.1, 0.5, 1)
        opt = nn.Momentum(net.trainable_params(), sched, 0.9)
        self.assertIs(opt.learning_rate, sched)
        self.assertIs(opt.get_lr_parameter(net.bias), sched)
        self.assertAlmostEqual(float(opt.get_lr()), 0.1, places=6)
        # groups: one Parameter per group with a rate of its own, the default shared
        a, b = Parameter(Tensor([1.0]), name="a"), Parameter(Tensor([2.0]), name="b")
        c = Parameter(Tensor([3.0]), name="c")
        opt = nn.Momentum([{"params": [a], "lr": 0.5}, {"params": [b, c]}], 0.25, 0.9)
        got = opt.get_lr_parameter([a, b, c])
        self.assertEqual([p.name for p in got], ["learning_rate_group_0", "learning_rate", "learning_rate"])
        self.assertEqual([float(p) for p in got], [0.5, 0.25, 0.25])
        self.assertIn("learning_rate_group_0", names(opt))
        # a dynamic group among constant ones: each constant returned by a cell of its own
        opt = nn.Momentum([{"params": [a], "lr": [0.5, 0.4]}, {"params": [b, c]}], 0.25, 0.9)
        self.assertEqual([p.name for p in opt.get_lr_parameter([a, b])], ["learning_rate_group_0", "learning_rate"])
        self.assertEqual([round(float(v), 6) for v in opt.get_lr()], [0.5, 0.25, 0.25])
        with self.assertRaisesRegex(ValueError, "dimension of it should be 0 or 1"):
            nn.SGD(net.trainable_params(), Tensor([[0.1]]))

    def test_adam_beta_powers_advance_each_step(self):
        net = nn.Dense(2, 1)
        opt = nn.Adam(net.trainable_params(), 0.1, beta1=0.5, beta2=0.25)
        for _ in range(3):
            opt((ops.ones_like(net.weight), ops.ones_like(net.bias)))
        self.assertEqual(flat(opt.beta1_power), [0.125])
        self.assertEqual(flat(opt.beta2_power), [0.25 ** 3])
        self.assertEqual(opt.global_step.tolist(), [3])


class LearningRateWrites(unittest.TestCase):
    def run_steps(self, jit, write):
        net = small_net(1)
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
        run = pj.jit(step) if jit else step
        losses = []
        for i, (x, y) in enumerate(data() * 2):
            if i == 3:
                write(opt)
            losses.append(float(run(x, y)))
        return net, run, losses

    def test_a_new_learning_rate_is_read_by_the_jitted_step_without_a_recompile(self):
        writes = [
            lambda opt: opt.learning_rate.set_data(Tensor(0.02, mstype.float32)),
            lambda opt: ops.assign(opt.learning_rate, Tensor(0.02, mstype.float32)),
            lambda opt: setattr(opt, "learning_rate", Tensor(0.02, mstype.float32)),
        ]
        eager_net, _, eager_losses = self.run_steps(False, writes[0])
        unchanged_net, _, _ = self.run_steps(False, lambda opt: None)
        self.assertNotEqual(weights(eager_net), weights(unchanged_net))
        for write in writes:
            before = pj.jit_stats(nn.TrainOneStepCell.construct)
            net, run, losses = self.run_steps(True, write)
            if CAPTURE_ON:
                st = pj.jit_stats(run)
                # (one code object for every step cell: a new cell's graph is its recompile; a second
                # graph would be the rate's)
                self.assertEqual([st[k] - before[k] for k in ("graphs", "breaks", "cache_hits")],
                                 [1, 0, 5], st["break_reasons"])
            else:
                assert_ran_eagerly(self, run)
            self.assertEqual(losses, eager_losses)
            self.assertEqual(weights(net), weights(eager_net))

    def test_a_zero_rate_stops_the_weights_in_the_jitted_step(self):
        net = small_net(2)
        opt = nn.SGD(net.trainable_params(), 0.1)
        run = pj.jit(nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt))
        (x, y) = data()[0]
        run(x, y)
        opt._lr.value = 0.0  # the former holder API writes the Parameter too
        self.assertEqual(float(opt.learning_rate), 0.0)
        w = weights(net)
        run(x, y)
        self.assertEqual(weights(net), w)


class Resume(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pijit_optim_state_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def train_net(self, seed, make_opt):
        net = small_net(seed)
        return net, nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), make_opt(net.trainable_params()))

    def check(self, make_opt, jit):
        batches = data()
        net, train = self.train_net(1, make_opt)
        run = pj.jit(train) if jit else train
        for x, y in batches:
            run(x, y)
        path = os.path.join(self.dir, "resume.ckpt")
        pj.save_checkpoint(train, path)
        for x, y in batches:
            run(x, y)
        continued = weights(net)
        # a fresh network (other weights, zero state) restored from the checkpoint
        net2, train2 = self.train_net(7, make_opt)
        not_loaded, unused = pj.load_param_into_net(train2, pj.load_checkpoint(path))
        self.assertEqual((not_loaded, unused), ([], []))
        run2 = pj.jit(train2) if jit else train2
        for x, y in batches:
            run2(x, y)
        self.assertEqual(weights(net2), continued)
        self.assertEqual(train2.optimizer.global_step.tolist(), [6])
        # the weights alone (no optimizer state) do not continue the run
        net3, train3 = self.train_net(7, make_opt)
        pj.load_param_into_net(net3, pj.load_checkpoint(path))
        for x, y in batches:
            train3(x, y)
        self.assertNotEqual(weights(net3), continued)

    def test_resumed_training_keeps_momentum_and_moments(self):
        makers = [lambda ps: nn.Momentum(ps, 0.1, 0.9),
                  lambda ps: nn.Adam(ps, 0.01),
                  lambda ps: nn.SGD(ps, 0.05, momentum=0.8, dampening=0.1),
                  lambda ps: nn.Momentum(ps, [0.1, 0.05, 0.02, 0.01, 0.01, 0.005], 0.9),
                  lambda ps: nn.RMSProp(ps, 0.01, centered=True, momentum=0.5)]
        for make in makers:
            for jit in (False, True):
                self.check(make, jit)

    def test_checkpoint_restores_the_learning_rate(self):
        net, train = self.train_net(1, lambda ps: nn.Momentum(ps, 0.1, 0.9))
        train.optimizer.learning_rate.set_data(Tensor(0.0625, mstype.float32))
        path = os.path.join(self.dir, "lr.ckpt")
        pj.save_checkpoint(train, path)
        entries = pj.load_checkpoint(path)
        self.assertEqual(float(entries["learning_rate"]), 0.0625)
        self.assertEqual(entries["global_step"].tolist(), [0])
        net2, train2 = self.train_net(2, lambda ps: nn.Momentum(ps, 0.1, 0.9))
        pj.load_param_into_net(train2, entries)
        self.assertEqual(float(train2.optimizer.learning_rate), 0.0625)


if __name__ == "__main__":
    unittest.main()
