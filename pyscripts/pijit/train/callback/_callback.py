"""Callback, RunContext and the machinery Model runs them with (MindSpore's names and hooks).

Each hook of the current API (on_train_begin, on_train_epoch_begin, on_train_step_begin,
on_train_step_end, on_train_epoch_end, on_train_end and the on_eval_* six) calls by default the
old name it replaces (begin, epoch_begin, step_begin, step_end, epoch_end, end), as MindSpore's
do: a callback written against either API runs under Model.train, Model.eval and Model.fit.
"""
import logging

from pijit import _C
from pijit._state import runtime_state

logger = logging.getLogger("pijit.train")

_HOOKS = ("begin", "epoch_begin", "step_begin", "step_end", "epoch_end", "end")


class Callback(object):
    """The base of callbacks: override the hooks you need (on_train_* / on_eval_*, or the old
    names begin, epoch_begin, step_begin, step_end, epoch_end, end, which the new ones call by
    default). Each hook takes a RunContext; run_context.original_args() holds the model's state
    (cb_params: cur_epoch_num, cur_step_num, batch_num, net_outputs, ...), and
    run_context.request_stop() ends the loop after the current step. A callback is also a context
    manager: Model enters it before the run and exits it after, even on an error."""

    def __enter__(self):
        return self

    def __exit__(self, *err):
        """Release resources here, if any."""

    def begin(self, run_context):
        """Called once before the run (alias of on_train_begin and on_eval_begin)."""

    def epoch_begin(self, run_context):
        """Called before each epoch (alias of on_train_epoch_begin and on_eval_epoch_begin)."""

    def epoch_end(self, run_context):
        """Called after each epoch (alias of on_train_epoch_end and on_eval_epoch_end)."""

    def step_begin(self, run_context):
        """Called before each step (alias of on_train_step_begin and on_eval_step_begin)."""

    def step_end(self, run_context):
        """Called after each step (alias of on_train_step_end and on_eval_step_end)."""

    def end(self, run_context):
        """Called once after the run (alias of on_train_end and on_eval_end)."""

    def on_train_begin(self, run_context):
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_train_step_end(self, run_context):
        self.step_end(run_context)

    def on_train_end(self, run_context):
        self.end(run_context)

    def on_eval_begin(self, run_context):
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_eval_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_eval_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context):
        self.step_end(run_context)

    def on_eval_end(self, run_context):
        self.end(run_context)


def _fan_out(name):
    def call(self, run_context):
        for cb in self._callbacks:
            getattr(cb, name)(run_context)
    call.__name__ = name
    call.__doc__ = "Calls %s of every callback, in the order given." % name
    return call


class _CallbackManager(Callback):
    """Runs a list of callbacks in order; entering it enters each of them (an ExitStack)."""

    def __init__(self, callbacks):
        self._callbacks, self._stack = [], None
        if isinstance(callbacks, Callback):
            self._callbacks.append(callbacks)
        elif isinstance(callbacks, list):
            for cb in callbacks:
                if not isinstance(cb, Callback):
                    raise TypeError("When the 'callbacks' is a list, the elements in 'callbacks' must be "
                                    "Callback functions.")
                self._callbacks.append(cb)
        elif callbacks is not None:
            raise TypeError("The 'callbacks' is not a Callback or a list of Callback.")

    def __enter__(self):
        if self._stack is None:
            import contextlib
            stack = contextlib.ExitStack()
            stack.__enter__()
            entered = []
            try:
                for cb in self._callbacks:
                    target = stack.enter_context(cb)
                    if not isinstance(target, Callback):
                        logger.warning("Please return 'self' or a Callback as the enter target.")
                        target = cb
                    entered.append(target)
            except BaseException:
                import sys
                stack.__exit__(*sys.exc_info())
                raise
            self._callbacks, self._stack = entered, stack
        return self

    def __exit__(self, *err):
        stack, self._stack = self._stack, None
        return stack.__exit__(*err) if stack is not None else False


for _name in _HOOKS + ("on_train_begin", "on_train_epoch_begin", "on_train_step_begin", "on_train_step_end",
                       "on_train_epoch_end", "on_train_end", "on_eval_begin", "on_eval_epoch_begin",
                       "on_eval_step_begin", "on_eval_step_end", "on_eval_epoch_end", "on_eval_end"):
    setattr(_CallbackManager, _name, _fan_out(_name))
del _name


class _InternalCallbackParam(dict):
    """cb_params: a dict whose keys read and write as attributes (cb_params.cur_step_num)."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError("'cb_params' has no attribute %r" % (key,)) from None

    def __setattr__(self, key, value):
        self[key] = value


class RunContext(object):
    """RunContext(original_args): what Model hands every hook. original_args() is the dict of
    the run's state (cb_params; its keys also read as attributes): in training train_network,
    epoch_num, batch_num, cur_epoch_num, cur_step_num (counted across epochs), net_outputs,
    loss_fn, optimizer, network, train_dataset, train_dataset_element, parallel_mode,
    device_number, mode ("train"), dataset_sink_mode, list_callback, last_save_ckpt_step,
    latest_ckpt_file; in evaluation eval_network, valid_dataset, metrics, eval_dataset_element
    and mode "eval". request_stop() asks the loop to stop after the current step."""

    def __init__(self, original_args):
        if not isinstance(original_args, dict):
            raise TypeError("The argument 'original_args' of RunContext should be dict type, but got {}."
                            .format(type(original_args)))
        self._original_args = original_args
        self._stop_requested = False

    @runtime_state("reads the run's state, which changes every step")
    def original_args(self):
        """The dict of the run's state (cb_params)."""
        return self._original_args

    @runtime_state("changes the run's state")
    def request_stop(self):
        """Stops training (or evaluation) after the current step."""
        self._stop_requested = True

    @runtime_state("reads the run's state")
    def get_stop_requested(self):
        """Whether request_stop() was called."""
        return self._stop_requested


def _is_tensor(v):
    return isinstance(v, _C.TensorBase)


def _mean_float(t):
    """The mean of a Tensor's elements as a Python float (numpy's np.mean of asnumpy())."""
    if t.size == 1:
        return float(t.reshape(()).item())
    vals = [float(v) for v in t.reshape((-1,)).tolist()]
    return sum(vals) / len(vals) if vals else float("nan")


def _handle_loss(loss):
    """The loss as LossMonitor prints it, as MindSpore takes it: a Tensor becomes the float mean
    of its elements; of a tuple or list (a loss-scaled step's (loss, overflow, scale)) the first
    element is taken as it is, a Tensor (printed as a Tensor prints)."""
    if isinstance(loss, (tuple, list)):
        if loss and _is_tensor(loss[0]):
            return loss[0]
        return loss
    if _is_tensor(loss):
        return _mean_float(loss)
    return loss


def _loss_float(loss):
    """The first loss value of net_outputs as a float (None when there is none)."""
    if isinstance(loss, (tuple, list)):
        loss = loss[0] if loss else None
    if _is_tensor(loss):
        return _mean_float(loss)
    if isinstance(loss, (int, float)) and not isinstance(loss, bool):
        return float(loss)
    return None
