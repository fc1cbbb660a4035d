"""The progress bar Model.train, Model.fit and Model.eval draw on a terminal (pijit's own; not a
MindSpore name):

    Epoch 2/10  37/60 [===========>        ] loss 0.4127  2113.5 samples/s  ETA 0:03

on stderr, redrawn in place at most every 0.1 s, ended by a line with the epoch's time. It is on
when stderr is a terminal, and off when PIJIT_PROGRESS=0, when stderr is not a terminal (logs,
pipes, CI), or when the run's callbacks print lines of their own (LossMonitor, TimeMonitor), so
their output is never torn by a bar. PIJIT_PROGRESS=1 draws it even without a terminal.
"""
import os
import shutil
import sys
import time

from pijit.train.callback._callback import Callback, _loss_float

# Callbacks that print one line per step or epoch: a bar would tear their lines.
_PRINTING = ("LossMonitor", "TimeMonitor")


def progress_enabled(callbacks):
    """Whether Model draws the bar for a run with these callbacks (see the module's doc)."""
    env = os.environ.get("PIJIT_PROGRESS", "")
    if env == "0":
        return False
    for cb in callbacks:
        if type(cb).__name__ in _PRINTING or any(c.__name__ in _PRINTING for c in type(cb).__mro__):
            return False
    if env == "1":
        return True
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def _clock(seconds):
    seconds = int(seconds + 0.5)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return "%d:%02d:%02d" % (h, m, s) if h else "%d:%02d" % (m, s)


def _batch_size(element):
    """The number of samples in a step's inputs: the first Tensor's leading size."""
    for v in element or ():
        shape = getattr(v, "shape", None)
        if shape:
            return int(shape[0])
    return 1


class ProgressBar(Callback):
    """The bar as a callback; Model appends it to a run's callbacks when progress_enabled()."""

    interval = 0.1  # seconds between redraws

    def __init__(self, stream=None):
        super().__init__()
        self._stream = stream
        self._last_draw = 0.0
        self._width = 0

    def _out(self):
        return self._stream if self._stream is not None else sys.stderr

    def _start(self, cb_params):
        self._t0 = time.time()
        self._samples = 0
        self._steps = 0
        self._last_draw = 0.0

    def _line(self, cb_params, label):
        total = cb_params.get("batch_num") or 0
        done = self._steps
        elapsed = max(time.time() - self._t0, 1e-9)
        cols = shutil.get_terminal_size((100, 24)).columns
        count = "%*d/%d" % (len(str(total)), done, total) if total else "%d" % done
        if total:
            width = max(10, min(30, cols - 70))
            filled = int(width * min(done, total) / total)
            count += " [" + "=" * max(filled - 1, 0) + (">" if 0 < filled < width else "=" if filled else "") \
                + " " * (width - filled) + "]"
        parts = [label, count]
        loss = self._loss
        if loss is not None:
            parts.append("loss %.4f" % loss)
        parts.append("%.1f samples/s" % (self._samples / elapsed))
        if total and done < total:
            parts.append("ETA " + _clock(elapsed / max(done, 1) * (total - done)))
        else:
            parts.append(_clock(elapsed))
        line = "  ".join(parts)
        return line[:max(cols - 1, 20)]

    def _draw(self, line, final=False):
        out = self._out()
        pad = " " * max(self._width - len(line), 0)
        out.write("\r" + line + pad + ("\n" if final else ""))
        out.flush()
        self._width = 0 if final else len(line)

    def _step(self, run_context, label, key):
        cb_params = run_context.original_args()
        self._steps += 1
        self._samples += _batch_size(cb_params.get(key))
        now = time.time()
        total = cb_params.get("batch_num") or 0
        if now - self._last_draw >= self.interval or (total and self._steps >= total):
            self._loss = _loss_float(cb_params.get("net_outputs"))
            self._last_draw = now
            self._draw(self._line(cb_params, label))

    # ---- training ----
    def on_train_epoch_begin(self, run_context):
        cb_params = run_context.original_args()
        self._start(cb_params)
        self._loss = None
        self._label = "Epoch %d/%d" % (cb_params.cur_epoch_num, cb_params.get("epoch_num", cb_params.cur_epoch_num))

    def on_train_step_end(self, run_context):
        self._step(run_context, self._label, "train_dataset_element")

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        self._loss = _loss_float(cb_params.get("net_outputs"))
        line = self._line(cb_params, self._label)
        metrics = cb_params.get("metrics")
        if metrics:
            line += "  " + "  ".join("%s %s" % (k, _fmt(v)) for k, v in metrics.items())
        self._draw(line, final=True)

    # ---- evaluation ----
    def on_eval_epoch_begin(self, run_context):
        self._eval_saved = (getattr(self, "_t0", None), getattr(self, "_samples", 0), getattr(self, "_steps", 0),
                            getattr(self, "_loss", None))
        self._start(run_context.original_args())
        self._loss = None

    def on_eval_step_end(self, run_context):
        self._step(run_context, "Eval", "eval_dataset_element")

    def on_eval_epoch_end(self, run_context):
        self._draw(self._line(run_context.original_args(), "Eval"), final=True)
        self._t0, self._samples, self._steps, self._loss = self._eval_saved


def _fmt(v):
    return "%.4f" % v if isinstance(v, float) else str(v)
