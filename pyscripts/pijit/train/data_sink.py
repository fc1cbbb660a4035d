"""mindspore.train.data_sink: run a step function over a dataset, sink_size steps per call."""
from pijit._state import runtime_state
from pijit.train.dataset_helper import DatasetHelper

__all__ = ["data_sink"]


def data_sink(fn, dataset, sink_size=1, jit_config=None, input_signature=None):
    """A function that, at each call, runs fn on the next sink_size rows of dataset (its columns
    as fn's arguments, the dataset cycled through across calls) and returns fn's output for the
    last of them. MindSpore sinks those steps onto a device as one launch; pijit runs them from
    the host, jitted when jit_config is given (pijit.jit(fn))."""
    if not callable(fn):
        raise TypeError("For 'data_sink', the argument 'fn' must be callable, but got %s." % type(fn).__name__)
    if isinstance(sink_size, bool) or not isinstance(sink_size, int) or sink_size <= 0:
        raise ValueError("For 'data_sink', the argument 'sink_size' must be a positive int, but got %r."
                         % (sink_size,))
    if not hasattr(dataset, "create_tuple_iterator") and not hasattr(dataset, "__iter__"):
        raise TypeError("For 'data_sink', the argument 'dataset' must be a Dataset, but got %s."
                        % type(dataset).__name__)
    step = fn
    if jit_config is not None or input_signature is not None:
        from pijit.jit import jit
        step = jit(fn, input_signature=input_signature, jit_config=jit_config)
    helper = DatasetHelper(dataset, dataset_sink_mode=True, sink_size=sink_size)
    rows = helper._cycling()

    @runtime_state("runs steps over the dataset")
    def sink_fun():
        out = None
        ran = False
        for _ in range(sink_size):
            try:
                row = next(rows)
            except StopIteration:
                break
            out = step(*row)
            ran = True
        if not ran:
            raise ValueError("For 'data_sink', the dataset has no rows.")
        return out

    return sink_fun
