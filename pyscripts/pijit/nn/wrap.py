"""Training wrappers with MindSpore's names: nn.WithLossCell and nn.TrainOneStepCell."""
from pijit.autodiff import _differentiate
from pijit.nn.cell import Cell
from pijit.parameter import ParameterTuple


class WithLossCell(Cell):
    """WithLossCell(backbone, loss_fn): construct(data, label) = loss_fn(backbone(data), label)."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        if not isinstance(backbone, Cell):
            raise TypeError("WithLossCell: backbone must be a Cell, got %s" % type(backbone).__name__)
        if not callable(loss_fn):
            raise TypeError("WithLossCell: loss_fn must be callable, got %s" % type(loss_fn).__name__)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self):
        return self._backbone


class TrainOneStepCell(Cell):
    """TrainOneStepCell(network, optimizer, sens=1.0): one training step. construct(*inputs) runs
    network (which returns the loss), differentiates it with respect to the optimizer's
    parameters (the loss's sensitivity is `sens`), applies the optimizer and returns the loss."""

    def __init__(self, network, optimizer, sens=1.0):
        super().__init__(auto_prefix=False)
        from pijit.nn.optim import Optimizer
        if not isinstance(network, Cell):
            raise TypeError("TrainOneStepCell: network must be a Cell, got %s" % type(network).__name__)
        if not isinstance(optimizer, Optimizer):
            raise TypeError("TrainOneStepCell: optimizer must be an nn.Optimizer, got %s" % type(optimizer).__name__)
        if isinstance(sens, bool) or not isinstance(sens, (int, float)):
            raise TypeError("TrainOneStepCell: sens must be a number, got %r" % (sens,))
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = ParameterTuple(optimizer.parameters)
        self._weights = tuple(self.weights)  # a plain tuple: capture reads its items as the network's
        self.sens = float(sens)

    def construct(self, *inputs):
        loss, _, grads = _differentiate("TrainOneStepCell", self.network, inputs, None, [], self._weights,
                                        None if self.sens == 1.0 else self.sens, False)
        self.optimizer(tuple(grads))
        return loss
