"""mindspore.train.summary: SummaryRecord, accepted as a no-op by documented choice (pijit writes
no MindInsight summary files; see pijit/train/callback/_summary.py)."""
import os

__all__ = ["SummaryRecord"]


class SummaryRecord(object):
    """SummaryRecord(log_dir, file_prefix='events', file_suffix='_MS', num_process=32,
    max_file_size=None, raise_exception=False, export_options=None): a no-op writer. A context
    manager as MindSpore's is; add_value, record, flush, set_mode and close do nothing, and
    log_dir is created so scripts that list it still run. record() returns True as MindSpore's
    does when it has written."""

    def __init__(self, log_dir, file_prefix="events", file_suffix="_MS", num_process=32,
                 max_file_size=None, raise_exception=False, export_options=None):
        if not isinstance(log_dir, str) or not log_dir:
            raise ValueError("For 'SummaryRecord', the 'log_dir' must be a non-empty str, but got %r." % (log_dir,))
        for name, v in (("file_prefix", file_prefix), ("file_suffix", file_suffix)):
            if not isinstance(v, str):
                raise TypeError("For 'SummaryRecord', the '%s' must be a str, but got %s." % (name, type(v).__name__))
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir = log_dir
        self._closed = False
        self._mode = "train"

    def __enter__(self):
        return self

    def __exit__(self, *err):
        self.close()

    def set_mode(self, mode):
        if mode not in ("train", "eval"):
            raise ValueError("For 'set_mode', the argument 'mode' should be 'train' or 'eval', but got %r." % (mode,))
        self._mode = mode

    def add_value(self, plugin, name, value):
        """Accepted and dropped."""

    def record(self, step, train_network=None, plugin_filter=None):
        if isinstance(step, bool) or not isinstance(step, int):
            raise TypeError("For 'record', the type of 'step' should be int, but got %s." % type(step).__name__)
        return True

    @property
    def log_dir(self):
        return self._log_dir

    @log_dir.setter
    def log_dir(self, value):
        self._log_dir = value

    def flush(self):
        """Nothing is buffered."""

    def close(self):
        self._closed = True
