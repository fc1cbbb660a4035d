"""Layers beyond layers2: 3-D conv/pool/norm layers (MindSpore's nn.Conv3d, Conv3dTranspose,
MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d, BatchNorm3d) over pijit.ops.ops3d."""
import math

from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit.common.initializer import initializer, HeUniform, Uniform
from pijit.nn.cell import Cell
from pijit.nn.normalization import BatchNorm2d
from pijit.ops import ops3d as _O
from pijit.parameter import Parameter


def _channels(who, **kv):
    for name, v in kv.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError("For '%s', '%s' must be a positive int, got %r" % (who, name, v))


class _Conv3d(Cell):
    def __init__(self, who, in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                 dilation, group, has_bias, weight_init, bias_init, data_format, dtype, transposed):
        super().__init__()
        _channels(who, in_channels=in_channels, out_channels=out_channels, group=group)
        if in_channels % group or out_channels % group:
            raise ValueError("For '%s', in_channels (%d) and out_channels (%d) must be divisible by "
                             "group (%d)" % (who, in_channels, out_channels, group))
        if data_format != "NCDHW":
            raise ValueError("For '%s', only data_format 'NCDHW' is supported, got %r"
                             % (who, data_format))
        self.who = who
        self.in_channels, self.out_channels, self.group = in_channels, out_channels, group
        self.kernel_size = _O._triple(kernel_size, "kernel_size", who)
        self.stride = _O._triple(stride, "stride", who)
        self.dilation = _O._triple(dilation, "dilation", who)
        self.pad_mode = _O._pad_mode(pad_mode, who)
        self.padding = _O._pads6(padding, who)
        if self.pad_mode != "pad" and any(self.padding):
            raise ValueError("For '%s', 'padding' must be 0 when 'pad_mode' is '%s', got %r"
                             % (who, self.pad_mode, padding))
        self.has_bias, self.data_format = bool(has_bias), data_format
        dtype = _dt.float32 if dtype is None else _dt.as_dtype(dtype)
        k = self.kernel_size
        if transposed:
            shape = (in_channels, out_channels // group) + k
        else:
            shape = (out_channels, in_channels // group) + k
        fan_in = shape[1] * k[0] * k[1] * k[2]
        self.weight = Parameter(initializer(HeUniform(math.sqrt(5)) if weight_init is None
                                            else weight_init, shape, dtype), name="weight")
        if self.has_bias:
            self.bias = Parameter(initializer(Uniform(1.0 / math.sqrt(fan_in)) if bias_init is None
                                              else bias_init, (out_channels,), dtype), name="bias")
        else:
            self.bias = None

    def _check(self, x):
        if x.ndim != 5 or x.shape[1] != self.in_channels:
            raise ValueError("For '%s', the input must be (N, %d, D, H, W), got shape %r"
                             % (self.who, self.in_channels, tuple(x.shape)))

    def extend_repr(self):
        return ("input_channels=%d, output_channels=%d, kernel_size=%s, stride=%s, pad_mode=%s, "
                "padding=%s, dilation=%s, group=%d, has_bias=%s" % (
                    self.in_channels, self.out_channels, self.kernel_size, self.stride,
                    self.pad_mode, self.padding, self.dilation, self.group, self.has_bias))


class Conv3d(_Conv3d):
    """Conv3d(in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0,
    dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None, data_format='NCDHW',
    dtype=float32): weight (out_channels, in_channels / group, kD, kH, kW), HeUniform(sqrt(5))
    by default, bias Uniform(1 / sqrt(fan_in))."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 data_format="NCDHW", dtype=None):
        super().__init__("Conv3d", in_channels, out_channels, kernel_size, stride, pad_mode,
                         padding, dilation, group, has_bias, weight_init, bias_init, data_format,
                         dtype, transposed=False)

    def construct(self, x):
        self._check(x)
        return _O.conv3d(x, self.weight, self.bias, self.stride, self.pad_mode,
                         self.padding if self.pad_mode == "pad" else 0, self.dilation, self.group)


class Conv3dTranspose(_Conv3d):
    """Conv3dTranspose(in_channels, out_channels, kernel_size, stride=1, pad_mode='same',
    padding=0, dilation=1, group=1, output_padding=0, has_bias=False, weight_init=None,
    bias_init=None, data_format='NCDHW', dtype=float32): weight (in_channels,
    out_channels / group, kD, kH, kW); 'same' gives in * stride outputs."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same",
                 padding=0, dilation=1, group=1, output_padding=0, has_bias=False,
                 weight_init=None, bias_init=None, data_format="NCDHW", dtype=None):
        super().__init__("Conv3dTranspose", in_channels, out_channels, kernel_size, stride,
                         pad_mode, padding, dilation, group, has_bias, weight_init, bias_init,
                         data_format, dtype, transposed=True)
        self.output_padding = _O._triple(output_padding, "output_padding", "Conv3dTranspose",
                                         allow_zero=True)

    def construct(self, x):
        self._check(x)
        return _O._conv_transpose3d(self.who, x, self.weight, self.bias, self.stride,
                                    self.pad_mode, self.padding if self.pad_mode == "pad" else 0,
                                    self.dilation, self.group, self.output_padding)


class MaxPool3d(Cell):
    """MaxPool3d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
    ceil_mode=False): stride None is kernel_size; indices flat in each input plane (int64)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        who = "MaxPool3d"
        self.kernel_size = _O._triple(kernel_size, "kernel_size", who)
        self.stride = self.kernel_size if stride is None else _O._triple(stride, "stride", who)
        self.padding = _O._pads6(padding, who)
        self.dilation = _O._triple(dilation, "dilation", who)
        self.return_indices, self.ceil_mode = bool(return_indices), bool(ceil_mode)

    def construct(self, x):
        return _O.max_pool3d(x, self.kernel_size, self.stride, self.padding, self.dilation,
                             self.ceil_mode, self.return_indices)


class AvgPool3d(Cell):
    """AvgPool3d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None): padding an int or 3 ints."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        who = "AvgPool3d"
        self.kernel_size = _O._triple(kernel_size, "kernel_size", who)
        self.stride = self.kernel_size if stride is None else _O._triple(stride, "stride", who)
        self.padding = _O._pads6(padding, who)
        self.ceil_mode, self.count_include_pad = bool(ceil_mode), bool(count_include_pad)
        if divisor_override is not None and (isinstance(divisor_override, bool) or
                                             not isinstance(divisor_override, int) or
                                             divisor_override <= 0):
            raise ValueError("For '%s', 'divisor_override' must be a positive int or None, got %r"
                             % (who, divisor_override))
        self.divisor_override = divisor_override or 0

    def construct(self, x):
        return _O.avg_pool3d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(Cell):
    """AdaptiveAvgPool3d(output_size): None in output_size keeps that dim."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def construct(self, input):
        return _O.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(Cell):
    """AdaptiveMaxPool3d(output_size, return_indices=False): indices int32 (MindSpore's)."""

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, bool(return_indices)

    def construct(self, input):
        return _O.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class BatchNorm3d(Cell):
    """BatchNorm3d(num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init='ones',
    beta_init='zeros', moving_mean_init='zeros', moving_var_init='ones',
    use_batch_statistics=None, data_format='NCDHW'): normalises (N, C, D, H, W) per channel as
    MindSpore does, through a BatchNorm2d over (N, C, D*H, W) held as `bn2d` (so the parameters
    are bn2d.gamma, bn2d.beta, bn2d.moving_mean, bn2d.moving_variance, as in MindSpore's
    checkpoints)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.9, affine=True, gamma_init="ones",
                 beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format="NCDHW", dtype=None):
        super().__init__()
        if data_format != "NCDHW":
            raise ValueError("For 'BatchNorm3d', only data_format 'NCDHW' is supported, got %r"
                             % (data_format,))
        self.num_features = num_features
        self.bn2d = BatchNorm2d(num_features, eps, momentum, affine, gamma_init, beta_init,
                                moving_mean_init, moving_var_init, use_batch_statistics)

    def construct(self, input):
        if input.ndim != 5 or input.shape[1] != self.num_features:
            raise ValueError("For 'BatchNorm3d', the input must be (N, %d, D, H, W), got shape %r"
                             % (self.num_features, tuple(input.shape)))
        n, c, d, h, w = input.shape
        y = self.bn2d(_op("reshape", (input,), shape=(n, c, d * h, w)))
        return _op("reshape", (y,), shape=(n, c, d, h, w))


__all__ = ["Conv3d", "Conv3dTranspose", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool3d", "BatchNorm3d"]
