"""`mindspore.nn.wrap.grad_reducer`: DistributedGradReducer, which all-reduces gradients across the
devices of a data-parallel job. pijit runs one process (communication.get_group_size() is 1), so
the reduction over a group of one leaves each gradient as it is, and mean=True divides by 1."""
from pijit.nn.cell import Cell
from pijit.communication.management import get_group_size


class DistributedGradReducer(Cell):
    """DistributedGradReducer(parameters, mean=None, degree=None, fusion_type=1, group=...):
    called with the gradients (a tuple), returns them reduced over the group: in pijit's single
    process, the same gradients (a new tuple)."""

    def __init__(self, parameters, mean=None, degree=None, fusion_type=1, group=None):
        super().__init__()
        if degree is None:
            degree = get_group_size()
        if not isinstance(degree, int) or isinstance(degree, bool) or degree <= 0:
            raise ValueError("DistributedGradReducer: degree must be a positive int, got %r" % (degree,))
        if degree != get_group_size():
            raise ValueError("DistributedGradReducer: degree %d is not the group size %d (pijit runs a "
                             "single process)" % (degree, get_group_size()))
        self.mean = bool(mean)
        self.degree = degree
        self.parameters = tuple(parameters)

    def construct(self, grads):
        # a group of one: the all-reduce's sum is the gradient itself, and the mean divides by 1
        return tuple(grads)


__all__ = ["DistributedGradReducer"]
