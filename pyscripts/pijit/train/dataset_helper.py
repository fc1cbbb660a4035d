"""mindspore.train.dataset_helper: DatasetHelper and connect_network_with_dataset.

On a device MindSpore's "sink mode" sends the data to a device queue and runs several steps per
launch. pijit has no device queue: in sink mode a DatasetHelper still hands the network one batch
per step from the host (as MindSpore itself does on a CPU), and sink_size only sets how many steps
an epoch has: the data continues where the previous epoch stopped, cycling through the dataset.
"""
from pijit import _C

__all__ = ["DatasetHelper", "connect_network_with_dataset"]


def _dataset_size(dataset):
    size = getattr(dataset, "get_dataset_size", None)
    if size is not None:
        return size()
    return len(dataset)


def _as_tuple(item):
    if isinstance(item, _C.TensorBase):
        return (item,)
    if isinstance(item, dict):
        return tuple(item.values())
    return tuple(item)


def _epoch_iterator(dataset):
    """One pass over the dataset, each item a tuple of Tensors (a dataset's
    create_tuple_iterator, or any iterable of tuples for a duck-typed source)."""
    make = getattr(dataset, "create_tuple_iterator", None)
    source = make(num_epochs=1) if make is not None else iter(dataset)
    for item in source:
        yield _as_tuple(item)


def _is_pipeline(dataset):
    from pijit.dataset.engine import Dataset
    return isinstance(dataset, Dataset)


def _one_pass(iterator):
    for item in iterator:
        yield _as_tuple(item)


class DatasetHelper(object):
    """DatasetHelper(dataset, dataset_sink_mode=True, sink_size=-1, epoch_num=1): iterating it
    gives one epoch of the dataset's rows as tuples of Tensors; in sink mode with sink_size > 0
    an epoch is sink_size rows, continuing through the dataset across epochs (see the module's
    doc). types_shapes() gives the columns' (dtypes, shapes) of the first row; sink_size() the
    steps of an epoch."""

    def __init__(self, dataset, dataset_sink_mode=True, sink_size=-1, epoch_num=1):
        if not isinstance(dataset_sink_mode, bool):
            raise TypeError("For 'DatasetHelper', the type of 'dataset_sink_mode' should be bool, but got %s."
                            % type(dataset_sink_mode).__name__)
        if isinstance(sink_size, bool) or not isinstance(sink_size, int):
            raise TypeError("For 'DatasetHelper', the type of 'sink_size' should be int, but got %s."
                            % type(sink_size).__name__)
        if sink_size < -1 or sink_size == 0:
            raise ValueError("The 'sink_size' must be -1 or positive, but got sink_size %d." % sink_size)
        if isinstance(epoch_num, bool) or not isinstance(epoch_num, int) or (epoch_num < 1 and epoch_num != -1):
            raise ValueError("For 'DatasetHelper', the 'epoch_num' must be a positive int or -1, but got %r."
                             % (epoch_num,))
        self.dataset = dataset
        self.dataset_sink_mode = dataset_sink_mode
        self._sink_size = sink_size
        self.epoch_num = epoch_num
        self._cycle = None  # the continuing iterator of sink mode with a sink_size
        self._epochs = None  # the one iterator all epochs read, as MindSpore's DatasetHelper keeps

    def sink_size(self):
        """The steps of one epoch: sink_size in sink mode when given, else the dataset's size."""
        if self.dataset_sink_mode and self._sink_size > 0:
            return self._sink_size
        return _dataset_size(self.dataset)

    def types_shapes(self):
        """([dtype, ...], [shape, ...]) of the columns of the dataset's first row."""
        for row in _epoch_iterator(self.dataset):
            return [t.dtype for t in row], [tuple(t.shape) for t in row]
        return [], []

    def _cycling(self):
        while True:
            empty = True
            for row in _epoch_iterator(self.dataset):
                empty = False
                yield row
            if empty:
                return

    def __iter__(self):
        if self.dataset_sink_mode and self._sink_size > 0 and self._sink_size != _dataset_size(self.dataset):
            if self._cycle is None:
                self._cycle = self._cycling()
            return _take(self._cycle, self._sink_size)
        if not _is_pipeline(self.dataset):  # a duck-typed source: a fresh iterator per epoch
            return _epoch_iterator(self.dataset)
        make = self.dataset.create_tuple_iterator
        # One iterator of epoch_num epochs, one pass of it per epoch: each epoch reshuffles and
        # draws its augmentation anew (an iterator per epoch would replay the first epoch's order).
        if self._epochs is None or getattr(self._epochs, "_run", True) is None:  # none yet, or spent
            self._epochs = make(num_epochs=self.epoch_num)
        return _one_pass(self._epochs)

    def __len__(self):
        return self.sink_size()

    def stop_send(self):
        """Nothing is sent to a device queue here."""

    def continue_send(self):
        """Nothing is sent to a device queue here."""

    def release(self):
        self._cycle = None
        epochs, self._epochs = self._epochs, None
        if epochs is not None and hasattr(epochs, "stop"):
            epochs.stop()

    def get_data_info(self):
        """(dtypes, shapes) of the next row, as types_shapes()."""
        return self.types_shapes()


def _take(it, n):
    for _ in range(n):
        try:
            yield next(it)
        except StopIteration:
            return


def connect_network_with_dataset(network, dataset_helper):
    """The network a sink-mode step runs. MindSpore wraps it to read its inputs from the device
    queue; pijit feeds each step from the host (see the module's doc), so the network itself is
    returned after the arguments are checked."""
    from pijit.nn.cell import Cell
    if not isinstance(network, Cell):
        raise TypeError("For 'connect_network_with_dataset', the type of 'network' should be Cell, but got %s."
                        % type(network).__name__)
    if not isinstance(dataset_helper, DatasetHelper):
        raise TypeError("For 'connect_network_with_dataset', the type of 'dataset_helper' should be DatasetHelper, "
                        "but got %s." % type(dataset_helper).__name__)
    return network
