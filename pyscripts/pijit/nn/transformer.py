"""MindSpore's attention and Transformer layers: nn.MultiheadAttention, TransformerEncoderLayer,
TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer (MindSpore 2.x
signatures; the math is "Attention is all you need" as PyTorch's layers compute it, which
MindSpore's follow: masks with True = not attended or float masks added to the scores,
post- or pre-norm residual blocks).

Inputs are (seq, batch, feature) unless batch_first, or unbatched (seq, feature). Parameters
follow MindSpore's names: in_proj_weight / in_proj_bias (or q/k/v_proj_weight when kdim or vdim
differ), out_proj (a Dense), dense1 / dense2, norm1..norm3 (LayerNorm gamma / beta).

As MindSpore does, TransformerEncoder(encoder_layer, n) and TransformerDecoder build one new layer
with encoder_layer's settings and use it n times (one set of weights shared by the n layers).
"""
import math

from pijit import dtype as _dt
from pijit.common.initializer import initializer, XavierNormal, XavierUniform, HeUniform, Uniform
from pijit.nn.activation import ReLU, GELU
from pijit.nn.basic import Dense, Dropout
from pijit.nn.cell import Cell
from pijit.nn.container import CellList
from pijit.nn.normalization import LayerNorm
from pijit.ops import functional as F
from pijit.ops import nn_functional as NF
from pijit.parameter import Parameter


def _is_float(t):
    return t.dtype in (_dt.float16, _dt.float32, _dt.float64, _dt.bfloat16)


def _additive(mask, dtype):
    """A bool mask (True = masked) as 0 / -inf, a float mask as it is."""
    if mask.dtype == _dt.bool_:
        return F.where(mask, float("-inf"), 0.0).astype(dtype)
    if not _is_float(mask):
        raise ValueError("only bool and floating types of masks are supported, got %s" % mask.dtype)
    return mask.astype(dtype) if mask.dtype != dtype else mask


def _linear(x, w, b):
    y = F.matmul(x, w.swapaxes(0, 1))
    return y + b if b is not None else y


def _pad_last(t, value=0.0):
    """t with one more column of `value` on its last dim (for bias_k/v and add_zero_attn)."""
    extra = F.zeros(t.shape[:-1] + (1,), t.dtype) + value
    return F.concat((t, extra), t.ndim - 1)


class MultiheadAttention(Cell):
    """MultiheadAttention(embed_dim, num_heads, dropout=0.0, has_bias=True, add_bias_kv=False,
    add_zero_attn=False, kdim=None, vdim=None, batch_first=False, dtype=float32).

    construct(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True) -> (attn_output, attn_weights), or (attn_output,) when
    need_weights is False. attn_mask is (L, S) or (N * num_heads, L, S); key_padding_mask
    (N, S); bool masks hide True positions, float masks are added to the scores."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, has_bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, dtype=_dt.float32):
        super().__init__()
        for name, v in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError("For 'MultiheadAttention', '%s' must be a positive int, got %r"
                                 % (name, v))
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = float(dropout)
        self.batch_first = bool(batch_first)
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError("The init argument 'embed_dim' must be divisible by 'num_heads'.")
        dtype = _dt.float32 if dtype is None else dtype
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(initializer(XavierUniform(), (3 * embed_dim, embed_dim),
                                                        dtype), name="in_proj_weight")
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, embed_dim), dtype),
                                           name="q_proj_weight")
            self.k_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, self.kdim), dtype),
                                           name="k_proj_weight")
            self.v_proj_weight = Parameter(initializer(XavierUniform(), (embed_dim, self.vdim), dtype),
                                           name="v_proj_weight")
            self.in_proj_weight = None
        self.in_proj_bias = (Parameter(initializer("zeros", (3 * embed_dim,), dtype), name="in_proj_bias")
                             if has_bias else None)
        bound = 1 / math.sqrt(embed_dim)
        self.out_proj = Dense(embed_dim, embed_dim, has_bias=has_bias,
                              weight_init=HeUniform(math.sqrt(5)), bias_init=Uniform(bound),
                              dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(initializer(XavierNormal(), (1, 1, embed_dim), dtype), name="bias_k")
            self.bias_v = Parameter(initializer(XavierNormal(), (1, 1, embed_dim), dtype), name="bias_v")
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)
        self.dtype = dtype

    def _projections(self):
        e = self.embed_dim
        b = self.in_proj_bias
        bq = bk = bv = None
        if b is not None:
            bq, bk, bv = b[:e], b[e:2 * e], b[2 * e:]
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            return (w[:e], bq), (w[e:2 * e], bk), (w[2 * e:], bv)
        return (self.q_proj_weight, bq), (self.k_proj_weight, bk), (self.v_proj_weight, bv)

    def construct(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                  average_attn_weights=True):
        if key_padding_mask is not None and key_padding_mask.dtype != _dt.bool_ and \
                not _is_float(key_padding_mask):
            raise ValueError("only bool and floating types of key_padding_mask are supported")
        batched = query.ndim == 3
        if not batched:  # (L, E) -> (L, 1, E)
            query, key, value = query.expand_dims(1), key.expand_dims(1), value.expand_dims(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.expand_dims(0)
        elif self.batch_first:
            query, key, value = query.swapaxes(0, 1), key.swapaxes(0, 1), value.swapaxes(0, 1)
        tgt_len, bsz, e = query.shape
        src_len = key.shape[0]
        h, hd = self.num_heads, self.head_dim
        (wq, bq), (wk, bk), (wv, bv) = self._projections()
        q = _linear(query, wq, bq)
        k = _linear(key, wk, bk)
        v = _linear(value, wv, bv)
        mask = None
        if attn_mask is not None:
            mask = _additive(attn_mask, q.dtype)
            if mask.ndim == 2:
                mask = mask.reshape((1, tgt_len, mask.shape[-1]))
        kpm = None if key_padding_mask is None else _additive(key_padding_mask, q.dtype)
        if self.bias_k is not None:
            k = F.concat((k, F.broadcast_to(self.bias_k, (1, bsz, e))), 0)
            v = F.concat((v, F.broadcast_to(self.bias_v, (1, bsz, e))), 0)
            mask = None if mask is None else _pad_last(mask)
            kpm = None if kpm is None else _pad_last(kpm)
            src_len += 1
        # (S, N, E) -> (N * H, S, hd): head i of sample n at row n * H + i
        q = q.reshape((tgt_len, bsz * h, hd)).swapaxes(0, 1)
        k = k.reshape((k.shape[0], bsz * h, hd)).swapaxes(0, 1)
        v = v.reshape((v.shape[0], bsz * h, hd)).swapaxes(0, 1)
        if self.add_zero_attn:
            k = F.concat((k, F.zeros((bsz * h, 1, hd), k.dtype)), 1)
            v = F.concat((v, F.zeros((bsz * h, 1, hd), v.dtype)), 1)
            mask = None if mask is None else _pad_last(mask)
            kpm = None if kpm is None else _pad_last(kpm)
            src_len += 1
        scores = F.matmul(q * (1.0 / math.sqrt(hd)), k.swapaxes(1, 2))  # (N * H, L, S)
        if mask is not None:
            scores = scores + mask
        if kpm is not None:
            scores = (scores.reshape((bsz, h, tgt_len, src_len)) +
                      kpm.reshape((bsz, 1, 1, src_len))).reshape((bsz * h, tgt_len, src_len))
        attn = F.softmax(scores, -1)
        if self.training and self.dropout > 0:
            attn = NF.dropout(attn, self.dropout, training=True)
        out = F.matmul(attn, v)  # (N * H, L, hd)
        out = out.swapaxes(0, 1).reshape((tgt_len * bsz, e))
        out = self.out_proj(out).reshape((tgt_len, bsz, e))
        if not batched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.swapaxes(0, 1)
        if not need_weights:
            return (out,)
        weights = attn.reshape((bsz, h, tgt_len, src_len))
        if average_attn_weights:
            weights = F.mean(weights, 1)
        if not batched:
            weights = weights.squeeze(0)
        return out, weights


def _activation(activation):
    """'relu' / 'gelu', nn.ReLU / nn.GELU instances, or ops.relu / ops.gelu, as MindSpore allows."""
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise ValueError("The argument 'activation' must be 'relu' or 'gelu', but got %r." % (activation,))
    if isinstance(activation, Cell):
        if not isinstance(activation, (ReLU, GELU)):
            raise ValueError("The argument 'activation' must be nn.ReLU or nn.GELU instance, but "
                             "got %r." % (activation,))
        return activation
    if callable(activation):
        if activation is not F.relu and activation is not F.gelu:
            raise ValueError("The argument 'activation' must be ops.relu or ops.gelu, but got %r."
                             % (activation,))
        return activation
    raise ValueError("The argument 'activation' must be str, callable or Cell instance, but got %r."
                     % (activation,))


def _feed_forward(cell, d_model, dim_feedforward, dtype):
    cell.dense1 = Dense(d_model, dim_feedforward, weight_init=HeUniform(math.sqrt(5)),
                        bias_init=Uniform(1 / math.sqrt(d_model)), dtype=dtype)
    cell.dense2 = Dense(dim_feedforward, d_model, weight_init=HeUniform(math.sqrt(5)),
                        bias_init=Uniform(1 / math.sqrt(dim_feedforward)), dtype=dtype)


def _check_kpm(mask):
    if mask is not None and mask.dtype != _dt.bool_ and not _is_float(mask):
        raise AssertionError("only bool and floating types of key_padding_mask are supported")


class TransformerEncoderLayer(Cell):
    """TransformerEncoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
    activation='relu', layer_norm_eps=1e-5, batch_first=False, norm_first=False, dtype=float32):
    self-attention then a feed-forward block, each with a residual connection and a LayerNorm
    (after it, or before with norm_first). construct(src, src_mask=None,
    src_key_padding_mask=None)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, dtype=_dt.float32):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                            dtype=dtype)
        _feed_forward(self, d_model, dim_feedforward, dtype)
        self.dropout = Dropout(p=dropout)
        self.norm1 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(p=dropout)
        self.dropout2 = Dropout(p=dropout)
        self.activation1 = activation
        self.activation = _activation(activation)
        self.d_model, self.nhead, self.dim_feedforward = d_model, nhead, dim_feedforward
        self.dropout_num, self.layernorm_eps = dropout, layer_norm_eps
        self.batch_first, self.norm_first, self.dtype = batch_first, norm_first, dtype

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_kpm(src_key_padding_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.dense2(self.dropout(self.activation(self.dense1(x)))))


class TransformerDecoderLayer(Cell):
    """TransformerDecoderLayer(d_model, nhead, dim_feedforward=2048, dropout=0.1,
    activation='relu', layer_norm_eps=1e-5, batch_first=False, norm_first=False, dtype=float32):
    self-attention, attention over the encoder's memory, then feed-forward.
    construct(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, dtype=_dt.float32):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                            dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, dtype=dtype)
        _feed_forward(self, d_model, dim_feedforward, dtype)
        self.dropout = Dropout(p=dropout)
        self.norm1 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.norm3 = LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(p=dropout)
        self.dropout2 = Dropout(p=dropout)
        self.dropout3 = Dropout(p=dropout)
        self.activation1 = activation
        self.activation = _activation(activation)
        self.d_model, self.nhead, self.dim_feedforward = d_model, nhead, dim_feedforward
        self.dropout_num, self.layernorm_eps = dropout, layer_norm_eps
        self.batch_first, self.norm_first, self.dtype = batch_first, norm_first, dtype

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.dense2(self.dropout(self.activation(self.dense1(x)))))


def _same_layer(cls, layer):
    return cls(layer.d_model, layer.nhead, layer.dim_feedforward, layer.dropout_num, layer.activation1,
               layer.layernorm_eps, layer.batch_first, layer.norm_first, dtype=layer.dtype)


class TransformerEncoder(Cell):
    """TransformerEncoder(encoder_layer, num_layers, norm=None): a new layer with
    encoder_layer's settings applied num_layers times (its weights shared, as MindSpore does),
    then norm. construct(src, src_mask=None, src_key_padding_mask=None)."""

    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        layer = _same_layer(TransformerEncoderLayer, encoder_layer)
        # one entry, run num_layers times: the same weights each time, named layers.0.* (a Cell
        # listed twice in a CellList gets its parameters renamed per listing by pijit's naming)
        self.layers = CellList([layer])
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _check_kpm(src_key_padding_mask)
        out = src
        mod = self.layers[0]
        for _ in range(self.num_layers):
            out = mod(out, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            out = self.norm(out)
        return out


class TransformerDecoder(Cell):
    """TransformerDecoder(decoder_layer, num_layers, norm=None): as TransformerEncoder, for
    decoder layers. construct(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None)."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        layer = _same_layer(TransformerDecoderLayer, decoder_layer)
        # one entry, run num_layers times: the same weights each time, named layers.0.* (a Cell
        # listed twice in a CellList gets its parameters renamed per listing by pijit's naming)
        self.layers = CellList([layer])
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None):
        out = tgt
        mod = self.layers[0]
        for _ in range(self.num_layers):
            out = mod(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            out = self.norm(out)
        return out


class Transformer(Cell):
    """Transformer(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
    dim_feedforward=2048, dropout=0.1, activation='relu', custom_encoder=None,
    custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
    dtype=float32): an encoder and a decoder, each ending in a LayerNorm.
    construct(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None)."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 dtype=_dt.float32):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm((d_model,), epsilon=layer_norm_eps, dtype=dtype))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def construct(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                  src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None):
        is_batched = src.ndim == 3
        if self.batch_first and is_batched and src.shape[0] != tgt.shape[0]:
            raise ValueError("The number of batch of 'src' and 'tgt' must be equal.")
        if not self.batch_first and is_batched and src.shape[1] != tgt.shape[1]:
            raise ValueError("The number of batch of 'src' and 'tgt' must be equal.")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError("The number of features of 'src' and 'tgt' must be equal to d_model.")
        memory = self.encoder(src, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)
