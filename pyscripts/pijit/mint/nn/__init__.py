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
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.ceil_mode = dilation, bool(ceil_mode)
        self.return_indices = bool(return_indices)

    def construct(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


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



# ---- layers over the 1-D / 3-D functions (mint.nn.functional) -------------------------------------

def _ntuple(v, n, name, who):
    return F._tuple_n(v, n, name, who)


class _ConvNd(Cell):
    """Conv1d / Conv3d / ConvTranspose2d: torch's arguments; weight Kaiming-uniform(sqrt(5)),
    bias uniform(1 / sqrt(fan_in)) as MindSpore's mint layers."""

    def __init__(self, who, nd, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, dtype, transposed=False, output_padding=0):
        super().__init__()
        self.who, self.nd = who, nd
        self.in_channels = _positive(who, "in_channels", in_channels)
        self.out_channels = _positive(who, "out_channels", out_channels)
        self.groups = _positive(who, "groups", groups)
        if in_channels % groups or out_channels % groups:
            raise ValueError("%s: in_channels and out_channels must be divisible by groups" % who)
        self.kernel_size = _ntuple(kernel_size, nd, "kernel_size", who)
        self.stride = _ntuple(stride, nd, "stride", who)
        self.dilation = _ntuple(dilation, nd, "dilation", who)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, nd, "padding", who)
        self.output_padding = _ntuple(output_padding, nd, "output_padding", who)
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError("%s: padding_mode must be 'zeros', 'reflect', 'replicate' or "
                             "'circular', got %r" % (who, padding_mode))
        if padding_mode != "zeros" and (transposed or isinstance(padding, str)):
            raise ValueError("%s: padding_mode %r needs int padding (and no transposition)"
                             % (who, padding_mode))
        self.padding_mode = padding_mode
        dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        if transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        fan_in = shape[1]
        for k in self.kernel_size:
            fan_in *= k
        self.weight = _Parameter(_init(_HeUniform(math.sqrt(5)), shape, dtype), name="weight")
        self.bias = _Parameter(_init(_Uniform(1.0 / math.sqrt(fan_in)), (out_channels,), dtype),
                               name="bias") if bias else None

    def _padded(self, input):
        """input padded by padding_mode (the convolution then runs unpadded), or None."""
        if self.padding_mode == "zeros":
            return None
        pads = ()
        for p in reversed(self.padding):
            pads += (p, p)
        return F.pad(input, pads, mode=self.padding_mode)

    def extend_repr(self):
        return "%d, %d, kernel_size=%s, stride=%s, padding=%s" % (
            self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding)


class Conv1d(_ConvNd):
    """Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
    bias=True, padding_mode='zeros', dtype=None)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", dtype=None):
        super().__init__("Conv1d", 1, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, groups, bias, padding_mode, dtype)

    def construct(self, input):
        x = self._padded(input)
        if x is not None:
            return F.conv1d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class Conv3d(_ConvNd):
    """Conv3d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
    bias=True, padding_mode='zeros', dtype=None)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", dtype=None):
        super().__init__("Conv3d", 3, in_channels, out_channels, kernel_size, stride, padding,
                         dilation, groups, bias, padding_mode, dtype)

    def construct(self, input):
        x = self._padded(input)
        if x is not None:
            return F.conv3d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class ConvTranspose2d(_ConvNd):
    """ConvTranspose2d(in_channels, out_channels, kernel_size, stride=1, padding=0,
    output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros', dtype=None):
    weight (in_channels, out_channels / groups, kH, kW)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 dtype=None):
        super().__init__("ConvTranspose2d", 2, in_channels, out_channels, kernel_size, stride,
                         padding, dilation, groups, bias, padding_mode, dtype, transposed=True,
                         output_padding=output_padding)

    def construct(self, input, output_size=None):
        op = self.output_padding
        if output_size is not None:
            # torch: the output_padding that reaches output_size's last two
            size = tuple(output_size)[-2:]
            op = tuple(s - ((n - 1) * st - 2 * p + d * (k - 1) + 1) for s, n, st, p, d, k in zip(
                size, input.shape[-2:], self.stride, self.padding, self.dilation,
                self.kernel_size))
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, op,
                                  self.groups, self.dilation)


def _pool_cell(name, fn, names, defaults, doc):
    """A Cell whose construct calls fn(input, *its arguments)."""
    def __init__(self, *args, **kwargs):
        Cell.__init__(self)
        if len(args) > len(names):
            raise TypeError("%s() takes at most %d arguments" % (name, len(names)))
        values = dict(defaults)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError("%s() got an unexpected keyword argument %r" % (name, k))
            values[k] = v
        missing = [k for k in names if k not in values]
        if missing:
            raise TypeError("%s() missing required argument %r" % (name, missing[0]))
        for k in names:
            object.__setattr__(self, k, values[k])

    def construct(self, input):
        return fn(input, *[getattr(self, k) for k in names])

    def extend_repr(self):
        return ", ".join("%s=%r" % (k, getattr(self, k)) for k in names)

    return type(name, (Cell,), {"__init__": __init__, "construct": construct,
                                "extend_repr": extend_repr, "__doc__": doc, "__module__": __name__})


AdaptiveAvgPool1d = _pool_cell("AdaptiveAvgPool1d", F.adaptive_avg_pool1d, ("output_size",), {},
                               "AdaptiveAvgPool1d(output_size).")
AdaptiveAvgPool3d = _pool_cell("AdaptiveAvgPool3d", F.adaptive_avg_pool3d, ("output_size",), {},
                               "AdaptiveAvgPool3d(output_size): None keeps that dim.")
AdaptiveMaxPool1d = _pool_cell("AdaptiveMaxPool1d", F.adaptive_max_pool1d,
                               ("output_size", "return_indices"), {"return_indices": False},
                               "AdaptiveMaxPool1d(output_size, return_indices=False).")
AdaptiveMaxPool2d = _pool_cell("AdaptiveMaxPool2d", F.adaptive_max_pool2d,
                               ("output_size", "return_indices"), {"return_indices": False},
                               "AdaptiveMaxPool2d(output_size, return_indices=False).")
AvgPool1d = _pool_cell("AvgPool1d", F.avg_pool1d,
                       ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
                       {"stride": None, "padding": 0, "ceil_mode": False,
                        "count_include_pad": True},
                       "AvgPool1d(kernel_size, stride=None, padding=0, ceil_mode=False, "
                       "count_include_pad=True).")
AvgPool3d = _pool_cell("AvgPool3d", F.avg_pool3d,
                       ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                        "divisor_override"),
                       {"stride": None, "padding": 0, "ceil_mode": False,
                        "count_include_pad": True, "divisor_override": None},
                       "AvgPool3d(kernel_size, stride=None, padding=0, ceil_mode=False, "
                       "count_include_pad=True, divisor_override=None).")
Fold = _pool_cell("Fold", F.fold, ("output_size", "kernel_size", "dilation", "padding", "stride"),
                  {"dilation": 1, "padding": 0, "stride": 1},
                  "Fold(output_size, kernel_size, dilation=1, padding=0, stride=1).")
Unfold = _pool_cell("Unfold", F.unfold, ("kernel_size", "dilation", "padding", "stride"),
                    {"dilation": 1, "padding": 0, "stride": 1},
                    "Unfold(kernel_size, dilation=1, padding=0, stride=1).")
PixelShuffle = _pool_cell("PixelShuffle", F.pixel_shuffle, ("upscale_factor",), {},
                          "PixelShuffle(upscale_factor).")
Hardshrink = _activation("Hardshrink", lambda x, lambd: F.hardshrink(x, lambd),
                         "x where |x| > lambd, else 0.", lambd=0.5)
SELU = _activation("SELU", lambda x, inplace: F.selu(x), "scale * elu(x, alpha).", inplace=False)
Threshold = _pool_cell("Threshold", F.threshold, ("threshold", "value", "inplace"),
                       {"inplace": False}, "Threshold(threshold, value, inplace=False).")


class MaxUnpool2d(Cell):
    """MaxUnpool2d(kernel_size, stride=None, padding=0)(input, indices, output_size=None)."""

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def construct(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class PReLU(Cell):
    """PReLU(num_parameters=1, init=0.25, dtype=None): weight (num_parameters,)."""

    def __init__(self, num_parameters=1, init=0.25, dtype=None):
        super().__init__()
        self.num_parameters = _positive("PReLU", "num_parameters", num_parameters)
        dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        from pijit.common.initializer import Constant
        self.weight = _Parameter(_init(Constant(float(init)), (num_parameters,), dtype),
                                 name="weight")

    def construct(self, input):
        return F.prelu(input, self.weight)

    def extend_repr(self):
        return "num_parameters=%d" % self.num_parameters


class BatchNorm3d(_BatchNorm):
    """BatchNorm3d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
    dtype=None): over (N, C, D, H, W)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, dtype=None):
        super().__init__("BatchNorm3d", (5,), num_features, eps, momentum, affine,
                         track_running_stats, dtype)


class SyncBatchNorm(_BatchNorm):
    """SyncBatchNorm(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
    process_group=None, dtype=None). pijit runs one process, so the statistics synchronised over
    the group are this process's: BatchNorm over (N, C, ...) inputs of 2 or more dims."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, dtype=None):
        super().__init__("SyncBatchNorm", (2, 3, 4, 5, 6, 7, 8), num_features, eps, momentum,
                         affine, track_running_stats, dtype)
        self.process_group = process_group


class _PadNd(Cell):
    def __init__(self, nd, padding, mode, value=0.0):
        super().__init__()
        if isinstance(padding, int) and not isinstance(padding, bool):
            padding = (padding,) * (2 * nd)
        if not (isinstance(padding, (tuple, list)) and len(padding) == 2 * nd):
            raise ValueError("%s: padding must be an int or a tuple of %d ints, got %r"
                             % (type(self).__name__, 2 * nd, padding))
        self.nd, self.padding, self.mode, self.value = nd, tuple(padding), mode, value

    def construct(self, input):
        return F.pad(input, self.padding, self.mode, self.value if self.mode == "constant" else None)


def _pad_class(name, nd, mode):
    if mode == "constant_value":
        def __init__(self, padding, value):
            _PadNd.__init__(self, nd, padding, "constant", value)
    else:
        def __init__(self, padding):
            _PadNd.__init__(self, nd, padding, mode, 0.0)
    doc = "%s(padding%s): torch's %s (pads from the last dim backwards)." % (
        name, ", value" if mode == "constant_value" else "", name)
    return type(name, (_PadNd,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


ConstantPad1d = _pad_class("ConstantPad1d", 1, "constant_value")
ConstantPad3d = _pad_class("ConstantPad3d", 3, "constant_value")
ZeroPad1d = _pad_class("ZeroPad1d", 1, "constant")
ZeroPad3d = _pad_class("ZeroPad3d", 3, "constant")
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect")
ReflectionPad3d = _pad_class("ReflectionPad3d", 3, "reflect")
ReplicationPad1d = _pad_class("ReplicationPad1d", 1, "replicate")
ReplicationPad3d = _pad_class("ReplicationPad3d", 3, "replicate")


class UpsamplingNearest2d(Cell):
    """UpsamplingNearest2d(size=None, scale_factor=None): interpolate 'nearest'."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor

    def construct(self, input):
        return F.interpolate(input, self.size, self.scale_factor, "nearest")


class UpsamplingBilinear2d(Cell):
    """UpsamplingBilinear2d(size=None, scale_factor=None): interpolate 'bilinear' with
    align_corners=True."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__()
        self.size, self.scale_factor = size, scale_factor

    def construct(self, input):
        return F.interpolate(input, self.size, self.scale_factor, "bilinear", True)


class KLDivLoss(_Loss):
    """KLDivLoss(reduction='mean', log_target=False): reduction also 'batchmean'."""

    def __init__(self, reduction="mean", log_target=False):
        Cell.__init__(self)
        if reduction not in ("none", "mean", "sum", "batchmean"):
            raise ValueError("KLDivLoss: reduction must be 'none', 'mean', 'sum' or 'batchmean', "
                             "got %r" % (reduction,))
        self.reduction, self.log_target = reduction, bool(log_target)

    def construct(self, input, target):
        return F.kl_div(input, target, self.reduction, self.log_target)


class SoftMarginLoss(_Loss):
    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def construct(self, input, target):
        return F.soft_margin_loss(input, target, self.reduction)


class CosineEmbeddingLoss(_Loss):
    """CosineEmbeddingLoss(margin=0.0, reduction='mean')(input1, input2, target)."""

    def __init__(self, margin=0.0, reduction="mean"):
        super().__init__(reduction)
        self.margin = float(margin)

    def construct(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)

__all__ = ["Linear", "Conv2d", "ReLU", "ReLU6", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax",
           "LogSoftmax", "LeakyReLU", "ELU", "Hardswish", "Hardsigmoid", "Hardtanh", "Mish",
           "Softplus", "LogSigmoid", "Identity", "Flatten", "Dropout", "Embedding", "LayerNorm",
           "GroupNorm", "BatchNorm1d", "BatchNorm2d", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "Upsample", "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d",
           "ReplicationPad2d", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss",
           "BCELoss", "BCEWithLogitsLoss", "Conv1d", "Conv3d", "ConvTranspose2d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AvgPool1d", "AvgPool3d", "Fold", "Unfold", "PixelShuffle", "Hardshrink", "SELU",
           "Threshold", "MaxUnpool2d", "PReLU", "BatchNorm3d", "SyncBatchNorm", "ConstantPad1d",
           "ConstantPad3d", "ZeroPad1d", "ZeroPad3d", "ReflectionPad1d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad3d", "UpsamplingNearest2d", "UpsamplingBilinear2d",
           "KLDivLoss", "SoftMarginLoss", "CosineEmbeddingLoss"]
