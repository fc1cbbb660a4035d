"""mindspore.train.Model: train, eval, fit and predict over datasets, with callbacks and metrics.

Model builds the networks as MindSpore does: with an optimizer, the training network is
amp.build_train_network(network, optimizer, loss_fn, level=amp_level, ...), a TrainOneStepCell
(with loss scaling when a loss-scale manager asks for it); with only a loss, WithLossCell (the
forward loss, no update); the evaluation network is WithEvalCell(network, loss_fn) unless one is
given; prediction runs the network itself.

The steps are jitted, as MindSpore compiles them: each of the three networks runs through
pijit.jit, so a step is one captured graph (forward, backward and the optimizer's update). A
network capture cannot take whole still trains: the parts outside the graphs run eagerly and the
reasons are logged once (logger "pijit.train", and jit_stats(model._train_step.jitted)); where
capture refuses the network outright (a CaptureError), the step runs eagerly from then on, with
the reason logged. Under GRAPH_MODE a CaptureError is raised, as MindSpore's static graph mode
refuses what it cannot compile. PIJIT_MODEL_JIT=0 (read when the Model is built) runs every step
eagerly, as PyNative does.

dataset_sink_mode=True is accepted and runs the same loop (one step per batch from the host, as
MindSpore does on a CPU); with a sink_size an epoch is sink_size steps (pijit/train/dataset_helper.py).
"""
import os

from pijit import _C
from pijit._state import runtime_state
from pijit.train.callback._callback import (Callback, RunContext, _CallbackManager, _InternalCallbackParam,
                                            logger)
from pijit.train.dataset_helper import DatasetHelper, _dataset_size
from pijit.train.progress import ProgressBar, progress_enabled

__all__ = ["Model"]

_OLD_HOOKS = {"begin", "end", "epoch_begin", "epoch_end", "step_begin", "step_end"}
_KWARGS = ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict", "acc_level")


def _jit_enabled():
    return os.environ.get("PIJIT_MODEL_JIT", "1") != "0"


class _Step(object):
    """A network as Model runs it: jitted (see the module's doc), with the eager fallback."""

    def __init__(self, network, what):
        self.network = network
        self.what = what
        self.jitted = None
        self._reported = False
        if network is not None and _jit_enabled():
            from pijit.jit import jit
            self.jitted = jit(network)

    def __call__(self, *inputs):
        if self.jitted is None:
            return self.network(*inputs)
        try:
            out = self.jitted(*inputs)
        except _C.CaptureError as exc:
            from pijit import context
            if context.get_context("mode") == context.GRAPH_MODE:
                raise
            logger.warning("Model: the %s cannot be captured (%s); it runs eagerly.", self.what, exc)
            self.jitted = None
            return self.network(*inputs)
        if not self._reported:
            self._reported = True
            self._report()
        return out

    def _report(self):
        from pijit.jit import jit_stats
        try:
            reasons = jit_stats(self.jitted).get("break_reasons") or []
        except Exception:  # pragma: no cover (statistics are advisory)
            return
        if reasons:
            logger.warning("Model: the %s is not captured whole; the parts outside its graphs run eagerly: %s",
                           self.what, "; ".join(str(r) for r in reasons[:5]))


def _check_int(who, name, value, lo=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("For '%s', the type of '%s' should be int, but got %s." % (who, name, type(value).__name__))
    if lo is not None and value < lo:
        raise ValueError("For '%s', the '%s' should be an int >= %d, but got %d." % (who, name, lo, value))
    return value


def _check_bool(who, name, value):
    if not isinstance(value, bool):
        raise TypeError("For '%s', the type of '%s' should be bool, but got %s." % (who, name, type(value).__name__))
    return value


def get_metrics(metrics):
    """{name: Metric} of Model's `metrics`: a set of names, or a dict of name -> Metric or name."""
    from pijit.nn.metrics import Metric, get_metric_fn
    if metrics is None:
        return None

    def by_name(name):
        if not isinstance(name, str):
            raise TypeError("For 'Model', the metric names must be str, but got %s." % type(name).__name__)
        return get_metric_fn(name)

    if isinstance(metrics, dict):
        out = {}
        for name, metric in metrics.items():
            if isinstance(metric, str):
                metric = by_name(metric)
            elif not isinstance(metric, Metric):
                raise TypeError("The value in Metrics should be subclass of Metric, but got %s."
                                % type(metric).__name__)
            out[name] = metric
        return out
    if isinstance(metrics, set):
        return {name: by_name(name) for name in metrics}
    raise TypeError("For 'Model', the argument 'metrics' must be dict or set, but got {}.".format(metrics))


def _to_tuple(element):
    if isinstance(element, _C.TensorBase):
        return (element,)
    return tuple(element)


class Model(object):
    """Model(network, loss_fn=None, optimizer=None, metrics=None, eval_network=None,
    eval_indexes=None, amp_level="O0", boost_level="O0", **kwargs): the high-level training API.
    kwargs: loss_scale_manager (a LossScaleManager), keep_batchnorm_fp32 (bool), and
    boost_config_dict / acc_level (accepted; MindSpore's boost algorithms are not implemented).
    metrics: a set of names ({'accuracy'}) or a dict of name -> Metric or name. eval_indexes: the
    positions of (loss, prediction, label) among eval_network's outputs. See the module's doc
    for how steps are jitted."""

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None, eval_indexes=None,
                 amp_level="O0", boost_level="O0", **kwargs):
        from pijit.nn.cell import Cell
        if not isinstance(network, Cell):
            raise TypeError("For 'Model', the argument 'network' must be a Cell, but got %s." % type(network).__name__)
        for arg in kwargs:
            if arg not in _KWARGS:
                raise ValueError("The argument in 'kwargs' should be 'loss_scale_manager' or 'keep_batchnorm_fp32' "
                                 "or 'boost_config_dict' or 'acc_level', but got '%s'." % arg)
        if not isinstance(amp_level, str) or amp_level not in ("O0", "O1", "O2", "O3", "auto"):
            raise ValueError("The argument 'amp_level' must be one of ['O0', 'O1', 'O2', 'O3', 'auto'], but got %r."
                             % (amp_level,))
        if boost_level not in ("O0", "O1", "O2"):
            raise ValueError("The argument 'boost_level' must be one of ['O0', 'O1', 'O2'], but got %r."
                             % (boost_level,))
        if optimizer is None and amp_level != "O0":
            raise ValueError("Auto mixed precision will not work because 'optimizer' is None. Please set "
                             "amp_level='O0' to disable auto mixed precision or set 'optimizer' not be None to use "
                             "auto mixed precision.")
        self._network = network
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._amp_level = amp_level
        self._boost_level = boost_level
        self._loss_scale_manager = None
        self._loss_scale_manager_set = False
        self._keep_bn_fp32 = None
        if "keep_batchnorm_fp32" in kwargs:
            self._keep_bn_fp32 = _check_bool("Model", "keep_batchnorm_fp32", kwargs["keep_batchnorm_fp32"])
        if "loss_scale_manager" in kwargs:
            from pijit.amp import LossScaleManager
            manager = kwargs["loss_scale_manager"]
            if not isinstance(manager, LossScaleManager):
                raise TypeError("The type of 'loss_scale_manager' should be 'LossScaleManager', but got %s."
                                % type(manager).__name__)
            self._loss_scale_manager = manager
            self._loss_scale_manager_set = True
        self._parallel_mode = "stand_alone"
        self._device_number = 1
        self._current_epoch_num = 0
        self._current_step_num = 0
        self._backbone_is_train = None  # (None: not set by Model yet)
        self._train_network = self._build_train_network()
        self._eval_indexes = None
        self._eval_network = eval_network
        self._build_eval_network(metrics, eval_network, eval_indexes)
        self._predict_network = network
        self._train_step = _Step(self._train_network, "training step")
        self._eval_step = _Step(self._eval_network, "evaluation network")
        self._predict_step = _Step(self._predict_network, "prediction network")

    # ---- building ------------------------------------------------------------------------------
    def _build_train_network(self):
        from pijit import nn
        network = self._network
        if self._optimizer is not None:
            from pijit.amp import build_train_network
            config = {}
            if self._loss_scale_manager_set:
                config["loss_scale_manager"] = self._loss_scale_manager
            if self._keep_bn_fp32 is not None:
                config["keep_batchnorm_fp32"] = self._keep_bn_fp32
            return build_train_network(network, self._optimizer, self._loss_fn, level=self._amp_level,
                                       boost_level=self._boost_level, **config)
        if self._loss_fn is not None:
            return nn.WithLossCell(network, self._loss_fn)
        return network

    def _build_eval_network(self, metrics, eval_network, eval_indexes):
        from pijit import nn
        self._metric_fns = get_metrics(metrics)
        if not self._metric_fns:
            return
        if eval_network is not None:
            if eval_indexes is not None and not (isinstance(eval_indexes, list) and len(eval_indexes) == 3):
                raise ValueError("The argument 'eval_indexes' must be a list or None. If 'eval_indexes' is a list, "
                                 "length of it must be three. But got 'eval_indexes' {}".format(eval_indexes))
            self._eval_network = eval_network
            self._eval_indexes = eval_indexes
            return
        if self._loss_fn is None:
            raise ValueError("If `metrics` is set, `eval_network` must not be None. Do not set `metrics` if you "
                             "don't want an evaluation.\nIf evaluation is required, you need to specify "
                             "`eval_network`, which will be used in the framework to evaluate the model.\nFor the "
                             "simple scenarios with one data, one label and one logits, `eval_network` is optional, "
                             "and then you can set `eval_network` or `loss_fn`. For the latter case, framework will "
                             "automatically build an evaluation network with `network` and `loss_fn`.")
        self._eval_network = nn.WithEvalCell(self._network, self._loss_fn, self._amp_level in ("O2", "O3", "auto"))
        self._eval_indexes = [0, 1, 2]

    # ---- metrics -------------------------------------------------------------------------------
    def _clear_metrics(self):
        for metric in self._metric_fns.values():
            metric.clear()

    def _update_metrics(self, outputs):
        from pijit.nn.metrics import Loss
        if isinstance(outputs, _C.TensorBase):
            outputs = (outputs,)
        if isinstance(outputs, list):
            outputs = tuple(outputs)
        if not isinstance(outputs, tuple):
            raise ValueError("The argument 'outputs' should be tuple, but got %s." % type(outputs))
        if self._eval_indexes is not None and len(outputs) < 3:
            raise ValueError("The length of 'outputs' must be >= 3, but got {}".format(len(outputs)))
        for metric in self._metric_fns.values():
            if self._eval_indexes is None:
                metric.update(*outputs)
            elif isinstance(metric, Loss):
                metric.update(outputs[self._eval_indexes[0]])
            else:
                metric.update(outputs[self._eval_indexes[1]], outputs[self._eval_indexes[2]])

    def _get_metrics(self):
        return {name: metric.eval() for name, metric in self._metric_fns.items()}

    # ---- helpers -------------------------------------------------------------------------------
    def _set_mode(self, is_train):
        """Switches the networks between training and evaluation (dropout, batch-norm statistics)."""
        if self._backbone_is_train is not is_train:
            net = self._train_network if is_train else self._eval_network
            (net if net is not None else self._network).set_train(is_train)
            self._backbone_is_train = is_train

    @staticmethod
    def _transform_callbacks(callbacks):
        if callbacks is None:
            return []
        if isinstance(callbacks, (list, tuple)):
            return list(callbacks)
        return [callbacks]

    @staticmethod
    def _check_methods_for_custom_callbacks(callbacks, mode):
        for cb in Model._transform_callbacks(callbacks):
            if type(cb).__module__.startswith("pijit.train."):
                continue
            old = sorted(set(type(cb).__dict__) & _OLD_HOOKS)
            if old:
                msg = ("For %s callback, %s methods may not be supported in later version, Use methods prefixed "
                       "with 'on_train' or 'on_eval' instead when using customized callbacks."
                       % (type(cb).__name__, set(old)))
                if mode in ("train", "eval"):
                    logger.warning(msg)
                else:
                    raise ValueError(msg)

    @staticmethod
    def _with_progress(callbacks):
        """The run's callback list, with the progress bar appended where it is on."""
        cbs = Model._transform_callbacks(callbacks)
        for cb in cbs:
            if not isinstance(cb, Callback):
                raise TypeError("When the 'callbacks' is a list, the elements in 'callbacks' must be Callback "
                                "functions.")
        if progress_enabled(cbs):
            cbs = cbs + [ProgressBar()]
        return cbs

    def _check_train_args(self, who, epoch, train_dataset, dataset_sink_mode, sink_size, initial_epoch):
        _check_bool(who, "dataset_sink_mode", dataset_sink_mode)
        _check_int(who, "sink_size", sink_size)
        _check_int(who, "epoch", epoch, 0)
        _check_int(who, "initial_epoch", initial_epoch, 0)
        if initial_epoch >= epoch:
            raise ValueError("For '%s', the parameter 'epoch' must bigger than parameter 'initial_epoch', but got the "
                             "parameter 'epoch' is %d, 'initial_epoch' is %d." % (who, epoch, initial_epoch))
        dataset_size = _dataset_size(train_dataset)
        if dataset_size == 0:
            raise ValueError("There is no valid data in dataset, please check dataset file firstly.")
        if sink_size == -1:
            sink_size = dataset_size
        if sink_size < -1 or sink_size == 0:
            raise ValueError("For '%s', The argument 'sink_size' must be -1 or positive, but got %d."
                             % (who, sink_size))
        return sink_size

    # ---- training ------------------------------------------------------------------------------
    @runtime_state("runs training steps")
    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """Trains for epochs initial_epoch+1 .. epoch over train_dataset (rows (data, label) when
        the Model has a loss_fn, else the network's inputs), running the callbacks' hooks;
        run_context.request_stop() ends it after the current step. dataset_sink_mode and
        sink_size: see the module's doc."""
        sink_size = self._check_train_args("Model.train", epoch, train_dataset, dataset_sink_mode, sink_size,
                                           initial_epoch)
        if callbacks:
            self._check_methods_for_custom_callbacks(callbacks, "train")
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch)

    @runtime_state("runs training steps")
    def fit(self, epoch, train_dataset, valid_dataset=None, valid_frequency=1, callbacks=None,
            dataset_sink_mode=False, valid_dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """train, with an evaluation on valid_dataset after every valid_frequency-th epoch (an
        int) or after the epochs listed (a list). The evaluation's metrics are in
        cb_params.metrics at on_train_epoch_end, and with "eval_loss" (the mean loss over the
        validation batches) in cb_params.eval_results, which EarlyStopping and
        ReduceLROnPlateau read."""
        _check_bool("Model.fit", "valid_dataset_sink_mode", valid_dataset_sink_mode)
        sink_size = self._check_train_args("Model.fit", epoch, train_dataset, dataset_sink_mode, sink_size,
                                           initial_epoch)
        if isinstance(valid_frequency, bool) or not isinstance(valid_frequency, (int, list)):
            raise TypeError("For 'Model.fit', the type of 'valid_frequency' must be a list or an integer, but got "
                            "type %s." % type(valid_frequency))
        if valid_dataset is not None and not self._metric_fns:
            raise ValueError("For 'Model.fit', if valid_dataset is not None, the model argument 'metrics' can not be "
                             "None or empty, you should set the argument 'metrics' for model.")
        if callbacks:
            self._check_methods_for_custom_callbacks(callbacks, "fit")
        self._train(epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch,
                    (valid_dataset, valid_frequency, valid_dataset_sink_mode))

    def _train(self, epoch, train_dataset, callbacks, dataset_sink_mode, sink_size, initial_epoch, valid_infos=None):
        cbs = self._with_progress(callbacks)
        cb_params = _InternalCallbackParam()
        cb_params.train_network = self._train_network
        cb_params.epoch_num = epoch - initial_epoch
        cb_params.batch_num = sink_size if dataset_sink_mode and sink_size > 0 else _dataset_size(train_dataset)
        cb_params.mode = "train"
        cb_params.loss_fn = self._loss_fn
        cb_params.optimizer = self._optimizer
        cb_params.parallel_mode = self._parallel_mode
        cb_params.device_number = self._device_number
        cb_params.train_dataset = train_dataset
        cb_params.list_callback = self._transform_callbacks(callbacks)
        cb_params.train_dataset_element = None
        cb_params.network = self._network
        cb_params.last_save_ckpt_step = None
        cb_params.latest_ckpt_file = None
        cb_params.loss_scale_mananger = self._loss_scale_manager  # (MindSpore's spelling)
        cb_params.dataset_sink_mode = dataset_sink_mode
        helper = DatasetHelper(train_dataset, dataset_sink_mode, sink_size, epoch - initial_epoch)
        try:
            with _CallbackManager(cbs) as list_callback:
                self._train_process(epoch, helper, list_callback, cb_params, initial_epoch,
                                    valid_infos or (None, 1, False))
        finally:
            helper.release()  # a run stopped early ends its iterator's workers now

    def _train_process(self, epoch, helper, list_callback, cb_params, initial_epoch, valid_infos):
        cb_params.cur_step_num = 0
        run_context = RunContext(cb_params)
        self._set_mode(True)
        list_callback.on_train_begin(run_context)
        manager = self._loss_scale_manager
        for i in range(initial_epoch, epoch):
            cb_params.cur_epoch_num = i + 1
            self._current_epoch_num = i + 1
            self._current_step_num = 0
            list_callback.on_train_epoch_begin(run_context)
            should_stop = False
            for element in helper:
                n = len(element)
                element = _to_tuple(element)
                if self._loss_fn is not None and n != 2:
                    raise ValueError("When 'loss_fn' is not None, 'train_dataset' should return two elements, but "
                                     "got {}, please check the number of elements returned by 'train_dataset'"
                                     .format(n))
                cb_params.cur_step_num += 1
                self._current_step_num = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
                cb_params.train_dataset_element = element
                list_callback.on_train_step_begin(run_context)
                self._set_mode(True)
                outputs = self._train_step(*element)
                cb_params.net_outputs = outputs
                if manager is not None and manager.get_drop_overflow_update():
                    overflow = outputs[1]
                    manager.update_loss_scale(bool(overflow.all().item()) if isinstance(overflow, _C.TensorBase)
                                              else bool(overflow))
                list_callback.on_train_step_end(run_context)
                should_stop = run_context.get_stop_requested()
                if should_stop:
                    break
            self._eval_during_train(valid_infos, cb_params, list_callback)
            list_callback.on_train_epoch_end(run_context)
            cb_params.pop("metrics", None)
            cb_params.pop("eval_results", None)
            if should_stop or run_context.get_stop_requested():
                break
        helper.stop_send()
        list_callback.on_train_end(run_context)

    @staticmethod
    def _should_eval(epoch, frequency):
        return epoch % frequency == 0 if isinstance(frequency, int) else epoch in frequency

    def _eval_during_train(self, valid_infos, cb_params, list_callback):
        valid_dataset, frequency, sink = valid_infos
        if valid_dataset is None or not self._should_eval(cb_params.cur_epoch_num, frequency):
            return
        saved = {k: cb_params.get(k) for k in ("cur_step_num", "batch_num", "dataset_sink_mode", "net_outputs")}
        # the user's callbacks, TimeMonitor and the progress bar; not the built-in ones that act on training
        eval_cbs = [cb for cb in list_callback._callbacks
                    if not type(cb).__module__.startswith("pijit.train.") or type(cb).__name__ in
                    ("TimeMonitor", "ProgressBar")]
        cb_params.eval_network = self._eval_network
        cb_params.valid_dataset = valid_dataset
        cb_params.batch_num = _dataset_size(valid_dataset)
        cb_params.mode = "eval"
        cb_params.cur_step_num = 0
        self._clear_metrics()
        with _CallbackManager(eval_cbs) as eval_list:
            self._eval_process(valid_dataset, eval_list, cb_params, add_eval_loss=True)
        cb_params.mode = "train"
        cb_params.update(saved)
        self._set_mode(True)

    # ---- evaluation ----------------------------------------------------------------------------
    @runtime_state("runs evaluation steps")
    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=False):
        """Runs the evaluation network over valid_dataset and returns {metric name: value}."""
        _check_bool("Model.eval", "dataset_sink_mode", dataset_sink_mode)
        if not self._metric_fns:
            raise ValueError("For Model.eval, the model argument 'metrics' can not be None or empty, you should set "
                             "the argument 'metrics' for model.")
        if callbacks:
            self._check_methods_for_custom_callbacks(callbacks, "eval")
        cbs = self._with_progress(callbacks)
        cb_params = _InternalCallbackParam()
        cb_params.eval_network = self._eval_network
        cb_params.valid_dataset = valid_dataset
        cb_params.batch_num = _dataset_size(valid_dataset)
        cb_params.mode = "eval"
        cb_params.cur_step_num = 0
        cb_params.list_callback = self._transform_callbacks(callbacks)
        cb_params.network = self._network
        self._clear_metrics()
        with _CallbackManager(cbs) as list_callback:
            return self._eval_process(valid_dataset, list_callback, cb_params)

    def _eval_process(self, valid_dataset, list_callback, cb_params, add_eval_loss=False):
        from pijit.nn.metrics import Loss
        run_context = RunContext(cb_params)
        cb_params.dataset_sink_mode = False
        list_callback.on_eval_begin(run_context)
        helper = DatasetHelper(valid_dataset, False)
        self._set_mode(False)
        eval_loss = Loss() if add_eval_loss else None
        list_callback.on_eval_epoch_begin(run_context)
        for element in helper:
            cb_params.cur_step_num += 1
            element = _to_tuple(element)
            cb_params.eval_dataset_element = element
            list_callback.on_eval_step_begin(run_context)
            self._set_mode(False)
            outputs = self._eval_step(*element)
            cb_params.net_outputs = outputs
            list_callback.on_eval_step_end(run_context)
            self._update_metrics(outputs)
            if eval_loss is not None:
                eval_loss.update(outputs[self._eval_indexes[0]] if self._eval_indexes is not None
                                 else _to_tuple(outputs)[0])
            if run_context.get_stop_requested():
                break
        list_callback.on_eval_epoch_end(run_context)
        metrics = self._get_metrics()
        cb_params.metrics = metrics
        if eval_loss is not None:
            results = dict(metrics)
            results["eval_loss"] = eval_loss.eval()
            cb_params.eval_results = results
        list_callback.on_eval_end(run_context)
        return metrics

    # ---- prediction ----------------------------------------------------------------------------
    @runtime_state("runs the network")
    def predict(self, *predict_data, backend=None, config=None):
        """The prediction network's output for the inputs (Tensors, numbers, strings or None)."""
        for v in predict_data:
            if not isinstance(v, (_C.TensorBase, int, float, str, type(None), list, tuple)):
                raise TypeError("The type of predict_data should be Tensor, int, float, str, None, list or tuple, "
                                "but got %s." % type(v).__name__)
        self._set_mode(False)
        return self._predict_step(*predict_data)

    @runtime_state("reads the model's state")
    def build(self, train_dataset=None, valid_dataset=None, sink_size=-1, epoch=1):
        """MindSpore compiles the graphs ahead here (GRAPH_MODE on Ascend only); pijit compiles a
        step at its first call, so this checks the arguments and does nothing else."""
        if train_dataset is None and valid_dataset is None:
            raise ValueError("The argument 'train_dataset' and 'valid_dataset' can not both be None or empty.")
        if valid_dataset is not None and not self._metric_fns:
            raise RuntimeError("If define `valid_dataset`, metric fn can not be None or empty, you should set the "
                               "argument 'metrics' for model.")

    @property
    def train_network(self):
        """The training network (a TrainOneStepCell when the Model has an optimizer)."""
        return self._train_network

    @property
    def predict_network(self):
        """The network predict runs."""
        return self._predict_network

    @property
    def eval_network(self):
        """The evaluation network (WithEvalCell(network, loss_fn) unless one was given)."""
        return self._eval_network
