"""Conv2d and Conv2dTranspose with MindSpore's signatures (pad_mode 'same' | 'valid' | 'pad')."""
import math

from pijit import dtype as _dt
from pijit._validate import check_input
from pijit.common.initializer import initializer, HeUniform, Uniform
from pijit.nn.cell import Cell
from pijit.ops import nn_functional as NF
from pijit.parameter import Parameter


def _pair(v, name, who):
    if isinstance(v, bool):
        raise TypeError("%s: %s must be an int or a tuple of 2 ints, got %r" % (who, name, v))
    if isinstance(v, int):
        v = (v, v)
    if not (isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, int) for x in v)):
        raise TypeError("%s: %s must be an int or a tuple of 2 ints, got %r" % (who, name, v))
    if any(x < 1 for x in v):
        raise ValueError("%s: %s must be positive, got %s" % (who, name, tuple(v)))
    return tuple(v)


class _Conv(Cell):
    def __init__(self, who, in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                 dilation, group, has_bias, weight_init, bias_init, data_format, transposed):
        super().__init__()
        for name, v in (("in_channels", in_channels), ("out_channels", out_channels), ("group", group)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError("%s: %s must be a positive int, got %r" % (who, name, v))
        if in_channels % group or out_channels % group:
            raise ValueError("%s: in_channels (%d) and out_channels (%d) must be divisible by "
                             "group (%d)" % (who, in_channels, out_channels, group))
        if pad_mode not in ("same", "valid", "pad"):
            raise ValueError("%s: pad_mode must be 'same', 'valid' or 'pad', got %r" % (who, pad_mode))
        if data_format != "NCHW":
            raise ValueError("%s: only data_format='NCHW' is supported, got %r" % (who, data_format))
        self.who = who
        self.in_channels, self.out_channels, self.group = in_channels, out_channels, group
        self.kernel_size = _pair(kernel_size, "kernel_size", who)
        self.stride = _pair(stride, "stride", who)
        self.dilation = _pair(dilation, "dilation", who)
        self.pad_mode, self.padding = pad_mode, padding
        NF.conv_pads(pad_mode, padding, (1, 1), (1, 1), (1, 1), (1, 1), who)  # validates padding
        self.has_bias, self.data_format = bool(has_bias), data_format
        if transposed:
            shape = (in_channels, out_channels // group) + self.kernel_size
        else:
            shape = (out_channels, in_channels // group) + self.kernel_size
        fan_in = shape[1] * self.kernel_size[0] * self.kernel_size[1]
        self._weight_init_name = "None" if weight_init is None else str(weight_init)
        self._bias_init_name = "None" if bias_init is None else str(bias_init)
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight = Parameter(initializer(weight_init, shape, _dt.float32), name="weight")
        if self.has_bias:
            if bias_init is None:
                bias_init = Uniform(1.0 / math.sqrt(fan_in))
            self.bias = Parameter(initializer(bias_init, (out_channels,), _dt.float32), name="bias")
        else:
            self.bias = None

    def extend_repr(self):
        return ("input_channels=%d, output_channels=%d, kernel_size=%s, stride=%s, pad_mode=%s, "
                "padding=%s, dilation=%s, group=%d, has_bias=%s, weight_init=%s, bias_init=%s, "
                "format=%s" % (self.in_channels, self.out_channels, self.kernel_size, self.stride,
                               self.pad_mode, self.padding, self.dilation, self.group, self.has_bias,
                               self._weight_init_name, self._bias_init_name, self.data_format))


class Conv2d(_Conv):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 dilation=1, group=1, has_bias=False, weight_init=None, bias_init=None,
                 data_format="NCHW"):
        super().__init__("Conv2d", in_channels, out_channels, kernel_size, stride, pad_mode,
                         padding, dilation, group, has_bias, weight_init, bias_init, data_format,
                         transposed=False)

    def construct(self, x):
        check_input("Conv2d", "x", x, ndim=4, size=(1, self.in_channels, "in_channels"))  # NCHW
        return NF.conv2d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding,
                         self.dilation, self.group)


class Conv2dTranspose(_Conv):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0,
                 output_padding=0, dilation=1, group=1, has_bias=False, weight_init=None,
                 bias_init=None):
        super().__init__("Conv2dTranspose", in_channels, out_channels, kernel_size, stride,
                         pad_mode, padding, dilation, group, has_bias, weight_init, bias_init,
                         "NCHW", transposed=True)
        self.output_padding = output_padding

    def construct(self, x):
        check_input("Conv2dTranspose", "x", x, ndim=4, size=(1, self.in_channels, "in_channels"))  # NCHW
        kh, kw = self.kernel_size
        dh, dw = self.dilation
        if self.pad_mode == "same":
            # output = input * stride: (in-1)*s - 2p + k_eff + op = in*s  =>  2p - op = k_eff - s
            pad, extra = [], []
            for k, d, s in ((kh, dh, self.stride[0]), (kw, dw, self.stride[1])):
                total = (k - 1) * d + 1 - s
                p = (total + 1) // 2 if total > 0 else 0
                pad.append(p)
                extra.append(2 * p - total)
            pad, extra = tuple(pad), tuple(extra)
        elif self.pad_mode == "valid":
            pad, extra = (0, 0), (0, 0)
        else:
            p = self.padding
            if isinstance(p, int):
                p = (p, p, p, p)
            elif len(p) == 2:
                p = (p[0], p[0], p[1], p[1])
            if p[0] != p[1] or p[2] != p[3]:
                raise ValueError("Conv2dTranspose: padding must be symmetric (top == bottom, "
                                 "left == right), got %s" % (tuple(p),))
            pad, extra = (p[0], p[2]), (0, 0)
        op = self.output_padding
        op = (op, op) if isinstance(op, int) else tuple(op)
        y = NF.conv_transpose2d(x, self.weight, self.bias, self.stride, pad,
                                (op[0] + extra[0], op[1] + extra[1]), self.group, self.dilation)
        return y
