"""mindspore.mint.nn: PyTorch-style layers (torch argument names: in_features, out_features,
bias=True, padding as an int or 'same', momentum=0.1, dim=...), as pijit Cells built on
mint.nn.functional. Parameter names and initialisers follow MindSpore's mint layers (weight/bias;
Kaiming-uniform weights, uniform(1/sqrt(fan_in)) biases)."""
import math

from pijit import dtype as _dt
from pijit.common.initializer import initializer as _init, HeUniform as _HeUniform, \
    Uniform as _Uniform
from pijit.nn.cell import Cell
from pijit.parameter import Parameter as _Parameter
from pijit.mint.nn import functional as F
from pijit.mint.nn import functional  # noqa: F401


def _positive(who, name, v):
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError("%s: %s must be a positive int, got %r" % (who, name, v))
    return v


def _pair(v, name, who):
    return F._pair(v, name, who)


def _reduction(who, reduction):
    return F._reduction(who, reduction)


class Linear(Cell):
    """Linear(in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None):
    y = x @ weight.T + bias, weight (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True, weight_init=None, bias_init=None,
                 dtype=None):
        super().__init__()
        self.in_features = _positive("Linear", "in_features", in_features)
        self.out_features = _positive("Linear", "out_features", out_features)
        dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        self.weight = _Parameter(_init(_HeUniform(math.sqrt(5)) if weight_init is None else weight_init,
                                       (out_features, in_features), dtype), name="weight")
        if bias:
            self.bias = _Parameter(_init(_Uniform(1.0 / math.sqrt(in_features)) if bias_init is None
                                         else bias_init, (out_features,), dtype), name="bias")
        else:
            self.bias = None

    def construct(self, input):
        return F.linear(input, self.weight, self.bias)

    def extend_repr(self):
        return "in_features=%d, out_features=%d, bias=%s" % (self.in_features, self.out_features,
                                                             self.bias is not None)


class Conv2d(Cell):
    """Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
    bias=True, padding_mode='zeros', dtype=None): padding an int, a pair, 'valid' or 'same';
    padding_mode 'zeros', 'reflect', 'replicate' or 'circular'."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", dtype=None):
        super().__init__()
        who = "Conv2d"
        self.in_channels = _positive(who, "in_channels", in_channels)
        self.out_channels = _positive(who, "out_channels", out_channels)
        self.groups = _positive(who, "groups", groups)
        if in_channels % groups or out_channels % groups:
            raise ValueError("Conv2d: in_channels and out_channels must be divisible by groups")
        self.kernel_size = _pair(kernel_size, "kernel_size", who)
        self.stride = _pair(stride, "stride", who)
        self.dilation = _pair(dilation, "dilation", who)
        self.padding = padding if isinstance(padding, str) else _pair(padding, "padding", who)
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError("Conv2d: padding_mode must be 'zeros', 'reflect', 'replicate' or "
                             "'circular', got %r" % (padding_mode,))
        if padding_mode != "zeros" and isinstance(padding, str):
            raise ValueError("Conv2d: a string padding needs padding_mode='zeros'")
        self.padding_mode = padding_mode
        dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        shape = (out_channels, in_channels // groups) + self.kernel_size
        fan_in = (in_channels // groups) * self.kernel_size[0] * self.kernel_size[1]
        self.weight = _Parameter(_init(_HeUniform(math.sqrt(5)), shape, dtype), name="weight")
        self.bias = _Parameter(_init(_Uniform(1.0 / math.sqrt(fan_in)), (out_channels,), dtype),
                               name="bias") if bias else None

    def construct(self, input):
        if self.padding_mode != "zeros":
            ph, pw = self.padding
            mode = "replicate" if self.padding_mode == "replicate" else self.padding_mode
            x = F.pad(input, (pw, pw, ph, ph), mode=mode)
            return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extend_repr(self):
        return "in_channels=%d, out_channels=%d, kernel_size=%s, stride=%s, padding=%s" % (
            self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding)


def _activation(name, fn, doc, **defaults):
    def __init__(self, *args, **kwargs):
        Cell.__init__(self)
        names = list(defaults)
        if len(args) > len(names):
            raise TypeError("%s() takes at most %d arguments" % (name, len(names)))
        values = dict(defaults)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in defaults:
                raise TypeError("%s() got an unexpected keyword argument %r" % (name, k))
            values[k] = v
        for k, v in values.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_arg_names", tuple(names))

    def construct(self, input):
        return fn(input, **{k: getattr(self, k) for k in self._arg_names})

    def extend_repr(self):
        return ", ".join("%s=%r" % (k, getattr(self, k)) for k in self._arg_names)

    return type(name, (Cell,), {"__init__": __init__, "construct": construct,
                                "extend_repr": extend_repr, "__doc__": doc,
                                "__module__": __name__})


ReLU = _activation("ReLU", lambda x, inplace: F.relu(x), "max(x, 0).", inplace=False)
ReLU6 = _activation("ReLU6", lambda x, inplace: F.relu6(x), "min(max(x, 0), 6).", inplace=False)
GELU = _activation("GELU", lambda x, approximate: F.gelu(x, approximate=approximate),
                   "GELU(approximate='none').", approximate="none")
SiLU = _activation("SiLU", lambda x, inplace: F.silu(x), "x sigmoid(x).", inplace=False)
Sigmoid = _activation("Sigmoid", lambda x: F.sigmoid(x), "1 / (1 + exp(-x)).")
Tanh = _activation("Tanh", lambda x: F.tanh(x), "tanh(x).")
Softmax = _activation("Softmax", lambda x, dim: F.softmax(x, dim), "Softmax(dim=None): the last dim "
                      "when None.", dim=None)
LogSoftmax = _activation("LogSoftmax", lambda x, dim: F.log_softmax(x, dim), "LogSoftmax(dim=None).",
                         dim=None)
LeakyReLU = _activation("LeakyReLU", lambda x, negative_slope, inplace: F.leaky_relu(x, negative_slope),
                        "LeakyReLU(negative_slope=0.01).", negative_slope=0.01, inplace=False)
ELU = _activation("ELU", lambda x, alpha, inplace: F.elu(x, alpha), "ELU(alpha=1.0).", alpha=1.0,
                  inplace=False)
Hardswish = _activation("Hardswish", lambda x, inplace: F.hardswish(x), "x relu6(x + 3) / 6.",
                        inplace=False)
Hardsigmoid = _activation("Hardsigmoid", lambda x, inplace: F.hardsigmoid(x), "relu6(x + 3) / 6.",
                          inplace=False)
Hardtanh = _activation("Hardtanh", lambda x, min_val, max_val, inplace: F.hardtanh(x, min_val, max_val),
                       "clamp(x, min_val, max_val).", min_val=-1.0, max_val=1.0, inplace=False)
Mish = _activation("Mish", lambda x, inplace: F.mish(x), "x tanh(softplus(x)).", inplace=False)
Softplus = _activation("Softplus", lambda x, beta, threshold: F.softplus(x, beta, threshold),
                       "Softplus(beta=1, threshold=20).", beta=1, threshold=20)
LogSigmoid = _activation("LogSigmoid", lambda x: F.logsigmoid(x), "log(sigmoid(x)).")
Identity = _activation("Identity", lambda x: x, "Returns its input.")


class Flatten(Cell):
    """Flatten(start_dim=1, end_dim=-1)."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, input):
        from pijit.ops import functional as _OF
        return _OF.flatten(input, start_dim=self.start_dim, end_dim=self.end_dim)


class Dropout(Cell):
    """Dropout(p=0.5, inplace=False): zeroes elements with probability p in training mode and
    scales the rest by 1 / (1 - p); the identity in eval mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError("Dropout: p must be a number in [0, 1], got %r" % (p,))
        self.p = float(p)

    def construct(self, input):
        return F.dropout(input, self.p, self.training)

    def extend_repr(self):
        return "p=%s" % self.p


class Embedding(Cell):
    """Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
    scale_grad_by_freq=False, sparse=False, _weight=None, dtype=None): weight ~ N(0, 1), the
    padding_idx row zero."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False,
                 dtype=None):
        super().__init__()
        self.num_embeddings = _positive("Embedding", "num_embeddings", num_embeddings)
        self.embedding_dim = _positive("Embedding", "embedding_dim", embedding_dim)
        if max_norm is not None:
            raise NotImplementedError("Embedding: max_norm is not supported in pijit")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError("Embedding: padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        if _weight is None:
            from pijit.common.initializer import Normal
            w = _init(Normal(1.0), (num_embeddings, embedding_dim), dtype)
            if padding_idx is not None:
                w[padding_idx] = 0.0
        else:
            w = _weight
        self.weight = _Parameter(w, name="weight", requires_grad=not _freeze)

    def construct(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extend_repr(self):
        return "%d, %d" % (self.num_embeddings, self.embedding_dim)


class LayerNorm(Cell):
    """LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=None)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, float(eps)
        dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = _Parameter(_init("ones", shape, dtype), name="weight") \
            if elementwise_affine else None
        self.bias = _Parameter(_init("zeros", shape, dtype), name="bias") \
            if elementwise_affine and bias else None

    def construct(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extend_repr(self):
        return "%s, eps=%s, elementwise_affine=%s" % (self.normalized_shape, self.eps,
                                                      self.elementwise_affine)


class GroupNorm(Cell):
    """GroupNorm(num_groups, num_channels, eps=1e-5, affine=True, dtype=None)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=None):
        super().__init__()
        self.num_groups = _positive("GroupNorm", "num_groups", num_groups)
        self.num_channels = _positive("GroupNorm", "num_channels", num_channels)
        if num_channels % num_groups:
            raise ValueError("GroupNorm: num_channels must be divisible by num_groups")
        self.eps = float(eps)
        dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        self.weight = _Parameter(_init("ones", (num_channels,), dtype), name="weight",
                                 requires_grad=bool(affine))
        self.bias = _Parameter(_init("zeros", (num_channels,), dtype), name="bias",
                               requires_grad=bool(affine))

    def construct(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


class _BatchNorm(Cell):
    def __init__(self, who, ndims, num_features, eps, momentum, affine, track_running_stats,
                 dtype):
        super().__init__()
        self.who, self.ndims = who, ndims
        self.num_features = _positive(who, "num_features", num_features)
        if momentum is not None and not 0 <= momentum <= 1:
            raise ValueError("%s: momentum must be in [0, 1], got %r" % (who, momentum))
        if momentum is None:
            raise NotImplementedError("%s: momentum=None (a cumulative average) is not supported"
                                      % who)
        self.eps, self.momentum = float(eps), float(momentum)
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        c = (num_features,)
        self.weight = _Parameter(_init("ones", c, dtype), name="weight", requires_grad=self.affine)
        self.bias = _Parameter(_init("zeros", c, dtype), name="bias", requires_grad=self.affine)
        self.running_mean = _Parameter(_init("zeros", c, dtype), name="running_mean",
                                       requires_grad=False)
        self.running_var = _Parameter(_init("ones", c, dtype), name="running_var",
                                      requires_grad=False)

    def construct(self, input):
        if input.ndim not in self.ndims:
            raise ValueError("%s: expected a %s-D input, got %d-D" % (
                self.who, " or ".join(str(n) for n in self.ndims), input.ndim))
        training = self.training or not self.track_running_stats
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            training, self.momentum, self.eps)

    def extend_repr(self):
        return "%d, eps=%s, momentum=%s, affine=%s" % (self.num_features, self.eps, self.momentum,
                                                       self.affine)


class BatchNorm1d(_BatchNorm):
    """BatchNorm1d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
    dtype=None): over (N, C) or (N, C, L)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        super().__init__("BatchNorm1d", (2, 3), num_features, eps, momentum, affine,
                         track_running_stats, dtype)


class BatchNorm2d(_BatchNorm):
    """BatchNorm2d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
    dtype=None): over (N, C, H, W)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        super().__init__("BatchNorm2d", (4,), num_features, eps, momentum, affine,
                         track_running_stats, dtype)


class MaxPool2d(Cell):
    """MaxPool2d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
    ceil_mode=False): stride None is kernel_size."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        if return_indices:
            raise NotImplementedError("MaxPool2d: return_indices=True is not supported in pijit")
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.ceil_mode = dilation, bool(ceil_mode)

    def construct(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode)


class AvgPool2d(Cell):
    """AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.count_include_pad = bool(ceil_mode), bool(count_include_pad)
        self.divisor_override = divisor_override

    def construct(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(Cell):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def construct(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class Upsample(Cell):
    """Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None)."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners = align_corners

    def construct(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners)


class _Pad2d(Cell):
    def __init__(self, padding, mode, value=0.0):
        super().__init__()
        if isinstance(padding, int) and not isinstance(padding, bool):
            padding = (padding,) * 4
        if not (isinstance(padding, (tuple, list)) and len(padding) == 4):
            raise ValueError("%s: padding must be an int or a tuple of 4 ints (left, right, top, "
                             "bottom), got %r" % (type(self).__name__, padding))
        self.padding, self.mode, self.value = tuple(padding), mode, value

    def construct(self, input):
        return F.pad(input, self.padding, self.mode, self.value if self.mode == "constant" else None)


class ZeroPad2d(_Pad2d):
    def __init__(self, padding):
        super().__init__(padding, "constant", 0.0)


class ConstantPad2d(_Pad2d):
    def __init__(self, padding, value):
        super().__init__(padding, "constant", value)


class ReflectionPad2d(_Pad2d):
    def __init__(self, padding):
        super().__init__(padding, "reflect")


class ReplicationPad2d(_Pad2d):
    def __init__(self, padding):
        super().__init__(padding, "replicate")


class _Loss(Cell):
    def __init__(self, reduction):
        super().__init__()
        self.reduction = _reduction(type(self).__name__, reduction)


class CrossEntropyLoss(_Loss):
    """CrossEntropyLoss(weight=None, ignore_index=-100, reduction='mean', label_smoothing=0.0)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index
        self.label_smoothing = float(label_smoothing)

    def construct(self, input, target):
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class NLLLoss(_Loss):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def construct(self, input, target):
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class MSELoss(_Loss):
    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def construct(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def construct(self, input, target):
        return F.l1_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, reduction="mean", beta=1.0):
        super().__init__(reduction)
        self.beta = float(beta)

    def construct(self, input, target):
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class BCELoss(_Loss):
    def __init__(self, weight=None, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def construct(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """BCEWithLogitsLoss(weight=None, reduction='mean', pos_weight=None)."""

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def construct(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction,
                                                  self.pos_weight)


__all__ = ["Linear", "Conv2d", "ReLU", "ReLU6", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax",
           "LogSoftmax", "LeakyReLU", "ELU", "Hardswish", "Hardsigmoid", "Hardtanh", "Mish",
           "Softplus", "LogSigmoid", "Identity", "Flatten", "Dropout", "Embedding", "LayerNorm",
           "GroupNorm", "BatchNorm1d", "BatchNorm2d", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "Upsample", "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d",
           "ReplicationPad2d", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss",
           "BCELoss", "BCEWithLogitsLoss"]
