"""More of MindSpore's nn layers, built from pijit's ops and 2-D layers: Conv1d, Conv1dTranspose
(as the 2-D kernels over a height of 1), MaxPool1d, AvgPool1d, the adaptive pools, Dropout1d/2d,
InstanceNorm1d/2d/3d (group norm with one group per channel), activations (ELU, PReLU, Softmin,
LogSigmoid, Mish, SeLU, CELU, Softsign, Hardtanh, HShrink, SoftShrink, Tanhshrink, GLU,
FastGelu), OneHot, Norm, Tril, Triu, EmbeddingLookup and WithEvalCell."""
import math

from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit._validate import check_input
from pijit.common.initializer import initializer, HeUniform, Uniform
from pijit.nn.cell import Cell
from pijit.nn.pooling import MaxPool2d, AvgPool2d
from pijit.numpy.array_creations import tril as _tril, triu as _triu
from pijit.ops import functional as F
from pijit.ops import nn_functional as NF
from pijit.parameter import Parameter
from pijit.tensor import Tensor


def _int(who, name, v, lo=1):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("For '%s', the type of '%s' should be int, but got %s."
                        % (who, name, type(v).__name__))
    if v < lo:
        raise ValueError("For '%s', the '%s' should be >= %d, but got %d." % (who, name, lo, v))
    return v


def _one(who, name, v, lo=1):
    """An int, or a tuple/list holding one int (MindSpore's 1-D layers take both)."""
    if isinstance(v, (tuple, list)) and len(v) == 1:
        v = v[0]
    return _int(who, name, v, lo)


def _float(who, name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("For '%s', the type of '%s' should be float, but got %s."
                        % (who, name, type(v).__name__))
    return float(v)


# ---- 1-D convolutions --------------------------------------------------------------------------

class _Conv1dBase(Cell):
    def __init__(self, who, in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                 dilation, group, has_bias, weight_init, bias_init, dtype, transposed):
        super().__init__()
        self.who = who
        self.in_channels = _int(who, "in_channels", in_channels)
        self.out_channels = _int(who, "out_channels", out_channels)
        self.group = _int(who, "group", group)
        if in_channels % group or out_channels % group:
            raise ValueError("For '%s', in_channels (%d) and out_channels (%d) must be divisible "
                             "by group (%d)." % (who, in_channels, out_channels, group))
        self.kernel_size = _one(who, "kernel_size", kernel_size)
        self.stride = _one(who, "stride", stride)
        self.dilation = _one(who, "dilation", dilation)
        if pad_mode not in ("same", "valid", "pad"):
            raise ValueError("For '%s', pad_mode must be 'same', 'valid' or 'pad', got %r."
                             % (who, pad_mode))
        if isinstance(padding, int) and not isinstance(padding, bool):
            pads = (padding, padding)
        elif isinstance(padding, (tuple, list)) and len(padding) in (1, 2) and all(
                isinstance(p, int) and not isinstance(p, bool) for p in padding):
            pads = (padding[0], padding[-1])
        else:
            raise TypeError("For '%s', padding must be an int or a tuple of 1 or 2 ints, got %r."
                            % (who, padding))
        if min(pads) < 0:
            raise ValueError("For '%s', padding must be >= 0, got %r." % (who, padding))
        if pad_mode != "pad" and any(pads):
            raise ValueError("For '%s', padding must be 0 when pad_mode is not 'pad', got %r."
                             % (who, padding))
        self.pad_mode, self.padding, self._pads = pad_mode, padding, pads
        self.has_bias = bool(has_bias)
        if transposed:
            shape = (in_channels, out_channels // group, self.kernel_size)
        else:
            shape = (out_channels, in_channels // group, self.kernel_size)
        fan_in = shape[1] * self.kernel_size
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight = Parameter(initializer(weight_init, shape, dtype), name="weight")
        if self.has_bias:
            if bias_init is None:
                bias_init = Uniform(1.0 / math.sqrt(fan_in))
            self.bias = Parameter(initializer(bias_init, (out_channels,), dtype), name="bias")
        else:
            self.bias = None

    def _check(self, x):
        check_input(self.who, "x", x, ndim=3, size=(1, self.in_channels, "in_channels"))  # NCL

    def extend_repr(self):
        return ("input_channels=%d, output_channels=%d, kernel_size=%d, stride=%d, pad_mode=%s, "
                "padding=%s, dilation=%d, group=%d, has_bias=%s"
                % (self.in_channels, self.out_channels, self.kernel_size, self.stride,
                   self.pad_mode, self.padding, self.dilation, self.group, self.has_bias))


class Conv1d(_Conv1dBase):
    """Conv1d(in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0,
    dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None, dtype=float32) on
    (N, C, L) inputs; weight (out_channels, in_channels / group, kernel_size)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 dtype=_dt.float32):
        super().__init__("Conv1d", in_channels, out_channels, kernel_size, stride, pad_mode,
                         padding, dilation, group, has_bias, weight_init, bias_init, dtype, False)

    def construct(self, x):
        self._check(x)
        n, c, length = x.shape
        w = self.weight.reshape(self.weight.shape[:2] + (1, self.kernel_size))
        pad = (0, 0) + self._pads
        y = NF.conv2d(x.reshape((n, c, 1, length)), w, self.bias, (1, self.stride), self.pad_mode,
                      pad if self.pad_mode == "pad" else 0, (1, self.dilation), self.group)
        return y.reshape((y.shape[0], y.shape[1], y.shape[3]))


class Conv1dTranspose(_Conv1dBase):
    """Conv1dTranspose(in_channels, out_channels, kernel_size, stride=1, pad_mode='same',
    padding=0, dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
    dtype=float32): the gradient of Conv1d; 'same' gives length * stride, 'valid'
    (length - 1) * stride + dilation * (kernel_size - 1) + 1, 'pad' that less both paddings."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 dtype=_dt.float32):
        super().__init__("Conv1dTranspose", in_channels, out_channels, kernel_size, stride,
                         pad_mode, padding, dilation, group, has_bias, weight_init, bias_init,
                         dtype, True)
        if self._pads[0] != self._pads[1]:
            raise ValueError("For 'Conv1dTranspose', the paddings must be equal, got %r" % (padding,))

    def construct(self, x):
        self._check(x)
        n, c, length = x.shape
        k_eff = (self.kernel_size - 1) * self.dilation + 1
        if self.pad_mode == "same":  # output = length * stride: 2p - extra = k_eff - stride
            total = k_eff - self.stride
            p = (total + 1) // 2 if total > 0 else 0
            extra = 2 * p - total
        elif self.pad_mode == "valid":
            p, extra = 0, 0
        else:
            p, extra = self._pads[0], 0
        w = self.weight.reshape(self.weight.shape[:2] + (1, self.kernel_size))
        y = NF.conv_transpose2d(x.reshape((n, c, 1, length)), w, self.bias, (1, self.stride),
                                (0, p), (0, extra), self.group, (1, self.dilation))
        return y.reshape((y.shape[0], y.shape[1], y.shape[3]))


# ---- 1-D pools and adaptive pools ----------------------------------------------------------------

def _as_2d(x):
    """(N, C, L) -> (N, C, 1, L) and (C, L) -> (1, C, 1, L): the 2-D pools over a height of 1."""
    return x.reshape(((1,) if x.ndim == 2 else x.shape[:1]) + (x.shape[-2], 1, x.shape[-1]))


def _from_2d(y, ndim):
    return y.reshape(((y.shape[0],) if ndim == 3 else ()) + (y.shape[1], y.shape[3]))


class MaxPool1d(Cell):
    """MaxPool1d(kernel_size=1, stride=1, pad_mode='valid', padding=0, dilation=1,
    return_indices=False, ceil_mode=False) on (N, C, L) or (C, L) inputs."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False):
        super().__init__()
        k = _one("MaxPool1d", "kernel_size", kernel_size)
        s = _one("MaxPool1d", "stride", stride)
        p = _one("MaxPool1d", "padding", padding, 0)
        d = _one("MaxPool1d", "dilation", dilation)
        self.kernel_size, self.stride, self.pad_mode = k, s, pad_mode
        self._pool = MaxPool2d((1, k), (1, s), pad_mode, (0, p), (1, d), return_indices, ceil_mode)

    def construct(self, x):
        check_input("MaxPool1d", "x", x, ndim=(2, 3))
        return _from_2d(self._pool(_as_2d(x)), x.ndim)

    def extend_repr(self):
        return "kernel_size=%d, stride=%d, pad_mode=%s" % (self.kernel_size, self.stride,
                                                          self.pad_mode.upper())


class AvgPool1d(Cell):
    """AvgPool1d(kernel_size=1, stride=1, pad_mode='valid', padding=0, ceil_mode=False,
    count_include_pad=True) on (N, C, L) or (C, L) inputs."""

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        k = _one("AvgPool1d", "kernel_size", kernel_size)
        s = _one("AvgPool1d", "stride", stride)
        p = _one("AvgPool1d", "padding", padding, 0)
        self.kernel_size, self.stride, self.pad_mode = k, s, pad_mode
        self._pool = AvgPool2d((1, k), (1, s), pad_mode, (0, p), ceil_mode, count_include_pad)

    def construct(self, x):
        check_input("AvgPool1d", "x", x, ndim=(2, 3))
        return _from_2d(self._pool(_as_2d(x)), x.ndim)

    def extend_repr(self):
        return "kernel_size=%d, stride=%d, pad_mode=%s" % (self.kernel_size, self.stride,
                                                          self.pad_mode.upper())


def _adaptive(x, axis, out, reduce):
    """Adaptive pooling of one axis: window i covers [floor(i L / out), ceil((i + 1) L / out)).
    Windows are intervals per axis, so a 2-D adaptive pool is two of these in a row."""
    length = x.shape[axis]
    if out is None or out == length:
        return x
    if length % out == 0:  # equal windows: one reshape and one reduction
        k = length // out
        shape = x.shape[:axis] + (out, k) + x.shape[axis + 1:]
        return reduce(x.reshape(shape), axis + 1)
    parts = []
    for i in range(out):
        lo, hi = (i * length) // out, -((-(i + 1) * length) // out)
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(lo, hi)
        parts.append(reduce(x[tuple(idx)], axis).expand_dims(axis))
    return F.concat(parts, axis)


def _max(x, axis):
    return F.amax(x, axis)


def _mean(x, axis):
    return F.mean(x, axis)


def _sizes(who, output_size, n):
    if isinstance(output_size, int) and not isinstance(output_size, bool):
        output_size = (output_size,) * n
    if not (isinstance(output_size, (tuple, list)) and len(output_size) == n and all(
            v is None or (isinstance(v, int) and not isinstance(v, bool) and v > 0)
            for v in output_size)):
        raise ValueError("For '%s', output_size must be a positive int or a tuple of %d positive "
                         "ints (or None), got %r." % (who, n, output_size))
    return tuple(output_size)


class AdaptiveAvgPool1d(Cell):
    """AdaptiveAvgPool1d(output_size): (N, C, L) -> (N, C, output_size), window i the mean of
    [floor(i L / out), ceil((i + 1) L / out))."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _sizes("AdaptiveAvgPool1d", output_size, 1)[0]

    def construct(self, input):  # noqa: A002 (MindSpore's argument name)
        check_input("AdaptiveAvgPool1d", "input", input, ndim=(2, 3))
        return _adaptive(input, input.ndim - 1, self.output_size, _mean)


class AdaptiveMaxPool1d(Cell):
    """AdaptiveMaxPool1d(output_size): the max of each adaptive window of the last dim."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _sizes("AdaptiveMaxPool1d", output_size, 1)[0]

    def construct(self, input):  # noqa: A002
        check_input("AdaptiveMaxPool1d", "input", input, ndim=(2, 3))
        return _adaptive(input, input.ndim - 1, self.output_size, _max)


class AdaptiveMaxPool2d(Cell):
    """AdaptiveMaxPool2d(output_size, return_indices=False): the max of each adaptive window of
    the last two dims (an int or (h, w); None keeps that dim's size)."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        if return_indices:
            raise ValueError("AdaptiveMaxPool2d: return_indices=True is not supported by pijit")
        self.output_size = _sizes("AdaptiveMaxPool2d", output_size, 2)
        self.return_indices = False

    def construct(self, input):  # noqa: A002
        check_input("AdaptiveMaxPool2d", "input", input, ndim=(3, 4))
        y = _adaptive(input, input.ndim - 2, self.output_size[0], _max)
        return _adaptive(y, input.ndim - 1, self.output_size[1], _max)


# ---- dropout and instance norm -------------------------------------------------------------------

class _ChannelDropout(Cell):
    ndims = 4

    def __init__(self, p=0.5):
        super().__init__()
        who = type(self).__name__
        p = _float(who, "p", p)
        if not 0 <= p <= 1:
            raise ValueError("For '%s', the 'p' should be in range [0, 1], but got %r." % (who, p))
        self.p = p

    def construct(self, x):
        who = type(self).__name__
        check_input(who, "x", x, ndim=(self.ndims - 1, self.ndims))
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return x * 0.0
        # one draw per (batch, channel): a mask of ones dropped as a whole channel
        shape = x.shape[:-(self.ndims - 2)] + (1,) * (self.ndims - 2)
        mask = NF.dropout(F.ones(shape, x.dtype), self.p, training=True)
        return x * mask

    def extend_repr(self):
        return "p=%s" % self.p


class Dropout1d(_ChannelDropout):
    """Dropout1d(p=0.5): zeroes whole channels of (N, C, L) inputs with probability p, scaling
    the rest by 1 / (1 - p), in training mode."""
    ndims = 3


class Dropout2d(_ChannelDropout):
    """Dropout2d(p=0.5): zeroes whole channels of (N, C, H, W) inputs with probability p."""
    ndims = 4


class Dropout3d(_ChannelDropout):
    """Dropout3d(p=0.5): zeroes whole channels of (N, C, D, H, W) inputs with probability p."""
    ndims = 5


class _InstanceNorm(Cell):
    ndims = 4

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, gamma_init="ones",
                 beta_init="zeros", dtype=_dt.float32):
        super().__init__()
        who = type(self).__name__
        self.num_features = _int(who, "num_features", num_features)
        self.eps = _float(who, "eps", eps)
        if self.eps <= 0:
            raise ValueError("For '%s', the 'eps' should be > 0, but got %r." % (who, eps))
        self.momentum = _float(who, "momentum", momentum)
        if not 0 <= self.momentum <= 1:
            raise ValueError("For '%s', the 'momentum' should be in [0, 1], but got %r."
                             % (who, momentum))
        if not isinstance(affine, bool):
            raise TypeError("For '%s', the type of 'affine' should be bool, but got %s."
                            % (who, type(affine).__name__))
        self.affine = affine
        self.gamma = Parameter(initializer(gamma_init, (num_features,), dtype), name="gamma",
                               requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, (num_features,), dtype), name="beta",
                              requires_grad=affine)

    def construct(self, x):
        who = type(self).__name__
        check_input(who, "x", x, ndim=self.ndims, size=(1, self.num_features, "num_features"))
        # every (sample, channel) normalised over its own positions: group norm, a group a channel
        out = _op("group_norm", (x, self.gamma, self.beta), num_groups=self.num_features,
                  eps=self.eps)
        return out[0] if isinstance(out, tuple) else out

    def extend_repr(self):
        return "num_features=%d, eps=%s, momentum=%s, gamma=%s, beta=%s" % (
            self.num_features, self.eps, self.momentum, self.gamma, self.beta)


class InstanceNorm1d(_InstanceNorm):
    """InstanceNorm1d(num_features, eps=1e-5, momentum=0.1, affine=True, gamma_init='ones',
    beta_init='zeros'): (x - mean) / sqrt(var + eps) * gamma + beta, the mean and biased
    variance of each (sample, channel) over L."""
    ndims = 3


class InstanceNorm2d(_InstanceNorm):
    """InstanceNorm2d(...): instance norm of (N, C, H, W) inputs over H and W."""
    ndims = 4


class InstanceNorm3d(_InstanceNorm):
    """InstanceNorm3d(...): instance norm of (N, C, D, H, W) inputs over D, H and W."""
    ndims = 5


# ---- activations ----------------------------------------------------------------------------------

class ELU(Cell):
    """ELU(alpha=1.0): x for x > 0, alpha (exp(x) - 1) otherwise."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = _float("ELU", "alpha", alpha)

    def construct(self, x):
        check_input("ELU", "x", x)
        return F.where(x > 0, x, _op("expm1", (x,)) * self.alpha)


class PReLU(Cell):
    """PReLU(channel=1, w=0.25): max(0, x) + w min(0, x), w a Parameter named 'a' of shape
    (channel,) applied along dim 1 (one value for every channel when channel is 1)."""

    def __init__(self, channel=1, w=0.25):
        super().__init__()
        self.channel = _int("PReLU", "channel", channel)
        if isinstance(w, (int, float)) and not isinstance(w, bool):
            w = Tensor([float(w)] * channel, _dt.float32)
        elif isinstance(w, (list, tuple)):
            w = Tensor([float(v) for v in w], _dt.float32)
        elif not hasattr(w, "shape"):
            raise TypeError("For 'PReLU', w must be a float, a list or a Tensor, got %s"
                            % type(w).__name__)
        if tuple(w.shape) not in ((channel,), (1,)) and not (w.ndim == 0):
            raise ValueError("For 'PReLU', w must have shape (%d,), got %s" % (channel, w.shape))
        if w.ndim == 0 or w.shape[0] != channel:
            w = F.broadcast_to(w.reshape((1,)), (channel,))
        self.w = Parameter(w, name="a")

    def construct(self, x):
        check_input("PReLU", "x", x)
        w = self.w
        if x.ndim >= 2 and self.channel > 1:
            w = w.reshape((self.channel,) + (1,) * (x.ndim - 2))
        elif self.channel == 1:
            w = w.reshape(())
        return F.where(x > 0, x, x * w)


class Softmin(Cell):
    """Softmin(axis=-1): softmax(-x)."""

    def __init__(self, axis=-1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        check_input("Softmin", "x", x)
        return F.softmax(-x, self.axis)


class LogSigmoid(Cell):
    """LogSigmoid(): log(sigmoid(x)) = -softplus(-x)."""

    def construct(self, input_x):
        check_input("LogSigmoid", "input_x", input_x)
        return -F.softplus(-input_x)


class Mish(Cell):
    """Mish(): x tanh(softplus(x))."""

    def construct(self, x):
        check_input("Mish", "x", x)
        return x * F.tanh(F.softplus(x))


class SeLU(Cell):
    """SeLU(): scale (x for x > 0, alpha (exp(x) - 1) otherwise), MindSpore's constants."""
    _ALPHA = 1.67326324235437728481704
    _SCALE = 1.05070098735548049341933

    def construct(self, input_x):
        check_input("SeLU", "input_x", input_x)
        x = input_x
        return F.where(x > 0, x, _op("expm1", (x,)) * self._ALPHA) * self._SCALE


class CELU(Cell):
    """CELU(alpha=1.0): max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = _float("CELU", "alpha", alpha)
        if self.alpha == 0:
            raise ValueError("For 'CELU', the 'alpha' cannot be 0.")

    def construct(self, x):
        check_input("CELU", "x", x)
        return F.where(x > 0, x, _op("expm1", (x / self.alpha,)) * self.alpha)


class Softsign(Cell):
    """Softsign(): x / (1 + |x|)."""

    def construct(self, x):
        check_input("Softsign", "x", x)
        return x / (F.abs(x) + 1.0)


class Hardtanh(Cell):
    """Hardtanh(min_val=-1.0, max_val=1.0): x clipped to [min_val, max_val]."""

    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        self.min_val = _float("Hardtanh", "min_val", min_val)
        self.max_val = _float("Hardtanh", "max_val", max_val)
        if self.min_val > self.max_val:
            raise ValueError("For 'Hardtanh', min_val must not be greater than max_val.")

    def construct(self, input):  # noqa: A002
        check_input("Hardtanh", "input", input)
        return F.clamp(input, self.min_val, self.max_val)


class HShrink(Cell):
    """HShrink(lambd=0.5): x where |x| > lambd, else 0."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = _float("HShrink", "lambd", lambd)

    def construct(self, input_x):
        check_input("HShrink", "input_x", input_x)
        return F.where(F.abs(input_x) > self.lambd, input_x, input_x * 0.0)


class SoftShrink(Cell):
    """SoftShrink(lambd=0.5): x - lambd above lambd, x + lambd below -lambd, else 0."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = _float("SoftShrink", "lambd", lambd)
        if self.lambd < 0:
            raise ValueError("For 'SoftShrink', the 'lambd' must be >= 0, got %r." % (lambd,))

    def construct(self, input_x):
        check_input("SoftShrink", "input_x", input_x)
        x = input_x
        return F.where(x > self.lambd, x - self.lambd,
                       F.where(x < -self.lambd, x + self.lambd, x * 0.0))


class Tanhshrink(Cell):
    """Tanhshrink(): x - tanh(x)."""

    def construct(self, x):
        check_input("Tanhshrink", "x", x)
        return x - F.tanh(x)


class GLU(Cell):
    """GLU(axis=-1): a * sigmoid(b), a and b the two halves of x along axis."""

    def __init__(self, axis=-1):
        super().__init__()
        self.dim = axis

    def construct(self, x):
        check_input("GLU", "x", x)
        a, b = F.split(x, x.shape[self.dim] // 2, self.dim)
        return a * F.sigmoid(b)


class FastGelu(Cell):
    """FastGelu(): x / (1 + exp(-1.702 |x|)) * exp(0.851 (x - |x|))."""

    def construct(self, x):
        check_input("FastGelu", "x", x)
        ax = F.abs(x)
        return x / (F.exp(ax * -1.702) + 1.0) * F.exp((x - ax) * 0.851)


# ---- OneHot, Norm, Tril, Triu, EmbeddingLookup, WithEvalCell ------------------------------------

class OneHot(Cell):
    """OneHot(axis=-1, depth=1, on_value=1.0, off_value=0.0, dtype=float32): construct(indices)
    is the one-hot encoding of indices along a new axis of size depth."""

    def __init__(self, axis=-1, depth=1, on_value=1.0, off_value=0.0, dtype=_dt.float32):
        super().__init__()
        self.axis = _int("OneHot", "axis", axis, -1)
        self.depth = _int("OneHot", "depth", depth, 0)
        self.on_value = _float("OneHot", "on_value", on_value)
        self.off_value = _float("OneHot", "off_value", off_value)
        self.dtype = dtype

    def construct(self, indices):
        check_input("OneHot", "indices", indices)
        y = F.one_hot(indices, self.depth, self.on_value, self.off_value, self.axis)
        return F.cast(y, self.dtype) if y.dtype != self.dtype else y


class Norm(Cell):
    """Norm(axis=(), keep_dims=False): sqrt(sum(x^2)) over axis (every dim when empty)."""

    def __init__(self, axis=(), keep_dims=False):
        super().__init__()
        if isinstance(axis, int) and not isinstance(axis, bool):
            axis = (axis,)
        if not isinstance(axis, (tuple, list)):
            raise TypeError("For 'Norm', the type of 'axis' should be int or tuple, but got %s."
                            % type(axis).__name__)
        if not isinstance(keep_dims, bool):
            raise TypeError("For 'Norm', the type of 'keep_dims' should be bool, but got %s."
                            % type(keep_dims).__name__)
        self.axis, self.keep_dims = tuple(axis), keep_dims

    def construct(self, x):
        check_input("Norm", "x", x)
        axis = self.axis if self.axis else tuple(range(x.ndim))
        return F.sqrt(F.sum(F.square(x), axis, self.keep_dims))


class Tril(Cell):
    """Tril(): construct(x, k=0) zeroes the elements above the k-th diagonal of the last two
    dims."""

    def construct(self, x, k=0):
        check_input("Tril", "x", x, min_ndim=2)
        return _tril(x, k)


class Triu(Cell):
    """Triu(): construct(x, k=0) zeroes the elements below the k-th diagonal."""

    def construct(self, x, k=0):
        check_input("Triu", "x", x, min_ndim=2)
        return _triu(x, k)


class EmbeddingLookup(Cell):
    """EmbeddingLookup(vocab_size, embedding_size, param_init='normal', target='CPU',
    slice_mode='batch_slice', manual_shapes=None, max_norm=None, sparse=True,
    vocab_cache_size=0, dtype=float32): rows of embedding_table gathered by indices (ids out of
    range give zero rows, as MindSpore's CPU lookup); with max_norm each gathered row is scaled
    to norm at most max_norm. target, slice_mode, sparse and the cache are placement choices of
    distributed MindSpore with one meaning on one CPU."""

    def __init__(self, vocab_size, embedding_size, param_init="normal", target="CPU",
                 slice_mode="batch_slice", manual_shapes=None, max_norm=None, sparse=True,
                 vocab_cache_size=0, dtype=_dt.float32):
        super().__init__()
        who = "EmbeddingLookup"
        self.vocab_size = _int(who, "vocab_size", vocab_size)
        self.embedding_size = _int(who, "embedding_size", embedding_size)
        if target not in ("CPU", "DEVICE"):
            raise ValueError("For '%s', the 'target' must be 'CPU' or 'DEVICE', got %r."
                             % (who, target))
        self.target, self.slice_mode, self.sparse = target, slice_mode, sparse
        self.max_norm = None if max_norm is None else _float(who, "max_norm", max_norm)
        self.embedding_table = Parameter(initializer(param_init, (vocab_size, embedding_size), dtype),
                                         name="embedding_table")

    def construct(self, indices):
        check_input("EmbeddingLookup", "indices", indices)
        ids = F.cast(indices, _dt.int32)
        valid = F.logical_and(ids >= 0, ids < self.vocab_size)
        rows = F.gather(self.embedding_table, F.where(valid, ids, ids * 0), 0)
        rows = rows * F.cast(valid, rows.dtype).expand_dims(-1)
        if self.max_norm is not None:
            norm = F.sqrt(F.sum(F.square(rows), -1, True))
            rows = rows * F.minimum(self.max_norm / F.maximum(norm, 1e-12), 1.0)
        return rows


class WithEvalCell(Cell):
    """WithEvalCell(network, loss_fn, add_cast_fp32=False): construct(data, label) returns
    (loss, outputs, label), outputs = network(data), loss = loss_fn(outputs, label); with
    add_cast_fp32 the outputs and label are cast to float32 first."""

    def __init__(self, network, loss_fn, add_cast_fp32=False):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError("WithEvalCell: network must be a Cell, got %s" % type(network).__name__)
        self._network = network
        self._loss_fn = loss_fn
        self.add_cast_fp32 = bool(add_cast_fp32)

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            label = F.cast(label, _dt.float32)
            outputs = F.cast(outputs, _dt.float32)
        loss = self._loss_fn(outputs, label)
        return loss, outputs, label


# ---- padding, reshaping and a few more activations ---------------------------------------------

def _pad_indices(n, lo, hi, mode):
    """The source index of every output position of a dim of size n padded by (lo, hi):
    'reflect' mirrors about the edge element, 'replicate' repeats it. Gathering by these indices
    (index_select) keeps a gradient, which pijit's reflect pad kernel lacks."""
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise ValueError("reflection padding must be less than the dim's size %d, got (%d, %d)"
                             % (n, lo, hi))
        return [lo - k for k in range(lo)] + list(range(n)) + [n - 2 - k for k in range(hi)]
    return [0] * lo + list(range(n)) + [n - 1] * hi


class _PadNd(Cell):
    """padding: an int for every side, or (left, right[, top, bottom[, front, back]]) from the
    last dim backwards (PyTorch's order, which MindSpore's padding layers follow)."""
    dims = 2

    def __init__(self, padding, mode, value=0.0):
        super().__init__()
        who = type(self).__name__
        n = 2 * self.dims
        if isinstance(padding, int) and not isinstance(padding, bool):
            padding = (padding,) * n
        if not (isinstance(padding, (tuple, list)) and len(padding) in range(2, n + 1, 2) and all(
                isinstance(p, int) and not isinstance(p, bool) for p in padding)):
            raise TypeError("For '%s', the padding must be an int or a tuple of up to %d ints, but "
                            "got %r." % (who, n, padding))
        if mode != "constant" and min(padding) < 0:
            raise ValueError("For '%s', the padding must be >= 0, got %r." % (who, padding))
        self.padding, self.mode, self.value = tuple(padding), mode, _float(who, "value", value)

    def construct(self, x):
        who = type(self).__name__
        check_input(who, "x", x, min_ndim=len(self.padding) // 2)
        if self.mode == "constant":
            return _op("pad", (x,), pads=self.padding, mode="constant", value=self.value)
        for i in range(len(self.padding) // 2):
            d = x.ndim - 1 - i
            idx = _pad_indices(x.shape[d], self.padding[2 * i], self.padding[2 * i + 1], self.mode)
            x = F.index_select(x, d, Tensor(idx, _dt.int32))
        return x

    def extend_repr(self):
        return "padding=%s" % (self.padding,)


def _pad_class(name, dims, mode, doc):
    if mode == "constant" and name != "ZeroPad2d":
        def __init__(self, padding, value):
            _PadNd.__init__(self, padding, mode, value)
    else:
        def __init__(self, padding):
            _PadNd.__init__(self, padding, mode)
    return type(name, (_PadNd,), {"dims": dims, "__init__": __init__, "__doc__": doc})


ConstantPad1d = _pad_class("ConstantPad1d", 1, "constant", "ConstantPad1d(padding, value): pads the last dim with value.")
ConstantPad2d = _pad_class("ConstantPad2d", 2, "constant", "ConstantPad2d(padding, value): pads the last 2 dims with value.")
ConstantPad3d = _pad_class("ConstantPad3d", 3, "constant", "ConstantPad3d(padding, value): pads the last 3 dims with value.")
ZeroPad2d = _pad_class("ZeroPad2d", 2, "constant", "ZeroPad2d(padding): pads the last 2 dims with zeros.")
ReflectionPad1d = _pad_class("ReflectionPad1d", 1, "reflect", "ReflectionPad1d(padding): mirrors the last dim about its edge elements.")
ReflectionPad2d = _pad_class("ReflectionPad2d", 2, "reflect", "ReflectionPad2d(padding): mirrors the last 2 dims.")
ReflectionPad3d = _pad_class("ReflectionPad3d", 3, "reflect", "ReflectionPad3d(padding): mirrors the last 3 dims.")
ReplicationPad1d = _pad_class("ReplicationPad1d", 1, "replicate", "ReplicationPad1d(padding): repeats the edge elements of the last dim.")
ReplicationPad2d = _pad_class("ReplicationPad2d", 2, "replicate", "ReplicationPad2d(padding): repeats the edges of the last 2 dims.")
ReplicationPad3d = _pad_class("ReplicationPad3d", 3, "replicate", "ReplicationPad3d(padding): repeats the edges of the last 3 dims.")


class PixelShuffle(Cell):
    """PixelShuffle(upscale_factor): (*, C r^2, H, W) -> (*, C, H r, W r)."""

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = _int("PixelShuffle", "upscale_factor", upscale_factor)

    def construct(self, input):  # noqa: A002
        check_input("PixelShuffle", "input", input, min_ndim=3)
        r = self.upscale_factor
        lead, (c, h, w) = input.shape[:-3], input.shape[-3:]
        if c % (r * r):
            raise ValueError("For 'PixelShuffle', the channels %d must be divisible by "
                             "upscale_factor ** 2 = %d." % (c, r * r))
        k = len(lead)
        x = input.reshape(lead + (c // (r * r), r, r, h, w))
        x = x.transpose(tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2))
        return x.reshape(lead + (c // (r * r), h * r, w * r))


class PixelUnshuffle(Cell):
    """PixelUnshuffle(downscale_factor): (*, C, H r, W r) -> (*, C r^2, H, W)."""

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = _int("PixelUnshuffle", "downscale_factor", downscale_factor)

    def construct(self, input):  # noqa: A002
        check_input("PixelUnshuffle", "input", input, min_ndim=3)
        r = self.downscale_factor
        lead, (c, h, w) = input.shape[:-3], input.shape[-3:]
        if h % r or w % r:
            raise ValueError("For 'PixelUnshuffle', the height %d and width %d must be divisible "
                             "by downscale_factor %d." % (h, w, r))
        k = len(lead)
        x = input.reshape(lead + (c, h // r, r, w // r, r))
        x = x.transpose(tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3))
        return x.reshape(lead + (c * r * r, h // r, w // r))


class Unflatten(Cell):
    """Unflatten(axis, unflattened_size): dim axis reshaped to unflattened_size."""

    def __init__(self, axis, unflattened_size):
        super().__init__()
        self.axis = _int("Unflatten", "axis", axis, -(1 << 30))
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError("For 'Unflatten', unflattened_size must be a tuple or list, got %s."
                            % type(unflattened_size).__name__)
        self.unflattened_size = tuple(unflattened_size)

    def construct(self, input):  # noqa: A002
        check_input("Unflatten", "input", input)
        a = self.axis % input.ndim
        return input.reshape(input.shape[:a] + self.unflattened_size + input.shape[a + 1:])


class Roll(Cell):
    """Roll(shift, axis): elements shifted along axis (each of several axes), wrapping around."""

    def __init__(self, shift, axis):
        super().__init__()
        shift = (shift,) if isinstance(shift, int) else tuple(shift)
        axis = (axis,) if isinstance(axis, int) else tuple(axis)
        if len(shift) != len(axis):
            raise ValueError("For 'Roll', shift and axis must have the same length, got %d and %d."
                             % (len(shift), len(axis)))
        self.shift, self.axis = shift, axis

    def construct(self, input_x):
        check_input("Roll", "input_x", input_x)
        x = input_x
        for s, a in zip(self.shift, self.axis):
            a = a % x.ndim
            n = x.shape[a]
            s = s % n if n else 0
            if s:
                head = [slice(None)] * x.ndim
                tail = [slice(None)] * x.ndim
                head[a], tail[a] = slice(n - s, n), slice(0, n - s)
                x = F.concat((x[tuple(head)], x[tuple(tail)]), a)
        return x


class Moments(Cell):
    """Moments(axis=None, keep_dims=None): (mean, biased variance) over axis (every dim when
    None)."""

    def __init__(self, axis=None, keep_dims=None):
        super().__init__()
        self.axis = (axis,) if isinstance(axis, int) else (None if axis is None else tuple(axis))
        self.keep_dims = bool(keep_dims) if keep_dims is not None else False

    def construct(self, x):
        check_input("Moments", "x", x)
        axis = self.axis if self.axis is not None else tuple(range(x.ndim))
        mean = F.mean(x, axis, True)
        var = F.mean(F.square(x - mean), axis, self.keep_dims)
        return (mean if self.keep_dims else F.mean(x, axis, False)), var


class Threshold(Cell):
    """Threshold(threshold, value): x where x > threshold, else value."""

    def __init__(self, threshold, value):
        super().__init__()
        self.threshold = _float("Threshold", "threshold", threshold)
        self.value = _float("Threshold", "value", value)

    def construct(self, input_x):
        check_input("Threshold", "input_x", input_x)
        return F.where(input_x > self.threshold, input_x, input_x * 0.0 + self.value)


class Softmax2d(Cell):
    """Softmax2d(): softmax over the channel dim of (C, H, W) or (N, C, H, W) inputs."""

    def construct(self, x):
        check_input("Softmax2d", "x", x, ndim=(3, 4))
        return F.softmax(x, -3)


def _activations():
    from pijit.nn import activation as A
    return {
        "softmin": Softmin, "softmax": A.Softmax, "softmax2d": Softmax2d, "logsoftmax": A.LogSoftmax,
        "relu": A.ReLU, "relu6": A.ReLU6, "tanh": A.Tanh, "tanhshrink": Tanhshrink,
        "hardtanh": Hardtanh, "gelu": A.GELU, "fast_gelu": FastGelu, "elu": ELU, "sigmoid": A.Sigmoid,
        "prelu": PReLU, "leakyrelu": A.LeakyReLU, "hswish": A.HSwish, "hsigmoid": A.HSigmoid,
        "logsigmoid": LogSigmoid, "softshrink": SoftShrink, "hshrink": HShrink, "threshold": Threshold,
        "mish": Mish, "selu": SeLU, "silu": A.SiLU, "softsign": Softsign, "celu": CELU, "glu": GLU,
    }


def get_activation(name, prim_name=None):
    """A new activation Cell by MindSpore's name ('relu', 'gelu', 'sigmoid', ...); None for None."""
    if name is None:
        return None
    table = _activations()
    if name not in table:
        raise KeyError("For '%s', the activation name %r is not supported; choose one of %s."
                       % (prim_name or "get_activation", name, ", ".join(sorted(table))))
    return table[name]()
