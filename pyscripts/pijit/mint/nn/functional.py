"""mindspore.mint.nn.functional: PyTorch-style neural-network functions (torch argument names
and defaults: dim, padding as an int, tuple or 'same'/'valid', stride None = kernel_size, ...),
each calling pijit's registry ops."""
import math

from pijit import _C
from pijit import dtype as _dt
from pijit._ops_common import op as _op, as_tensor as _t
from pijit.ops import nn_functional as _NF


def _pair(v, name, who):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v, v)
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in v):
        return tuple(v)
    raise TypeError("%s: %s must be an int or a tuple of 2 ints, got %r" % (who, name, v))


def _reduction(who, reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError("%s: reduction must be 'none', 'mean' or 'sum', got %r" % (who, reduction))
    return reduction


def _dim(dim):
    return -1 if dim is None else dim


# ---- activations ---------------------------------------------------------------------------------

def _maybe_inplace(input, y, inplace):
    return _inplace(input, y) if inplace else y


def relu(input, inplace=False):
    return _maybe_inplace(input, _op("relu", (_t(input),)), inplace)


def relu6(input, inplace=False):
    return _maybe_inplace(input, _op("clamp", (_t(input),), min=0.0, max=6.0), inplace)


def gelu(input, *, approximate="none"):
    """x * Phi(x); approximate 'tanh' uses the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise ValueError("gelu: approximate must be 'none' or 'tanh', got %r" % (approximate,))
    return _op("gelu" if approximate == "none" else "gelu_tanh", (_t(input),))


def silu(input, inplace=False):
    return _maybe_inplace(input, _op("silu", (_t(input),)), inplace)


def sigmoid(input):
    return _op("sigmoid", (_t(input),))


def tanh(input):
    return _op("tanh", (_t(input),))


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, and x where beta x > threshold."""
    from pijit.ops import functional as F
    return F.softplus(input, beta, threshold)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    x = _t(input)
    return _maybe_inplace(input, _op("where", (x >= 0, x, x * negative_slope)), inplace)


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    x = _t(input)
    return _maybe_inplace(input, _op("where", (x > 0, x, _op("expm1", (x,)) * alpha)), inplace)


def hardswish(input, inplace=False):
    return _NF.hardswish(input)


def hardsigmoid(input, inplace=False):
    return _NF.hardsigmoid(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _maybe_inplace(input, _op("clamp", (_t(input),), min=min_val, max=max_val), inplace)


def mish(input):
    """x tanh(softplus(x))."""
    x = _t(input)
    return x * _op("tanh", (_op("softplus", (x,)),))


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return -_op("softplus", (-_t(input),))


def softmax(input, dim=None, dtype=None):
    """exp(x) / sum(exp(x)) along dim (None: the last dim); dtype converts the input first."""
    x = _t(input)
    if dtype is not None:
        x = _op("cast", (x,), dtype=_dt.as_dtype(dtype))
    return _op("softmax", (x,), axis=_dim(dim))


def log_softmax(input, dim=None, dtype=None):
    x = _t(input)
    if dtype is not None:
        x = _op("cast", (x,), dtype=_dt.as_dtype(dtype))
    return _op("log_softmax", (x,), axis=_dim(dim))


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """x / max(||x||_p along dim, eps)."""
    x = _t(input)
    a = _op("abs", (x,))
    if p == 2:
        n = _op("sqrt", (_op("sum", (_op("square", (x,)),), axis=(dim,), keepdims=True),))
    elif p == 1:
        n = _op("sum", (a,), axis=(dim,), keepdims=True)
    else:
        s = _op("sum", (_op("pow", (a, _C.as_operand(float(p), a))),), axis=(dim,), keepdims=True)
        n = _op("pow", (s, _C.as_operand(1.0 / p, s)))
    return x / _op("clamp", (n,), min=eps, max=None)


# ---- linear, dropout, embedding ------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    return _NF.dense(input, weight, bias)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes elements with probability p and scales the rest by 1 / (1 - p) when training."""
    if not training or p == 0:
        return _t(input)
    if p == 1:
        return _op("full_like", (_t(input),), value=0)
    return _NF.dropout(input, p, training=True)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False):
    """Rows of weight picked by the indices in input. max_norm (which renormalises rows in place)
    is not supported."""
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm is not supported in pijit")
    w = _t(weight)
    if padding_idx is not None:
        padding_idx %= w.shape[0]
    return _NF.embedding(input, w, padding_idx)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot rows of length num_classes (-1: max(tensor) + 1, read from the data, a graph
    break under jit)."""
    x = _t(tensor)
    if num_classes == -1:
        num_classes = int(_op("max", (x,), axis=None, keepdims=False).item()) + 1
    return _op("one_hot", (x,), depth=num_classes, on_value=1.0, off_value=0.0, axis=-1).astype(
        _dt.int64)


# ---- convolution, pooling, resizing --------------------------------------------------------------

def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch's conv2d: padding an int, a pair, 'valid' or 'same' (stride 1)."""
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError("conv2d: padding must be 'same', 'valid', an int or a tuple, got %r"
                             % (padding,))
        if padding == "same" and _pair(stride, "stride", "conv2d") != (1, 1):
            raise ValueError("conv2d: padding='same' is not supported for strided convolutions")
        return _NF.conv2d(input, weight, bias, stride, padding, 0, dilation, groups)
    p = _pair(padding, "padding", "conv2d")
    return _NF.conv2d(input, weight, bias, stride, "pad", (p[0], p[0], p[1], p[1]), dilation, groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _NF.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                dilation)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, *, ceil_mode=False,
               return_indices=False):
    """stride None is kernel_size; return_indices gives int64 flat positions h*W + w in each
    input plane (the 3-D max pool over planes of depth 1)."""
    if not return_indices:
        return _NF.max_pool2d(input, kernel_size, stride, padding, dilation, False, ceil_mode)
    k = _pair(kernel_size, "kernel_size", "max_pool2d")
    s = k if stride is None else _pair(stride, "stride", "max_pool2d")
    p = _pair(padding, "padding", "max_pool2d")
    d = _pair(dilation, "dilation", "max_pool2d")
    return _pool_nd("max_pool2d", input, 2, lambda x: _op(
        "max_pool3d", (x,), kernel_size=(1,) + k, stride=(1,) + s,
        padding=(0, 0, p[0], p[0], p[1], p[1]), dilation=(1,) + d, ceil_mode=bool(ceil_mode)))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """torch's avg_pool2d: stride None is kernel_size; padding an int or a pair."""
    k = _pair(kernel_size, "kernel_size", "avg_pool2d")
    s = k if stride is None else _pair(stride, "stride", "avg_pool2d")
    return _NF.avg_pool2d(input, k, s, _pair(padding, "padding", "avg_pool2d"), ceil_mode,
                          count_include_pad, divisor_override or 0)


def adaptive_avg_pool2d(input, output_size):
    return _NF.adaptive_avg_pool2d(input, output_size)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None):
    """Resizes (N, C, L) inputs ('nearest', 'linear'), (N, C, H, W) ('nearest', 'bilinear') and
    (N, C, D, H, W) ('nearest', 'trilinear'), with torch's coordinate rules."""
    x = _t(input)
    if x.ndim == 4:
        return _NF.interpolate(x, size, scale_factor, mode, align_corners)
    from pijit.ops import ops3d as _O3
    if x.ndim not in (3, 5):
        raise ValueError("interpolate: expected a 3-D, 4-D or 5-D input, got %d-D" % x.ndim)
    nd = x.ndim - 2
    linear = {3: "linear", 5: "trilinear"}[x.ndim]
    if mode not in ("nearest", linear):
        raise NotImplementedError("interpolate: mode %r is not supported for %d-D inputs in "
                                  "pijit (use 'nearest' or %r)" % (mode, x.ndim, linear))
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: exactly one of size and scale_factor must be given")
    if size is not None:
        size = (size,) * nd if isinstance(size, int) else tuple(size)
        if len(size) != nd:
            raise ValueError("interpolate: size must have %d entries for a %d-D input, got %r"
                             % (nd, x.ndim, size))
    else:
        scale_factor = (scale_factor,) * nd if isinstance(scale_factor, (int, float)) \
            else tuple(scale_factor)
        if recompute_scale_factor:
            size = tuple(int(math.floor(n * f)) for n, f in zip(x.shape[2:], scale_factor))
            scale_factor = None
    if x.ndim == 3:  # as (N, C, 1, 1, L)
        x = _op("reshape", (x,), shape=tuple(x.shape[:2]) + (1, 1, x.shape[2]))
        size = None if size is None else (1, 1) + size
        scale_factor = None if scale_factor is None else (1.0, 1.0) + scale_factor
    if mode == "nearest":
        y = _O3.upsample_nearest3d(x, size, scale_factor)
    else:
        y = _O3.upsample_trilinear3d(x, size, scale_factor, bool(align_corners))
    if nd == 1:
        y = _op("reshape", (y,), shape=tuple(y.shape[:2]) + (y.shape[4],))
    return y


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """torch's upsample: interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def pad(input, pad, mode="constant", value=None):
    """torch's pad: pad lists (before, after) pairs from the last dim backwards; modes 'constant',
    'reflect', 'replicate' (edge), 'circular'."""
    x = _t(input)
    pad = tuple(pad)
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ValueError("pad: padding length must be even and at most twice the input's ndim, "
                         "got %d for %d dims" % (len(pad), x.ndim))
    if mode == "constant":
        return _op("pad", (x,), pads=pad, mode="constant", value=float(value or 0.0))
    if value is not None and value != 0:
        raise ValueError("pad: value applies to mode 'constant' only")
    if mode == "reflect":
        return _op("pad", (x,), pads=pad, mode="reflect", value=0.0)
    if mode not in ("replicate", "circular"):
        raise ValueError("pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', "
                         "got %r" % (mode,))
    from pijit.tensor import Tensor
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = x.shape[d]
        if mode == "replicate":
            idx = [0] * lo + list(range(n)) + [n - 1] * hi
        else:
            idx = [j % n for j in range(-lo, n + hi)]
        x = _op("index_select", (x, Tensor(idx, _dt.int64)), axis=d)
    return x


# ---- normalisation -------------------------------------------------------------------------------

def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalises over (N, H, W) per channel; training updates the running statistics in place
    (running = (1 - momentum) running + momentum batch)."""
    x = _t(input)
    c = x.shape[1]
    w = _op("full", (), shape=(c,), value=1, dtype=x.dtype) if weight is None else weight
    b = _op("full", (), shape=(c,), value=0, dtype=x.dtype) if bias is None else bias
    return _NF.batch_norm(x, running_mean, running_var, w, b, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _NF.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _NF.group_norm(input, num_groups, weight, bias, eps)


# ---- losses --------------------------------------------------------------------------------------

def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Softmax cross entropy of (N, C) logits against class indices (or class probabilities of
    the logits' shape)."""
    return _NF.cross_entropy(input, target, weight, ignore_index,
                             _reduction("cross_entropy", reduction), label_smoothing)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    return _NF.nll_loss(input, target, weight, ignore_index, _reduction("nll_loss", reduction))


def mse_loss(input, target, reduction="mean"):
    return _NF.mse_loss(input, target, _reduction("mse_loss", reduction))


def l1_loss(input, target, reduction="mean"):
    return _NF.l1_loss(input, target, _reduction("l1_loss", reduction))


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (torch's default reduction 'mean')."""
    return _NF.smooth_l1_loss(input, target, beta, _reduction("smooth_l1_loss", reduction))


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    return _NF.binary_cross_entropy(input, target, weight,
                                    _reduction("binary_cross_entropy", reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",
                                     pos_weight=None):
    return _NF.binary_cross_entropy_with_logits(
        input, target, weight, pos_weight,
        _reduction("binary_cross_entropy_with_logits", reduction))



# ---- pooling and convolution in 1-D and 3-D (through the 3-D ops) -------------------------------

def _tuple_n(v, n, name, who):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,) * n
    if isinstance(v, (tuple, list)) and len(v) in (1, n) and all(
            isinstance(x, int) and not isinstance(x, bool) for x in v):
        return tuple(v) * (n if len(v) == 1 else 1)
    raise TypeError("%s: %s must be an int or a tuple of %d ints, got %r" % (who, name, n, v))


def _pool_nd(who, input, nd, fn):
    """fn on input viewed as 5-D (N, C, D, H, W): (N, C, *spatial) with nd spatial dims gains
    leading unit dims; an unbatched (C, *spatial) input gains N = 1. fn's outputs come back in
    input's layout."""
    x = _t(input)
    if x.ndim not in (nd + 1, nd + 2):
        raise ValueError("%s: expected a %d-D or %d-D input, got shape %r"
                         % (who, nd + 1, nd + 2, tuple(x.shape)))
    shape = tuple(x.shape)
    lead = shape[:-nd] if x.ndim == nd + 2 else (1,) + shape[:-nd]
    y = fn(_op("reshape", (x,), shape=lead + (1,) * (3 - nd) + shape[-nd:]))

    def back(t):
        out = tuple(t.shape[2:])[3 - nd:]
        return _op("reshape", (t,), shape=shape[:-nd] + out)
    return tuple(back(t) for t in y) if isinstance(y, tuple) else back(y)


def _adaptive_size(output_size, n, spatial, who):
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * n
    output_size = tuple(output_size)
    if len(output_size) != n:
        raise ValueError("%s: output_size must be an int or a tuple of %d, got %r"
                         % (who, n, output_size))
    return tuple(s if o is None else o for o, s in zip(output_size, spatial))


def adaptive_avg_pool1d(input, output_size):
    """(N, C, L) or (C, L): output cell i averages [floor(i*L/O), ceil((i+1)*L/O))."""
    o = _adaptive_size(output_size, 1, _t(input).shape[-1:], "adaptive_avg_pool1d")
    return _pool_nd("adaptive_avg_pool1d", input, 1,
                    lambda x: _op("adaptive_avg_pool3d", (x,), output_size=(1, 1) + o))


def adaptive_avg_pool3d(input, output_size):
    o = _adaptive_size(output_size, 3, _t(input).shape[-3:], "adaptive_avg_pool3d")
    return _pool_nd("adaptive_avg_pool3d", input, 3,
                    lambda x: _op("adaptive_avg_pool3d", (x,), output_size=o))


def _adaptive_max(who, input, output_size, nd, return_indices):
    o = _adaptive_size(output_size, nd, _t(input).shape[-nd:], who)
    y, idx = _pool_nd(who, input, nd, lambda x: _op(
        "adaptive_max_pool3d", (x,), output_size=(1,) * (3 - nd) + o))
    return (y, idx) if return_indices else y


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """indices (int64) are positions in L."""
    return _adaptive_max("adaptive_max_pool1d", input, output_size, 1, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """indices (int64) are flat positions h*W + w in each plane."""
    return _adaptive_max("adaptive_max_pool2d", input, output_size, 2, return_indices)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    who = "avg_pool1d"
    k = _tuple_n(kernel_size, 1, "kernel_size", who)
    s = k if stride is None else _tuple_n(stride, 1, "stride", who)
    p = _tuple_n(padding, 1, "padding", who)
    return _pool_nd(who, input, 1, lambda x: _op(
        "avg_pool3d", (x,), kernel_size=(1, 1) + k, stride=(1, 1) + s,
        padding=(0, 0, 0, 0, p[0], p[0]), ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad), divisor_override=None))


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    who = "avg_pool3d"
    k = _tuple_n(kernel_size, 3, "kernel_size", who)
    s = k if stride is None else _tuple_n(stride, 3, "stride", who)
    p = _tuple_n(padding, 3, "padding", who)
    return _pool_nd(who, input, 3, lambda x: _op(
        "avg_pool3d", (x,), kernel_size=k, stride=s, padding=p, ceil_mode=bool(ceil_mode),
        count_include_pad=bool(count_include_pad), divisor_override=divisor_override or None))


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    who = "max_pool3d"
    k = _tuple_n(kernel_size, 3, "kernel_size", who)
    s = k if stride is None else _tuple_n(stride, 3, "stride", who)
    y, idx = _pool_nd(who, input, 3, lambda x: _op(
        "max_pool3d", (x,), kernel_size=k, stride=s, padding=_tuple_n(padding, 3, "padding", who),
        dilation=_tuple_n(dilation, 3, "dilation", who), ceil_mode=bool(ceil_mode)))
    return (y, idx) if return_indices else y


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """input's values written at their flat indices h*W + w of zero planes of size
    (H-1)*stride - 2*padding + kernel_size (or output_size's last two)."""
    from pijit.ops.primitives3 import max_unpool2d as _unpool
    return _unpool(input, indices, kernel_size, stride, padding, output_size)


def _str_padding(who, padding, stride, nd):
    if padding not in ("same", "valid"):
        raise ValueError("%s: padding must be 'same', 'valid', an int or a tuple, got %r"
                         % (who, padding))
    if padding == "same" and _tuple_n(stride, nd, "stride", who) != (1,) * nd:
        raise ValueError("%s: padding='same' is not supported for strided convolutions" % who)
    return padding


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch's conv1d over (N, C, L) (or (C, L)): conv2d over (N, C, 1, L)."""
    who = "conv1d"
    x, w = _t(input), _t(weight)
    if w.ndim != 3:
        raise ValueError("%s: expected a 3-D weight (out_channels, in_channels/groups, kL), got "
                         "shape %r" % (who, tuple(w.shape)))
    unb = x.ndim == 2
    if x.ndim not in (2, 3):
        raise ValueError("%s: expected a 2-D or 3-D input, got shape %r" % (who, tuple(x.shape)))
    if unb:
        x = _op("expand_dims", (x,), axis=0)
    x4 = _op("expand_dims", (x,), axis=2)
    w4 = _op("expand_dims", (w,), axis=2)
    s = (1,) + _tuple_n(stride, 1, "stride", who)
    d = (1,) + _tuple_n(dilation, 1, "dilation", who)
    if isinstance(padding, str):
        _str_padding(who, padding, stride, 1)
        y = _NF.conv2d(x4, w4, bias, s, padding, 0, d, groups)
    else:
        p = _tuple_n(padding, 1, "padding", who)[0]
        y = _NF.conv2d(x4, w4, bias, s, "pad", (0, 0, p, p), d, groups)
    y = _op("squeeze", (y,), axis=(2,))
    return _op("squeeze", (y,), axis=(0,)) if unb else y


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """torch's conv3d over (N, C, D, H, W) (or unbatched): padding an int, 3 ints, 'valid' or
    'same' (stride 1)."""
    who = "conv3d"
    x, w = _t(input), _t(weight)
    unb = x.ndim == 4
    if unb:
        x = _op("expand_dims", (x,), axis=0)
    if isinstance(padding, str):
        pads = _str_padding(who, padding, stride, 3)
    else:
        pads = _tuple_n(padding, 3, "padding", who)
    inputs = (x, w) if bias is None else (x, w, _t(bias))
    y = _op("conv3d", inputs, stride=_tuple_n(stride, 3, "stride", who), padding=pads,
            dilation=_tuple_n(dilation, 3, "dilation", who), groups=groups)
    return _op("squeeze", (y,), axis=(0,)) if unb else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch's fold: (N, C*kH*kW, L) blocks summed into (N, C, *output_size)."""
    from pijit.ops import primitives3 as _P3
    return _P3.fold(input, _pair(output_size, "output_size", "fold"), kernel_size, dilation,
                    padding, stride)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch's unfold: (N, C, H, W) -> (N, C*kH*kW, L) sliding blocks."""
    from pijit.ops import primitives3 as _P3
    return _P3.unfold(input, kernel_size, dilation, padding, stride)


def pixel_shuffle(input, upscale_factor):
    from pijit.ops import functional2 as _F2
    return _F2.pixel_shuffle(input, upscale_factor)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
    """torch's grid_sample on 4-D inputs: output (N, C, Ho, Wo) samples input (N, C, H, W) at
    grid (N, Ho, Wo, 2) = normalised (x, y) in [-1, 1]; mode 'bilinear' or 'nearest' (half to
    even); padding_mode 'zeros', 'border' or 'reflection'. Differentiable in input and grid
    (bilinear)."""
    try:  # the registry kernel (pijit.ops.detection) where it exists: 5-D inputs too
        from pijit.ops.detection import grid_sample as _kernel
    except ImportError:
        _kernel = None
    if _kernel is not None:
        return _kernel(input, grid, mode, padding_mode, align_corners)
    from pijit.ops.primitives2 import gather_elements as _gather_elements
    who = "grid_sample"
    x, g = _t(input), _t(grid)
    if x.ndim != 4 or g.ndim != 4 or g.shape[-1] != 2 or g.shape[0] != x.shape[0]:
        raise NotImplementedError(
            "%s: pijit samples 4-D inputs (N, C, H, W) with grids (N, Ho, Wo, 2), got shapes %r "
            "and %r" % (who, tuple(x.shape), tuple(g.shape)))
    if mode not in ("bilinear", "nearest"):
        raise ValueError("%s: mode must be 'bilinear' or 'nearest' (pijit), got %r" % (who, mode))
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("%s: padding_mode must be 'zeros', 'border' or 'reflection', got %r"
                         % (who, padding_mode))
    N, C, H, W = x.shape
    Ho, Wo = g.shape[1], g.shape[2]
    g = g.astype(x.dtype) if g.dtype != x.dtype else g

    def coord(v, size):
        if align_corners:
            v = (v + 1) * ((size - 1) / 2.0)
        else:
            v = ((v + 1) * size - 1) / 2.0
        if padding_mode == "border":
            v = _op("clamp", (v,), min=0.0, max=float(size - 1))
        elif padding_mode == "reflection":
            lo, hi = (0.0, 2.0 * (size - 1)) if align_corners else (-1.0, 2.0 * size - 1)
            if hi > lo:
                mn, span = lo / 2.0, (hi - lo) / 2.0
                a = _op("abs", (v - mn,))
                flips = _op("floor", (a / span,))
                extra = a - flips * span
                even = _op("eq", (flips - _op("floor", (flips / 2.0,)) * 2.0,
                                  _C.as_operand(0.0, flips)))
                v = _op("where", (even, extra + mn, (span - extra) + mn))
            else:
                v = v * 0.0
            v = _op("clamp", (v,), min=0.0, max=float(size - 1))
        return v

    ix = coord(_op("reshape", (g[..., 0],), shape=(N, 1, Ho * Wo)), W)
    iy = coord(_op("reshape", (g[..., 1],), shape=(N, 1, Ho * Wo)), H)
    flat = _op("reshape", (x,), shape=(N, C, H * W))

    def tap(cx, cy):
        """input at integer (cx, cy) (float tensors), zero outside."""
        inside = _op("logical_and", (_op("logical_and", (cx >= 0, cx <= W - 1)),
                                     _op("logical_and", (cy >= 0, cy <= H - 1))))
        cxc = _op("clamp", (cx,), min=0.0, max=float(W - 1))
        cyc = _op("clamp", (cy,), min=0.0, max=float(H - 1))
        idx = _op("cast", (cyc * float(W) + cxc,), dtype=_dt.int64)
        idx = _op("broadcast_to", (idx,), shape=(N, C, Ho * Wo))
        v = _gather_elements(flat, 2, idx)
        return _op("where", (inside, v, _C.as_operand(0.0, v)))

    if mode == "nearest":
        out = tap(_op("round", (ix,)), _op("round", (iy,)))
    else:
        x0, y0 = _op("floor", (ix,)), _op("floor", (iy,))
        wx1, wy1 = ix - x0, iy - y0
        wx0, wy0 = 1.0 - wx1, 1.0 - wy1
        x1, y1 = x0 + 1.0, y0 + 1.0
        out = (tap(x0, y0) * (wx0 * wy0) + tap(x1, y0) * (wx1 * wy0) +
               tap(x0, y1) * (wx0 * wy1) + tap(x1, y1) * (wx1 * wy1))
    return _op("reshape", (out,), shape=(N, C, Ho, Wo))


# ---- activations and their in-place forms ---------------------------------------------------------

def _inplace(input, value):
    """Writes value into input (every name of it sees the change) and returns input."""
    input[...] = value
    return input


# Each in-place form's __pijit_inplace__ says what it writes: capture traces that and makes the
# write (capture/sim_effects.cc), where a plain `input[...] = value` would break the graph.
def relu_(input):
    return _inplace(input, relu(input))


def sigmoid_(input):
    return _inplace(input, sigmoid(input))


def elu_(input, alpha=1.0):
    return _inplace(input, elu(input, alpha))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _inplace(input, hardtanh(input, min_val, max_val))


relu_.__pijit_inplace__ = lambda input: relu(input)
sigmoid_.__pijit_inplace__ = lambda input: sigmoid(input)
elu_.__pijit_inplace__ = lambda input, alpha=1.0: elu(input, alpha)
hardtanh_.__pijit_inplace__ = lambda input, min_val=-1.0, max_val=1.0: hardtanh(input, min_val,
                                                                                max_val)


def _threshold(input, thr, value):
    x = _t(input)
    return _op("where", (x > thr, x, _C.as_operand(value, x)))


def threshold(input, threshold, value, inplace=False):
    """input where input > threshold, else value."""
    y = _threshold(input, threshold, value)
    return _inplace(input, y) if inplace else y


def threshold_(input, threshold, value):
    return _inplace(input, _threshold(input, threshold, value))


threshold_.__pijit_inplace__ = _threshold


def glu(input, dim=-1):
    """a * sigmoid(b) for the halves a, b of input along dim."""
    from pijit.ops import functional2 as _F2
    return _F2.glu(input, dim)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), weight (1,) or one per channel (dim 1)."""
    x, w = _t(input), _t(weight)
    if w.ndim != 1 or w.shape[0] not in (1, x.shape[1] if x.ndim > 1 else 1):
        raise ValueError("prelu: weight must be 1-D with 1 or C (%s) elements, got shape %r"
                         % (x.shape[1] if x.ndim > 1 else 1, tuple(w.shape)))
    if x.ndim > 1 and w.shape[0] > 1:
        w = _op("reshape", (w,), shape=(1, w.shape[0]) + (1,) * (x.ndim - 2))
    return _op("where", (x >= 0, x, x * w))


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    x = _t(input)
    return _op("where", (_op("abs", (x,)) > lambd, x, _C.as_operand(0.0, x)))


def selu(input, inplace=False):
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    x = _t(input)
    y = _op("where", (x > 0, x, _op("expm1", (x,)) * alpha)) * scale
    return _inplace(input, y) if inplace else y


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels (N, C, H, W) with probability p when training; the rest scaled by
    1 / (1 - p)."""
    if not 0 <= p <= 1:
        raise ValueError("dropout2d: p must be in [0, 1], got %r" % (p,))
    if not training or p == 0:
        return _t(input)
    from pijit.ops import functional2 as _F2
    y = _F2.dropout2d(input, p, True)
    return _inplace(input, y) if inplace else y


def flatten(input, start_dim=0, end_dim=-1):
    """mint.flatten: dims start_dim..end_dim merged into one."""
    from pijit.ops import functional as _OF
    return _OF.flatten(input, start_dim=start_dim, end_dim=end_dim)


# ---- losses ----------------------------------------------------------------------------------------

def _reduce(loss, reduction):
    if reduction == "mean":
        return _op("mean", (loss,), axis=None, keepdims=False)
    if reduction == "sum":
        return _op("sum", (loss,), axis=None, keepdims=False)
    return loss


def kl_div(input, target, reduction="mean", log_target=False):
    """torch's kl_div: input log-probabilities; pointwise target * (log target - input) (0 where
    target is 0), or exp(target) * (target - input) with log_target; reduction 'none', 'mean'
    (over every element), 'sum' or 'batchmean' (sum / batch size)."""
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError("kl_div: reduction must be 'none', 'mean', 'sum' or 'batchmean', got %r"
                         % (reduction,))
    x, t = _t(input), _t(target)
    if log_target:
        loss = _op("exp", (t,)) * (t - x)
    else:
        safe = _op("where", (t > 0, t, _C.as_operand(1.0, t)))
        loss = _op("where", (t > 0, t * (_op("log", (safe,)) - x), _C.as_operand(0.0, t)))
    if reduction == "batchmean":
        n = x.shape[0] if x.ndim else 1
        return _op("sum", (loss,), axis=None, keepdims=False) / float(n)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, reduction="mean"):
    """log(1 + exp(-target * input)), reduced."""
    x, t = _t(input), _t(target)
    return _reduce(_op("softplus", (-(t * x),)), _reduction("soft_margin_loss", reduction))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1; cos
    along the last dim with an eps of 1e-12 on the squared norms (torch's)."""
    a, b, t = _t(input1), _t(input2), _t(target)
    dim = a.ndim - 1
    dot = _op("sum", (a * b,), axis=(dim,), keepdims=False)
    na = _op("sum", (a * a,), axis=(dim,), keepdims=False) + 1e-12
    nb = _op("sum", (b * b,), axis=(dim,), keepdims=False) + 1e-12
    cos = dot / _op("sqrt", (na * nb,))
    zero = _C.as_operand(0.0, cos)
    pos = 1.0 - cos
    neg = _op("maximum", (cos - margin, zero))
    loss = _op("where", (t == 1, pos, _op("where", (t == -1, neg, zero))))
    return _reduce(loss, _reduction("cosine_embedding_loss", reduction))

__all__ = ["relu", "relu6", "gelu", "silu", "sigmoid", "tanh", "softplus", "leaky_relu", "elu",
           "hardswish", "hardsigmoid", "hardtanh", "mish", "logsigmoid", "softmax", "log_softmax",
           "normalize", "linear", "dropout", "embedding", "one_hot", "conv2d", "conv_transpose2d",
           "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "interpolate", "pad", "batch_norm",
           "layer_norm", "group_norm", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
           "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "upsample", "adaptive_avg_pool1d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "avg_pool1d", "avg_pool3d", "max_pool3d", "max_unpool2d",
           "conv1d", "conv3d", "fold", "unfold", "pixel_shuffle", "grid_sample", "relu_",
           "sigmoid_", "elu_", "hardtanh_", "threshold", "threshold_", "glu", "prelu",
           "hardshrink", "selu", "dropout2d", "flatten", "kl_div", "soft_margin_loss",
           "cosine_embedding_loss"]
