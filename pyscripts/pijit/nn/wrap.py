"""Training wrappers with MindSpore's names: nn.WithLossCell, nn.TrainOneStepCell and
nn.ForwardValueAndGrad."""
from pijit.autodiff import _ALL, GradOperation, _differentiate
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
    """TrainOneStepCell(network, optimizer, sens=None, return_grad=False): one training step.
    construct(*inputs) runs network (which returns the loss), differentiates it with respect to
    the optimizer's parameters (the loss's sensitivity is `sens`, 1.0 when None), applies the
    optimizer and returns the loss (with return_grad, (loss, gradients)).

    It has MindSpore's attributes, so a subclass can write its own construct as model-zoo code
    does: network, optimizer, weights (the optimizer's parameters), grad
    (GradOperation(get_by_list=True, sens_param=True)), grad_no_sens, sens, reducer_flag (False:
    one process) and grad_reducer (an Identity Cell)."""

    def __init__(self, network, optimizer, sens=None, return_grad=False):
        super().__init__(auto_prefix=False)
        from pijit.nn.basic import Identity
        from pijit.nn.optim import Optimizer
        if not isinstance(network, Cell):
            raise TypeError("TrainOneStepCell: network must be a Cell, got %s" % type(network).__name__)
        if not isinstance(optimizer, Optimizer):
            raise TypeError("TrainOneStepCell: optimizer must be an nn.Optimizer, got %s" % type(optimizer).__name__)
        if sens is None:
            sens = 1.0
        if isinstance(sens, bool) or not isinstance(sens, (int, float)):
            raise TypeError("TrainOneStepCell: sens must be a number, got %r" % (sens,))
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = ParameterTuple(optimizer.parameters)
        self._weights = tuple(self.weights)  # a plain tuple: capture reads its items as the network's
        self.sens = float(sens)
        self.return_grad = bool(return_grad)
        self.grad = GradOperation(get_by_list=True, sens_param=True)
        self.grad_no_sens = GradOperation(get_by_list=True)
        self.reducer_flag = False  # one process: no gradient all-reduce
        self.parallel_mode = "stand_alone"
        self.mean = False
        self.degree = 1
        self.grad_reducer = Identity()
        self.use_grad_accumulation = False

    def construct(self, *inputs):
        loss, _, grads = _differentiate("TrainOneStepCell", self.network, inputs, None, [], self._weights,
                                        None if self.sens == 1.0 else self.sens, False)
        grads = tuple(grads)
        self.optimizer(grads)
        if self.return_grad:
            return loss, grads
        return loss


class ForwardValueAndGrad(Cell):
    """ForwardValueAndGrad(network, weights=None, get_all=False, get_by_list=False,
    sens_param=False): construct(*inputs) returns (network(*inputs), gradients), the gradients as
    GradOperation(get_all, get_by_list, sens_param)(network, weights) returns them (with
    sens_param the last input is the sensitivity). The network runs once."""

    def __init__(self, network, weights=None, get_all=False, get_by_list=False, sens_param=False):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell) and not callable(network):
            raise TypeError("ForwardValueAndGrad: network must be a Cell or a function, got %s"
                            % type(network).__name__)
        for name, v in (("get_all", get_all), ("get_by_list", get_by_list), ("sens_param", sens_param)):
            if not isinstance(v, bool):
                raise TypeError("ForwardValueAndGrad: %s must be a bool, got %r" % (name, v))
        if get_by_list and not isinstance(weights, (ParameterTuple, list, tuple)):
            raise TypeError("ForwardValueAndGrad: when get_by_list is True, weights must be a "
                            "ParameterTuple (or a list of Parameters), got %s" % type(weights).__name__)
        self.network = network
        if isinstance(network, Cell):
            network.set_grad()
        self.weights = weights
        self._weights = tuple(weights) if get_by_list else ()
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param

    def construct(self, *inputs):
        sens = None
        if self.sens_param:
            if not inputs:
                raise TypeError("ForwardValueAndGrad(sens_param=True): the last input must be sens")
            inputs, sens = inputs[:-1], inputs[-1]
        # (neither get_all nor get_by_list: the first input's gradient, as GradOperation() gives)
        positions = _ALL if self.get_all else ([] if self.get_by_list else [0])
        loss, dx, dw = _differentiate("ForwardValueAndGrad", self.network, inputs, None, positions,
                                      self._weights, sens, False)
        if self.get_all and self.get_by_list:
            return loss, (tuple(dx), tuple(dw))
        if self.get_by_list:
            return loss, tuple(dw)
        if self.get_all:
            return loss, tuple(dx)
        return loss, dx[0]
