"""Layers beyond layers3: misc nn cells with MindSpore's arguments and checks (BiDense,
ChannelShuffle, LRN, LPPool1d/2d, MaxUnpool1d/2d/3d, Upsample, ResizeBilinear, Unfold,
TimeDistributed, MatrixDiag/MatrixDiagPart/MatrixSetDiag, Linear, DropoutExt, Dropout2dExt,
L1Regularizer, RReLU, MultiFieldEmbeddingLookup, ParameterUpdate, Vjp, Jvp, DistributedGradReducer).

Each cell calls the ops function of the same meaning (one definition each); the cells that
MindSpore's mint also has (Linear, Upsample, Dropout) are mint.nn's classes under nn's name."""
import math
import numbers

from pijit import _C
from pijit import dtype as _dt
from pijit import ops
from pijit._validate import check_input
from pijit.common.initializer import initializer, Uniform
from pijit.nn.cell import Cell
from pijit.nn.layers2 import Dropout2d as _Dropout2d
from pijit.parameter import Parameter
from pijit.mint.nn import Linear, Upsample, Dropout as DropoutExt  # noqa: F401
from pijit._paths.nn_wrap.grad_reducer import DistributedGradReducer  # noqa: F401


def _int(who, name, v, lo=1):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("For '%s', the type of '%s' must be int, but got %s."
                        % (who, name, type(v).__name__))
    if v < lo:
        raise ValueError("For '%s', the '%s' must be >= %d, but got %d." % (who, name, lo, v))
    return v


def _number(who, name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("For '%s', the type of '%s' must be float or int, but got %s."
                        % (who, name, type(v).__name__))
    return v


class BiDense(Cell):
    """BiDense(in1_channels, in2_channels, out_channels, weight_init=None, bias_init=None,
    has_bias=True, dtype=float32): y = x1^T A x2 + b for x1 (*, in1), x2 (*, in2), with weight A
    (out, in1, in2); both initialised U(-1/sqrt(in1), 1/sqrt(in1)) by default."""

    def __init__(self, in1_channels, in2_channels, out_channels, weight_init=None, bias_init=None,
                 has_bias=True, dtype=_dt.float32):
        super().__init__()
        who = "BiDense"
        self.in1_channels = _int(who, "in1_channels", in1_channels)
        self.in2_channels = _int(who, "in2_channels", in2_channels)
        self.out_channels = _int(who, "out_channels", out_channels)
        if not isinstance(has_bias, bool):
            raise TypeError("For '%s', the type of 'has_bias' must be bool, but got %s."
                            % (who, type(has_bias).__name__))
        self.has_bias = has_bias
        bound = 1.0 / math.sqrt(in1_channels)
        shape = (out_channels, in1_channels, in2_channels)
        if isinstance(weight_init, _C.TensorBase) and tuple(weight_init.shape) != shape:
            raise ValueError("For '%s', weight_init shape must be %s, but got %s."
                             % (who, shape, tuple(weight_init.shape)))
        self.weight = Parameter(initializer(Uniform(bound) if weight_init is None else weight_init,
                                            shape, dtype), name="weight")
        if has_bias:
            if isinstance(bias_init, _C.TensorBase) and tuple(bias_init.shape) != (out_channels,):
                raise ValueError("For '%s', bias_init shape must be %s, but got %s."
                                 % (who, (out_channels,), tuple(bias_init.shape)))
            self.bias = Parameter(initializer(Uniform(bound) if bias_init is None else bias_init,
                                              (out_channels,), dtype), name="bias")
        else:
            self.bias = None

    def construct(self, input1, input2):
        who = "BiDense"
        check_input(who, "input1", input1)
        check_input(who, "input2", input2)
        if input1.shape[-1] != self.in1_channels or input2.shape[-1] != self.in2_channels:
            raise ValueError("For '%s', the last dims of the inputs must be in1_channels (%d) and "
                             "in2_channels (%d), but got %s and %s"
                             % (who, self.in1_channels, self.in2_channels, input1.shape,
                                input2.shape))
        if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
            raise ValueError("For '%s', the inputs must agree on every dim but the last, but got "
                             "%s and %s" % (who, input1.shape, input2.shape))
        lead = tuple(input1.shape[:-1])
        a = ops.reshape(input1, (-1, self.in1_channels))
        b = ops.reshape(input2, (-1, self.in2_channels))
        # (n, in1) @ (in1, out * in2) -> (n, out, in2), then the dot with x2 over in2
        w = ops.reshape(ops.transpose(self.weight, (1, 0, 2)), (self.in1_channels, -1))
        t = ops.reshape(ops.matmul(a, w), (-1, self.out_channels, self.in2_channels))
        y = ops.sum(t * ops.expand_dims(b, 1), 2)
        if self.bias is not None:
            y = y + self.bias
        return ops.reshape(y, lead + (self.out_channels,))

    def extend_repr(self):
        return "in1_channels=%d, in2_channels=%d, out_channels=%d, has_bias=%s" % (
            self.in1_channels, self.in2_channels, self.out_channels, self.has_bias)


class ChannelShuffle(Cell):
    """ChannelShuffle(groups): the C channels of (N, C, ...) read as (groups, C / groups) and
    written transposed, so consecutive output channels come from different groups."""

    def __init__(self, groups):
        super().__init__()
        if isinstance(groups, bool) or not isinstance(groups, int):
            raise TypeError("For ChannelShuffle, the param `groups` must be int, but got %s."
                            % type(groups).__name__)
        if groups < 1:
            raise ValueError("For ChannelShuffle, the param `groups` must be larger than 0, but "
                             "got %d." % groups)
        self.groups = groups

    def construct(self, x):
        check_input("ChannelShuffle", "x", x)
        if x.ndim < 3:
            raise ValueError("For ChannelShuffle, the dimension of `x` should be larger than 2, "
                             "but got %d." % x.ndim)
        n, c = x.shape[0], x.shape[1]
        if c % self.groups != 0:
            raise ValueError("For ChannelShuffle, number of channels must be divisible by groups, "
                             "but got %d channels and %d groups." % (c, self.groups))
        rest = tuple(x.shape[2:])
        y = ops.reshape(x, (n, self.groups, c // self.groups) + rest)
        perm = (0, 2, 1) + tuple(range(3, y.ndim))
        return ops.reshape(ops.transpose(y, perm), (n, c) + rest)

    def extend_repr(self):
        return "groups=%d" % self.groups


class LRN(Cell):
    """LRN(depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region='ACROSS_CHANNELS'):
    x / (bias + alpha * sum of x^2 over the 2 depth_radius + 1 neighbouring channels)^beta."""

    def __init__(self, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
        super().__init__()
        self.depth_radius, self.bias, self.alpha, self.beta = depth_radius, bias, alpha, beta
        self.norm_region = norm_region
        # the ops function checks the arguments; check them now, as MindSpore's constructor does
        ops.lrn(ops.zeros((1, 1, 1, 1), _dt.float32), depth_radius, bias, alpha, beta, norm_region)

    def construct(self, input):
        return ops.lrn(input, self.depth_radius, self.bias, self.alpha, self.beta, self.norm_region)


class _LPPool(Cell):
    fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = \
            norm_type, kernel_size, stride, ceil_mode

    def construct(self, x):
        return type(self).fn(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extend_repr(self):
        return "norm_type=%s, kernel_size=%s, stride=%s, ceil_mode=%s" % (
            self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool1d(_LPPool):
    """LPPool1d(norm_type, kernel_size, stride=None, ceil_mode=False): (sum of x^p over each
    window)^(1/p) of (N, C, L) or (C, L) inputs."""
    fn = staticmethod(ops.lp_pool1d)


class LPPool2d(_LPPool):
    """LPPool2d(norm_type, kernel_size, stride=None, ceil_mode=False) over (N, C, H, W)."""
    fn = staticmethod(ops.lp_pool2d)


def _tuple(who, name, v, n):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,) * n
    if isinstance(v, (tuple, list)) and len(v) == n and all(isinstance(e, int) for e in v):
        return tuple(v)
    raise TypeError("For '%s', '%s' must be an int or a tuple of %d ints, but got %r"
                    % (who, name, n, v))


def _max_unpool(who, nd, x, indices, kernel_size, stride, padding, output_size):
    """Max-unpooling of the last nd dims: each value of x written at its flat index (a max pool's,
    over the unpooled plane) of zero planes of the unpooled size ((in - 1) stride - 2 padding +
    kernel, or output_size's last nd), through ops.max_unpool2d on the plane seen as 1 x size."""
    check_input(who, "x", x)
    check_input(who, "indices", indices)
    if x.ndim not in (nd + 1, nd + 2):
        raise ValueError("For '%s', the input must be %d-D or %d-D, but got %d-D"
                         % (who, nd + 1, nd + 2, x.ndim))
    if tuple(indices.shape) != tuple(x.shape):
        raise ValueError("For '%s', 'indices' must have the shape of 'x' %s, but got %s"
                         % (who, tuple(x.shape), tuple(indices.shape)))
    ks = _tuple(who, "kernel_size", kernel_size, nd)
    st = ks if stride is None else _tuple(who, "stride", stride, nd)
    pd = _tuple(who, "padding", padding, nd)
    ins = tuple(x.shape[-nd:])
    outs = tuple((i - 1) * s - 2 * p + k for i, s, p, k in zip(ins, st, pd, ks))
    if output_size is not None:
        outs = tuple(output_size)[-nd:]
        if len(outs) != nd:
            raise ValueError("For '%s', 'output_size' must end with %d sizes, but got %r"
                             % (who, nd, output_size))
    lead = tuple(x.shape[:-nd])
    total_in, total_out = 1, 1
    for i in ins:
        total_in *= i
    for o in outs:
        total_out *= o
    x4 = ops.reshape(x, lead + (1, total_in))
    i4 = ops.reshape(indices, lead + (1, total_in))
    y = ops.max_unpool2d(x4, i4, (1, 1), (1, 1), 0, output_size=(1, total_out))
    return ops.reshape(y, lead + outs)


class _MaxUnpool(Cell):
    nd = 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        who = type(self).__name__
        self.kernel_size = _tuple(who, "kernel_size", kernel_size, self.nd)
        self.stride = self.kernel_size if stride is None else _tuple(who, "stride", stride, self.nd)
        self.padding = _tuple(who, "padding", padding, self.nd)

    def construct(self, x, indices, output_size=None):
        return _max_unpool(type(self).__name__, self.nd, x, indices, self.kernel_size,
                           self.stride, self.padding, output_size)

    def extend_repr(self):
        return "kernel_size=%s, stride=%s, padding=%s" % (self.kernel_size, self.stride,
                                                          self.padding)


class MaxUnpool1d(_MaxUnpool):
    """MaxUnpool1d(kernel_size, stride=None, padding=0)(x, indices, output_size=None): the
    inverse of a max pool with return_indices over (N, C, L) or (C, L)."""
    nd = 1


class MaxUnpool2d(_MaxUnpool):
    """MaxUnpool2d(kernel_size, stride=None, padding=0) over (N, C, H, W) or (C, H, W)."""
    nd = 2


class MaxUnpool3d(_MaxUnpool):
    """MaxUnpool3d(kernel_size, stride=None, padding=0) over (N, C, D, H, W) or (C, D, H, W)."""
    nd = 3


class ResizeBilinear(Cell):
    """ResizeBilinear(half_pixel_centers=False)(x, size=None, scale_factor=None,
    align_corners=False): TensorFlow's bilinear resize of (N, C, H, W) to size, or to
    scale_factor times H and W (exactly one of the two)."""

    def __init__(self, half_pixel_centers=False):
        super().__init__()
        if not isinstance(half_pixel_centers, bool):
            raise TypeError("For 'ResizeBilinear', the type of 'half_pixel_centers' must be bool, "
                            "but got %s." % type(half_pixel_centers).__name__)
        self.half_pixel_centers = half_pixel_centers

    def construct(self, x, size=None, scale_factor=None, align_corners=False):
        who = "ResizeBilinear"
        if not isinstance(align_corners, bool):
            raise TypeError("For '%s', the type of 'align_corners' must be bool, but got %s."
                            % (who, type(align_corners).__name__))
        if size is None and scale_factor is None:
            raise ValueError("For '%s', the 'size' and 'scale' both none." % who)
        if size is not None and scale_factor is not None:
            raise ValueError("For '%s', the 'size' and 'scale' both not none." % who)
        check_input(who, "x", x)
        if x.ndim != 4:
            raise ValueError("For '%s', the input must be 4-D, but got %d-D" % (who, x.ndim))
        if size is not None:
            if not isinstance(size, (tuple, list)):
                raise ValueError("For '%s', the 'size' must be tuple or list or None, but got %s."
                                 % (who, type(size).__name__))
            shape = tuple(size)
        else:
            if isinstance(scale_factor, bool) or not isinstance(scale_factor, int):
                raise TypeError("For '%s', the 'scale_factor' must be an int, but got %s."
                                % (who, type(scale_factor).__name__))
            if scale_factor <= 0:
                raise ValueError("For '%s', the 'scale_factor' must be positive, but got %d."
                                 % (who, scale_factor))
            shape = (scale_factor * x.shape[2], scale_factor * x.shape[3])
        return ops.ResizeBilinear(shape, align_corners, self.half_pixel_centers)(x)


class Unfold(Cell):
    """Unfold(ksizes, strides, rates, padding='valid'): the image patches of (N, C, H, W), as
    ExtractImagePatches gives them: (N, kh * kw * C, out_h, out_w), the depth ordered (row in the
    window, column in the window, channel), channel fastest. ksizes, strides and rates in the
    form [1, row, col, 1]; padding 'valid' or 'same' (any case; 'same' pads with zeros as
    TensorFlow does, the extra row or column at the end)."""

    def __init__(self, ksizes, strides, rates, padding="valid"):
        super().__init__()
        who = "Unfold"
        vals = []
        for name, v in (("ksize", ksizes), ("stride", strides), ("rate", rates)):
            if not isinstance(v, (tuple, list)):
                raise TypeError("For '%s', the type of '%ss' must be tuple or list, but got %s."
                                % (who, name, type(v).__name__))
            if len(v) != 4 or v[0] != 1 or v[3] != 1:
                raise ValueError("For '%s' the format of '%ss' must be [1, %s_row, %s_col, 1], but "
                                 "got %s." % (who, name, name, name, list(v)))
            if not all(isinstance(e, int) and not isinstance(e, bool) for e in v[1:3]) or \
                    v[1] < 1 or v[2] < 1:
                raise ValueError("For '%s' the %s_row and %s_col in '%ss' must be an positive "
                                 "integer number, but got %s_row is %s, %s_col is %s"
                                 % (who, name, name, name, name, v[1], name, v[2]))
            vals.append((v[1], v[2]))
        if not isinstance(padding, str) or padding.lower() not in ("same", "valid"):
            raise ValueError("For '%s', the 'padding' must be 'same' or 'valid', but got %r"
                             % (who, padding))
        self.ksizes, self.strides, self.rates = vals
        self.padding = padding.lower()

    def construct(self, x):
        who = "Unfold"
        check_input(who, "x", x)
        if x.ndim != 4:
            raise ValueError("For '%s', the input must be 4-D (NCHW), but got %d-D" % (who, x.ndim))
        (kh, kw), (sh, sw), (rh, rw) = self.ksizes, self.strides, self.rates
        n, c, h, w = x.shape
        eh, ew = (kh - 1) * rh + 1, (kw - 1) * rw + 1
        if self.padding == "same":
            oh, ow = -(-h // sh), -(-w // sw)
            ph = max((oh - 1) * sh + eh - h, 0)
            pw = max((ow - 1) * sw + ew - w, 0)
            if ph or pw:
                x = ops.pad(x, (pw // 2, pw - pw // 2, ph // 2, ph - ph // 2))
        else:
            oh, ow = (h - eh) // sh + 1, (w - ew) // sw + 1
            if oh < 1 or ow < 1:
                raise ValueError("For '%s', the window (%d, %d) does not fit the input (%d, %d)"
                                 % (who, eh, ew, h, w))
        cols = ops.unfold(x, (kh, kw), (rh, rw), 0, (sh, sw))  # (N, C*kh*kw, L), channel slowest
        cols = ops.reshape(cols, (n, c, kh * kw, oh, ow))
        return ops.reshape(ops.transpose(cols, (0, 2, 1, 3, 4)), (n, kh * kw * c, oh, ow))


class TimeDistributed(Cell):
    """TimeDistributed(layer, time_axis, reshape_with_axis=None): the layer applied to each step
    along time_axis of an input of 3 or more dims, the results stacked along time_axis; with
    reshape_with_axis, the time axis is folded into that axis for one call of the layer
    instead."""

    def __init__(self, layer, time_axis, reshape_with_axis=None):
        super().__init__()
        from pijit.ops.primitive import Primitive
        if not isinstance(layer, (Cell, Primitive)):
            raise TypeError("For 'TimeDistributed', the 'layer' must be Cell or Primitive "
                            "instance, but got %s." % type(layer).__name__)
        if isinstance(time_axis, bool) or not isinstance(time_axis, int):
            raise TypeError("For 'TimeDistributed', the 'time_axis' must be int, but got %s."
                            % type(time_axis).__name__)
        if reshape_with_axis is not None and (isinstance(reshape_with_axis, bool) or
                                              not isinstance(reshape_with_axis, int)):
            raise TypeError("For 'TimeDistributed', the 'reshape_with_axis' must be int or None, "
                            "but got %s." % type(reshape_with_axis).__name__)
        self.layer = layer
        self.time_axis = time_axis
        self.reshape_with_axis = reshape_with_axis

    def construct(self, inputs):
        who = "TimeDistributed"
        check_input(who, "inputs", inputs)
        nd = inputs.ndim
        if nd < 3:
            raise ValueError("For '%s', the 'inputs' must have at least 3 dims, but got %d"
                             % (who, nd))
        if not -nd <= self.time_axis < nd:
            raise ValueError("For '%s', the 'time_axis' %d is out of range for %d dims"
                             % (who, self.time_axis, nd))
        t_axis = self.time_axis % nd
        if self.reshape_with_axis is not None:
            if not -nd <= self.reshape_with_axis < nd:
                raise ValueError("For '%s', the 'reshape_with_axis' %d is out of range for %d dims"
                                 % (who, self.reshape_with_axis, nd))
            r_axis = self.reshape_with_axis % nd
            # move time next to the other axis, fold them, run once, unfold, move time back
            shape = tuple(inputs.shape)
            moved = ops.moveaxis(inputs, t_axis, 0)
            r_in = r_axis + 1 if r_axis < t_axis else r_axis
            moved = ops.moveaxis(moved, r_in, 1)
            t_len, r_len = shape[t_axis], shape[r_axis]
            folded = ops.reshape(moved, (t_len * r_len,) + tuple(moved.shape[2:]))
            out = self.layer(folded)
            out = ops.reshape(out, (t_len, r_len) + tuple(out.shape[1:]))
            out = ops.moveaxis(out, 1, r_in)
            return ops.moveaxis(out, 0, t_axis)
        steps = [self.layer(s) for s in ops.unstack(inputs, t_axis)]
        out_nd = steps[0].ndim + 1
        return ops.stack(steps, t_axis if t_axis < out_nd else out_nd - 1)


class MatrixDiag(Cell):
    """MatrixDiag()(x): the (..., k, k) matrices whose diagonals are the last dim of x."""

    def construct(self, input_x):
        check_input("MatrixDiag", "input_x", input_x)
        k = input_x.shape[-1] if input_x.ndim else 1
        x = ops.reshape(input_x, (-1,)) if input_x.ndim == 0 else input_x
        eye = ops.eye(k, k, x.dtype)
        return ops.expand_dims(x, -1) * eye


class MatrixDiagPart(Cell):
    """MatrixDiagPart()(x): the main diagonals of the (..., M, N) matrices, (..., min(M, N))."""

    def construct(self, input_x):
        check_input("MatrixDiagPart", "input_x", input_x)
        if input_x.ndim < 2:
            raise ValueError("For 'MatrixDiagPart', the input must have at least 2 dims, but got "
                             "%d" % input_x.ndim)
        return ops.diagonal(input_x, 0, -2, -1)


class MatrixSetDiag(Cell):
    """MatrixSetDiag()(x, diagonal): x with the main diagonal of each (..., M, N) matrix replaced
    by diagonal (..., min(M, N))."""

    def construct(self, input_x, diagonal):
        who = "MatrixSetDiag"
        check_input(who, "input_x", input_x)
        check_input(who, "diagonal", diagonal)
        if input_x.ndim < 2:
            raise ValueError("For '%s', the input must have at least 2 dims, but got %d"
                             % (who, input_x.ndim))
        m, n = input_x.shape[-2], input_x.shape[-1]
        k = min(m, n)
        if tuple(diagonal.shape) != tuple(input_x.shape[:-2]) + (k,):
            raise ValueError("For '%s', the 'diagonal' must have shape %s, but got %s"
                             % (who, tuple(input_x.shape[:-2]) + (k,), tuple(diagonal.shape)))
        eye = ops.eye(m, n, _dt.bool_)
        d = ops.cast(diagonal, input_x.dtype)
        # on the diagonal i == j < min(M, N): d[..., j] placed in column j of every row (d padded
        # with zeros to N columns) is read only where the mask holds
        if n > k:
            d = ops.concat((d, ops.zeros(tuple(d.shape[:-1]) + (n - k,), d.dtype)), -1)
        full = ops.expand_dims(d, -2)
        return ops.where(eye, full, input_x)


class Dropout2dExt(_Dropout2d):
    """Dropout2dExt(p=0.5, inplace=False): Dropout2d (whole channels of (N, C, H, W) zeroed with
    probability p in training, the rest scaled by 1 / (1 - p)); inplace is accepted and the
    result is a new tensor, as in MindSpore's functional form."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__(p)
        if not isinstance(inplace, bool):
            raise TypeError("For 'Dropout2dExt', the type of 'inplace' must be bool, but got %s."
                            % type(inplace).__name__)
        self.inplace = inplace


class L1Regularizer(Cell):
    """L1Regularizer(scale)(weights): scale * sum(|weights|)."""

    def __init__(self, scale):
        super().__init__()
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise TypeError("For 'L1Regularizer', the type of 'scale' must be float or int, but "
                            "got %s." % type(scale).__name__)
        if scale <= 0:
            raise ValueError("For 'L1Regularizer', the 'scale' must be greater than 0, but got %r."
                             % (scale,))
        if math.isinf(scale) or math.isnan(scale):
            raise ValueError("For 'L1Regularizer', the 'scale' can not be INF or NAN, but got %r."
                             % (scale,))
        self.scale = float(scale)

    def construct(self, weights):
        check_input("L1Regularizer", "weights", weights)
        return ops.sum(ops.abs(weights)) * self.scale


class RReLU(Cell):
    """RReLU(lower=1/8, upper=1/3): x where x >= 0, else x times a slope drawn from
    U[lower, upper] for each element, in training and in evaluation alike (MindSpore's cell
    draws every call)."""

    def __init__(self, lower=1 / 8, upper=1 / 3):
        super().__init__()
        _number("RReLU", "upper", upper)
        _number("RReLU", "lower", lower)
        if lower > upper:
            raise ValueError("For RReLU, the value of 'upper' must be greater than 'lower', but "
                             "got upper: %s, lower: %s. " % (upper, lower))
        self.lower, self.upper = lower, upper

    def construct(self, x):
        return ops.rrelu(x, self.lower, self.upper)


class MultiFieldEmbeddingLookup(Cell):
    """MultiFieldEmbeddingLookup(vocab_size, embedding_size, field_size, param_init='normal',
    target='CPU', slice_mode='batch_slice', feature_num_list=None, max_norm=None, sparse=True,
    operator='SUM', dtype=float32)(input_indices, input_values, field_ids): each id's embedding
    times its value, reduced ('SUM', 'MEAN' or 'MAX') over the ids of each field:
    (batch, field_size, embedding_size); a field with no id gives zeros. max_norm clips each
    embedding to that L2 norm first. target, slice_mode, feature_num_list and sparse choose
    MindSpore's device placement and sharding, which a single CPU process does not need."""

    def __init__(self, vocab_size, embedding_size, field_size, param_init="normal", target="CPU",
                 slice_mode="batch_slice", feature_num_list=None, max_norm=None, sparse=True,
                 operator="SUM", dtype=_dt.float32):
        super().__init__()
        who = "MultiFieldEmbeddingLookup"
        self.vocab_size = _int(who, "vocab_size", vocab_size)
        self.embedding_size = _int(who, "embedding_size", embedding_size)
        self.field_size = _int(who, "field_size", field_size)
        if target not in ("CPU", "DEVICE"):
            raise ValueError("For '%s', the 'target' must be 'CPU' or 'DEVICE', but got %r."
                             % (who, target))
        if operator not in ("SUM", "MAX", "MEAN"):
            raise ValueError("For '%s', the 'operator' must be 'SUM', 'MAX' or 'MEAN', but got %r."
                             % (who, operator))
        if max_norm is not None:
            _number(who, "max_norm", max_norm)
            if max_norm <= 0:
                raise ValueError("For '%s', the 'max_norm' must be > 0, but got %r." % (who, max_norm))
        self.operator, self.max_norm, self.target = operator, max_norm, target
        self.embedding_table = Parameter(initializer(param_init, (vocab_size, embedding_size),
                                                     dtype), name="embedding_table")

    def construct(self, input_indices, input_values, field_ids):
        who = "MultiFieldEmbeddingLookup"
        for name, t in (("input_indices", input_indices), ("input_values", input_values),
                        ("field_ids", field_ids)):
            check_input(who, name, t)
            if t.ndim != 2:
                raise ValueError("For '%s', the '%s' must be (batch_size, seq_length), but got %s"
                                 % (who, name, t.shape))
        if not (input_indices.shape == input_values.shape == field_ids.shape):
            raise ValueError("For '%s', the three inputs must have one shape, but got %s, %s, %s"
                             % (who, input_indices.shape, input_values.shape, field_ids.shape))
        table = self.embedding_table
        emb = ops.gather(table, input_indices, 0)  # (B, S, E)
        if self.max_norm is not None:
            norm = ops.sqrt(ops.sum(ops.square(emb), -1, True))
            emb = emb * ops.minimum(self.max_norm / ops.maximum(norm, 1e-12), 1.0)
        emb = emb * ops.expand_dims(ops.cast(input_values, emb.dtype), -1)
        # membership (B, F, S): which ids belong to which field
        fields = ops.reshape(ops.arange(self.field_size, dtype=_dt.int32), (1, -1, 1))
        member = ops.equal(ops.expand_dims(ops.cast(field_ids, _dt.int32), 1), fields)
        m = ops.cast(member, emb.dtype)
        if self.operator == "MAX":
            e4 = ops.expand_dims(emb, 1)  # (B, 1, S, E)
            masked = ops.where(ops.expand_dims(member, -1), e4, ops.full_like(e4, float("-inf")))
            out = ops.amax(masked, 2)
            return ops.where(ops.expand_dims(ops.any(member, 2), -1), out, ops.zeros_like(out))
        out = ops.matmul(m, emb)  # (B, F, E)
        if self.operator == "MEAN":
            count = ops.maximum(ops.sum(m, 2, True), 1.0)
            out = out / count
        return out


class ParameterUpdate(Cell):
    """ParameterUpdate(param)(x): writes x into param (ops.assign) and returns x."""

    def __init__(self, param):
        super().__init__(auto_prefix=False)
        if not isinstance(param, Parameter):
            raise TypeError("For 'ParameterUpdate', 'param' must be 'Parameter', but got %s."
                            % type(param).__name__)
        self._param = param

    def construct(self, x):
        from pijit.ops.misc import assign
        assign(self._param, x)
        return x


class Vjp(Cell):
    """Vjp(fn)(*inputs, v) -> (fn(*inputs), the gradients of sum(fn(*inputs) * v) with respect to
    each input, a tuple)."""

    def __init__(self, fn):
        super().__init__()
        if not callable(fn):
            raise TypeError("For 'Vjp', 'fn' must be a Cell or a function, but got %s."
                            % type(fn).__name__)
        self.fn = fn

    def construct(self, *args):
        if len(args) < 2:
            raise ValueError("For 'Vjp', give the inputs of fn and then v, but got %d arguments"
                             % len(args))
        from pijit.autodiff import GradOperation
        inputs, v = args[:-1], args[-1]
        out = self.fn(*inputs)
        grads = GradOperation(get_all=True, sens_param=True)(self.fn)(*(inputs + (v,)))
        return out, grads if isinstance(grads, tuple) else (grads,)


class Jvp(Cell):
    """Jvp(fn)(*inputs, v) -> (fn(*inputs), the Jacobian of fn at inputs times v): v a Tensor
    for one input, a tuple of them for several (ops.jvp)."""

    def __init__(self, fn):
        super().__init__()
        if not callable(fn):
            raise TypeError("For 'Jvp', 'fn' must be a Cell or a function, but got %s."
                            % type(fn).__name__)
        self.fn = fn

    def construct(self, *args):
        if len(args) < 2:
            raise ValueError("For 'Jvp', give the inputs of fn and then v, but got %d arguments"
                             % len(args))
        inputs, v = args[:-1], args[-1]
        return ops.jvp(self.fn, inputs[0] if len(inputs) == 1 else inputs, v)


__all__ = ["BiDense", "ChannelShuffle", "LRN", "LPPool1d", "LPPool2d", "MaxUnpool1d",
           "MaxUnpool2d", "MaxUnpool3d", "Upsample", "ResizeBilinear", "Unfold", "TimeDistributed",
           "MatrixDiag", "MatrixDiagPart", "MatrixSetDiag", "Linear", "DropoutExt", "Dropout2dExt",
           "L1Regularizer", "RReLU", "MultiFieldEmbeddingLookup", "ParameterUpdate", "Vjp", "Jvp",
           "DistributedGradReducer"]
