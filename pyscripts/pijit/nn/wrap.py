"""Training wrappers with MindSpore's names: nn.WithLossCell, nn.TrainOneStepCell and
nn.ForwardValueAndGrad; and loss scaling: nn.TrainOneStepWithLossScaleCell with
nn.DynamicLossScaleUpdateCell and nn.FixedLossScaleUpdateCell."""
from pijit import _C
from pijit import dtype as _dt
from pijit.autodiff import _ALL, GradOperation, _differentiate
from pijit.nn.cell import Cell
from pijit.ops import functional as F
from pijit.parameter import Parameter, ParameterTuple
from pijit.tensor import Tensor


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


# ---- loss scaling (mixed precision) ------------------------------------------------------------

def _scalar_f32(v, who, name):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("%s: %s must be a number, got %r" % (who, name, v))
    return Tensor(float(v), _dt.float32)


class DynamicLossScaleUpdateCell(Cell):
    """DynamicLossScaleUpdateCell(loss_scale_value, scale_factor, scale_window): the loss-scale
    update TrainOneStepWithLossScaleCell calls as cell(loss_scale, overflow). On an overflow the
    scale (a Parameter, written in place) becomes max(scale / scale_factor, 1); after
    `scale_window` steps in a row without one it is multiplied by scale_factor. Returns
    `overflow` as given. Its step counters: cur_iter (from 1) and last_overflow_iter (from 0)."""

    def __init__(self, loss_scale_value, scale_factor, scale_window):
        super().__init__()
        if isinstance(scale_window, bool) or not isinstance(scale_window, int):
            raise TypeError("DynamicLossScaleUpdateCell: scale_window must be an int, got %r" % (scale_window,))
        self.scale_window = Tensor(scale_window, _dt.int32)
        self.scale_factor = _scalar_f32(scale_factor, "DynamicLossScaleUpdateCell", "scale_factor")
        self.loss_scale_value = loss_scale_value
        self.cur_iter = Parameter(Tensor(1, _dt.int32), name="current_iterator_step", requires_grad=False)
        self.last_overflow_iter = Parameter(Tensor(0, _dt.int32), name="last_overflow_iterator_step",
                                            requires_grad=False)
        self.minimum_loss_scale = Tensor(1.0, _dt.float32)

    def get_loss_scale(self):
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        on_overflow = F.select(overflow, F.maximum(loss_scale * F.reciprocal(self.scale_factor),
                                                       self.minimum_loss_scale), loss_scale)
        should_inc = F.less_equal(self.scale_window, self.cur_iter - self.last_overflow_iter)
        F.assign(self.last_overflow_iter,
                   F.select(F.logical_or(overflow, should_inc), self.cur_iter, self.last_overflow_iter))
        grow = F.logical_and(should_inc, F.logical_not(overflow))
        F.assign(loss_scale, F.select(grow, on_overflow * self.scale_factor, on_overflow))
        F.assign(self.cur_iter, self.cur_iter + 1)
        return overflow


class FixedLossScaleUpdateCell(Cell):
    """FixedLossScaleUpdateCell(loss_scale_value): the scale never changes; cell(loss_scale,
    overflow) returns `overflow` (so an overflowing step still skips its update)."""

    def __init__(self, loss_scale_value):
        super().__init__()
        self.loss_scale_value = loss_scale_value

    def get_loss_scale(self):
        return self.loss_scale_value

    def construct(self, _, overflow):
        return overflow


class TrainOneStepWithLossScaleCell(TrainOneStepCell):
    """TrainOneStepWithLossScaleCell(network, optimizer, scale_sense): a training step with loss
    scaling. scale_sense is an update Cell (DynamicLossScaleUpdateCell, FixedLossScaleUpdateCell,
    or a user Cell with get_loss_scale() and construct(loss_scale, overflow)) or a Tensor of shape
    () or (1,) (set_sense_scale() changes it). construct(*inputs): the gradients of the loss
    scaled by the scale, divided back by it (multiplied by its reciprocal, in each gradient's
    dtype); overflow is whether any gradient holds an inf or NaN; the update cell adjusts the
    scale; the optimizer runs only without overflow. Returns (loss, overflow, scale used)."""

    def __init__(self, network, optimizer, scale_sense):
        super().__init__(network, optimizer, sens=None)
        self.loss_scaling_manager = None
        if isinstance(scale_sense, Cell):
            self.loss_scaling_manager = scale_sense
            self.scale_sense = Parameter(Tensor(scale_sense.get_loss_scale(), _dt.float32), name="scale_sense",
                                         requires_grad=False)
        elif isinstance(scale_sense, Tensor):
            if tuple(scale_sense.shape) not in ((), (1,)):
                raise ValueError("For 'TrainOneStepWithLossScaleCell', the shape of 'scale_sense' must be "
                                 "(1,) or (), but got %s." % (tuple(scale_sense.shape),))
            self.scale_sense = Parameter(scale_sense, name="scale_sense", requires_grad=False)
        else:
            raise TypeError("For 'TrainOneStepWithLossScaleCell', the 'scale_sense' must be Cell or Tensor, "
                            "but got 'scale_sense' type: %s." % type(scale_sense).__name__)

    def construct(self, *inputs):
        scaling_sens = self.scale_sense.copy()  # the scale this step uses (the update writes the Parameter)
        loss, _, grads = _differentiate("TrainOneStepWithLossScaleCell", self.network, inputs, None, [],
                                        self._weights, scaling_sens, False)
        inv = F.reciprocal(scaling_sens)
        grads = self.grad_reducer(tuple(g * inv.astype(g.dtype) for g in grads))
        cond = self.get_overflow_status(None, grads)
        overflow = self.process_loss_scale(cond)
        if not overflow:
            self.optimizer(grads)
        return loss, cond, scaling_sens

    def set_sense_scale(self, sens):
        """A new scale (a Tensor of the scale's shape) when scale_sense was a Tensor."""
        if not isinstance(sens, Tensor):
            raise TypeError("For 'TrainOneStepWithLossScaleCell', the type of 'sens' must be Tensor, but got %s"
                            % type(sens).__name__)
        self.scale_sense.set_data(sens)

    def start_overflow_check(self, pre_cond, compute_input):
        """(status, compute_input): no float-status register on this device, so status is False."""
        return False, compute_input

    def get_overflow_status(self, status, compute_output):
        """A bool Tensor of shape (): whether any Tensor in compute_output holds an inf or NaN."""
        flags = [F.logical_not(_all_finite(g)) for g in _tensors_in(compute_output)]
        if not flags:
                    return Tensor(False, _dt.bool_)
        return F.any(F.stack(flags))

    def process_loss_scale(self, overflow):
        """Runs the update cell (if any) on the scale; returns overflow."""
        if self.loss_scaling_manager is not None:
            return self.loss_scaling_manager(self.scale_sense, overflow)
        return overflow


def _tensors_in(v):
    if isinstance(v, _C.TensorBase):
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for item in v for t in _tensors_in(item)]
    return []


def _all_finite(t):
    """A bool Tensor of shape (): t holds no inf or NaN."""
    if not t.dtype.is_floating_point:
        return Tensor(True, _dt.bool_)
    return F.all(F.abs(t) < float("inf"))
