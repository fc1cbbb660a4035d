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

def relu(input, inplace=False):
    return _op("relu", (_t(input),))


def relu6(input, inplace=False):
    return _op("clamp", (_t(input),), min=0.0, max=6.0)


def gelu(input, *, approximate="none"):
    """x * Phi(x); approximate 'tanh' uses the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise ValueError("gelu: approximate must be 'none' or 'tanh', got %r" % (approximate,))
    return _op("gelu" if approximate == "none" else "gelu_tanh", (_t(input),))


def silu(input, inplace=False):
    return _op("silu", (_t(input),))


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
    return _op("where", (x >= 0, x, x * negative_slope))


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha (exp(x) - 1) otherwise."""
    x = _t(input)
    return _op("where", (x > 0, x, _op("expm1", (x,)) * alpha))


def hardswish(input, inplace=False):
    return _NF.hardswish(input)


def hardsigmoid(input, inplace=False):
    return _NF.hardsigmoid(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _op("clamp", (_t(input),), min=min_val, max=max_val)


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
    """stride None is kernel_size."""
    return _NF.max_pool2d(input, kernel_size, stride, padding, dilation, return_indices, ceil_mode)


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
    """Resizes (N, C, H, W) inputs, 'nearest' or 'bilinear'."""
    return _NF.interpolate(input, size, scale_factor, mode, align_corners)


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


__all__ = ["relu", "relu6", "gelu", "silu", "sigmoid", "tanh", "softplus", "leaky_relu", "elu",
           "hardswish", "hardsigmoid", "hardtanh", "mish", "logsigmoid", "softmax", "log_softmax",
           "normalize", "linear", "dropout", "embedding", "one_hot", "conv2d", "conv_transpose2d",
           "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "interpolate", "pad", "batch_norm",
           "layer_norm", "group_norm", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
           "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits"]
