"""Recurrent layers with MindSpore's API: RNN, GRU, LSTM (stacked, bidirectional, batch_first,
seq_length) and the single-step cells RNNCell, GRUCell, LSTMCell.

They are written out of pijit's ordinary ops (dense, split, sigmoid, tanh, where, stack), so
one definition serves eager mode, capture and autodiff. The time loop is a Python loop over the
timesteps: under pijit.jit it unrolls into the forward's graph (the sequence length is part of
the guards; the batch size stays dynamic unless hx or seq_length is given, whose batch size is
checked against x's). The input projection of a whole layer is one dense
over all timesteps (T*B rows), so a step costs one (B, H) x (H, G) matmul plus elementwise ops.

What follows MindSpore 2.5 (mindspore/nn/layer/rnns.py, rnn_cells.py):
- weights: weight_ih_l{k}[_reverse] (G*H, in), weight_hh_l{k}[_reverse] (G*H, H), bias_ih_l{k},
  bias_hh_l{k}; registered all weight_ih first, then weight_hh, bias_ih, bias_hh (MindSpore keeps
  them in four ParameterTuples, w_ih_list ... b_hh_list, so that is the order of
  trainable_params() and of a checkpoint); cells: weight_ih, weight_hh, bias_ih, bias_hh.
- every weight U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
- gate order in the stacked rows: LSTM (i, f, g, o), GRU (r, z, n); the same as PyTorch's, so
  torch's weights load unchanged.
- GRU: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)); h' = n + z * (h - n).
- construct(x, hx=None, seq_length=None): hx is a Tensor (num_layers * num_directions, B, H),
  or (h_0, c_0) for LSTM; zeros when None. seq_length (B,) int32/int64: steps past a sequence's
  length keep its state and output zeros; the reverse direction starts at each sequence's last
  valid step (MindSpore's ReverseSequence). Outputs (output, h_n) or (output, (h_n, c_n)).
- dropout (probability of zeroing) on every layer's output but the last, in training mode.
- RNN's positional arguments are LSTM's (input_size, hidden_size, num_layers, has_bias, ...);
  nonlinearity ('tanh' or 'relu') is taken by keyword only, as MindSpore's RNN(*args, **kwargs).
"""
import math

from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit._validate import check_bool, check_int, check_str, check_type, type_error, _is_tensor
from pijit.common.initializer import initializer, Uniform
from pijit.creation import arange
from pijit.nn.cell import Cell
from pijit.ops import nn_functional as NF
from pijit.parameter import Parameter, ParameterTuple

__all__ = ["RNN", "GRU", "LSTM", "RNNCell", "GRUCell", "LSTMCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


# ---- one step: gi = W_ih x + b_ih (already computed), state -> new state ------------------------

def _step(mode, gi, state, w_hh, b_hh):
    """One timestep of `mode` given the input projection gi (B, G*H); returns the new state (a
    Tensor, or (h, c) for LSTM)."""
    if mode == "LSTM":
        h, c = state
        gates = gi + NF.dense(h, w_hh, b_hh)
        i, f, g, o = _op("split", (gates,), axis=1, sections=4)
        c = _op("sigmoid", (f,)) * c + _op("sigmoid", (i,)) * _op("tanh", (g,))
        return _op("sigmoid", (o,)) * _op("tanh", (c,)), c
    gh = NF.dense(state, w_hh, b_hh)
    if mode == "GRU":
        i_r, i_z, i_n = _op("split", (gi,), axis=1, sections=3)
        h_r, h_z, h_n = _op("split", (gh,), axis=1, sections=3)
        r = _op("sigmoid", (i_r + h_r,))
        z = _op("sigmoid", (i_z + h_z,))
        n = _op("tanh", (i_n + r * h_n,))
        return n + z * (state - n)
    return _op("tanh" if mode == "RNN_TANH" else "relu", (gi + gh,))


def _check_state(who, arg, h, shape, dtype):
    if not _is_tensor(h):
        raise type_error(who, arg, h, "Tensor")
    if h._dims(0) != tuple(shape):  # (this reads, and under capture specialises, the batch size)
        raise ValueError("For '%s', the shape of '%s' should be %s, but got %s."
                         % (who, arg, tuple(shape), tuple(h.shape)))
    if h.dtype != dtype:
        raise TypeError("For '%s', the dtype of '%s' should be the dtype of 'x' (%s), but got %s."
                        % (who, arg, dtype, h.dtype))


# ---- stacked layers ---------------------------------------------------------------------------

class _RNNBase(Cell):
    """Stacked (bi)directional recurrence of `mode` ('RNN_TANH', 'RNN_RELU', 'GRU', 'LSTM')."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=_dt.float32):
        super().__init__()
        who = type(self).__name__
        check_int(who, "input_size", input_size, 1)
        check_int(who, "hidden_size", hidden_size, 1)
        check_int(who, "num_layers", num_layers, 1)
        check_bool(who, "has_bias", has_bias)
        check_bool(who, "batch_first", batch_first)
        check_bool(who, "bidirectional", bidirectional)
        check_type(who, "dropout", dropout, (int, float))
        if not 0 <= dropout < 1:
            raise ValueError("For '%s', the 'dropout' must be a number in range [0, 1) representing the "
                             "probability of an element being zeroed, but got %s." % (who, dropout))
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.has_bias, self.batch_first, self.bidirectional = has_bias, batch_first, bidirectional
        self.dropout = float(dropout)
        self.is_lstm = mode == "LSTM"
        self.num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        stdv = 1.0 / math.sqrt(hidden_size)
        lists = ([], [], [], [])  # weight_ih, weight_hh, bias_ih, bias_hh, per (layer, direction)
        for layer in range(num_layers):
            for direction in range(self.num_directions):
                layer_in = input_size if layer == 0 else hidden_size * self.num_directions
                suffix = "_l%d%s" % (layer, "_reverse" if direction else "")
                shapes = [(gate_size, layer_in), (gate_size, hidden_size)]
                if has_bias:
                    shapes += [(gate_size,), (gate_size,)]
                for k, (kind, shape) in enumerate(zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), shapes)):
                    lists[k].append(Parameter(initializer(Uniform(stdv), shape, dtype), name=kind + suffix))
        # MindSpore's registration order: every weight_ih, then weight_hh, bias_ih, bias_hh
        for params in lists:
            for p in params:
                self.insert_param_to_cell(p.name, p)
        self.w_ih_list, self.w_hh_list, self.b_ih_list, self.b_hh_list = (ParameterTuple(ps) for ps in lists)
        # per (layer, direction): the four tensors a direction reads (biases None without bias)
        self._weights = tuple(
            (lists[0][k], lists[1][k], lists[2][k] if has_bias else None, lists[3][k] if has_bias else None)
            for k in range(num_layers * self.num_directions))

    def _direction(self, x, steps, state, weights, reverse, seq_length):
        """One direction of one layer over x (steps, B, in): (outputs (steps, B, H), final state).
        (steps is read from the layer's input once: a size read from a stacked layer output would
        count as a read of the batch size too, and specialise it under capture.)"""
        w_ih, w_hh, b_ih, b_hh = weights
        if w_ih.dtype != x.dtype:  # (MindSpore computes in the input's dtype)
            w_ih, w_hh = w_ih.astype(x.dtype), w_hh.astype(x.dtype)
            if b_ih is not None:
                b_ih, b_hh = b_ih.astype(x.dtype), b_hh.astype(x.dtype)
        # the input projection of every step at once, (T, B, G*H), cut into T views; split, not
        # gi_all[t]: the gradient of a split is one concat, of T indexings T full-size scatters
        gi_all = NF.dense(x, w_ih, b_ih)
        gi = _op("split", (gi_all,), axis=0, sections=steps) if steps > 1 else (gi_all,)
        # each step's validity under seq_length, (1, B) per step, cut the same way
        masks = (None,) * steps
        if seq_length is not None:
            valid_all = _op("reshape", (seq_length,), shape=(1, -1)) > \
                _op("reshape", (arange(steps),), shape=(-1, 1))  # (T, B)
            masks = _op("split", (valid_all,), axis=0, sections=steps) if steps > 1 else (valid_all,)
        # The loop walks the steps' tensors, not an index: a loop too long to unroll runs each
        # iteration as a function (capture), whose graph then serves every step (an index would
        # be a different constant, so a different graph, at every step).
        pairs = list(zip(gi, masks))
        if reverse:
            pairs.reverse()
        outputs = []
        for g, m in pairs:
            gi_t = _op("squeeze", (g,), axis=(0,))
            if state is None:  # zeros shaped from the data: the batch size is never read in Python
                zero = _op("full_like", (gi_t if _GATES[self.mode] == 1 else
                                         _op("split", (gi_t,), axis=1, sections=_GATES[self.mode])[0],),
                           value=0, dtype=gi_t.dtype)
                state = (zero, zero) if self.is_lstm else zero
            new = _step(self.mode, gi_t, state, w_hh, b_hh)
            h = new[0] if self.is_lstm else new
            if seq_length is None:
                state = new
                outputs.append(h)
            else:
                valid = _op("reshape", (m,), shape=(-1, 1))  # (B, 1)
                if self.is_lstm:
                    state = (_op("where", (valid, new[0], state[0])), _op("where", (valid, new[1], state[1])))
                else:
                    state = _op("where", (valid, new, state))
                outputs.append(_op("where", (valid, h, _op("full_like", (h,), value=0, dtype=h.dtype))))
        if reverse:
            outputs = outputs[::-1]
        return _op("stack", tuple(outputs), axis=0), state

    def construct(self, x, hx=None, seq_length=None):
        who = type(self).__name__
        if not _is_tensor(x):
            raise type_error(who, "x", x, "Tensor")
        if x.ndim != 3:
            raise ValueError("For '%s', the dimension of 'x' should be 3, but got %d (shape %s)."
                             % (who, x.ndim, x.shape))
        if x._dims(2, 3)[0] != self.input_size:
            raise ValueError("For '%s', the size of 'x' at axis 2 should be input_size=%d, but got shape %s."
                             % (who, self.input_size, x.shape))
        if not x.dtype.is_floating_point:
            raise TypeError("For '%s', the dtype of 'x' should be floating, but got %s." % (who, x.dtype))
        if self.batch_first:
            x = _op("transpose", (x,), perm=(1, 0, 2))
        # the batch size is read (and so specialised under capture) only to check hx and
        # seq_length against it: without them a jitted layer keeps a dynamic batch size
        h0 = c0 = None
        if hx is not None:
            state_shape = (self.num_layers * self.num_directions, x._dims(1, 2)[0], self.hidden_size)
        if hx is not None and self.is_lstm:
            if not isinstance(hx, (tuple, list)):
                raise type_error(who, "hx", hx, "tuple")
            if len(hx) != 2:
                raise TypeError("For '%s', the length of 'hx' must be 2, but got %d." % (who, len(hx)))
            h0, c0 = hx
            _check_state(who, "hx[0]", h0, state_shape, x.dtype)
            _check_state(who, "hx[1]", c0, state_shape, x.dtype)
        elif hx is not None:
            h0 = hx
            _check_state(who, "hx", h0, state_shape, x.dtype)
        if seq_length is not None:
            if not _is_tensor(seq_length):
                raise type_error(who, "seq_length", seq_length, "Tensor")
            if seq_length.dtype not in (_dt.int32, _dt.int64):
                raise TypeError("For '%s', the dtype of 'seq_length' should be int32 or int64, but got %s."
                                % (who, seq_length.dtype))
            if seq_length._dims(0) != x._dims(1, 2):
                raise ValueError("For '%s' batch size of x and seq_length must be equal, but got %d of x "
                                 "and shape %s of seq_length." % (who, x.shape[1], tuple(seq_length.shape)))
        layer_in = x
        steps = x._dims(0, 1)[0]
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(self.num_directions):
                k = layer * self.num_directions + direction
                state = None if h0 is None else (h0[k], c0[k]) if self.is_lstm else h0[k]
                out, state = self._direction(layer_in, steps, state, self._weights[k], direction == 1, seq_length)
                outs.append(out)
                if self.is_lstm:
                    h_n.append(state[0])
                    c_n.append(state[1])
                else:
                    h_n.append(state)
            layer_in = outs[0] if len(outs) == 1 else _op("concat", tuple(outs), axis=2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = NF.dropout(layer_in, self.dropout, training=True)
        output = layer_in
        if self.batch_first:
            output = _op("transpose", (output,), perm=(1, 0, 2))
        h_n = _op("stack", tuple(h_n), axis=0)
        if self.is_lstm:
            return output, (h_n, _op("stack", tuple(c_n), axis=0))
        return output, h_n

    def extend_repr(self):
        return "input_size=%d, hidden_size=%d, num_layers=%d, has_bias=%s, batch_first=%s, dropout=%s, " \
               "bidirectional=%s" % (self.input_size, self.hidden_size, self.num_layers, self.has_bias,
                                      self.batch_first, self.dropout, self.bidirectional)


class RNN(_RNNBase):
    """RNN(input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, dtype=float32, *, nonlinearity='tanh'): stacked Elman RNN,
    h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) with act tanh or relu."""

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        check_str("RNN", "nonlinearity", nonlinearity, ("tanh", "relu"))
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = nonlinearity


class GRU(_RNNBase):
    """GRU(input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, dtype=float32): stacked GRU, gates (r, z, n)."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class LSTM(_RNNBase):
    """LSTM(input_size, hidden_size, num_layers=1, has_bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, dtype=float32): stacked LSTM, gates (i, f, g, o); hx = (h_0, c_0);
    returns (output, (h_n, c_n))."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


# ---- cells ------------------------------------------------------------------------------------

class _RNNCellBase(Cell):
    def __init__(self, mode, input_size, hidden_size, has_bias, dtype):
        super().__init__()
        who = type(self).__name__
        check_int(who, "input_size", input_size, 1)
        check_int(who, "hidden_size", hidden_size, 1)
        check_bool(who, "has_bias", has_bias)
        self.mode = mode
        self.input_size, self.hidden_size, self.has_bias = input_size, hidden_size, has_bias
        gate_size = _GATES[mode] * hidden_size
        init = Uniform(1.0 / math.sqrt(hidden_size))
        self.weight_ih = Parameter(initializer(init, (gate_size, input_size), dtype), name="weight_ih")
        self.weight_hh = Parameter(initializer(init, (gate_size, hidden_size), dtype), name="weight_hh")
        if has_bias:
            self.bias_ih = Parameter(initializer(init, (gate_size,), dtype), name="bias_ih")
            self.bias_hh = Parameter(initializer(init, (gate_size,), dtype), name="bias_hh")
        else:
            self.bias_ih = None
            self.bias_hh = None

    def _check(self, x, states):
        who = type(self).__name__
        if not _is_tensor(x):
            raise type_error(who, "x", x, "Tensor")
        if x.ndim != 2 or x._dims(1, 2)[0] != self.input_size:
            raise ValueError("For '%s', the shape of 'x' should be (batch_size, %d), but got %s."
                             % (who, self.input_size, x.shape))
        shape = (x._dims(0, 1)[0], self.hidden_size)
        for arg, h in states:
            _check_state(who, arg, h, shape, x.dtype)

    def _gi(self, x):
        return NF.dense(x, self.weight_ih, self.bias_ih)

    def extend_repr(self):
        return "input_size=%d, hidden_size=%d, has_bias=%s" % (self.input_size, self.hidden_size, self.has_bias)


class RNNCell(_RNNCellBase):
    """RNNCell(input_size, hidden_size, has_bias=True, nonlinearity='tanh', dtype=float32):
    construct(x (B, in), hx (B, H)) -> h' (B, H)."""

    def __init__(self, input_size, hidden_size, has_bias=True, nonlinearity="tanh", dtype=_dt.float32):
        check_str("RNNCell", "nonlinearity", nonlinearity, ("tanh", "relu"))
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                         has_bias, dtype)
        self.nonlinearity = nonlinearity

    def construct(self, x, hx):
        self._check(x, (("hx", hx),))
        return _step(self.mode, self._gi(x), hx, self.weight_hh, self.bias_hh)


class GRUCell(_RNNCellBase):
    """GRUCell(input_size, hidden_size, has_bias=True, dtype=float32):
    construct(x (B, in), hx (B, H)) -> h' (B, H)."""

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=_dt.float32):
        super().__init__("GRU", input_size, hidden_size, has_bias, dtype)

    def construct(self, x, hx):
        self._check(x, (("hx", hx),))
        return _step("GRU", self._gi(x), hx, self.weight_hh, self.bias_hh)


class LSTMCell(_RNNCellBase):
    """LSTMCell(input_size, hidden_size, has_bias=True, dtype=float32):
    construct(x (B, in), hx=(h, c)) -> (h', c'), each (B, H)."""

    def __init__(self, input_size, hidden_size, has_bias=True, dtype=_dt.float32):
        super().__init__("LSTM", input_size, hidden_size, has_bias, dtype)

    def construct(self, x, hx):
        if not isinstance(hx, (tuple, list)):
            raise type_error("LSTMCell", "hx", hx, "tuple")
        if len(hx) != 2:
            raise TypeError("For 'LSTMCell', the length of 'hx' must be 2, but got %d." % len(hx))
        self._check(x, (("hx[0]", hx[0]), ("hx[1]", hx[1])))
        return _step("LSTM", self._gi(x), tuple(hx), self.weight_hh, self.bias_hh)
