"""MaxPool2d, AvgPool2d, AdaptiveAvgPool2d (MindSpore signatures, NCHW)."""
from pijit._validate import check_input
from pijit.nn.cell import Cell
from pijit.ops import nn_functional as NF


def _pair(v, name, who):
    if isinstance(v, int) and not isinstance(v, bool):
        v = (v, v)
    if not (isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, int) for x in v)):
        raise TypeError("%s: %s must be an int or a tuple of 2 ints, got %r" % (who, name, v))
    return tuple(v)


class _Pool(Cell):
    def __init__(self, who, kernel_size, stride, pad_mode, padding, ceil_mode):
        super().__init__()
        self.who = who
        self.kernel_size = _pair(kernel_size, "kernel_size", who)
        self.stride = _pair(stride, "stride", who)
        if any(k < 1 for k in self.kernel_size) or any(s < 1 for s in self.stride):
            raise ValueError("%s: kernel_size and stride must be positive" % who)
        pad_mode = pad_mode.lower() if isinstance(pad_mode, str) else pad_mode
        if pad_mode not in ("same", "valid", "pad"):
            raise ValueError("%s: pad_mode must be 'same', 'valid' or 'pad', got %r" % (who, pad_mode))
        self.pad_mode, self.ceil_mode = pad_mode, bool(ceil_mode)
        self.padding = _pair(padding, "padding", who)
        if pad_mode != "pad" and any(self.padding):
            raise ValueError("%s: padding must be 0 unless pad_mode='pad'" % who)

    def _pads(self, x):
        check_input(self.who, "x", x, ndim=(3, 4))
        if self.pad_mode == "same":
            t, b, l, r = NF.same_pads(x._dims(-2), self.kernel_size, self.stride, (1, 1))
            return (t, b, l, r)
        p = self.padding
        return (p[0], p[0], p[1], p[1])

    def extend_repr(self):
        return "kernel_size=%s, stride=%s, pad_mode=%s" % (self.kernel_size, self.stride,
                                                          self.pad_mode.upper())


class MaxPool2d(_Pool):
    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1,
                 return_indices=False, ceil_mode=False, data_format="NCHW"):
        super().__init__("MaxPool2d", kernel_size, stride, pad_mode, padding, ceil_mode)
        if return_indices:
            raise ValueError("MaxPool2d: return_indices=True is not supported by pijit")
        self.dilation = _pair(dilation, "dilation", "MaxPool2d")

    def construct(self, x):
        t, b, l, r = self._pads(x)
        if (t, l) != (b, r):
            # 'same' with an odd total: the extra bottom/right row and column never win a max.
            x = NF.pad(x, (0, r - l, 0, b - t), mode="constant", value=float("-inf"))
        return NF.max_pool2d(x, self.kernel_size, self.stride, (t, l), dilation=self.dilation,
                             ceil_mode=self.ceil_mode)


class AvgPool2d(_Pool):
    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None, data_format="NCHW"):
        super().__init__("AvgPool2d", kernel_size, stride, pad_mode, padding, ceil_mode)
        if divisor_override is not None and (isinstance(divisor_override, bool) or
                                             not isinstance(divisor_override, int) or
                                             divisor_override < 1):
            raise ValueError("AvgPool2d: divisor_override must be a positive int, got %r"
                             % (divisor_override,))
        self.count_include_pad = bool(count_include_pad)
        self.divisor_override = divisor_override

    def construct(self, x):
        t, b, l, r = self._pads(x)
        include = self.count_include_pad and self.pad_mode == "pad"
        if (t, l) != (b, r):
            # 'same' with an odd total: pad the extra row/column explicitly; MindSpore averages
            # over the valid elements only in 'same' mode.
            import pijit as pj
            ones = pj.ones(x._dims(-2), dtype=x.dtype)
            num = NF.pad(x, (0, r - l, 0, b - t))
            den = NF.pad(ones, (0, r - l, 0, b - t))
            s = NF.avg_pool2d(num, self.kernel_size, self.stride, (t, l), self.ceil_mode, True)
            c = NF.avg_pool2d(den.reshape((1, 1) + den.shape), self.kernel_size, self.stride,
                              (t, l), self.ceil_mode, True)
            return s / c.reshape(c.shape[-2:])
        return NF.avg_pool2d(x, self.kernel_size, self.stride, (t, l), self.ceil_mode, include,
                             self.divisor_override)


class AdaptiveAvgPool2d(Cell):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def construct(self, x):
        check_input("AdaptiveAvgPool2d", "x", x, ndim=(3, 4))
        return NF.adaptive_avg_pool2d(x, self.output_size)

    def extend_repr(self):
        return "output_size=%s" % (self.output_size,)
