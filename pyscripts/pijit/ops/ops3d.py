"""3-D convolution and pooling (Conv3D, MaxPool3D, AvgPool3D, adaptive 3-D pools, 3-D upsampling):
primitives and functional forms, with MindSpore's signatures (NCDHW, pad_mode 'same' / 'valid' /
'pad', pads as 6-tuples (front, back, top, bottom, left, right), dilation, group).

Each calls the registry ops of graph/ops/conv3d_ops.cc (conv3d, conv_transpose3d, max_pool3d,
avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d), which carry their gradients and are captured
as graph nodes; upsampling composes index_select and arithmetic, and max_unpool reuses
max_unpool2d over flattened planes. Pools also take unbatched (C, D, H, W) inputs."""
import builtins as _b
import math as _math

from pijit import dtype as _dt
from pijit._ops_common import op as _op, as_tensor as _t
from pijit.ops.primitives import Primitive


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _triple(v, name, who, allow_zero=False, allow5=False):
    """An int or 3 ints (MindSpore's primitives also take 5 with two leading 1s)."""
    if _int(v):
        v = (v, v, v)
    elif isinstance(v, (tuple, list)) and all(_int(x) for x in v):
        v = tuple(v)
        if allow5 and len(v) == 5:
            if v[:2] != (1, 1):
                raise ValueError("For '%s', the first two elements of '%s' must be 1 when it has 5, "
                                 "got %r" % (who, name, v))
            v = v[2:]
        elif len(v) == 1:
            v = v * 3
    else:
        raise TypeError("For '%s', '%s' must be an int or a tuple of 3 ints, got %r" % (who, name, v))
    if len(v) != 3:
        raise ValueError("For '%s', '%s' must be an int or a tuple of 3 ints, got %r" % (who, name, v))
    lo = 0 if allow_zero else 1
    if _b.any(x < lo for x in v):
        raise ValueError("For '%s', '%s' must be %s, got %r"
                         % (who, name, "non-negative" if allow_zero else "positive", v))
    return v


def _pads6(v, who, name="padding"):
    """An int, 3 ints (symmetric per dim) or 6 ints (front, back, top, bottom, left, right)."""
    if _int(v):
        v = (v,) * 6
    elif isinstance(v, (tuple, list)) and all(_int(x) for x in v) and len(v) in (1, 3, 6):
        v = tuple(v)
        if len(v) == 1:
            v = v * 6
        elif len(v) == 3:
            v = (v[0], v[0], v[1], v[1], v[2], v[2])
    else:
        raise TypeError("For '%s', '%s' must be an int or a tuple of 3 or 6 ints, got %r"
                        % (who, name, v))
    if _b.any(x < 0 for x in v):
        raise ValueError("For '%s', '%s' must be non-negative, got %r" % (who, name, v))
    return v


def _pad_mode(mode, who):
    if not isinstance(mode, str) or mode.lower() not in ("same", "valid", "pad"):
        raise ValueError("For '%s', 'pad_mode' must be 'same', 'valid' or 'pad', got %r"
                         % (who, mode))
    return mode.lower()


def _mode_padding(who, pad_mode, padding):
    """The padding attribute the registry ops take for MindSpore's (pad_mode, padding)."""
    mode = _pad_mode(pad_mode, who)
    pads = _pads6(padding, who)
    if mode != "pad":
        if _b.any(pads):
            raise ValueError("For '%s', 'padding' must be 0 when 'pad_mode' is '%s', got %r"
                             % (who, mode, padding))
        return mode
    return pads


def _batched(x, who, dims=(4, 5)):
    """x as 5-D (N, C, D, H, W), and whether it was unbatched (C, D, H, W)."""
    x = _t(x)
    if x.ndim not in dims:
        raise ValueError("For '%s', the input must be %s, got shape %r"
                         % (who, " or ".join("%d-D" % d for d in dims), tuple(x.shape)))
    if x.ndim == 4:
        return _op("expand_dims", (x,), axis=0), True
    return x, False


def _unbatch(y, unbatched):
    return _op("squeeze", (y,), axis=(0,)) if unbatched else y


def _floating_in(x):
    """Integer inputs of the max pools run in float64 and come back in their dtype."""
    if x.dtype.is_floating_point:
        return x, None
    return _op("cast", (x,), dtype=_dt.float64), x.dtype


# ---- convolution ---------------------------------------------------------------------------------

def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    """MindSpore's ops.conv3d: input (N, C, D, H, W), weight (C_out, C/groups, kD, kH, kW);
    pad_mode 'valid', 'same' (ceil(in / stride) outputs, the odd extra element at the
    back/bottom/right) or 'pad' with padding an int, 3 ints or 6 ints."""
    who = "conv3d"
    x, w = _t(input), _t(weight)
    if x.ndim != 5 or w.ndim != 5:
        raise ValueError("For '%s', input and weight must be 5-D, got shapes %r and %r"
                         % (who, tuple(x.shape), tuple(w.shape)))
    inputs = (x, w) if bias is None else (x, w, _t(bias))
    return _op("conv3d", inputs, stride=_triple(stride, "stride", who),
               padding=_mode_padding(who, pad_mode, padding),
               dilation=_triple(dilation, "dilation", who), groups=groups)


def _transpose_pads(who, pad_mode, padding, in_dhw, kernel, stride, dilation, output_padding):
    """(padding, output_padding) of conv_transpose3d for MindSpore's pad modes: 'same' gives
    in * stride outputs (the larger half of the crop at the front, as Conv2dTranspose does),
    'valid' (in - 1) * stride + dilated kernel."""
    mode = _pad_mode(pad_mode, who)
    pads = _pads6(padding, who)
    op = _triple(output_padding, "output_padding", who, allow_zero=True)
    if mode == "pad":
        return pads, op
    if _b.any(pads):
        raise ValueError("For '%s', 'padding' must be 0 when 'pad_mode' is '%s', got %r"
                         % (who, mode, padding))
    if mode == "valid":
        return (0,) * 6, op
    p, extra = [], []
    for k, d, s in zip(kernel, dilation, stride):
        total = (k - 1) * d + 1 - s
        if total >= 0:
            p += [(total + 1) // 2, total // 2]
            extra.append(0)
        else:
            p += [0, 0]
            extra.append(-total)
    return tuple(p), tuple(a + b for a, b in zip(op, extra))


def _conv_transpose3d(who, x, w, bias, stride, pad_mode, padding, dilation, groups, output_padding):
    x, w = _t(x), _t(w)
    if x.ndim != 5 or w.ndim != 5:
        raise ValueError("For '%s', input and weight must be 5-D, got shapes %r and %r"
                         % (who, tuple(x.shape), tuple(w.shape)))
    stride = _triple(stride, "stride", who)
    dilation = _triple(dilation, "dilation", who)
    pads, op = _transpose_pads(who, pad_mode, padding, tuple(x.shape[2:]), tuple(w.shape[2:]),
                               stride, dilation, output_padding)
    inputs = (x, w) if bias is None else (x, w, _t(bias))
    return _op("conv_transpose3d", inputs, stride=stride, padding=pads, output_padding=op,
               dilation=dilation, groups=groups)


class Conv3D(Primitive):
    """Conv3D(out_channel, kernel_size, mode=1, pad_mode='valid', pad=0, stride=1, dilation=1,
    group=1, data_format='NCDHW')(x, weight[, bias])."""

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, data_format="NCDHW"):
        who = "Conv3D"
        if data_format != "NCDHW":
            raise ValueError("For '%s', only data_format 'NCDHW' is supported, got %r"
                             % (who, data_format))
        super().__init__(out_channel=out_channel, kernel_size=_triple(kernel_size, "kernel_size", who),
                         mode=mode, pad_mode=_pad_mode(pad_mode, who), pad=_pads6(pad, who, "pad"),
                         stride=_triple(stride, "stride", who, allow5=True),
                         dilation=_triple(dilation, "dilation", who, allow5=True), group=group,
                         data_format=data_format)

    def __call__(self, x, weight, bias=None):
        a = self.attrs
        w = _t(weight)
        if w.ndim == 5 and (w.shape[0] != a["out_channel"] or tuple(w.shape[2:]) != a["kernel_size"]):
            raise ValueError("For 'Conv3D', the weight shape %r does not match out_channel %d and "
                             "kernel_size %r" % (tuple(w.shape), a["out_channel"], a["kernel_size"]))
        padding = a["pad"] if a["pad_mode"] == "pad" else 0
        return conv3d(x, w, bias, a["stride"], a["pad_mode"], padding, a["dilation"], a["group"])


class Conv3DTranspose(Primitive):
    """Conv3DTranspose(in_channel, out_channel, kernel_size, mode=1, pad_mode='valid', pad=0,
    stride=1, dilation=1, group=1, output_padding=0, data_format='NCDHW')(dout, weight[, bias]):
    weight (in_channel, out_channel / group, kD, kH, kW)."""

    def __init__(self, in_channel, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0,
                 stride=1, dilation=1, group=1, output_padding=0, data_format="NCDHW"):
        who = "Conv3DTranspose"
        if data_format != "NCDHW":
            raise ValueError("For '%s', only data_format 'NCDHW' is supported, got %r"
                             % (who, data_format))
        super().__init__(in_channel=in_channel, out_channel=out_channel,
                         kernel_size=_triple(kernel_size, "kernel_size", who), mode=mode,
                         pad_mode=_pad_mode(pad_mode, who), pad=_pads6(pad, who, "pad"),
                         stride=_triple(stride, "stride", who, allow5=True),
                         dilation=_triple(dilation, "dilation", who, allow5=True), group=group,
                         output_padding=_triple(output_padding, "output_padding", who,
                                                allow_zero=True, allow5=True),
                         data_format=data_format)

    def __call__(self, dout, weight, bias=None):
        a = self.attrs
        return _conv_transpose3d("Conv3DTranspose", dout, weight, bias, a["stride"], a["pad_mode"],
                                 a["pad"] if a["pad_mode"] == "pad" else 0, a["dilation"],
                                 a["group"], a["output_padding"])


# ---- pooling -------------------------------------------------------------------------------------

def _max_pool(who, x, kernel_size, stride, padding, dilation, ceil_mode):
    """(values, int64 indices) of the registry max_pool3d on a 5-D floating x."""
    return _op("max_pool3d", (x,), kernel_size=kernel_size, stride=stride, padding=padding,
               dilation=dilation, ceil_mode=bool(ceil_mode))


def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """MindSpore's ops.max_pool3d: x (N, C, D, H, W) or (C, D, H, W); stride None is kernel_size;
    padding an int or 3 ints (at most half the effective kernel); indices (int64) are flat
    positions d*H*W + h*W + w in each input plane."""
    who = "max_pool3d"
    t, unb = _batched(x, who)
    t, back = _floating_in(t)
    k = _triple(kernel_size, "kernel_size", who)
    s = k if stride is None else _triple(stride, "stride", who)
    y, idx = _max_pool(who, t, k, s, _pads6(padding, who), _triple(dilation, "dilation", who),
                       ceil_mode)
    if back is not None:
        y = _op("cast", (y,), dtype=back)
    y, idx = _unbatch(y, unb), _unbatch(idx, unb)
    return (y, idx) if return_indices else y


def avg_pool3d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=0):
    """MindSpore's ops.avg_pool3d: padding an int or 6 ints; divisor_override 0 is none."""
    who = "avg_pool3d"
    t, unb = _batched(input_x, who)
    k = _triple(kernel_size, "kernel_size", who)
    s = k if stride is None else _triple(stride, "stride", who)
    if not _int(divisor_override) or divisor_override < 0:
        raise ValueError("For '%s', 'divisor_override' must be a non-negative int, got %r"
                         % (who, divisor_override))
    y = _op("avg_pool3d", (t,), kernel_size=k, stride=s, padding=_pads6(padding, who),
            ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
            divisor_override=divisor_override or None)
    return _unbatch(y, unb)


def _output_size(output_size, in_dhw, who):
    """An int or 3 entries, None keeping that input size."""
    if _int(output_size) or output_size is None:
        output_size = (output_size,) * 3
    if not isinstance(output_size, (tuple, list)) or len(output_size) != 3:
        raise ValueError("For '%s', 'output_size' must be an int or a tuple of 3, got %r"
                         % (who, output_size))
    out = []
    for o, n in zip(output_size, in_dhw):
        if o is None:
            o = n
        if not _int(o) or o < 0:
            raise ValueError("For '%s', 'output_size' must hold non-negative ints or None, got %r"
                             % (who, output_size))
        out.append(o)
    return tuple(out)


def adaptive_avg_pool3d(input, output_size):
    """MindSpore's ops.adaptive_avg_pool3d: output cell i of a dim averages input
    [floor(i*I/O), ceil((i+1)*I/O)); None in output_size keeps that dim."""
    who = "adaptive_avg_pool3d"
    t, unb = _batched(input, who)
    o = _output_size(output_size, tuple(t.shape[2:]), who)
    return _unbatch(_op("adaptive_avg_pool3d", (t,), output_size=o), unb)


def _adaptive_max(who, input, output_size, index_dtype):
    t, unb = _batched(input, who)
    t, back = _floating_in(t)
    o = _output_size(output_size, tuple(t.shape[2:]), who)
    y, idx = _op("adaptive_max_pool3d", (t,), output_size=o)
    if back is not None:
        y = _op("cast", (y,), dtype=back)
    if index_dtype != _dt.int64:
        idx = _op("cast", (idx,), dtype=index_dtype)
    return _unbatch(y, unb), _unbatch(idx, unb)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """MindSpore's ops.adaptive_max_pool3d: indices int32 (as MindSpore's), flat in each plane."""
    y, idx = _adaptive_max("adaptive_max_pool3d", input, output_size, _dt.int32)
    return (y, idx) if return_indices else y


def _unpool_size(who, x, kernel_size, stride, padding, output_size, nd):
    k = [kernel_size] * nd if _int(kernel_size) else list(kernel_size)
    s = k if stride is None else ([stride] * nd if _int(stride) else list(stride))
    p = [padding] * nd if _int(padding) else list(padding)
    if not (len(k) == len(s) == len(p) == nd):
        raise ValueError("For '%s', kernel_size, stride and padding must be ints or tuples of %d"
                         % (who, nd))
    ins = tuple(x.shape[-nd:])
    size = tuple((n - 1) * st - 2 * pd + kk for n, st, pd, kk in zip(ins, s, p, k))
    if output_size is not None:
        size = tuple(output_size)[-nd:]
        if len(size) != nd:
            raise ValueError("For '%s', 'output_size' must end with %d sizes, got %r"
                             % (who, nd, output_size))
    return size


def _max_unpool_nd(who, x, indices, kernel_size, stride, padding, output_size, nd):
    """x's values written at their flat indices of zero planes of the unpooled size: max_unpool2d
    over planes flattened to one row."""
    from pijit.ops.primitives3 import max_unpool2d
    t, idx = _t(x), _t(indices)
    if t.ndim not in (nd + 1, nd + 2):
        raise ValueError("For '%s', the input must be %d-D or %d-D, got shape %r"
                         % (who, nd + 1, nd + 2, tuple(t.shape)))
    if tuple(idx.shape) != tuple(t.shape):
        raise ValueError("For '%s', 'indices' must have the shape of 'x' %r, but got %r"
                         % (who, tuple(t.shape), tuple(idx.shape)))
    size = _unpool_size(who, t, kernel_size, stride, padding, output_size, nd)
    lead = tuple(t.shape[:-nd])
    n_in = 1
    for v in t.shape[-nd:]:
        n_in *= v
    n_out = 1
    for v in size:
        n_out *= v
    flat = lead + (1, n_in)
    y = max_unpool2d(_op("reshape", (t,), shape=flat), _op("reshape", (idx,), shape=flat),
                     (1, 1), output_size=(1, n_out))
    return _op("reshape", (y,), shape=lead + size)


def max_unpool1d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """MindSpore's ops.max_unpool1d: (N, C, L) or (C, L); output length (L-1)*stride - 2*padding
    + kernel_size unless output_size says otherwise."""
    return _max_unpool_nd("max_unpool1d", x, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool3d(x, indices, kernel_size, stride=None, padding=0, output_size=None):
    """MindSpore's ops.max_unpool3d: (N, C, D, H, W) or (C, D, H, W)."""
    return _max_unpool_nd("max_unpool3d", x, indices, kernel_size, stride, padding, output_size, 3)


class MaxPool3D(Primitive):
    """MaxPool3D(kernel_size=1, strides=1, pad_mode='VALID', pad_list=0, ceil_mode=None,
    data_format='NCDHW')(x): pad_mode 'same' (ceil(in / stride) outputs), 'valid' or 'pad' with
    pad_list an int or 6 ints; ceil_mode only with 'pad'."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", pad_list=0, ceil_mode=None,
                 data_format="NCDHW"):
        who = "MaxPool3D"
        mode = _pad_mode(pad_mode, who)
        pads = _pads6(pad_list, who, "pad_list")
        if mode != "pad" and (_b.any(pads) or ceil_mode is not None):
            raise ValueError("For '%s', 'pad_list' must be 0 and 'ceil_mode' None unless 'pad_mode' "
                             "is 'pad'" % who)
        super().__init__(kernel_size=_triple(kernel_size, "kernel_size", who, allow5=True),
                         strides=_triple(strides, "strides", who, allow5=True), pad_mode=mode,
                         pad_list=pads, ceil_mode=ceil_mode, data_format=data_format)

    def __call__(self, x):
        a = self.attrs
        t, unb = _batched(x, "MaxPool3D")
        t, back = _floating_in(t)
        padding = a["pad_list"] if a["pad_mode"] == "pad" else a["pad_mode"]
        y, _ = _max_pool("MaxPool3D", t, a["kernel_size"], a["strides"], padding, (1, 1, 1),
                         bool(a["ceil_mode"]))
        if back is not None:
            y = _op("cast", (y,), dtype=back)
        return _unbatch(y, unb)


class MaxPool3DWithArgmax(Primitive):
    """MaxPool3DWithArgmax(ksize, strides, pads, dilation=(1, 1, 1), ceil_mode=False,
    data_format='NCDHW', argmax_type=int64)(x) -> (output, argmax)."""

    def __init__(self, ksize, strides, pads, dilation=(1, 1, 1), ceil_mode=False,
                 data_format="NCDHW", argmax_type=_dt.int64):
        who = "MaxPool3DWithArgmax"
        if argmax_type not in (_dt.int32, _dt.int64):
            raise TypeError("For '%s', 'argmax_type' must be int32 or int64, got %r"
                            % (who, argmax_type))
        super().__init__(ksize=_triple(ksize, "ksize", who, allow5=True),
                         strides=_triple(strides, "strides", who, allow5=True),
                         pads=_triple(pads, "pads", who, allow_zero=True, allow5=True),
                         dilation=_triple(dilation, "dilation", who, allow5=True),
                         ceil_mode=bool(ceil_mode), data_format=data_format, argmax_type=argmax_type)

    def __call__(self, x):
        a = self.attrs
        t, back = _floating_in(_t(x))
        if t.ndim != 5:
            raise ValueError("For 'MaxPool3DWithArgmax', the input must be 5-D, got shape %r"
                             % (tuple(t.shape),))
        y, idx = _max_pool("MaxPool3DWithArgmax", t, a["ksize"], a["strides"], _pads6(a["pads"], ""),
                           a["dilation"], a["ceil_mode"])
        if back is not None:
            y = _op("cast", (y,), dtype=back)
        if a["argmax_type"] != _dt.int64:
            idx = _op("cast", (idx,), dtype=a["argmax_type"])
        return y, idx


class AvgPool3D(Primitive):
    """AvgPool3D(kernel_size=1, strides=1, pad_mode='valid', pad=0, ceil_mode=False,
    count_include_pad=True, divisor_override=0, data_format='NCDHW')(x)."""

    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", pad=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=0, data_format="NCDHW"):
        who = "AvgPool3D"
        mode = _pad_mode(pad_mode, who)
        pads = _pads6(pad, who, "pad")
        if mode != "pad" and _b.any(pads):
            raise ValueError("For '%s', 'pad' must be 0 unless 'pad_mode' is 'pad', got %r"
                             % (who, pad))
        if not _int(divisor_override) or divisor_override < 0:
            raise ValueError("For '%s', 'divisor_override' must be a non-negative int, got %r"
                             % (who, divisor_override))
        super().__init__(kernel_size=_triple(kernel_size, "kernel_size", who, allow5=True),
                         strides=_triple(strides, "strides", who, allow5=True), pad_mode=mode,
                         pad=pads, ceil_mode=bool(ceil_mode),
                         count_include_pad=bool(count_include_pad),
                         divisor_override=divisor_override, data_format=data_format)

    def __call__(self, x):
        a = self.attrs
        t, unb = _batched(x, "AvgPool3D")
        padding = a["pad"] if a["pad_mode"] == "pad" else a["pad_mode"]
        y = _op("avg_pool3d", (t,), kernel_size=a["kernel_size"], stride=a["strides"],
                padding=padding, ceil_mode=a["ceil_mode"], count_include_pad=a["count_include_pad"],
                divisor_override=a["divisor_override"] or None)
        return _unbatch(y, unb)


class AdaptiveAvgPool3D(Primitive):
    """AdaptiveAvgPool3D(output_size)(x); None in output_size keeps that dim."""

    def __init__(self, output_size):
        super().__init__(output_size=output_size)

    def __call__(self, x):
        return adaptive_avg_pool3d(x, self.attrs["output_size"])


class AdaptiveMaxPool3D(Primitive):
    """AdaptiveMaxPool3D()(x, output_size) -> (y, argmax int32); output_size 3 ints (a tuple or a
    1-D Tensor)."""

    def __call__(self, x, output_size):
        if hasattr(output_size, "asnumpy"):
            output_size = tuple(int(v) for v in output_size.asnumpy().reshape(-1))
        return _adaptive_max("AdaptiveMaxPool3D", x, output_size, _dt.int32)


class MaxUnpool2D(Primitive):
    """MaxUnpool2D(ksize, strides=0, pads=0, output_shape=(), data_format='NCHW')(x, argmax):
    strides 0 is ksize."""

    def __init__(self, ksize, strides=0, pads=0, output_shape=(), data_format="NCHW"):
        if data_format != "NCHW":
            raise ValueError("For 'MaxUnpool2D', only data_format 'NCHW' is supported, got %r"
                             % (data_format,))
        super().__init__(ksize=ksize, strides=strides, pads=pads, output_shape=tuple(output_shape),
                         data_format=data_format)

    def __call__(self, x, argmax):
        from pijit.ops.primitives3 import max_unpool2d
        a = self.attrs
        strides = a["strides"]
        stride = None if strides == 0 or strides == (0, 0) else strides
        return max_unpool2d(x, argmax, a["ksize"], stride, a["pads"],
                            a["output_shape"] or None)


# ---- upsampling ----------------------------------------------------------------------------------

def _resize_args(who, x, output_size, scales):
    x = _t(x)
    if x.ndim != 5:
        raise ValueError("For '%s', the input must be 5-D, got shape %r" % (who, tuple(x.shape)))
    if (output_size is None) == (scales is None):
        raise ValueError("For '%s', exactly one of 'output_size' and 'scales' must be given" % who)
    ins = tuple(x.shape[2:])
    if output_size is not None:
        size = tuple(output_size)
        if len(size) != 3 or not _b.all(_int(v) and v > 0 for v in size):
            raise ValueError("For '%s', 'output_size' must be 3 positive ints, got %r"
                             % (who, output_size))
        ratios = tuple(n / o for n, o in zip(ins, size))
    else:
        sc = tuple(scales)
        if len(sc) != 3 or not _b.all(isinstance(v, (int, float)) and v > 0 for v in sc):
            raise ValueError("For '%s', 'scales' must be 3 positive floats, got %r" % (who, scales))
        size = tuple(int(_math.floor(n * s)) for n, s in zip(ins, sc))
        ratios = tuple(1.0 / s for s in sc)
    return x, ins, size, ratios


def _take(x, axis, index):
    from pijit.tensor import Tensor
    return _op("index_select", (x, Tensor(list(index), _dt.int64)), axis=axis)


def upsample_nearest3d(x, output_size=None, scales=None):
    """Nearest neighbour: output o of a dim reads input min(floor(o * in / out), in - 1) (with
    scales, floor(o / scale)), as PyTorch's 'nearest'."""
    x, ins, size, ratios = _resize_args("UpsampleNearest3D", x, output_size, scales)
    for d in range(3):
        n, o, r = ins[d], size[d], ratios[d]
        if n == o and r == 1.0:
            continue
        x = _take(x, 2 + d, [_b.min(int(_math.floor(i * r)), n - 1) for i in range(o)])
    return x


def upsample_trilinear3d(x, output_size=None, scales=None, align_corners=False):
    """Trilinear: separable linear interpolation along D, H and W. align_corners maps the corner
    samples onto each other (src = o * (in - 1) / (out - 1)); otherwise half-pixel centres
    (src = (o + 0.5) * in / out - 0.5, clamped at 0), as PyTorch's 'trilinear'."""
    from pijit.tensor import Tensor
    x, ins, size, ratios = _resize_args("UpsampleTrilinear3D", x, output_size, scales)
    for d in range(3):
        n, o = ins[d], size[d]
        lo, hi, wt = [], [], []
        for i in range(o):
            if align_corners:
                src = i * (n - 1) / (o - 1) if o > 1 else 0.0
            else:
                src = _b.max((i + 0.5) * ratios[d] - 0.5, 0.0)
            i0 = _b.min(int(_math.floor(src)), n - 1)
            lo.append(i0)
            hi.append(_b.min(i0 + 1, n - 1))
            wt.append(src - i0)
        shape = [1, 1, 1, 1, 1]
        shape[2 + d] = o
        lam = _op("reshape", (Tensor(wt, x.dtype),), shape=tuple(shape))
        a, b = _take(x, 2 + d, lo), _take(x, 2 + d, hi)
        x = a + (b - a) * lam
    return x


class UpsampleNearest3D(Primitive):
    """UpsampleNearest3D()(x, output_size=None, scales=None): exactly one of the two."""

    def __call__(self, x, output_size=None, scales=None):
        return upsample_nearest3d(x, output_size, scales)


class UpsampleTrilinear3D(Primitive):
    """UpsampleTrilinear3D(align_corners=False, half_pixel_centers=False)(x, output_size=None,
    scales=None)."""

    def __init__(self, align_corners=False, half_pixel_centers=False):
        super().__init__(align_corners=bool(align_corners),
                         half_pixel_centers=bool(half_pixel_centers))

    def __call__(self, x, output_size=None, scales=None):
        return upsample_trilinear3d(x, output_size, scales, self.attrs["align_corners"])


__all__ = ["conv3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "max_unpool1d", "max_unpool3d", "Conv3D", "Conv3DTranspose", "MaxPool3D",
           "MaxPool3DWithArgmax", "AvgPool3D", "AdaptiveAvgPool3D", "AdaptiveMaxPool3D",
           "MaxUnpool2D", "UpsampleNearest3D", "UpsampleTrilinear3D"]
