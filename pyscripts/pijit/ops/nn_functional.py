"""Neural-network functional ops with MindSpore's names and signatures (ops.conv2d, ops.dense,
ops.max_pool2d, ops.batch_norm, ops.cross_entropy, ...). Argument normalisation (pad modes,
int-or-tuple sizes) happens here; each function then calls one registry op."""
import math

from pijit import _C
from pijit._ops_common import op as _op, as_tensor as _t


def _pair(v, name):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v, v)
    if isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, int) for x in v):
        return tuple(v)
    raise TypeError("%s must be an int or a tuple of 2 ints, got %r" % (name, v))


def _check_positive(v, name):
    if any(x <= 0 for x in v):
        raise ValueError("%s must be positive, got %s" % (name, v))


def same_pads(in_hw, kernel, stride, dilation):
    """'same' padding (TensorFlow/MindSpore): output = ceil(in / stride); the odd pixel goes to
    the bottom/right. Returns (top, bottom, left, right)."""
    pads = []
    for i, k, s, d in zip(in_hw, kernel, stride, dilation):
        out = (i + s - 1) // s
        total = max((out - 1) * s + (k - 1) * d + 1 - i, 0)
        pads += [total // 2, total - total // 2]
    return tuple(pads)


def conv_pads(pad_mode, padding, in_hw, kernel, stride, dilation, who):
    if pad_mode not in ("same", "valid", "pad"):
        raise ValueError("%s: pad_mode must be 'same', 'valid' or 'pad', got %r" % (who, pad_mode))
    if isinstance(padding, int):
        padding = (padding,) * 4
    elif isinstance(padding, (tuple, list)) and len(padding) == 2:
        padding = (padding[0], padding[0], padding[1], padding[1])
    elif not (isinstance(padding, (tuple, list)) and len(padding) == 4):
        raise TypeError("%s: padding must be an int or a tuple of 2 or 4 ints, got %r" % (who, padding))
    if any(p < 0 for p in padding):
        raise ValueError("%s: padding must be non-negative, got %s" % (who, tuple(padding)))
    if pad_mode != "pad" and any(padding):
        raise ValueError("%s: padding must be 0 when pad_mode is %r (use pad_mode='pad')"
                         % (who, pad_mode))
    if pad_mode == "same":
        return same_pads(in_hw, kernel, stride, dilation)
    return tuple(padding)


def conv2d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    x, w = _t(input), _t(weight)
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    _check_positive(stride, "conv2d: stride")
    _check_positive(dilation, "conv2d: dilation")
    if x.ndim != 4 or w.ndim != 4:
        raise ValueError("conv2d: input and weight must be 4-D (NCHW and (C_out, C_in/groups, kH, "
                         "kW)), got shapes %s and %s" % (x.shape, w.shape))
    # (only 'same' needs the input's height and width; _dims reads just those, so a dynamic batch
    # size stays dynamic)
    in_hw = x._dims(2) if pad_mode == "same" else None
    pads = conv_pads(pad_mode, padding, in_hw, w.shape[2:], stride, dilation, "conv2d")
    inputs = (x, w) if bias is None else (x, w, _t(bias))
    return _op("conv2d", inputs, stride=stride, padding=pads, dilation=dilation, groups=groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    x, w = _t(input), _t(weight)
    p = _pair(padding, "padding")
    inputs = (x, w) if bias is None else (x, w, _t(bias))
    return _op("conv_transpose2d", inputs, stride=_pair(stride, "stride"),
               padding=(p[0], p[0], p[1], p[1]), output_padding=_pair(output_padding, "output_padding"),
               dilation=_pair(dilation, "dilation"), groups=groups)


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
               ceil_mode=False):
    """MindSpore's ops.max_pool2d: stride None is kernel_size; padding an int or (pH, pW), at most
    half the effective kernel. return_indices=True returns (output, argmax): argmax the int64
    flat position h * W + w of each maximum in its input plane (mint's max_pool2d, through the
    3-D max pool over planes of depth 1)."""
    if return_indices:
        from pijit.mint.nn import functional as _mint_f
        return _mint_f.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode=bool(ceil_mode),
                                  return_indices=True)
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None else _pair(stride, "stride")
    return _op("max_pool2d", (_t(x),), kernel_size=k, stride=s, padding=_pair(padding, "padding"),
               ceil_mode=bool(ceil_mode), dilation=_pair(dilation, "dilation"))


def _avg_pool_padding(padding):
    """avg_pool2d's padding: an int, (top, bottom, left, right) as MindSpore takes it, or pijit's
    earlier (pH, pW). The kernel pads symmetrically, so top must equal bottom and left right."""
    if isinstance(padding, (tuple, list)) and len(padding) == 4:
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in padding):
            raise TypeError("avg_pool2d: padding must be an int or a tuple of 4 ints (top, bottom, "
                            "left, right), got %r" % (padding,))
        top, bottom, left, right = padding
        if top != bottom or left != right:
            raise NotImplementedError("avg_pool2d: padding %r pads unevenly; pijit's pooling pads "
                                      "top = bottom and left = right only (pad with ops.pad first)"
                                      % (tuple(padding),))
        return (top, left)
    if isinstance(padding, (tuple, list)) and len(padding) != 2:
        raise TypeError("avg_pool2d: padding must be an int or a tuple of 4 ints (top, bottom, "
                        "left, right), got %r" % (padding,))
    return _pair(padding, "padding")


def avg_pool2d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=0):
    """MindSpore's ops.avg_pool2d (stride defaults to 1, not to kernel_size). divisor_override
    0 (or None) divides by the number of elements counted."""
    if divisor_override is None:
        divisor_override = 0
    if isinstance(divisor_override, bool) or not isinstance(divisor_override, int):
        raise TypeError("avg_pool2d: divisor_override must be an int (0: not set), got %r"
                        % (divisor_override,))
    if divisor_override < 0:
        raise ValueError("avg_pool2d: divisor_override must be positive (or 0: not set), got %d"
                         % divisor_override)
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None else _pair(stride, "stride")
    return _op("avg_pool2d", (_t(input_x),), kernel_size=k, stride=s,
               padding=_avg_pool_padding(padding), ceil_mode=bool(ceil_mode),
               count_include_pad=bool(count_include_pad),
               divisor_override=divisor_override or None)


def adaptive_avg_pool2d(input, output_size):
    x = _t(input)
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    output_size = tuple(x.shape[-2 + i] if v is None else v for i, v in enumerate(output_size))
    return _op("adaptive_avg_pool2d", (x,), output_size=output_size)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    x = _t(input)
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    scales = {}
    if size is None:
        if isinstance(scale_factor, (tuple, list)):
            sf = tuple(float(v) for v in scale_factor)
        else:
            sf = (float(scale_factor), float(scale_factor))
        if len(sf) != 2 or min(sf) <= 0:
            raise ValueError("interpolate: scale_factor must be positive (one or two values), got %r"
                             % (scale_factor,))
        size = (int(math.floor(x.shape[2] * sf[0])), int(math.floor(x.shape[3] * sf[1])))
        scales = {"scale_h": sf[0], "scale_w": sf[1]}  # PyTorch maps coordinates with 1/scale
    if mode not in ("nearest", "bilinear"):
        raise ValueError("interpolate: mode must be 'nearest' or 'bilinear', got %r" % (mode,))
    if mode == "nearest" and align_corners:
        raise ValueError("interpolate: align_corners only applies to mode='bilinear'")
    return _op("interpolate", (x,), size=_pair(size, "size"), mode=mode,
               align_corners=bool(align_corners), **scales)


def pad(input_x, padding, mode="constant", value=0.0):
    return _op("pad", (_t(input_x),), pads=tuple(padding), mode=mode, value=float(value or 0.0))


def dense(input, weight, bias=None):
    inputs = (_t(input), _t(weight)) if bias is None else (_t(input), _t(weight), _t(bias))
    return _op("dense", inputs)


linear = dense


def embedding(input, weight, padding_idx=None):
    return _op("embedding", (_t(weight), _t(input)), padding_idx=padding_idx)


def dropout(input, p=0.5, training=True, seed=None):
    if not 0 <= p < 1:
        raise ValueError("dropout: p must be in [0, 1), got %r" % (p,))
    out = _op("dropout", (_t(input),), p=float(p), training=bool(training), seed=seed)
    return out[0] if isinstance(out, tuple) else out


def batch_norm(input_x, running_mean, running_var, weight, bias, training=False, momentum=0.1,
               eps=1e-5):
    """MindSpore's ops.batch_norm: `momentum` weighs the *new* batch statistic
    (running = (1 - momentum) * running + momentum * batch)."""
    out = _op("batch_norm", (_t(input_x), _t(weight), _t(bias), running_mean, running_var),
              training=bool(training), momentum=1.0 - float(momentum), eps=float(eps))
    return out[0] if isinstance(out, tuple) else out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, *, gamma=None,
               beta=None):
    """MindSpore's ops.layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    normalises over the trailing `normalized_shape` dims; weight/bias default to ones/zeros.
    gamma= and beta= are accepted as pijit's earlier names for weight and bias."""
    for name, new, old_name, old in (("weight", weight, "gamma", gamma),
                                     ("bias", bias, "beta", beta)):
        if old is not None and new is not None:
            raise TypeError("layer_norm() got both '%s' and '%s', two names for the same argument"
                            % (name, old_name))
    weight = gamma if weight is None else weight
    bias = beta if bias is None else bias
    x = _t(input)
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    import pijit as pj
    weight = pj.ones(normalized_shape, dtype=x.dtype) if weight is None else _t(weight)
    bias = pj.zeros(normalized_shape, dtype=x.dtype) if bias is None else _t(bias)
    out = _op("layer_norm", (x, weight, bias), begin_norm_axis=x.ndim - len(normalized_shape),
              eps=float(eps))
    return out[0] if isinstance(out, tuple) else out


def group_norm(input_x, num_groups, weight=None, bias=None, eps=1e-5):
    x = _t(input_x)
    import pijit as pj
    c = x._dims(1, 2)[0]  # the channels only: a dynamic batch size stays dynamic
    weight = pj.ones(c, dtype=x.dtype) if weight is None else _t(weight)
    bias = pj.zeros(c, dtype=x.dtype) if bias is None else _t(bias)
    out = _op("group_norm", (x, weight, bias), num_groups=num_groups, eps=float(eps))
    return out[0] if isinstance(out, tuple) else out


def _reduction(reduction, who):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError("%s: reduction must be 'none', 'mean' or 'sum', got %r" % (who, reduction))
    return reduction


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    inputs = (_t(input), _t(target)) + (() if weight is None else (_t(weight),))
    return _op("cross_entropy", inputs, ignore_index=ignore_index,
               reduction=_reduction(reduction, "cross_entropy"), label_smoothing=float(label_smoothing))


def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean"):
    ins = (_t(inputs), _t(target)) + (() if weight is None else (_t(weight),))
    return _op("nll_loss", ins, ignore_index=ignore_index, reduction=_reduction(reduction, "nll_loss"))


def mse_loss(input, target, reduction="mean"):
    return _op("mse_loss", (_t(input), _t(target)), reduction=_reduction(reduction, "mse_loss"))


def l1_loss(input, target, reduction="mean"):
    return _op("l1_loss", (_t(input), _t(target)), reduction=_reduction(reduction, "l1_loss"))


def smooth_l1_loss(input, target, beta=1.0, reduction="none"):
    return _op("smooth_l1_loss", (_t(input), _t(target)), beta=float(beta),
               reduction=_reduction(reduction, "smooth_l1_loss"))


def binary_cross_entropy(logits, labels, weight=None, reduction="mean"):
    ins = (_t(logits), _t(labels)) + (() if weight is None else (_t(weight),))
    return _op("binary_cross_entropy", ins, reduction=_reduction(reduction, "binary_cross_entropy"))


def binary_cross_entropy_with_logits(logits, label, weight=None, pos_weight=None, reduction="mean"):
    ins = (_t(logits), _t(label)) + (() if weight is None else (_t(weight),)) + \
        (() if pos_weight is None else (_t(pos_weight),))
    return _op("binary_cross_entropy_with_logits", ins, has_weight=weight is not None,
               has_pos_weight=pos_weight is not None,
               reduction=_reduction(reduction, "binary_cross_entropy_with_logits"))


def relu6(x):
    return _op("clamp", (_t(x),), min=0.0, max=6.0)


def hardswish(x):
    """x * relu6(x + 3) / 6 (MindSpore's ops.hardswish / ops.HSwish)."""
    x = _t(x)
    return x * relu6(x + 3) / 6


def hardsigmoid(input):
    """relu6(x + 3) / 6 (MindSpore's ops.hardsigmoid / ops.HSigmoid)."""
    return relu6(_t(input) + 3) / 6


def leaky_relu(x, alpha=0.2):
    x = _t(x)
    from pijit.ops import functional as F
    return F.where(x >= 0, x, x * alpha)


def flatten_cells(x, start_dim=1, end_dim=-1):
    return _op("flatten", (_t(x),), start_dim=start_dim, end_dim=end_dim)
