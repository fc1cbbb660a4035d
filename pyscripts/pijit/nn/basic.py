"""Dense, Flatten, Dropout, Identity, Embedding."""
import math

from pijit import dtype as _dt
from pijit._validate import check_input
from pijit.common.initializer import initializer, HeUniform, Uniform
from pijit.nn.cell import Cell
from pijit.ops import nn_functional as NF
from pijit.parameter import Parameter


def _check_int(v, name, who, minimum=1):
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise ValueError("%s: %s must be an int >= %d, got %r" % (who, name, minimum, v))
    return v


def _activation(activation):
    if activation is None or isinstance(activation, Cell):
        return activation
    if isinstance(activation, str):
        from pijit.nn import activation as A
        table = {"relu": A.ReLU, "relu6": A.ReLU6, "gelu": A.GELU, "silu": A.SiLU,
                 "sigmoid": A.Sigmoid, "tanh": A.Tanh, "softmax": A.Softmax,
                 "leakyrelu": A.LeakyReLU, "logsoftmax": A.LogSoftmax}
        if activation.lower() not in table:
            raise ValueError("unknown activation %r; known: %s" % (activation, ", ".join(sorted(table))))
        return table[activation.lower()]()
    raise TypeError("activation must be None, a str or a Cell, got %s" % type(activation).__name__)


class Dense(Cell):
    """Dense(in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
    activation=None): y = activation(x @ weight.T + bias). Defaults follow MindSpore 2.x:
    HeUniform(sqrt(5)) weights and Uniform(1/sqrt(in_channels)) bias."""

    def __init__(self, in_channels, out_channels, weight_init=None, bias_init=None, has_bias=True,
                 activation=None, dtype=_dt.float32):
        super().__init__()
        self.in_channels = _check_int(in_channels, "in_channels", "Dense")
        self.out_channels = _check_int(out_channels, "out_channels", "Dense")
        self.has_bias = bool(has_bias)
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight = Parameter(initializer(weight_init, (out_channels, in_channels), dtype),
                                name="weight")
        if self.has_bias:
            if bias_init is None:
                bias_init = Uniform(1.0 / math.sqrt(in_channels))
            self.bias = Parameter(initializer(bias_init, (out_channels,), dtype), name="bias")
        else:
            self.bias = None
        self.activation = _activation(activation)

    def construct(self, x):
        check_input("Dense", "x", x, min_ndim=1, size=(-1, self.in_channels, "in_channels"))
        y = NF.dense(x, self.weight, self.bias)
        return self.activation(y) if self.activation is not None else y

    def extend_repr(self):
        s = "input_channels=%d, output_channels=%d, has_bias=%s" % (
            self.in_channels, self.out_channels, self.has_bias)
        if self.activation is not None:
            s += ", activation=%s" % (self.activation,)
        return s


class Flatten(Cell):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x):
        check_input("Flatten", "x", x)
        return NF.flatten_cells(x, self.start_dim, self.end_dim)


class Identity(Cell):
    def construct(self, x):
        return x


class Dropout(Cell):
    """Dropout(keep_prob=None, p=None): zeroes elements with probability p (= 1 - keep_prob)
    in training mode and scales the rest by 1/(1-p); identity in eval mode. Seeded by
    pijit.set_seed."""

    def __init__(self, keep_prob=None, p=None, dtype=_dt.float32):
        super().__init__()
        if keep_prob is not None and p is not None:
            raise ValueError("Dropout: give keep_prob or p, not both")
        if keep_prob is not None:
            if not 0 < keep_prob <= 1:
                raise ValueError("Dropout: keep_prob must be in (0, 1], got %r" % (keep_prob,))
            p = 1.0 - keep_prob
        p = 0.5 if p is None else p
        if not 0 <= p < 1:
            raise ValueError("Dropout: p must be in [0, 1), got %r" % (p,))
        self.p = float(p)

    def construct(self, x):
        check_input("Dropout", "x", x)
        if not self.training or self.p == 0:
            return x
        return NF.dropout(x, self.p, training=True)

    def extend_repr(self):
        return "p=%s" % self.p


class Embedding(Cell):
    """Embedding(vocab_size, embedding_size, use_one_hot=False, embedding_table='normal',
    dtype=int32, padding_idx=None)."""

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal",
                 dtype=_dt.int32, padding_idx=None):
        super().__init__()
        self.vocab_size = _check_int(vocab_size, "vocab_size", "Embedding")
        self.embedding_size = _check_int(embedding_size, "embedding_size", "Embedding")
        if padding_idx is not None and not -vocab_size <= padding_idx < vocab_size:
            raise ValueError("Embedding: padding_idx %d is out of range for vocab_size %d"
                             % (padding_idx, vocab_size))
        self.padding_idx = None if padding_idx is None else padding_idx % vocab_size
        self.use_one_hot = bool(use_one_hot)
        self.embedding_table = Parameter(
            initializer(embedding_table, (vocab_size, embedding_size)), name="embedding_table")
        if self.padding_idx is not None:
            self.embedding_table[self.padding_idx] = 0.0

    def construct(self, ids):
        check_input("Embedding", "ids", ids)
        return NF.embedding(ids, self.embedding_table, self.padding_idx)

    def extend_repr(self):
        return "vocab_size=%d, embedding_size=%d, use_one_hot=%s" % (
            self.vocab_size, self.embedding_size, self.use_one_hot)


# ---- Pad, ClipByNorm ---------------------------------------------------------------------------
from pijit._ops_common import op as _op  # noqa: E402  (appended section: its own imports)
from pijit.ops import functional as _F  # noqa: E402
from pijit.tensor import Tensor as _Tensor  # noqa: E402


def _mirror_indices(n, lo, hi, mode):
    """The source index of every output position of a dim of size n padded by (lo, hi) in
    MindSpore's MirrorPad modes: REFLECT mirrors about the edge element (d c b | a b c d | c b a),
    SYMMETRIC about the edge itself, repeating it (b a | a b c d | d c)."""
    repeat = 1 if mode == "SYMMETRIC" else 0
    left = [lo - 1 - k + (1 - repeat) for k in range(lo)]
    right = [n - 1 - k - (1 - repeat) for k in range(hi)]
    return left + list(range(n)) + right


class Pad(Cell):
    """Pad(paddings, mode='CONSTANT'): pads dim D of the input by paddings[D] = (before, after),
    one pair per dim of the input (at most 4). mode 'CONSTANT' fills zeros; 'REFLECT' mirrors
    without repeating the edge (each padding < the dim's size); 'SYMMETRIC' mirrors repeating it
    (each padding <= the dim's size). The mirror modes gather rows with index_select, so they
    have a gradient (pijit's pad kernel has 'reflect' but no gradient for it, and no 'symmetric')."""

    _MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")

    def __init__(self, paddings, mode="CONSTANT"):
        super().__init__()
        if not isinstance(mode, str) or mode.upper() not in self._MODES:
            raise ValueError("For 'Pad', the 'mode' should be one of %s, but got %r."
                             % (", ".join(repr(m) for m in self._MODES), mode))
        if not isinstance(paddings, tuple):
            raise TypeError("For 'Pad', the type of 'paddings' must be tuple, but got %s."
                            % type(paddings).__name__)
        for item in paddings:
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise ValueError("For 'Pad', the dimension of 'paddings' must be (n, 2), but got %r."
                                 % (paddings,))
            for v in item:
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise ValueError("For 'Pad', every padding must be a non-negative int, but got %r."
                                     % (paddings,))
        if len(paddings) > 4:
            raise ValueError("For 'Pad', only 'paddings' up to 4 dims is supported, but got %d."
                             % len(paddings))
        self.mode = mode.upper()
        self.paddings = tuple((int(a), int(b)) for a, b in paddings)
        # the kernel's F.pad order: (before, after) of the last dim first
        self._flat = tuple(v for pair in reversed(self.paddings) for v in pair)

    def construct(self, x):
        check_input("Pad", "x", x, ndim=len(self.paddings))
        if self.mode == "CONSTANT":
            return NF.pad(x, self._flat)
        for d, (lo, hi) in enumerate(self.paddings):
            if not lo and not hi:
                continue
            n = x.shape[d]
            limit = n - 1 if self.mode == "REFLECT" else n
            if lo > limit or hi > limit:
                raise ValueError("For 'Pad', in mode %s the paddings of dim %d must be at most %d (its "
                                 "size %d%s), but got %s." % (self.mode, d, limit, n,
                                                              " - 1" if self.mode == "REFLECT" else "",
                                                              (lo, hi)))
            index = _Tensor(_mirror_indices(n, lo, hi, self.mode), dtype=_dt.int64)
            x = _F.index_select(x, d, index)
        return x

    def extend_repr(self):
        return "paddings=%s, mode=%s" % (self.paddings, self.mode)


class ClipByNorm(Cell):
    """ClipByNorm(axis=None): construct(x, clip_norm) = x * clip_norm / max(||x||_2, clip_norm),
    the L2 norm taken over `axis` (None: every dim) and kept broadcastable; x unchanged where its
    norm is at most clip_norm (a zero norm leaves x as it is). clip_norm: a Tensor (or number)
    of shape () or (1,), or broadcastable to x. The output is float32, as MindSpore's."""

    def __init__(self, axis=None):
        super().__init__()
        if axis is not None and not isinstance(axis, (int, tuple, list)) or isinstance(axis, bool):
            raise TypeError("For 'ClipByNorm', the type of 'axis' should be None, int or tuple, but got %s."
                            % type(axis).__name__)
        if isinstance(axis, (tuple, list)):
            for a in axis:
                if isinstance(a, bool) or not isinstance(a, int):
                    raise TypeError("For 'ClipByNorm', every element of 'axis' should be an int, but got %r."
                                    % (axis,))
            axis = tuple(axis)
        self.axis = axis

    def construct(self, x, clip_norm):
        check_input("ClipByNorm", "x", x)
        if not x.dtype.is_floating_point:
            raise TypeError("For 'ClipByNorm', the dtype of 'x' should be floating, but got %s." % x.dtype)
        axis = tuple(range(x.ndim)) if self.axis is None else self.axis
        x32 = x if x.dtype == _dt.float32 else x.astype(_dt.float32)
        sq = _F.sum(x32 * x32, axis, keepdim=True)
        # sqrt's gradient at 0 is infinite: take it of a safe value where the norm is zero
        nonzero = sq > 0
        norm = _F.where(nonzero, _F.sqrt(_F.where(nonzero, sq, _op("full_like", (sq,), value=1))), sq)
        clip = clip_norm.astype(_dt.float32) if hasattr(clip_norm, "astype") else float(clip_norm)
        return x32 * clip / _F.maximum(norm, clip)

    def extend_repr(self):
        return "axis=%s" % (self.axis,)
