"""The callbacks that watch or steer a run: LossMonitor, TimeMonitor, History, LambdaCallback,
LearningRateScheduler, EarlyStopping, ReduceLROnPlateau (MindSpore's names, arguments, output
lines and semantics)."""
import math
import time

from pijit._validate import check_bool, check_int, check_type
from pijit.train.callback._callback import Callback, _handle_loss, _is_tensor, _mean_float, logger


class LossMonitor(Callback):
    """LossMonitor(per_print_times=1): prints, every per_print_times steps (0: never),
    "epoch: E step: S, loss is L" (S counted within the epoch, L the float mean of the loss
    Tensor), as MindSpore prints it. A NaN or infinite loss raises ValueError, ending training.
    In Model.fit it also prints "Eval result: epoch E, metrics: {...}" after each evaluation."""

    def __init__(self, per_print_times=1):
        super().__init__()
        self._per_print_times = check_int("LossMonitor", "per_print_times", per_print_times, 0)
        self._last_print_time = 0

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        cur_epoch_num = cb_params.get("cur_epoch_num", 1)
        loss = _handle_loss(cb_params.net_outputs)
        cur_step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        if isinstance(loss, float) and (math.isnan(loss) or math.isinf(loss)):
            raise ValueError("In epoch: {} step: {}, loss is NAN or INF, training process cannot continue, "
                             "terminating training.".format(cur_epoch_num, cur_step_in_epoch))
        if self._per_print_times != 0 and cb_params.cur_step_num <= self._last_print_time:
            # a second run (or a restored one) counts from a lower step: catch up
            while cb_params.cur_step_num <= self._last_print_time:
                self._last_print_time -= max(self._per_print_times,
                                             cb_params.batch_num if cb_params.get("dataset_sink_mode") else 1)
        if self._per_print_times != 0 and cb_params.cur_step_num - self._last_print_time >= self._per_print_times:
            self._last_print_time = cb_params.cur_step_num
            print("epoch: %s step: %s, loss is %s" % (cur_epoch_num, cur_step_in_epoch, loss), flush=True)

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        metrics = cb_params.get("metrics")
        if metrics:
            print("Eval result: epoch %d, metrics: %s" % (cb_params.cur_epoch_num, metrics))


class TimeMonitor(Callback):
    """TimeMonitor(data_size=None, data_time=False): prints after each epoch
    "Train epoch time: T ms, per step time: P ms" ("Eval ..." in evaluation); the steps are
    cb_params.batch_num (data_size when the run has none). data_time=True appends the mean time
    per step spent waiting for data: " (data time: D ms)"."""

    def __init__(self, data_size=None, data_time=False):
        super().__init__()
        if data_size is not None:
            check_int("TimeMonitor", "data_size", data_size, 1)
        self.data_size = data_size
        self.data_time = check_bool("TimeMonitor", "data_time", data_time)
        self.epoch_time = time.time()
        self.data_time_sum = 0.0
        self.data_time_start = 0.0

    def on_train_step_begin(self, run_context):
        if self.data_time:
            self.data_time_sum += time.time() - self.data_time_start

    def on_train_step_end(self, run_context):
        if self.data_time:
            self.data_time_start = time.time()

    def epoch_begin(self, run_context):
        self.epoch_time = time.time()
        self.data_time_sum = 0.0
        self.data_time_start = time.time()

    def epoch_end(self, run_context):
        epoch_ms = (time.time() - self.epoch_time) * 1000
        cb_params = run_context.original_args()
        steps = self.data_size
        batch_num = cb_params.get("batch_num")
        if isinstance(batch_num, int) and batch_num > 0:
            steps = batch_num
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
            raise ValueError("For 'TimeMonitor', the step size must be a positive int, but got %r." % (steps,))
        line = "{} epoch time: {:5.3f} ms, per step time: {:5.3f} ms".format(
            str(cb_params.get("mode", "")).title(), epoch_ms, epoch_ms / steps)
        if self.data_time:
            line += " (data time: {:5.3f} ms)".format(self.data_time_sum * 1000 / steps)
        print(line, flush=True)


class History(Callback):
    """History(): records, at the end of each epoch, the epoch number in `epoch`
    ({"epoch": [1, 2, ...]}) and in `history` the network's output ("net_output": the float
    mean of the loss, of the first output when there are several) and the metrics of that epoch's
    evaluation (in Model.fit), one list per key."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = None

    def begin(self, run_context):
        self.epoch = {"epoch": []}

    def epoch_end(self, run_context):
        cb_params = run_context.original_args()
        if self.epoch is None:
            self.epoch = {"epoch": []}
        self.epoch["epoch"].append(cb_params.get("cur_epoch_num", 1))
        out = cb_params.get("net_outputs")
        if isinstance(out, (tuple, list)) and out and _is_tensor(out[0]):
            out = out[0]
        if _is_tensor(out):
            out = _mean_float(out)
        record = {"net_output": out}
        metrics = cb_params.get("metrics")
        if metrics:
            record.update(metrics)
        for k, v in record.items():
            self.history.setdefault(k, []).append(v)


_LAMBDA_HOOKS = ("on_train_epoch_begin", "on_train_epoch_end", "on_train_step_begin", "on_train_step_end",
                 "on_train_begin", "on_train_end", "on_eval_epoch_begin", "on_eval_epoch_end",
                 "on_eval_step_begin", "on_eval_step_end", "on_eval_begin", "on_eval_end")


class LambdaCallback(Callback):
    """LambdaCallback(on_train_epoch_begin=None, on_train_epoch_end=None, on_train_step_begin=None,
    on_train_step_end=None, on_train_begin=None, on_train_end=None, on_eval_epoch_begin=None,
    on_eval_epoch_end=None, on_eval_step_begin=None, on_eval_step_end=None, on_eval_begin=None,
    on_eval_end=None): a callback made of functions, each called with the RunContext at its hook;
    hooks not given do nothing."""

    def __init__(self, on_train_epoch_begin=None, on_train_epoch_end=None, on_train_step_begin=None,
                 on_train_step_end=None, on_train_begin=None, on_train_end=None, on_eval_epoch_begin=None,
                 on_eval_epoch_end=None, on_eval_step_begin=None, on_eval_step_end=None, on_eval_begin=None,
                 on_eval_end=None):
        super().__init__()
        given = locals()
        for name in _LAMBDA_HOOKS:
            fn = given[name]
            if fn is not None:
                if not callable(fn):
                    raise TypeError("For 'LambdaCallback', %s must be callable, but got %s."
                                    % (name, type(fn).__name__))
                setattr(self, name, fn)


def _set_lr(who, optimizer, value):
    """Assigns a new constant learning rate to the optimizer's 'learning_rate' Parameter, as
    MindSpore does (a jitted step reads the Parameter: no recompile)."""
    lr = getattr(optimizer, "learning_rate", None)
    if not _is_tensor(lr) or lr.size != 1 or getattr(optimizer, "is_group_lr", False):
        raise ValueError("%s does not support dynamic learning rate and group learning rate now." % who)
    from pijit import Tensor, float32
    lr.set_data(Tensor(float(value), float32).reshape(lr.shape))


def _f32_text(v):
    """v as numpy prints a float32 (the shortest digits that read back to the same float32):
    MindSpore's callbacks print numpy float32 rates, 0.05 not 0.05000000074505806."""
    import struct
    f = struct.unpack("f", struct.pack("f", v))[0]
    for digits in range(1, 10):
        text = "%.*g" % (digits, f)
        if struct.unpack("f", struct.pack("f", float(text)))[0] == f:
            return text if ("e" in text or "." in text) else text + ".0"
    return repr(f)


def _get_lr(who, optimizer):
    if optimizer is None:
        raise ValueError("%s needs an optimizer: Model was built without one." % who)
    lr = optimizer.learning_rate
    if _is_tensor(lr):
        lr = float(lr.reshape(()).item()) if lr.size == 1 else None
    if not isinstance(lr, (int, float)) or isinstance(lr, bool) or getattr(optimizer, "is_group_lr", False):
        raise ValueError("%s does not support dynamic learning rate and group learning rate now." % who)
    return float(lr)


class LearningRateScheduler(Callback):
    """LearningRateScheduler(learning_rate_function): after each training step, the optimizer's
    learning rate becomes learning_rate_function(lr, cur_step_num) (lr the current rate as a
    float); only a constant learning rate can be changed so (ValueError otherwise)."""

    def __init__(self, learning_rate_function):
        super().__init__()
        if not callable(learning_rate_function):
            raise TypeError("For 'LearningRateScheduler', learning_rate_function must be callable, but got %s."
                            % type(learning_rate_function).__name__)
        self.learning_rate_function = learning_rate_function

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.get("mode") == "eval":
            return
        lr = _get_lr("LearningRateScheduler", cb_params.optimizer)
        new_lr = self.learning_rate_function(lr, cb_params.cur_step_num)
        if not math.isclose(lr, new_lr, rel_tol=1e-10):
            _set_lr("LearningRateScheduler", cb_params.optimizer, new_lr)
            logger.info("At step %d, learning_rate change to %s", cb_params.cur_step_num, new_lr)


# Metrics whose smaller values are better ('auto' mode picks 'min' for them).
_SMALLER_BETTER = ("hausdorff_distance", "mae", "mse", "loss", "perplexity", "mean_surface_distance",
                   "root_mean_square_distance", "eval_loss")


def _monitor_value(cls, who, monitor, cb_params):
    """The monitored value at an epoch's end: "loss" is the last step's loss, anything else a key
    of the epoch's eval_results (metrics and eval_loss, set by Model.fit). None (with a warning)
    when absent."""
    candidates = {}
    if monitor == "loss":
        value = _handle_loss(cb_params.get("net_outputs"))
        if _is_tensor(value):
            value = _mean_float(value)
    else:
        candidates = cb_params.get("eval_results", {}) or {}
        value = candidates.get(monitor)
    if value is None:
        logger.warning("%s is conditioned on %s, which is not available. Available choices are: %s",
                       who, monitor, sorted({"loss"} | set(candidates)))
        return None
    if isinstance(value, (list, tuple)) or (_is_tensor(value) and value.size != 1):
        raise ValueError("%s only supports scalar monitor now." % cls)
    if _is_tensor(value):
        value = float(value.reshape(()).item())
    return float(value)


class _Plateau(Callback):
    def _init_mode(self, monitor, mode, min_delta):
        if mode not in ("auto", "min", "max"):
            raise ValueError("mode should be 'auto', 'min' or 'max', but got %s." % mode)
        self._lower_better = mode == "min" or (mode == "auto" and monitor in _SMALLER_BETTER)
        self.min_delta = abs(min_delta)
        self._reset_best()

    def _reset_best(self):
        self.best = math.inf if self._lower_better else -math.inf

    def is_improvement(self, a, b):
        return a < b - self.min_delta if self._lower_better else a > b + self.min_delta


class EarlyStopping(_Plateau):
    """EarlyStopping(monitor='eval_loss', min_delta=0, patience=0, verbose=False, mode='auto',
    baseline=None, restore_best_weights=False): at the end of each training epoch compares the
    monitored value ("loss": the last step's loss; else a key of the evaluation's results in
    Model.fit: a metric's name or "eval_loss") with the best so far; after `patience` epochs
    without an improvement by more than min_delta it stops training. mode 'min'/'max' says which
    way is better ('auto': 'min' for losses and errors, else 'max'). With a baseline, the wait
    only restarts on values better than it too. restore_best_weights loads the best epoch's
    weights back into the network when it stops."""

    def __init__(self, monitor="eval_loss", min_delta=0, patience=0, verbose=False, mode="auto",
                 baseline=None, restore_best_weights=False):
        super().__init__()
        self.monitor = check_type("EarlyStopping", "monitor", monitor, str)
        check_type("EarlyStopping", "min_delta", min_delta, (float, int))
        self.patience = check_int("EarlyStopping", "patience", patience, 0)
        self.verbose = check_bool("EarlyStopping", "verbose", verbose)
        self.mode = check_type("EarlyStopping", "mode", mode, str)
        if baseline is not None:
            check_type("EarlyStopping", "baseline", baseline, (float, int))
        self.baseline = float(baseline) if baseline is not None else None
        self.restore_best_weights = check_bool("EarlyStopping", "restore_best_weights", restore_best_weights)
        self.wait = 0
        self.stopped_epoch = 0
        self.best_weights_param_dict = None
        self._init_mode(monitor, mode, min_delta)

    def on_train_begin(self, run_context):
        self.wait = 0
        self.stopped_epoch = 0
        self._reset_best()
        self.best_weights_param_dict = None

    def _snapshot(self, net):
        return {name: p.copy() for name, p in net.parameters_dict().items()}

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        current = _monitor_value("EarlyStopping", "Early stopping", self.monitor, cb_params)
        if current is None:
            return
        net = cb_params.train_network
        if self.restore_best_weights and self.best_weights_param_dict is None:
            self.best_weights_param_dict = self._snapshot(net)
        self.wait += 1
        if self.is_improvement(current, self.best):
            self.best = current
            if self.restore_best_weights:
                self.best_weights_param_dict = self._snapshot(net)
            if self.baseline is None or self.is_improvement(current, self.baseline):
                self.wait = 0
        if self.wait >= self.patience:
            self.stopped_epoch = cb_params.get("cur_epoch_num")
            run_context.request_stop()
            if self.restore_best_weights and self.best_weights_param_dict is not None:
                if self.verbose:
                    print("Restoring model weights from the end of the best epoch.")
                from pijit.serialization import load_param_into_net
                load_param_into_net(net, self.best_weights_param_dict)

    def on_train_end(self, run_context):
        if self.stopped_epoch > 0 and self.verbose:
            print("Epoch %05d: early stopping" % self.stopped_epoch)


class ReduceLROnPlateau(_Plateau):
    """ReduceLROnPlateau(monitor='eval_loss', factor=0.1, patience=10, verbose=False, mode='auto',
    min_delta=1e-4, cooldown=0, min_lr=0): at the end of each training epoch, after `patience`
    epochs without an improvement of the monitored value (as EarlyStopping reads it), multiplies
    the optimizer's learning rate by factor (not below min_lr), then waits `cooldown` epochs.
    Only a constant learning rate can be reduced (ValueError otherwise)."""

    def __init__(self, monitor="eval_loss", factor=0.1, patience=10, verbose=False, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0):
        super().__init__()
        self.monitor = check_type("ReduceLROnPlateau", "monitor", monitor, str)
        check_type("ReduceLROnPlateau", "factor", factor, float)
        if not 0.0 < factor < 1.0:
            raise ValueError("For 'ReduceLROnPlateau', the 'factor' should be in (0.0, 1.0), but got %r." % (factor,))
        self.factor = factor
        self.patience = check_int("ReduceLROnPlateau", "patience", patience, 0)
        self.verbose = check_bool("ReduceLROnPlateau", "verbose", verbose)
        self.mode = check_type("ReduceLROnPlateau", "mode", mode, str)
        check_type("ReduceLROnPlateau", "min_delta", min_delta, (float, int))
        self.cooldown = check_int("ReduceLROnPlateau", "cooldown", cooldown, 0)
        self.min_lr = check_type("ReduceLROnPlateau", "min_lr", min_lr, (float, int))
        self.cooldown_counter = 0
        self.wait = 0
        self._init_mode(monitor, mode, min_delta)

    def on_train_begin(self, run_context):
        self.cooldown_counter = 0
        self.wait = 0
        self._reset_best()

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        cur_lr = _get_lr("ReduceLROnPlateau", cb_params.optimizer)
        current = _monitor_value("ReduceLROnPlateau", "Learning rate reduction", self.monitor, cb_params)
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if self.is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                if cur_lr > self.min_lr:
                    new_lr = max(cur_lr * self.factor, self.min_lr)
                    _set_lr("ReduceLROnPlateau", cb_params.optimizer, new_lr)
                    if self.verbose:
                        print("Epoch %05d: ReduceLROnPlateau reducing learning rate to %s."
                              % (cb_params.cur_epoch_num, _f32_text(new_lr)))
                self.cooldown_counter = self.cooldown
                self.wait = 0


__all__ = ["LossMonitor", "TimeMonitor", "History", "LambdaCallback", "LearningRateScheduler", "EarlyStopping",
           "ReduceLROnPlateau"]
