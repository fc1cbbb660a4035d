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
