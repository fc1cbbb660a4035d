"""SummaryCollector and SummaryLandscape: accepted and checked, and they record nothing.

MindSpore's collect data for MindInsight (scalars, graphs, histograms, loss landscapes) in its
own summary file format. pijit has no writer for that format; a script that passes these
callbacks runs unchanged, and the callbacks say so once (a logged warning) instead of writing a
file no tool here can read."""
import os

from pijit.train.callback._callback import Callback, logger


class SummaryCollector(Callback):
    """SummaryCollector(summary_dir, collect_freq=10, num_process=32, collect_specified_data=None,
    keep_default_action=True, custom_lineage_data=None, collect_tensor_freq=None,
    max_file_size=None, export_options=None): a no-op by documented choice (pijit writes no
    MindInsight summary files; see the module's doc). The arguments are checked as MindSpore
    checks their types and summary_dir is created, so a script runs unchanged."""

    def __init__(self, summary_dir, collect_freq=10, num_process=32, collect_specified_data=None,
                 keep_default_action=True, custom_lineage_data=None, collect_tensor_freq=None,
                 max_file_size=None, export_options=None):
        super().__init__()
        if not isinstance(summary_dir, str) or not summary_dir.strip():
            raise ValueError("For 'SummaryCollector', the 'summary_dir' must be a non-empty str, but got %r."
                             % (summary_dir,))
        if isinstance(collect_freq, bool) or not isinstance(collect_freq, int) or collect_freq <= 0:
            raise ValueError("For 'SummaryCollector', the 'collect_freq' must be a positive int, but got %r."
                             % (collect_freq,))
        if collect_specified_data is not None and not isinstance(collect_specified_data, dict):
            raise TypeError("For 'SummaryCollector', the 'collect_specified_data' must be a dict, but got %s."
                            % type(collect_specified_data).__name__)
        if not isinstance(keep_default_action, bool):
            raise TypeError("For 'SummaryCollector', the 'keep_default_action' must be a bool, but got %s."
                            % type(keep_default_action).__name__)
        self.summary_dir = summary_dir
        self.collect_freq = collect_freq
        os.makedirs(summary_dir, exist_ok=True)

    def begin(self, run_context):
        logger.warning("SummaryCollector: pijit writes no MindInsight summary files; nothing is collected "
                       "into %s.", self.summary_dir)


class SummaryLandscape(object):
    """SummaryLandscape(summary_dir): a no-op by documented choice (see the module's doc);
    gen_landscapes_with_multi_process and clean_ckpt do nothing."""

    def __init__(self, summary_dir):
        if not isinstance(summary_dir, str):
            raise TypeError("For 'SummaryLandscape', the 'summary_dir' must be a str, but got %s."
                            % type(summary_dir).__name__)
        self.summary_dir = summary_dir

    def gen_landscapes_with_multi_process(self, callback_fn, collect_landscape=None, device_ids=None,
                                          output=None):
        """Does nothing (no landscapes are computed)."""
        logger.warning("SummaryLandscape: loss landscapes are not computed by pijit.")

    def clean_ckpt(self):
        """Does nothing (no checkpoints were collected)."""
