"""mindspore.train.Model (issue 43): what a user relies on. Model.train over a dataset runs the
same steps as a loop written by hand (equal losses, equal weights), jitted by default and equal to
the eager run (PIJIT_MODEL_JIT=0), as one captured graph; the loss decreases on a learnable task;
callbacks see MindSpore's hooks in MindSpore's order with its cb_params; request_stop stops;
LossMonitor prints MindSpore's lines; ModelCheckpoint writes the files MindSpore names, loadable;
eval's metrics equal values computed by hand; fit evaluates between epochs; the progress bar draws
on a terminal only. The datasets are a small duck-typed class of this file (get_dataset_size,
create_tuple_iterator), and pijit.dataset's GeneratorDataset where it exists."""
import contextlib
import io
import math
import os
import random
import re
import shutil
import sys
import tempfile
import unittest

import pijit as pj
from pijit import nn
from pijit import dtype as mstype
from pijit.train import (Model, Callback, LossMonitor, ModelCheckpoint, CheckpointConfig, History,
                         EarlyStopping, LambdaCallback, LearningRateScheduler, TimeMonitor)

# The Pythons capture supports (elsewhere jit runs the function eagerly, with the same results).
from jit_compare import CAPTURE_ON as CAPTURES  # noqa: E402


class RowsDataset(object):
    """A minimal dataset: a list of (data, label) batches (what Model reads of a dataset)."""

    def __init__(self, rows):
        self.rows = list(rows)
        self.iterators = 0

    def get_dataset_size(self):
        return len(self.rows)

    def create_tuple_iterator(self, num_epochs=-1, output_numpy=False):
        self.iterators += 1
        return iter([list(r) for r in self.rows])


def make_images(n, seed):
    """n 1x8x8 images of 3 classes: class k has a bright 2-row band at rows 2k..2k+1, plus noise."""
    rnd = random.Random(seed)
    xs, ys = [], []
    for i in range(n):
        k = i % 3
        img = [[[(1.0 if 2 * k + 1 <= r <= 2 * k + 2 else 0.0) + rnd.uniform(-0.2, 0.2) for _ in range(8)]
                for r in range(8)]]
        xs.append(img)
        ys.append(k)
    return xs, ys


def batches(xs, ys, batch):
    out = []
    for i in range(0, len(xs), batch):
        out.append((pj.Tensor(xs[i:i + batch], mstype.float32), pj.Tensor(ys[i:i + batch], mstype.int32)))
    return out


class LeNetish(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, pad_mode="valid", has_bias=True)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 3 * 3, 3)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.relu(self.conv1(x)))))


def snapshot(net):
    return {name: p.copy() for name, p in net.parameters_dict().items()}


def values(net):
    return {name: [float(v) for v in p.reshape((-1,)).tolist()] for name, p in net.parameters_dict().items()}


def fresh_net(init):
    net = LeNetish()
    pj.load_param_into_net(net, {k: v.copy() for k, v in init.items()})
    return net


@contextlib.contextmanager
def env(**kv):
    old = {k: os.environ.get(k) for k in kv}
    try:
        for k, v in kv.items():
            os.environ[k] = v
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class StepLosses(Callback):
    def __init__(self):
        self.losses = []

    def on_train_step_end(self, run_context):
        self.losses.append(float(run_context.original_args().net_outputs))


def model_for(net, lr=0.05, metrics=None):
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), lr, 0.9)
    return Model(net, loss_fn=loss, optimizer=opt, metrics=metrics)


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        xs, ys = make_images(48, 7)
        cls.data = RowsDataset(batches(xs, ys, 8))
        vx, vy = make_images(24, 11)
        cls.valid = RowsDataset(batches(vx, vy, 8))
        cls.init = snapshot(LeNetish())

    def setUp(self):
        self._progress = os.environ.get("PIJIT_PROGRESS")
        os.environ["PIJIT_PROGRESS"] = "0"  # the bar has its own tests below

    def tearDown(self):
        if self._progress is None:
            os.environ.pop("PIJIT_PROGRESS", None)
        else:
            os.environ["PIJIT_PROGRESS"] = self._progress


class TrainLoop(Base):
    def hand_loop(self, epochs):
        net = fresh_net(self.init)
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
        step.set_train()
        losses = []
        for _ in range(epochs):
            for x, y in self.data.rows:
                losses.append(float(step(x, y)))
        return losses, values(net)

    def model_run(self, epochs, jit):
        with env(PIJIT_MODEL_JIT="1" if jit else "0"):
            net = fresh_net(self.init)
            model = model_for(net)
        rec = StepLosses()
        model.train(epochs, self.data, callbacks=[rec])
        return model, rec.losses, values(net)

    def test_equal_to_hand_loop_eager_and_jitted(self):
        hand_losses, hand_w = self.hand_loop(3)
        model, jit_losses, jit_w = self.model_run(3, True)
        _, eager_losses, eager_w = self.model_run(3, False)
        self.assertEqual(len(hand_losses), 18)
        self.assertEqual(eager_losses, hand_losses)  # same kernels, same order: bit for bit
        self.assertEqual(jit_losses, eager_losses)
        self.assertEqual(jit_w, eager_w)
        self.assertEqual(eager_w, hand_w)
        first, last = sum(hand_losses[:6]) / 6, sum(hand_losses[-6:]) / 6
        self.assertLess(last, first * 0.8, hand_losses)
        # the jitted step is one graph with no graph break (the counters are the step code's, shared
        # by every Model: a new Model's optimizer is a new guard value, so count from here)
        with env(PIJIT_MODEL_JIT="1"):
            model = model_for(fresh_net(self.init))
        before = pj.jit_stats(model._train_step.jitted)
        model.train(2, self.data)
        after = pj.jit_stats(model._train_step.jitted)
        self.assertEqual(after["break_reasons"], [])
        if CAPTURES:
            self.assertEqual(after["compiles"] - before["compiles"], 1)
            self.assertEqual(after["cache_hits"] - before["cache_hits"], 11)
        else:  # an interpreter capture does not support yet runs the same steps eagerly
            self.assertEqual(after["compiles"] - before["compiles"], 0)

    def test_eager_switch_runs_no_jit(self):
        with env(PIJIT_MODEL_JIT="0"):
            model = model_for(fresh_net(self.init))
        self.assertIsNone(model._train_step.jitted)
        self.assertIsNone(model._predict_step.jitted)

    def test_networks_built_as_mindspore_builds_them(self):
        net = fresh_net(self.init)
        model = model_for(net, metrics={"acc"})
        self.assertIsInstance(model.train_network, nn.TrainOneStepCell)
        self.assertIsInstance(model.eval_network, nn.WithEvalCell)
        self.assertIs(model.predict_network, net)
        only_loss = Model(net, loss_fn=nn.SoftmaxCrossEntropyWithLogits(sparse=True))
        self.assertIsInstance(only_loss.train_network, nn.WithLossCell)
        self.assertIs(Model(net).train_network, net)

    def test_request_stop_stops_after_that_step(self):
        class Stop(Callback):
            def __init__(self):
                self.epoch_ends = 0
                self.ended = False

            def on_train_step_end(self, run_context):
                if run_context.original_args().cur_step_num == 3:
                    run_context.request_stop()

            def on_train_epoch_end(self, run_context):
                self.epoch_ends += 1

            def on_train_end(self, run_context):
                self.ended = True

        net = fresh_net(self.init)
        model = model_for(net)
        stop, rec = Stop(), StepLosses()
        model.train(5, self.data, callbacks=[rec, stop])
        self.assertEqual(len(rec.losses), 3)
        self.assertEqual(stop.epoch_ends, 1)
        self.assertTrue(stop.ended)
        self.assertEqual(int(model.train_network.optimizer.global_step.reshape(()).item()), 3)

    def test_initial_epoch_and_argument_errors(self):
        model = model_for(fresh_net(self.init))
        seen = []
        model.train(3, self.data, callbacks=LambdaCallback(
            on_train_epoch_begin=lambda rc: seen.append(rc.original_args().cur_epoch_num)), initial_epoch=1)
        self.assertEqual(seen, [2, 3])
        with self.assertRaisesRegex(ValueError, "'epoch' must bigger than parameter 'initial_epoch'"):
            model.train(2, self.data, initial_epoch=2)
        with self.assertRaisesRegex(ValueError, "There is no valid data in dataset"):
            model.train(1, RowsDataset([]))
        with self.assertRaisesRegex(ValueError, "'sink_size' must be -1 or positive"):
            model.train(1, self.data, sink_size=-2)
        with self.assertRaisesRegex(TypeError, "dataset_sink_mode"):
            model.train(1, self.data, dataset_sink_mode=1)
        x, y = self.data.rows[0]
        with self.assertRaisesRegex(ValueError, "should return two elements, but got 3"):
            model.train(1, RowsDataset([(x, y, y)]))
        with self.assertRaisesRegex(ValueError, "Unsupported|should be 'loss_scale_manager'"):
            Model(LeNetish(), foo=1)
        with self.assertRaisesRegex(ValueError, "'optimizer' is None"):
            Model(LeNetish(), loss_fn=nn.MSELoss(), amp_level="O2")
        with self.assertRaisesRegex(ValueError, "eval_network"):
            Model(LeNetish(), metrics={"acc"})
        with self.assertRaisesRegex(TypeError, "must be dict or set"):
            Model(LeNetish(), loss_fn=nn.MSELoss(), metrics=["acc"])
        with self.assertRaisesRegex(ValueError, "metrics' can not be None"):
            model.eval(self.valid)
        with self.assertRaises(TypeError):
            Model(lambda x: x)

    def test_learning_rate_scheduler_takes_effect_in_the_jitted_step(self):
        net = fresh_net(self.init)
        model = model_for(net)
        after = {}

        def keep(rc):
            if rc.original_args().cur_step_num == 3:
                after.update(values(net))

        # from step 2 on the rate is 0; the momentum still moves the weights, so compare with the
        # hand loop that does the same
        model.train(1, self.data, callbacks=[LearningRateScheduler(lambda lr, step: 0.0 if step >= 2 else lr),
                                             LambdaCallback(on_train_step_end=keep)])
        ref = fresh_net(self.init)
        opt = nn.Momentum(ref.trainable_params(), 0.05, 0.9)
        step = nn.TrainOneStepCell(nn.WithLossCell(ref, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                                         reduction="mean")), opt)
        for i, (x, y) in enumerate(self.data.rows):
            step(x, y)
            if i == 1:
                opt._lr.value = 0.0  # (eager: read afresh each step)
        self.assertEqual(model.train_network.optimizer.learning_rate, 0.0)
        self.assertEqual(values(net), values(ref))

    def test_sink_mode_runs_sink_size_steps_continuing_the_data(self):
        model = model_for(fresh_net(self.init))
        firsts, batch_nums = [], []

        def step_end(rc):
            cb = rc.original_args()
            firsts.append(float(cb.train_dataset_element[0].reshape((-1,))[0].item()))
            batch_nums.append(cb.batch_num)

        model.train(3, self.data, callbacks=LambdaCallback(on_train_step_end=step_end), dataset_sink_mode=True,
                    sink_size=4)
        order = [float(x.reshape((-1,))[0].item()) for x, _ in self.data.rows]
        self.assertEqual(firsts, (order * 2)[:12])
        self.assertEqual(batch_nums, [4] * 12)

    def test_predict(self):
        net = fresh_net(self.init)
        model = model_for(net)
        x = self.data.rows[0][0]
        self.assertEqual(model.predict(x).tolist(), net(x).tolist())


class Hooks(Base):
    def test_train_hooks_in_mindspore_order_with_cb_params(self):
        log = []

        class New(Callback):
            def on_train_begin(self, rc):
                cb = rc.original_args()
                log.append(("begin", cb.epoch_num, cb.batch_num, cb.mode, cb.cur_step_num))

            def on_train_epoch_begin(self, rc):
                log.append(("epoch_begin", rc.original_args().cur_epoch_num))

            def on_train_step_begin(self, rc):
                log.append(("step_begin", rc.original_args().cur_step_num))

            def on_train_step_end(self, rc):
                cb = rc.original_args()
                log.append(("step_end", cb.cur_epoch_num, cb.cur_step_num, type(cb.net_outputs).__name__))

            def on_train_epoch_end(self, rc):
                log.append(("epoch_end", rc.original_args().cur_epoch_num))

            def on_train_end(self, rc):
                log.append(("end", rc.original_args().cur_step_num))

        old_log = []

        class Old(Callback):  # the old names, called by the new hooks' defaults
            def begin(self, rc):
                old_log.append("begin")

            def epoch_begin(self, rc):
                old_log.append("epoch_begin")

            def step_end(self, rc):
                old_log.append("step_end")

            def end(self, rc):
                old_log.append("end")

        data = RowsDataset(self.data.rows[:2])
        net = fresh_net(self.init)
        model = model_for(net)
        seen = {}

        def grab(rc):
            seen.update(rc.original_args())

        model.train(2, data, callbacks=[New(), Old(), LambdaCallback(on_train_step_end=grab)])
        self.assertEqual(log, [("begin", 2, 2, "train", 0),
                               ("epoch_begin", 1), ("step_begin", 1), ("step_end", 1, 1, "Tensor"),
                               ("step_begin", 2), ("step_end", 1, 2, "Tensor"), ("epoch_end", 1),
                               ("epoch_begin", 2), ("step_begin", 3), ("step_end", 2, 3, "Tensor"),
                               ("step_begin", 4), ("step_end", 2, 4, "Tensor"), ("epoch_end", 2),
                               ("end", 4)])
        self.assertEqual(old_log, ["begin", "epoch_begin", "step_end", "step_end", "epoch_begin", "step_end",
                                   "step_end", "end"])
        for key in ("train_network", "epoch_num", "batch_num", "cur_epoch_num", "cur_step_num", "net_outputs",
                    "loss_fn", "optimizer", "parallel_mode", "device_number", "train_dataset",
                    "train_dataset_element", "network", "list_callback", "dataset_sink_mode", "mode"):
            self.assertIn(key, seen)
        self.assertIs(seen["train_network"], model.train_network)
        self.assertIs(seen["optimizer"], model.train_network.optimizer)
        self.assertIs(seen["network"], net)
        self.assertEqual(seen["parallel_mode"], "stand_alone")
        self.assertEqual(seen["device_number"], 1)

    def test_context_managers_entered_and_exited(self):
        events = []

        class Ctx(Callback):
            def __enter__(self):
                events.append("enter")
                return self

            def __exit__(self, *err):
                events.append(("exit", err[0]))

            def on_train_step_end(self, rc):
                raise KeyError("boom")

        with self.assertRaises(KeyError):
            model_for(fresh_net(self.init)).train(1, self.data, callbacks=Ctx())
        self.assertEqual(events, ["enter", ("exit", KeyError)])

    def test_old_hook_names_warn_in_train_and_raise_in_fit(self):
        class Old(Callback):
            def step_end(self, rc):
                pass

        model = model_for(fresh_net(self.init), metrics={"acc"})
        with self.assertLogs("pijit.train", "WARNING") as cm:
            model.train(1, RowsDataset(self.data.rows[:1]), callbacks=Old())
        self.assertIn("methods may not be supported in later version", cm.output[0])
        with self.assertRaisesRegex(ValueError, "methods may not be supported in later version"):
            model.fit(1, RowsDataset(self.data.rows[:1]), callbacks=Old())


class LossMonitorLines(Base):
    def test_line_format_and_per_print_times(self):
        model = model_for(fresh_net(self.init))
        rec = StepLosses()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            model.train(2, self.data, callbacks=[rec, LossMonitor(per_print_times=4)])
        lines = out.getvalue().splitlines()
        # global steps 4, 8, 12 -> epoch 1 step 4, epoch 2 step 2, epoch 2 step 6
        self.assertEqual(lines, ["epoch: 1 step: 4, loss is %s" % rec.losses[3],
                                 "epoch: 2 step: 2, loss is %s" % rec.losses[7],
                                 "epoch: 2 step: 6, loss is %s" % rec.losses[11]])
        self.assertRegex(lines[0], r"^epoch: 1 step: 4, loss is \d+\.\d+$")

    def test_nan_loss_stops_training(self):
        net = fresh_net(self.init)
        model = model_for(net, lr=1e30)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaisesRegex(ValueError,
                                                                    "loss is NAN or INF, training process cannot"):
            model.train(3, self.data, callbacks=LossMonitor())

    def test_time_monitor_line(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            model_for(fresh_net(self.init)).train(1, self.data, callbacks=TimeMonitor())
        self.assertRegex(out.getvalue(), r"^Train epoch time: +\d+\.\d{3} ms, per step time: +\d+\.\d{3} ms\n$")


class Checkpoints(Base):
    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="pijit_ckpt_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)
        super().tearDown()

    def test_files_named_kept_and_loadable(self):
        net = fresh_net(self.init)
        model = model_for(net)
        cfg = CheckpointConfig(save_checkpoint_steps=4, keep_checkpoint_max=2, append_info=["epoch_num", "step_num"])
        ck = ModelCheckpoint(prefix="lenet", directory=self.dir, config=cfg)
        model.train(2, self.data, callbacks=ck)
        # saved at global steps 4 (1_4), 8 (2_2), 12 (2_6); at most two kept: the oldest went
        self.assertEqual(sorted(os.listdir(self.dir)), ["lenet-2_2.ckpt", "lenet-2_6.ckpt"])
        self.assertEqual(ck.latest_ckpt_file_name, os.path.join(os.path.realpath(self.dir), "lenet-2_6.ckpt"))
        other = LeNetish()
        loaded = pj.load_checkpoint(ck.latest_ckpt_file_name, net=other)
        self.assertEqual(values(other), values(net))
        self.assertEqual(loaded["epoch_num"], 2)
        self.assertEqual(loaded["step_num"], 12)
        self.assertIn("global_step", loaded)  # the optimizer's state is saved with the network's
        x = self.data.rows[0][0]
        self.assertEqual(other(x).tolist(), net(x).tolist())
        # a second run with the same prefix writes lenet_1-*, leaving the first run's files
        ck2 = ModelCheckpoint(prefix="lenet", directory=self.dir,
                              config=CheckpointConfig(save_checkpoint_steps=6, keep_checkpoint_max=5))
        model.train(1, self.data, callbacks=ck2)
        self.assertEqual(sorted(os.listdir(self.dir)), ["lenet-2_2.ckpt", "lenet-2_6.ckpt", "lenet_1-1_6.ckpt"])
        ck3 = ModelCheckpoint(prefix="lenet", directory=self.dir)
        self.assertEqual(ck3._prefix, "lenet_2")

    def test_end_of_training_saves_the_last_step(self):
        ck = ModelCheckpoint(prefix="net", directory=self.dir,
                             config=CheckpointConfig(save_checkpoint_steps=4, keep_checkpoint_max=10))
        model_for(fresh_net(self.init)).train(1, self.data, callbacks=ck)
        self.assertEqual(sorted(os.listdir(self.dir)), ["net-1_4.ckpt", "net-1_6.ckpt"])
        self.assertFalse(any(f.endswith(".meta") for f in os.listdir(self.dir)))  # no graph file (documented)


class Evaluation(Base):
    def test_accuracy_and_loss_by_hand(self):
        net = nn.Dense(2, 2, has_bias=False)
        net.weight.set_data(pj.Tensor([[1.0, 0.0], [0.0, 1.0]], mstype.float32))
        xs = [[2.0, 0.0], [0.0, 3.0], [1.0, 0.5], [0.2, 0.4]]
        ys = [0, 1, 1, 1]  # predictions 0, 1, 0, 1: three of four right
        data = RowsDataset([(pj.Tensor(xs[:2], mstype.float32), pj.Tensor(ys[:2], mstype.int32)),
                            (pj.Tensor(xs[2:], mstype.float32), pj.Tensor(ys[2:], mstype.int32))])
        model = Model(net, loss_fn=nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      metrics={"acc", "loss"})
        result = model.eval(data)
        self.assertEqual(sorted(result), ["acc", "loss"])
        self.assertEqual(result["acc"], 0.75)

        def ce(row, label):
            return math.log(sum(math.exp(v) for v in row)) - row[label]

        batch_means = [(ce(xs[0], 0) + ce(xs[1], 1)) / 2, (ce(xs[2], 1) + ce(xs[3], 1)) / 2]
        self.assertAlmostEqual(result["loss"], sum(batch_means) / 2, places=6)
        # metric objects and eval_network/eval_indexes
        acc = nn.Accuracy()
        model2 = Model(net, metrics={"a": acc}, eval_network=nn.WithEvalCell(net, nn.SoftmaxCrossEntropyWithLogits(
            sparse=True, reduction="mean")), eval_indexes=[0, 1, 2])
        self.assertEqual(model2.eval(data), {"a": 0.75})
        with self.assertRaisesRegex(ValueError, "length of it must be three"):
            Model(net, metrics={"acc"}, eval_network=net, eval_indexes=[0, 1])

    def test_eval_hooks_and_mode(self):
        log = []

        class Rec(Callback):
            def on_eval_begin(self, rc):
                log.append(("begin", rc.original_args().mode, rc.original_args().batch_num))

            def on_eval_epoch_begin(self, rc):
                log.append("epoch_begin")

            def on_eval_step_begin(self, rc):
                log.append(("step_begin", rc.original_args().cur_step_num))

            def on_eval_step_end(self, rc):
                log.append(("step_end", len(rc.original_args().net_outputs)))

            def on_eval_epoch_end(self, rc):
                log.append("epoch_end")

            def on_eval_end(self, rc):
                log.append(("end", sorted(rc.original_args().metrics)))

        model = model_for(fresh_net(self.init), metrics={"accuracy"})
        model.eval(RowsDataset(self.valid.rows[:2]), callbacks=Rec())
        self.assertEqual(log, [("begin", "eval", 2), "epoch_begin", ("step_begin", 1), ("step_end", 3),
                               ("step_begin", 2), ("step_end", 3), "epoch_end", ("end", ["accuracy"])])

    def test_fit_evaluates_between_epochs(self):
        net = fresh_net(self.init)
        model = model_for(net, metrics={"accuracy"})
        hist = History()
        order = []

        class Rec(Callback):
            def on_eval_end(self, rc):
                order.append(("eval_end", rc.original_args().cur_epoch_num))

            def on_train_epoch_end(self, rc):
                cb = rc.original_args()
                order.append(("epoch_end", cb.cur_epoch_num, sorted(cb.get("eval_results", {})), cb.mode,
                              cb.cur_step_num, cb.batch_num))

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            model.fit(4, self.data, self.valid, valid_frequency=2, callbacks=[hist, Rec(), LossMonitor(0)])
        self.assertTrue(net.fc.training)  # back in training mode after the evaluation
        self.assertEqual(order, [("epoch_end", 1, [], "train", 6, 6), ("eval_end", 2),
                                 ("epoch_end", 2, ["accuracy", "eval_loss"], "train", 12, 6),
                                 ("epoch_end", 3, [], "train", 18, 6), ("eval_end", 4),
                                 ("epoch_end", 4, ["accuracy", "eval_loss"], "train", 24, 6)])
        self.assertEqual(hist.epoch, {"epoch": [1, 2, 3, 4]})
        self.assertEqual(len(hist.history["accuracy"]), 2)
        self.assertEqual(hist.history["accuracy"][-1], model.eval(self.valid)["accuracy"])
        self.assertGreater(hist.history["accuracy"][-1], 0.6)
        self.assertEqual(out.getvalue().count("Eval result: epoch"), 2)
        self.assertIn("Eval result: epoch 4, metrics: {'accuracy': ", out.getvalue())


class Stopping(Base):
    def test_early_stopping_on_a_flat_loss(self):
        net = fresh_net(self.init)
        model = model_for(net, lr=0.0)  # the loss never improves after the first epoch
        hist = History()
        es = EarlyStopping(monitor="loss", patience=1, verbose=True)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            model.train(5, self.data, callbacks=[hist, es])
        self.assertEqual(hist.epoch["epoch"], [1, 2])
        self.assertEqual(es.stopped_epoch, 2)
        self.assertEqual(out.getvalue(), "Epoch 00002: early stopping\n")

    def test_early_stopping_restores_best_weights(self):
        net = fresh_net(self.init)
        model = model_for(net)
        es = EarlyStopping(monitor="loss", patience=0, restore_best_weights=True)
        model.train(3, self.data, callbacks=es)  # patience 0: stops after the first epoch
        self.assertEqual(es.stopped_epoch, 1)


class ProgressBar(Base):
    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    def run_with(self, stderr, callbacks=None, **environ):
        os.environ.pop("PIJIT_PROGRESS", None)
        old = sys.stderr
        sys.stderr = stderr
        try:
            with env(**environ):
                model = model_for(fresh_net(self.init), metrics={"accuracy"})
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    model.train(2, self.data, callbacks=callbacks)
                    model.eval(self.valid)
        finally:
            sys.stderr = old
        return stderr.getvalue(), out.getvalue()

    def test_bar_on_a_terminal(self):
        err, out = self.run_with(self.FakeTTY())
        self.assertEqual(out, "")
        finals = [seg.split("\r")[-1] for seg in err.split("\n")[:-1]]
        self.assertEqual(len(finals), 3, err)
        self.assertRegex(finals[0], r"^Epoch 1/2  6/6 \[=+\]  loss \d+\.\d{4}  \d+\.\d samples/s  0:\d\d *$")
        self.assertRegex(finals[1], r"^Epoch 2/2  6/6 ")
        self.assertRegex(finals[2], r"^Eval  3/3 \[=+\]  loss \d+\.\d{4}  \d+\.\d samples/s  0:\d\d *$")
        self.assertTrue(err.endswith("\n"))

    def test_off_when_not_a_terminal_or_asked_or_callbacks_print(self):
        self.assertEqual(self.run_with(io.StringIO())[0], "")
        self.assertEqual(self.run_with(self.FakeTTY(), PIJIT_PROGRESS="0")[0], "")
        err, out = self.run_with(self.FakeTTY(), callbacks=[LossMonitor(6)])
        self.assertEqual(err.count("Epoch"), 0)
        self.assertEqual(len(out.splitlines()), 2)

    def test_forced_on_without_a_terminal(self):
        err, _ = self.run_with(io.StringIO(), PIJIT_PROGRESS="1")
        self.assertIn("Epoch 2/2  6/6", err)


class WithGeneratorDataset(Base):
    """The same run over pijit.dataset's GeneratorDataset (random access, batched) as over the rows."""

    def test_train_and_eval_over_generator_dataset(self):
        from pijit import dataset as ds
        xs, ys = make_images(48, 7)

        class Source(object):
            def __getitem__(self, i):
                return pj.Tensor(xs[i], mstype.float32), pj.Tensor(ys[i], mstype.int32)

            def __len__(self):
                return len(xs)

        source = ds.GeneratorDataset(Source(), column_names=["image", "label"], shuffle=False).batch(8)
        self.assertEqual(source.get_dataset_size(), 6)
        rec, ref = StepLosses(), StepLosses()
        model = model_for(fresh_net(self.init), metrics={"accuracy"})
        model.train(2, source, callbacks=rec)
        ref_model = model_for(fresh_net(self.init), metrics={"accuracy"})
        ref_model.train(2, self.data, callbacks=ref)
        self.assertEqual(len(rec.losses), 12)
        self.assertEqual(rec.losses, ref.losses)
        self.assertEqual(model.eval(source), ref_model.eval(self.data))


if __name__ == "__main__":
    unittest.main()
