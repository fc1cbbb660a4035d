"""mindspore.train.callback (issue 43): the callbacks' arguments, defaults and errors as MindSpore
has them, checkpoint naming rules, ReduceLROnPlateau / BackupAndRestore / OnRequestExit /
LambdaCallback behaviour, the no-op summary classes, DatasetHelper and data_sink, loss scaling
through Model, and the names of mindspore.train and mindspore.train.callback."""
import contextlib
import io
import os
import shutil
import signal
import sys
import tempfile
import unittest

import pijit as pj
from pijit import nn
from pijit import dtype as mstype
import pijit.train as train
import pijit.train.callback as callback
from pijit.train import (Callback, RunContext, CheckpointConfig, ModelCheckpoint, LossMonitor, TimeMonitor,
                         History, LambdaCallback, ReduceLROnPlateau, EarlyStopping, BackupAndRestore, OnRequestExit,
                         SummaryCollector, SummaryLandscape, SummaryRecord, DatasetHelper, data_sink,
                         connect_network_with_dataset, Model, LearningRateScheduler)
from pijit.train.callback._checkpoint import _unique_prefix
from pijit.train.callback import _InternalCallbackParam as Params

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_train_model import RowsDataset, make_images, batches, LeNetish, snapshot, values, fresh_net  # noqa: E402


def quiet(fn, *a, **kw):
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*a, **kw)


class Names(unittest.TestCase):
    def test_module_names(self):
        for name in callback.__all__:
            self.assertIs(getattr(train, name), getattr(callback, name))
        for name in ("Model", "DatasetHelper", "connect_network_with_dataset", "build_train_network", "data_sink",
                     "SummaryRecord", "Accuracy", "Loss", "Metric", "get_metric_fn", "Top1CategoricalAccuracy"):
            self.assertIn(name, train.__all__)
            self.assertTrue(hasattr(train, name), name)
        self.assertIs(train.Accuracy, nn.Accuracy)
        from pijit.nn import metrics2
        for name in metrics2.__all__:
            self.assertIs(getattr(train, name), getattr(metrics2, name))
        self.assertIs(pj.Model, Model)  # the top level exports train's names, as mindspore does
        self.assertEqual(sorted(callback.__all__), sorted([
            "Callback", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "SummaryCollector", "CheckpointConfig",
            "RunContext", "LearningRateScheduler", "SummaryLandscape", "History", "LambdaCallback",
            "ReduceLROnPlateau", "EarlyStopping", "OnRequestExit", "BackupAndRestore"]))

    def test_checkpoint_functions(self):
        d = tempfile.mkdtemp(prefix="pijit_async_")
        try:
            net = nn.Dense(2, 2)
            pj.save_checkpoint(net, os.path.join(d, "a.ckpt"), async_save=True)
            self.assertIs(train.async_ckpt_thread_status(), False)  # written before save_checkpoint returned
            self.assertEqual(sorted(pj.load_checkpoint(os.path.join(d, "a.ckpt"))), ["bias", "weight"])
        finally:
            shutil.rmtree(d, ignore_errors=True)
        self.assertIs(train.merge_sliced_parameter, pj.merge_sliced_parameter)
        self.assertIs(train.serialization.load_checkpoint, pj.load_checkpoint)

    def test_metric_strings(self):
        from pijit.train.model import get_metrics
        got = get_metrics({"acc", "accuracy", "loss", "mae", "F1", "top_1_accuracy"})
        self.assertIsInstance(got["acc"], nn.Accuracy)
        self.assertIsInstance(got["F1"], nn.F1)
        self.assertIsInstance(got["top_1_accuracy"], nn.Top1CategoricalAccuracy)
        with self.assertRaises(KeyError):
            get_metrics({"no_such_metric"})
        with self.assertRaisesRegex(TypeError, "subclass of Metric"):
            get_metrics({"a": 3})


class BaseClasses(unittest.TestCase):
    def test_run_context(self):
        with self.assertRaisesRegex(TypeError, "should be dict type"):
            RunContext([1])
        rc = RunContext({"cur_step_num": 2})
        self.assertEqual(rc.original_args(), {"cur_step_num": 2})
        self.assertFalse(rc.get_stop_requested())
        rc.request_stop()
        self.assertTrue(rc.get_stop_requested())

    def test_new_hooks_call_old_names(self):
        calls = []

        class Old(Callback):
            def begin(self, rc):
                calls.append("begin")

            def epoch_begin(self, rc):
                calls.append("epoch_begin")

            def step_begin(self, rc):
                calls.append("step_begin")

            def step_end(self, rc):
                calls.append("step_end")

            def epoch_end(self, rc):
                calls.append("epoch_end")

            def end(self, rc):
                calls.append("end")

        cb, rc = Old(), RunContext({})
        for mode in ("train", "eval"):
            for hook in ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end"):
                getattr(cb, "on_%s_%s" % (mode, hook))(rc)
        self.assertEqual(calls, ["begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end"] * 2)
        with cb as entered:
            self.assertIs(entered, cb)

    def test_callback_list_errors(self):
        from pijit.train.callback import _CallbackManager
        with self.assertRaisesRegex(TypeError, "must be Callback functions"):
            _CallbackManager([LossMonitor(), 3])
        with self.assertRaisesRegex(TypeError, "is not a Callback or a list of Callback"):
            _CallbackManager(3)

    def test_lambda_callback(self):
        seen = []
        cb = LambdaCallback(on_train_step_end=lambda rc: seen.append(rc.original_args()["x"]))
        cb.on_train_step_end(RunContext({"x": 5}))
        cb.on_train_epoch_end(RunContext({"x": 6}))  # not given: nothing
        self.assertEqual(seen, [5])
        with self.assertRaisesRegex(TypeError, "must be callable"):
            LambdaCallback(on_train_begin=3)

    def test_monitor_argument_errors(self):
        with self.assertRaises(ValueError):
            LossMonitor(-1)
        with self.assertRaises(TypeError):
            LossMonitor(1.5)
        with self.assertRaises(ValueError):
            TimeMonitor(0)
        with self.assertRaisesRegex(ValueError, "mode should be 'auto', 'min' or 'max'"):
            EarlyStopping(mode="up")
        with self.assertRaises(ValueError):
            ReduceLROnPlateau(factor=1.0)
        with self.assertRaises(TypeError):
            EarlyStopping(patience=1.0)

    def test_history_standalone(self):
        h = History()
        h.begin(RunContext({}))
        h.epoch_end(RunContext({"cur_epoch_num": 1, "net_outputs": pj.Tensor([1.0, 3.0]), "metrics": {"acc": 0.5}}))
        h.epoch_end(RunContext({"cur_epoch_num": 2, "net_outputs": (pj.Tensor(4.0), pj.Tensor(True))}))
        self.assertEqual(h.epoch, {"epoch": [1, 2]})
        self.assertEqual(h.history, {"net_output": [2.0, 4.0], "acc": [0.5]})


class UnderCapture(unittest.TestCase):
    """User code that capture takes (pj.jit, `pijit run`) sees the run's live state and runs each
    training it asks for: the state-reading and step-running library calls are not traced once."""

    def test_callback_body_captured_reads_each_step(self):
        def body(rc):
            return rc.original_args().cur_step_num, rc.get_stop_requested()

        jitted = pj.jit(body)
        seen = []
        net, model = small_model()
        model.train(2, small_data(), callbacks=LambdaCallback(on_train_step_end=lambda rc: seen.append(jitted(rc))))
        self.assertEqual(seen, [(1, False), (2, False), (3, False), (4, False)])

    def test_train_called_from_captured_code_runs_every_call(self):
        net, model = small_model()
        data = small_data()

        def go():
            model.train(1, data)
            return 1

        jitted = pj.jit(go)
        jitted()
        jitted()
        self.assertEqual(int(model.train_network.optimizer.global_step.reshape(()).item()), 4)


class CheckpointConfigs(unittest.TestCase):
    def test_defaults_and_rules(self):
        cfg = CheckpointConfig()
        self.assertEqual((cfg.save_checkpoint_steps, cfg.save_checkpoint_seconds, cfg.keep_checkpoint_max,
                          cfg.keep_checkpoint_per_n_minutes, cfg.integrated_save, cfg.async_save, cfg.saved_network,
                          cfg.append_dict, cfg.enc_key, cfg.enc_mode), (1, None, 5, None, True, False, None, None,
                                                                        None, "AES-GCM"))
        cfg = CheckpointConfig(save_checkpoint_steps=0, save_checkpoint_seconds=100, keep_checkpoint_max=0,
                               keep_checkpoint_per_n_minutes=5)
        self.assertEqual(cfg.get_checkpoint_policy(), {"save_checkpoint_steps": 0, "save_checkpoint_seconds": 100,
                                                       "keep_checkpoint_max": 0, "keep_checkpoint_per_n_minutes": 5,
                                                       "saved_network": None})
        self.assertEqual(CheckpointConfig(save_checkpoint_steps=3, keep_checkpoint_max=0).keep_checkpoint_max, 1)
        self.assertEqual(CheckpointConfig(append_info=["epoch_num", {"lr": 0.1}]).append_dict,
                         {"epoch_num": 0, "lr": 0.1})

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "can't be all None or 0"):
            CheckpointConfig(0, 0, 0, 0)
        with self.assertRaises(ValueError):
            CheckpointConfig(save_checkpoint_steps=-1)
        with self.assertRaisesRegex(TypeError, "saved_network"):
            CheckpointConfig(saved_network=3)
        with self.assertRaisesRegex(ValueError, "must be in"):
            CheckpointConfig(append_info=["epochs"])
        with self.assertRaisesRegex(TypeError, "only one dict"):
            CheckpointConfig(append_info=[{"a": 1}, {"b": 2}])
        with self.assertRaisesRegex(TypeError, "must be list"):
            CheckpointConfig(append_info="epoch_num")
        with self.assertRaisesRegex(ValueError, "does not contain '/'"):
            ModelCheckpoint(prefix="a/b")
        with self.assertRaisesRegex(TypeError, "should be 'CheckpointConfig'"):
            ModelCheckpoint(config={})


class CheckpointNames(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pijit_ckname_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def touch(self, *names):
        for n in names:
            open(os.path.join(self.dir, n), "w").close()

    def test_unique_prefix(self):
        self.assertEqual(_unique_prefix(self.dir, "net"), "net")
        self.touch("net-1_5.ckpt")
        self.assertEqual(_unique_prefix(self.dir, "net"), "net_1")
        self.touch("net_1-1_5.ckpt", "net_4-2_1.ckpt")
        self.assertEqual(_unique_prefix(self.dir, "net"), "net_5")
        # other prefixes, other extensions and breakpoint files do not count
        d2 = tempfile.mkdtemp(prefix="pijit_ckname2_", dir=self.dir)
        for n in ("network-1_1.ckpt", "net-1_1.meta", "net-1_1_breakpoint.ckpt"):
            open(os.path.join(d2, n), "w").close()
        self.assertEqual(_unique_prefix(d2, "net"), "net")

    def test_saved_network_and_seconds(self):
        net = fresh_net(snapshot(LeNetish()))
        other = nn.Dense(2, 2)
        xs, ys = make_images(16, 3)
        data = RowsDataset(batches(xs, ys, 8))
        model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.01, 0.9))
        ck = ModelCheckpoint("only", self.dir, CheckpointConfig(saved_network=other))
        model.train(1, data, callbacks=ck)
        self.assertEqual(sorted(os.listdir(self.dir)), ["only-1_1.ckpt", "only-1_2.ckpt"])
        self.assertEqual(sorted(k for k in pj.load_checkpoint(ck.latest_ckpt_file_name)),
                         sorted(p.name for p in other.get_parameters()))
        # by seconds: none within the first second; the end of training saves the last step
        ck2 = ModelCheckpoint("sec", self.dir, CheckpointConfig(save_checkpoint_steps=0, save_checkpoint_seconds=3600))
        model.train(1, data, callbacks=ck2)
        self.assertEqual(sorted(f for f in os.listdir(self.dir) if f.startswith("sec")), ["sec-1_2.ckpt"])


def small_model(lr=0.1):
    net = nn.Dense(2, 2)
    net.weight.set_data(pj.Tensor([[0.5, -0.2], [0.1, 0.3]], mstype.float32))
    net.bias.set_data(pj.Tensor([0.0, 0.0], mstype.float32))
    opt = nn.SGD(net.trainable_params(), lr)
    return net, Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"), opt,
                      metrics={"accuracy"})


def small_data():
    return RowsDataset([(pj.Tensor([[1.0, 0.0], [0.0, 1.0]], mstype.float32), pj.Tensor([0, 1], mstype.int32)),
                        (pj.Tensor([[2.0, 1.0], [1.0, 3.0]], mstype.float32), pj.Tensor([0, 1], mstype.int32))])


class LearningRates(unittest.TestCase):
    def test_reduce_lr_on_plateau_rule(self):
        opt = nn.SGD(nn.Dense(2, 2).trainable_params(), 0.1)
        cb = ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_lr=0.03, cooldown=1, verbose=True)
        cb.on_train_begin(RunContext({}))
        out = io.StringIO()
        lrs = []
        with contextlib.redirect_stdout(out):
            for epoch, loss in enumerate([1.0, 1.0, 1.0, 1.0, 1.0, 0.5], 1):
                cb.on_train_epoch_end(RunContext(Params(optimizer=opt, net_outputs=pj.Tensor(loss),
                                                        cur_epoch_num=epoch)))
                lrs.append(round(opt.learning_rate.item(), 6))  # (a float32 Parameter, as MindSpore's)
        # epoch 1 sets the best; 2 reduces (0.05) and starts a cooldown of 1, which epoch 3 spends
        # before its own check (MindSpore's and Keras' order), so 3 reduces again, to the floor
        # (not 0.025); from then on the rate is at min_lr and stays
        self.assertEqual(lrs, [0.1, 0.05, 0.03, 0.03, 0.03, 0.03])
        self.assertEqual(out.getvalue(), "Epoch 00002: ReduceLROnPlateau reducing learning rate to 0.05.\n"
                                         "Epoch 00003: ReduceLROnPlateau reducing learning rate to 0.03.\n")
        dyn = nn.SGD(nn.Dense(2, 2).trainable_params(), [0.1, 0.2])
        with self.assertRaisesRegex(ValueError, "does not support dynamic learning rate"):
            cb.on_train_epoch_end(RunContext(Params(optimizer=dyn, net_outputs=pj.Tensor(1.0), cur_epoch_num=1)))

    def test_reduce_lr_in_fit_reads_eval_loss(self):
        net, model = small_model(lr=1e-9)  # the eval loss moves by ~1e-9 an epoch: no improvement by 1e-4
        cb = ReduceLROnPlateau(monitor="eval_loss", factor=0.5, patience=2)
        model.fit(5, small_data(), small_data(), callbacks=cb)
        # epoch 1 sets the best; 2 waits; 3 halves; 4 waits; 5 halves
        self.assertEqual(model.train_network.optimizer.learning_rate, 1e-9 * 0.25)
        self.assertEqual(cb.wait, 0)

    def test_scheduler_sees_float_and_global_step(self):
        net, model = small_model()
        seen = []

        def fn(lr, step):
            seen.append((lr, step))
            return lr * 0.5

        model.train(2, small_data(), callbacks=LearningRateScheduler(fn))
        # (the rate reaches the function as the float32 Parameter's value, as in MindSpore)
        self.assertEqual([(round(lr, 6), step) for lr, step in seen], [(0.1, 1), (0.05, 2), (0.025, 3), (0.0125, 4)])


class Restore(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="pijit_backup_")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_backup_and_restore(self):
        net, model = small_model()
        cb = BackupAndRestore(self.dir, delete_checkpoint=False)
        model.train(1, small_data(), callbacks=cb)
        self.assertTrue(os.path.exists(cb.backup_file))
        model.train(1, small_data())  # a second epoch, the same model going on
        continued = values(net)
        # a fresh model restores weights, learning rate and momentum (its own rate 0 is replaced),
        # so its epoch is exactly that second epoch
        net2, model2 = small_model(lr=0.0)
        model2.train(1, small_data(), callbacks=BackupAndRestore(self.dir))
        self.assertEqual(values(net2), continued)
        self.assertFalse(os.path.exists(cb.backup_file))  # deleted at the end by default
        with self.assertRaises(ValueError):
            BackupAndRestore(self.dir, save_freq=0)

    @unittest.skipIf(not hasattr(signal, "SIGUSR1"), "no SIGUSR1 on this platform")
    def test_on_request_exit(self):
        net, model = small_model()
        steps = []

        def step_end(rc):
            steps.append(rc.original_args().cur_step_num)
            if len(steps) == 1:
                os.kill(os.getpid(), signal.SIGUSR1)

        old = signal.getsignal(signal.SIGUSR1)
        try:
            cb = OnRequestExit(file_name="Net", directory=self.dir, sig=signal.SIGUSR1)
            model.train(3, small_data(), callbacks=[LambdaCallback(on_train_step_end=step_end), cb])
        finally:
            signal.signal(signal.SIGUSR1, old)
        self.assertEqual(steps, [1])
        self.assertEqual(os.listdir(self.dir), ["Net_train.ckpt"])
        with self.assertRaisesRegex(ValueError, "SIGKILL"):
            OnRequestExit(sig=signal.SIGKILL, directory=self.dir)


class Summaries(unittest.TestCase):
    def test_noops(self):
        d = tempfile.mkdtemp(prefix="pijit_summary_")
        try:
            sc = SummaryCollector(os.path.join(d, "s"), collect_freq=2)
            net, model = small_model()
            with self.assertLogs("pijit.train", "WARNING") as cm:
                model.train(1, small_data(), callbacks=sc)
            self.assertIn("writes no MindInsight summary files", cm.output[0])
            self.assertEqual(os.listdir(os.path.join(d, "s")), [])
            with SummaryRecord(os.path.join(d, "r")) as rec:
                rec.add_value("scalar", "loss", pj.Tensor(1.0))
                self.assertTrue(rec.record(1))
            self.assertEqual(os.listdir(os.path.join(d, "r")), [])
            with self.assertRaises(ValueError):
                SummaryCollector(d, collect_freq=0)
            SummaryLandscape(d).clean_ckpt()
        finally:
            shutil.rmtree(d, ignore_errors=True)


class Helpers(unittest.TestCase):
    def test_dataset_helper(self):
        data = small_data()
        h = DatasetHelper(data, dataset_sink_mode=False)
        self.assertEqual(len(list(h)), 2)
        self.assertEqual(h.sink_size(), 2)
        types, shapes = h.types_shapes()
        self.assertEqual(shapes, [(2, 2), (2,)])
        self.assertEqual(types, [mstype.float32, mstype.int32])
        cyc = DatasetHelper(data, dataset_sink_mode=True, sink_size=3)
        first = [float(r[0][0][0].item()) for r in cyc]
        second = [float(r[0][0][0].item()) for r in cyc]
        self.assertEqual(first + second, [1.0, 2.0, 1.0, 2.0, 1.0, 2.0])
        with self.assertRaises(ValueError):
            DatasetHelper(data, sink_size=0)
        net = nn.Dense(2, 2)
        self.assertIs(connect_network_with_dataset(net, h), net)
        with self.assertRaises(TypeError):
            connect_network_with_dataset(net, data)

    def test_data_sink(self):
        seen = []

        def step(x, y):
            seen.append(float(x[0][0].item()))
            return x.sum()

        sink = data_sink(step, small_data(), sink_size=3)
        out = sink()
        self.assertEqual(seen, [1.0, 2.0, 1.0])
        self.assertEqual(float(out), 2.0)
        sink()
        self.assertEqual(seen, [1.0, 2.0, 1.0, 2.0, 1.0, 2.0])
        with self.assertRaises(ValueError):
            data_sink(step, small_data(), sink_size=0)


class LossScale(unittest.TestCase):
    def test_dynamic_manager_updates_and_monitor_prints_the_loss(self):
        net = nn.Dense(2, 2)
        manager = train.DynamicLossScaleManager(init_loss_scale=2.0 ** 10, scale_window=2)
        model = Model(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                      nn.Momentum(net.trainable_params(), 0.01, 0.9), loss_scale_manager=manager)
        self.assertIsInstance(model.train_network, nn.TrainOneStepWithLossScaleCell)
        out = io.StringIO()
        outputs = []
        with contextlib.redirect_stdout(out):
            model.train(2, small_data(), callbacks=[LossMonitor(),
                                                    LambdaCallback(on_train_step_end=lambda rc: outputs.append(
                                                        rc.original_args().net_outputs))])
        self.assertEqual(len(outputs), 4)
        self.assertTrue(all(isinstance(o, tuple) and len(o) == 3 for o in outputs))
        # no overflow in four steps: the host-side scale doubled every two
        self.assertEqual(manager.get_loss_scale(), 2.0 ** 12)
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "epoch: 1 step: 1, loss is %s" % outputs[0][0])


if __name__ == "__main__":
    unittest.main()
