"""mindspore.amp: automatic mixed precision and loss scaling, with MindSpore 2.5's names.

Mixed precision rests on Cell.to_float (pijit/nn/cell.py): a converted cell casts its floating
inputs and the floating trainable Parameters its construct reads, so its ops compute in the low
precision dtype; capture does the same when it inlines the cell (one graph, equal to eager).

The levels, per cell (MindSpore's O1 also converts primitives called in construct; here only the
white-listed cells are converted, their outputs cast back to float32):
- O0: unchanged.
- O1: cells of the white list (Dense, convolutions, RNN cells) compute in `dtype`, their outputs
  are cast back to float32; the rest stays float32.
- O2: the network computes in `dtype` except the black list (BatchNorm, LayerNorm), kept float32
  (their outputs cast to `dtype`); the network's outputs are cast to float32.
- O3: the whole network computes in `dtype`; its outputs are cast to float32.
- auto: MindSpore picks per device; on this CPU, O1's white list with O2's black list, i.e. O1.

Loss scaling: the managers (DynamicLossScaleManager, FixedLossScaleManager) give the update cells
nn.TrainOneStepWithLossScaleCell calls; the scalers (StaticLossScaler, DynamicLossScaler) are for
training loops written by hand: scale the loss, unscale the gradients, all_finite, adjust.
"""
from pijit import _C
from pijit import dtype as _dt
from pijit import nn
from pijit import ops
from pijit.nn.cell import Cell
from pijit.parameter import Parameter
from pijit.tensor import Tensor

__all__ = ["DynamicLossScaleManager", "DynamicLossScaler", "FixedLossScaleManager", "LossScaleManager",
           "LossScaler", "StaticLossScaler", "all_finite", "auto_mixed_precision", "build_train_network",
           "custom_mixed_precision", "get_black_list", "get_white_list", "init_status"]


def _classes(module, names):
    return [getattr(module, n) for n in names if isinstance(getattr(module, n, None), type)]


# (the ones pijit has of MindSpore's lists)
_WHITE = ["Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose", "Dense",
          "LSTMCell", "RNNCell", "GRUCell"]
_BLACK = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm"]
AMP_WHITE_LIST = _classes(nn, _WHITE)
AMP_BLACK_LIST = _classes(nn, _BLACK)


def _lists():
    """The built-in lists, with mint.nn's layers of the same kinds."""
    try:
        from pijit.mint import nn as mnn
    except ImportError:  # pragma: no cover (mint is part of pijit)
        return AMP_WHITE_LIST, AMP_BLACK_LIST
    white = AMP_WHITE_LIST + [c for c in _classes(mnn, ["Linear", "Conv2d", "Conv3d", "ConvTranspose2d"])
                              if c not in AMP_WHITE_LIST]
    black = AMP_BLACK_LIST + [c for c in _classes(mnn, _BLACK) if c not in AMP_BLACK_LIST]
    return white, black


def get_white_list():
    """A copy of the built-in white list (the cells O1 converts)."""
    return list(_lists()[0])


def get_black_list():
    """A copy of the built-in black list (the cells O2 keeps in float32)."""
    return list(_lists()[1])


def _cast_floats(v, dst):
    """Every floating Tensor in v (tuples, lists and dicts walked) cast to dst."""
    if isinstance(v, _C.TensorBase):
        return v.astype(dst) if v.dtype.is_floating_point and v.dtype is not dst else v
    if isinstance(v, tuple):
        return tuple(_cast_floats(a, dst) for a in v)
    if isinstance(v, list):
        return [_cast_floats(a, dst) for a in v]
    if isinstance(v, dict):
        return {k: _cast_floats(a, dst) for k, a in v.items()}
    return v


class _OutputTo(Cell):
    """Runs backbone and casts its floating outputs to `dst` (parameter names unchanged)."""

    def __init__(self, backbone, dst):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._dst = dst

    def construct(self, *args, **kwargs):
        return _cast_floats(self._backbone(*args, **kwargs), self._dst)


def _check_dtype(dtype):
    if dtype not in (_dt.float16, _dt.bfloat16):
        raise ValueError("The dtype should be one of (mstype.float16, mstype.bfloat16), but got %s." % (dtype,))


def _replace_cells(network, match, wrap):
    """Replaces each cell below network for which match(cell) holds by wrap(cell), in its parent's
    registry (a SequentialCell runs what its registry holds); descends into the others."""
    for name, sub in list(network.name_cells().items()):
        if match(sub):
            network._cells[name] = wrap(sub)
        else:
            _replace_cells(sub, match, wrap)


def _white_list(network, white_list, dtype):
    if isinstance(network, tuple(white_list)):
        return _OutputTo(network.to_float(dtype), _dt.float32)
    _replace_cells(network, lambda c: isinstance(c, tuple(white_list)),
                   lambda c: _OutputTo(c.to_float(dtype), _dt.float32))
    return network


def _black_list(network, black_list, dtype):
    network.to_float(dtype)
    _replace_cells(network, lambda c: isinstance(c, tuple(black_list)),
                   lambda c: _OutputTo(c.to_float(_dt.float32), dtype))


def auto_mixed_precision(network, amp_level="O0", dtype=_dt.float16):
    """The network with automatic mixed precision at `amp_level` ('O0', 'O1', 'O2', 'O3' or
    'auto'; see the module's doc), computing in `dtype` (float16 or bfloat16). O2 and O3 return a
    Cell wrapping the network that casts its outputs to float32; O0 returns the network itself;
    O1 converts the white-listed cells in place (a white-listed network itself is wrapped)."""
    if not isinstance(network, Cell):
        raise TypeError("The network type should be Cell.")
    _check_dtype(dtype)
    if amp_level == "O0":
        return network
    if amp_level in ("O1", "auto"):
        return _white_list(network, get_white_list(), dtype)
    if amp_level == "O2":
        _black_list(network, get_black_list(), dtype)
    elif amp_level == "O3":
        network.to_float(dtype)
    else:
        raise ValueError("The amp level {} is not supported".format(amp_level))
    return _OutputTo(network, _dt.float32)


def custom_mixed_precision(network, *, white_list=None, black_list=None, dtype=_dt.float16):
    """O1 with your own white list of Cell classes, or O2 with your own black list (one of them)."""
    if not isinstance(network, Cell):
        raise TypeError("The network type should be Cell.")
    if white_list is None and black_list is None:
        raise ValueError("For custom_mixed_precision, one of white_list and black_list must be provided.")
    if white_list is not None and black_list is not None:
        raise ValueError("For custom_mixed_precision, the white_list or black_list cannot be provided "
                         "at the same time, please provide one or the other.")
    _check_dtype(dtype)
    given, name = (white_list, "white_list") if white_list is not None else (black_list, "black_list")
    if not isinstance(given, list):
        raise TypeError("The type of %s should be list, but got %s" % (name, type(given)))
    for elem in given:
        if not isinstance(elem, type):
            raise TypeError("The element in %s should be a class, but got %s" % (name, elem))
        if not issubclass(elem, Cell):
            raise TypeError("The subclass of element in %s should be one of 'Cell', but got %s" % (name, elem))
    if white_list is not None:
        return _white_list(network, white_list, dtype)
    _black_list(network, black_list, dtype)
    return _OutputTo(network, _dt.float32)


# ---- loss scale managers (for build_train_network / Model) ----------------------------------------

class LossScaleManager(object):
    """The base of the loss scale managers: get_loss_scale, update_loss_scale(overflow) and
    get_update_cell (the Cell TrainOneStepWithLossScaleCell calls, or None)."""

    def get_loss_scale(self):
        """The loss scale."""

    def update_loss_scale(self, overflow):
        """Updates the scale after a step (overflow: whether it overflowed)."""

    def get_update_cell(self):
        """The update Cell for TrainOneStepWithLossScaleCell."""


class FixedLossScaleManager(LossScaleManager):
    """FixedLossScaleManager(loss_scale=128.0, drop_overflow_update=True): a constant scale; with
    drop_overflow_update, a step whose gradients overflow is skipped (get_update_cell gives a
    FixedLossScaleUpdateCell), without it get_update_cell is None (the optimizer's own loss_scale
    divides the gradients)."""

    def __init__(self, loss_scale=128.0, drop_overflow_update=True):
        if loss_scale < 1:
            raise ValueError("The argument 'loss_scale' must be >= 1, but got {}".format(loss_scale))
        self._loss_scale = loss_scale
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self):
        return self._loss_scale

    def get_drop_overflow_update(self):
        return self._drop_overflow_update

    def update_loss_scale(self, overflow):
        """The scale is fixed: nothing to do."""

    def get_update_cell(self):
        if not self._drop_overflow_update:
            return None
        return nn.FixedLossScaleUpdateCell(self._loss_scale)


class DynamicLossScaleManager(LossScaleManager):
    """DynamicLossScaleManager(init_loss_scale=2**24, scale_factor=2, scale_window=2000): the
    scale is divided by scale_factor (not below 1) on an overflow and multiplied by it after
    scale_window steps without one. update_loss_scale does that on the host side;
    get_update_cell gives the DynamicLossScaleUpdateCell that does it inside a training step."""

    def __init__(self, init_loss_scale=2 ** 24, scale_factor=2, scale_window=2000):
        if init_loss_scale < 1.0:
            raise ValueError("The argument 'init_loss_scale' must be > 1, but got {}".format(init_loss_scale))
        if isinstance(scale_window, bool) or not isinstance(scale_window, int) or scale_window <= 0:
            raise ValueError("The argument 'scale_window' must be a positive int, but got {}".format(scale_window))
        if scale_factor <= 0:
            raise ValueError("The argument 'scale_factor' must be > 0, but got {}".format(scale_factor))
        self.loss_scale = init_loss_scale
        self.scale_window = scale_window
        self.scale_factor = scale_factor
        self.increase_ratio = scale_factor
        self.decrease_ratio = 1 / scale_factor
        self.cur_iter = 1
        self.last_overflow_iter = 0
        self.bad_step_max = 1000
        self.bad_step = 0

    def get_loss_scale(self):
        return self.loss_scale

    def update_loss_scale(self, overflow):
        if overflow:
            self.loss_scale = max(self.loss_scale * self.decrease_ratio, 1)
            self.last_overflow_iter = self.cur_iter
            self.bad_step += 1
        else:
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                self.loss_scale *= self.increase_ratio
            self.bad_step = 0
        if self.bad_step > self.bad_step_max:
            raise RuntimeError("Dynamic loss scale Continuous overflow ", self.bad_step,
                               " times, has exceeded maximum threshold.")
        self.cur_iter += 1

    def get_drop_overflow_update(self):
        return True

    def get_update_cell(self):
        return nn.DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)


# ---- build_train_network -----------------------------------------------------------------------

_CONFIG = {
    "O0": {"keep_batchnorm_fp32": False, "cast_model_type": _dt.float32, "loss_scale_manager": None},
    "O1": {"keep_batchnorm_fp32": False, "cast_model_type": _dt.float32, "loss_scale_manager": None},
    "O2": {"keep_batchnorm_fp32": True, "cast_model_type": _dt.float16, "loss_scale_manager": "dynamic"},
    "O3": {"keep_batchnorm_fp32": False, "cast_model_type": _dt.float16, "loss_scale_manager": None},
}


class _WithLossCell32(Cell):
    """The loss of a float16 network, computed in float32 (outputs and label cast)."""

    def __init__(self, backbone, loss_fn):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        out = self._backbone(data)
        return self._loss_fn(_cast_floats(out, _dt.float32), _cast_floats(label, _dt.float32))


def build_train_network(network, optimizer, loss_fn=None, level="O0", boost_level="O0", **kwargs):
    """The training Cell for network at mixed-precision `level` ('O0'..'O3'; 'auto' raises
    here, as MindSpore does on a CPU): O2 and O3 convert the network to float16 (O2 keeps
    BatchNorm/LayerNorm in float32 and scales the loss dynamically); the loss (loss_fn, if given)
    is computed in float32. kwargs override the level's cast_model_type (float16 or float32),
    keep_batchnorm_fp32 (bool) and loss_scale_manager (a LossScaleManager or None). With a
    manager whose get_update_cell() is a Cell: TrainOneStepWithLossScaleCell; otherwise
    TrainOneStepCell with the manager's scale as sens. boost_level ('O0', 'O1', 'O2') is checked
    and ignored (MindSpore's boost algorithms are not implemented)."""
    from pijit import context
    if not isinstance(optimizer, nn.Optimizer):
        raise TypeError("For 'build_train_network', the 'optimizer' must be an nn.Optimizer, but got %s"
                        % type(optimizer).__name__)
    if not isinstance(level, str):
        raise TypeError("The argument `level` must be a string in ['O0', 'O1', 'O2', 'O3', 'auto'], but got "
                        "type {}.".format(type(level)))
    if level not in ("O0", "O1", "O2", "O3", "auto"):
        raise ValueError("The argument `level` must be in ['O0', 'O1', 'O2', 'O3', 'auto'], but got %r" % (level,))
    if boost_level not in ("O0", "O1", "O2"):
        raise ValueError("The argument `boost_level` must be in ['O0', 'O1', 'O2'], but got %r" % (boost_level,))
    if level == "auto":
        target = context.get_context("device_target")
        if target == "GPU":
            level = "O2"
        else:
            raise ValueError("Level `auto` only support when `device_target` is GPU or Ascend.")
    for arg in kwargs:
        if arg not in ("cast_model_type", "keep_batchnorm_fp32", "loss_scale_manager"):
            raise ValueError("Unsupported arg '{}'".format(arg))
    if "cast_model_type" in kwargs and kwargs["cast_model_type"] not in (_dt.float16, _dt.float32):
        raise TypeError("cast_model_type must be mstype.float16 or mstype.float32, got %r" % (kwargs["cast_model_type"],))
    if "keep_batchnorm_fp32" in kwargs and not isinstance(kwargs["keep_batchnorm_fp32"], bool):
        raise TypeError("keep_batchnorm_fp32 must be a bool, got %r" % (kwargs["keep_batchnorm_fp32"],))
    manager = kwargs.get("loss_scale_manager")
    if manager is not None and not isinstance(manager, LossScaleManager):
        raise TypeError("loss_scale_manager must be a LossScaleManager, got %s" % type(manager).__name__)
    config = dict(_CONFIG[level], **kwargs)
    if config["loss_scale_manager"] == "dynamic":
        config["loss_scale_manager"] = DynamicLossScaleManager()

    if config["cast_model_type"] is _dt.float16:
        network.to_float(_dt.float16)
        if config["keep_batchnorm_fp32"]:
            _replace_cells(network, lambda c: isinstance(c, tuple(get_black_list())),
                           lambda c: _OutputTo(c.to_float(_dt.float32), _dt.float16))
    elif not config["keep_batchnorm_fp32"] and level == "O2":
        network.to_float(_dt.float16)
    elif config["cast_model_type"] is _dt.float32 and level in ("O2", "O3"):
        pass
    else:
        network = auto_mixed_precision(network, level)

    if loss_fn is not None:
        if not isinstance(loss_fn, Cell):
            raise TypeError("For 'build_train_network', 'loss_fn' must be a Cell, got %s" % type(loss_fn).__name__)
        if config["cast_model_type"] is _dt.float16:
            network = _WithLossCell32(network, loss_fn)
        else:
            network = nn.WithLossCell(network, loss_fn)

    manager = config["loss_scale_manager"]
    loss_scale = None
    if manager is not None:
        loss_scale = manager.get_loss_scale()
        update_cell = manager.get_update_cell()
        if update_cell is not None:
            return nn.TrainOneStepWithLossScaleCell(network, optimizer, scale_sense=update_cell).set_train()
    return nn.TrainOneStepCell(network, optimizer, loss_scale).set_train()


# ---- loss scalers (for training loops written by hand) -----------------------------------------

def _map(fn, inputs):
    if isinstance(inputs, (tuple, list)):
        return type(inputs)(_map(fn, v) for v in inputs)
    return fn(inputs)


class LossScaler(object):
    """The base of the loss scalers: scale(inputs), unscale(inputs), adjust(grads_finite)."""

    def scale(self, inputs):
        raise NotImplementedError

    def unscale(self, inputs):
        raise NotImplementedError

    def adjust(self, grads_finite):
        raise NotImplementedError


def _check_scale_value(scale_value):
    if isinstance(scale_value, bool) or not isinstance(scale_value, (int, float)):
        raise TypeError("The argument 'scale_value' must be float or int, but got %s" % type(scale_value).__name__)
    if scale_value < 1.0:
        raise ValueError("The argument 'scale_value' must be > 1, but got {}".format(scale_value))
    return Parameter(Tensor(float(scale_value), _dt.float32), name="scale_value", requires_grad=False)


class _Scaling(LossScaler):
    def __init__(self, scale_value):
        self.scale_value = _check_scale_value(scale_value)

    def scale(self, inputs):
        s = self.scale_value
        return _map(lambda x: x * s.astype(x.dtype), inputs)

    def unscale(self, inputs):
        inv = ops.reciprocal(self.scale_value)
        return _map(lambda x: x * inv.astype(x.dtype), inputs)


class StaticLossScaler(_Scaling):
    """StaticLossScaler(scale_value): scale(x) = x * scale_value and unscale(x) = x *
    (1 / scale_value), each in x's dtype, for a Tensor or a tuple/list of them; adjust does
    nothing. scale_value is a float32 Parameter."""

    def adjust(self, grads_finite):
        """The scale is fixed."""


class DynamicLossScaler(_Scaling):
    """DynamicLossScaler(scale_value, scale_factor, scale_window): as StaticLossScaler, and
    adjust(grads_finite) updates the scale in place: when grads_finite, a counter counts the
    step, and at the scale_window-th step in a row the scale is multiplied by scale_factor (unless
    that overflows float32) and the counter restarts; otherwise the scale becomes
    max(scale / scale_factor, 1) and the counter restarts. Returns True."""

    def __init__(self, scale_value, scale_factor, scale_window):
        super().__init__(scale_value)
        for name, v in (("scale_window", scale_window), ("scale_factor", scale_factor)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError("The argument '%s' must be a positive int, but got %r" % (name, v))
        self.scale_window = scale_window
        self.scale_factor = scale_factor
        self.counter = Parameter(Tensor(0, _dt.int32), name="counter", requires_grad=False)

    def adjust(self, grads_finite):
        one = ops.ones((), self.scale_value.dtype)
        grown = self.scale_value * self.scale_factor
        keep_or_grow = ops.select(self.counter == (self.scale_window - 1),
                                  ops.select(_all_finite_tensor(grown), grown, self.scale_value), self.scale_value)
        ops.assign(self.scale_value, ops.select(grads_finite, keep_or_grow,
                                                ops.maximum(one, self.scale_value / self.scale_factor)))
        ops.assign(self.counter, ((self.counter + 1) % self.scale_window) * grads_finite.astype(_dt.int32))
        return True


def _all_finite_tensor(t):
    from pijit.nn.wrap import _all_finite
    return _all_finite(t)


def all_finite(inputs, status=None):
    """A bool Tensor of shape (): every Tensor in inputs (a Tensor or a tuple/list of them) holds
    no inf or NaN. status (init_status()'s, for Ascend's float-status register) is unused here."""
    from pijit.nn.wrap import _tensors_in
    from pijit.ops import functional as F
    flags = [_all_finite_tensor(t) for t in _tensors_in(inputs)]
    if not flags:
        return Tensor(True, _dt.bool_)
    return F.all(F.stack(flags))


def init_status():
    """The overflow status all_finite takes on Ascend: here float32 zeros of shape (8,)."""
    return Tensor([0.0] * 8, _dt.float32)
