"""The Transformer as the model zoo's official/nlp/Transformer writes it, at toy size: an embedding
table Parameter looked up with P.Gather, a sinusoidal position table, pre-LayerNorm encoder and
decoder cells held in nn.CellList, multi-head attention built from Dense (TruncatedNormal(0.02)
weights), P.Reshape / P.Transpose / P.BatchMatMul(transpose_b=True) and an additive mask from
(1 - mask) * -10000, a future mask for the decoder, a label-smoothed loss from OneHot with Tensor
on/off values and a weight mask, a TrainOneStepCell subclass that scales with a cast sens and clips
gradients, Adam on a per-step learning-rate Tensor. The training step runs eagerly and under
ms_function (jit) from the same start."""
import math

import numpy as np

import mindspore as ms
import mindspore.nn as nn
import mindspore.ops.operations as P
import mindspore.ops.composite as C
import mindspore.ops.functional as F
import mindspore.common.dtype as mstype
from mindspore import Tensor, Parameter, context
from mindspore.common.initializer import TruncatedNormal, Normal, initializer

import zoo_common as zc

clip_grad = C.MultitypeFuncGraph("clip_grad")


@clip_grad.register("Number", "Number", "Tensor")
def _clip_grad(clip_type, clip_value, grad):
    dt = F.dtype(grad)
    if clip_type == 0:
        return C.clip_by_value(grad, F.cast(F.tuple_to_array((-clip_value,)), dt),
                               F.cast(F.tuple_to_array((clip_value,)), dt))
    return nn.ClipByNorm()(grad, F.cast(F.tuple_to_array((clip_value,)), dt))


def position_encoding(length, depth, min_timescale=1, max_timescale=1e4):
    """The sinusoid table, (length, depth), float32."""
    depth = depth // 2
    positions = np.arange(length, dtype=np.float32)
    log_increment = np.log(max_timescale / min_timescale) / (depth - 1)
    inv = min_timescale * np.exp(np.arange(depth, dtype=np.float32) * -log_increment)
    scaled = np.expand_dims(positions, 1) * np.expand_dims(inv, 0)
    return np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1).astype(np.float32)


class EmbeddingLookup(nn.Cell):
    def __init__(self, vocab_size, embedding_size, initializer_range=0.02):
        super(EmbeddingLookup, self).__init__()
        self.embedding_size = embedding_size
        self.embedding_table = Parameter(initializer(Normal(initializer_range), [vocab_size, embedding_size]))
        self.gather = P.Gather()
        self.shape = P.Shape()

    def construct(self, input_ids):
        out = self.gather(self.embedding_table, input_ids, 0)
        return out, self.embedding_table


class EmbeddingPostprocessor(nn.Cell):
    def __init__(self, embedding_size, max_position_embeddings=32):
        super(EmbeddingPostprocessor, self).__init__()
        self.scores_mul = Tensor([math.sqrt(float(embedding_size))], dtype=mstype.float32)
        self.multiply = P.Mul()
        self.add = P.Add()
        self.position_embedding_table = Tensor(position_encoding(max_position_embeddings, embedding_size),
                                               mstype.float32)
        self.shape = P.Shape()
        self.slice = P.StridedSlice()

    def construct(self, word_embeddings):
        seq = self.shape(word_embeddings)[1]
        out = self.multiply(word_embeddings, self.scores_mul)
        pos = self.slice(self.position_embedding_table, (0, 0), (seq, self.shape(word_embeddings)[2]), (1, 1))
        return self.add(out, pos)


class MultiheadAttention(nn.Cell):
    def __init__(self, hidden, num_heads, has_attention_mask=True):
        super(MultiheadAttention, self).__init__()
        self.num_heads = num_heads
        self.size_per_head = hidden // num_heads
        self.has_attention_mask = has_attention_mask
        self.scores_mul = Tensor([1.0 / math.sqrt(float(self.size_per_head))], dtype=mstype.float32)
        self.reshape = P.Reshape()
        units = num_heads * self.size_per_head
        self.query_layer = nn.Dense(hidden, units, has_bias=True, weight_init=TruncatedNormal(0.02))
        self.key_layer = nn.Dense(hidden, units, has_bias=True, weight_init=TruncatedNormal(0.02))
        self.value_layer = nn.Dense(hidden, units, has_bias=True, weight_init=TruncatedNormal(0.02))
        self.out_layer = nn.Dense(units, hidden, has_bias=True, weight_init=TruncatedNormal(0.02))
        self.matmul_trans_b = P.BatchMatMul(transpose_b=True)
        self.matmul = P.BatchMatMul()
        self.multiply = P.Mul()
        self.transpose = P.Transpose()
        self.trans_shape = (0, 2, 1, 3)
        self.multiply_data = Tensor([-10000.0], dtype=mstype.float32)
        self.expand_dims = P.ExpandDims()
        self.sub = P.Sub()
        self.add = P.TensorAdd()
        self.cast = P.Cast()
        self.softmax = nn.Softmax()
        self.shape = P.Shape()

    def construct(self, from_tensor, to_tensor, attention_mask=None):
        b, fs, h = self.shape(from_tensor)
        ts = self.shape(to_tensor)[1]
        q = self.reshape(self.query_layer(self.reshape(from_tensor, (-1, h))), (b, fs, self.num_heads, self.size_per_head))
        k = self.reshape(self.key_layer(self.reshape(to_tensor, (-1, h))), (b, ts, self.num_heads, self.size_per_head))
        v = self.reshape(self.value_layer(self.reshape(to_tensor, (-1, h))), (b, ts, self.num_heads, self.size_per_head))
        q = self.transpose(q, self.trans_shape)
        k = self.transpose(k, self.trans_shape)
        scores = self.multiply(self.matmul_trans_b(q, k), self.scores_mul)
        if self.has_attention_mask:
            mask = self.expand_dims(attention_mask, 1)
            adder = self.multiply(self.sub(self.cast(F.tuple_to_array((1.0,)), F.dtype(scores)),
                                           self.cast(mask, F.dtype(scores))), self.multiply_data)
            scores = self.add(adder, scores)
        probs = self.softmax(scores)
        ctx = self.matmul(probs, self.transpose(v, self.trans_shape))
        ctx = self.reshape(self.transpose(ctx, self.trans_shape), (-1, self.num_heads * self.size_per_head))
        return self.reshape(self.out_layer(ctx), (b, fs, h))


class FeedForward(nn.Cell):
    def __init__(self, hidden, inner):
        super(FeedForward, self).__init__()
        self.conv1 = nn.Dense(hidden, inner, activation="relu", weight_init=TruncatedNormal(0.02))
        self.conv2 = nn.Dense(inner, hidden, weight_init=TruncatedNormal(0.02))
        self.reshape = P.Reshape()
        self.shape = P.Shape()

    def construct(self, x):
        shape = self.shape(x)
        out = self.conv2(self.conv1(self.reshape(x, (-1, shape[2]))))
        return self.reshape(out, shape)


class EncoderCell(nn.Cell):
    def __init__(self, hidden, heads, inner):
        super(EncoderCell, self).__init__()
        self.ln1 = nn.LayerNorm((hidden,), epsilon=1e-6)
        self.attention = MultiheadAttention(hidden, heads)
        self.ln2 = nn.LayerNorm((hidden,), epsilon=1e-6)
        self.feedforward = FeedForward(hidden, inner)

    def construct(self, x, mask):
        x = x + self.attention(self.ln1(x), self.ln1(x), mask)
        return x + self.feedforward(self.ln2(x))


class DecoderCell(nn.Cell):
    def __init__(self, hidden, heads, inner):
        super(DecoderCell, self).__init__()
        self.ln1 = nn.LayerNorm((hidden,), epsilon=1e-6)
        self.self_attention = MultiheadAttention(hidden, heads)
        self.ln2 = nn.LayerNorm((hidden,), epsilon=1e-6)
        self.cross_attention = MultiheadAttention(hidden, heads)
        self.ln3 = nn.LayerNorm((hidden,), epsilon=1e-6)
        self.feedforward = FeedForward(hidden, inner)

    def construct(self, x, self_mask, memory, memory_mask):
        y = self.ln1(x)
        x = x + self.self_attention(y, y, self_mask)
        x = x + self.cross_attention(self.ln2(x), memory, memory_mask)
        return x + self.feedforward(self.ln3(x))


class CreateAttentionMaskFromInputMask(nn.Cell):
    """mask (batch, to_len) -> (batch, from_len, to_len), optionally lower-triangular."""

    def __init__(self, seq_length, future=False):
        super(CreateAttentionMaskFromInputMask, self).__init__()
        self.cast = P.Cast()
        self.reshape = P.Reshape()
        self.shape = P.Shape()
        self.batch_matmul = P.BatchMatMul()
        self.multiply = P.Mul()
        self.future = future
        # lower triangle: position i sees positions <= i
        self.future_mask = Tensor(np.array([[1.0 if j <= i else 0.0 for j in range(seq_length)]
                                            for i in range(seq_length)], dtype=np.float32))

    def construct(self, input_mask):
        s = self.shape(input_mask)
        mask = self.cast(self.reshape(input_mask, (s[0], 1, s[1])), mstype.float32)
        ones = F.ones_like(self.reshape(mask, (s[0], s[1], 1)))
        mask = self.batch_matmul(ones, mask)
        if self.future:
            mask = self.multiply(mask, self.future_mask)
        return mask


class TransformerModel(nn.Cell):
    def __init__(self, vocab, hidden, heads, inner, layers, src_len, tgt_len):
        super(TransformerModel, self).__init__()
        self.tfm_embedding_lookup = EmbeddingLookup(vocab, hidden)
        self.tfm_embedding_postprocessor = EmbeddingPostprocessor(hidden)
        self.encoder = nn.CellList([EncoderCell(hidden, heads, inner) for _ in range(layers)])
        self.decoder = nn.CellList([DecoderCell(hidden, heads, inner) for _ in range(layers)])
        self.enc_norm = nn.LayerNorm((hidden,), epsilon=1e-6)
        self.dec_norm = nn.LayerNorm((hidden,), epsilon=1e-6)
        self.src_mask = CreateAttentionMaskFromInputMask(src_len)
        self.tgt_mask = CreateAttentionMaskFromInputMask(tgt_len, future=True)
        self.cross_mask = P.BatchMatMul()
        self.matmul = P.MatMul(transpose_b=True)
        self.reshape = P.Reshape()
        self.shape = P.Shape()
        self.cast = P.Cast()
        self.log_softmax = nn.LogSoftmax(axis=-1)

    def construct(self, source_ids, source_mask, target_ids, target_mask):
        emb, table = self.tfm_embedding_lookup(source_ids)
        x = self.tfm_embedding_postprocessor(emb)
        enc_mask = self.src_mask(source_mask)
        for cell in self.encoder:
            x = cell(x, enc_mask)
        memory = self.enc_norm(x)
        emb, _ = self.tfm_embedding_lookup(target_ids)
        y = self.tfm_embedding_postprocessor(emb)
        dec_mask = self.tgt_mask(target_mask)
        tm = self.cast(self.reshape(target_mask, (self.shape(target_mask)[0], -1, 1)), mstype.float32)
        sm = self.cast(self.reshape(source_mask, (self.shape(source_mask)[0], 1, -1)), mstype.float32)
        cross_mask = self.cross_mask(tm, sm)
        for cell in self.decoder:
            y = cell(y, dec_mask, memory, cross_mask)
        y = self.dec_norm(y)
        logits = self.matmul(self.reshape(y, (-1, self.shape(y)[2])), table)  # tied output projection
        return self.log_softmax(logits)


class TransformerTrainingLoss(nn.Cell):
    def __init__(self, vocab, label_smoothing=0.1):
        super(TransformerTrainingLoss, self).__init__(auto_prefix=False)
        self.vocab_size = vocab
        self.onehot = P.OneHot()
        self.on_value = Tensor(float(1 - label_smoothing), mstype.float32)
        self.off_value = Tensor(label_smoothing / float(vocab - 1), mstype.float32)
        self.reduce_sum = P.ReduceSum()
        self.reshape = P.Reshape()
        self.last_idx = (-1,)
        self.flatten = P.Flatten()
        self.neg = P.Neg()
        self.cast = P.Cast()

    def construct(self, prediction_scores, label_ids, label_weights):
        label_ids = self.reshape(label_ids, (-1,))
        one_hot_labels = self.onehot(label_ids, self.vocab_size, self.on_value, self.off_value)
        per_example_loss = self.neg(self.reduce_sum(prediction_scores * one_hot_labels, self.last_idx))
        label_weights = self.cast(self.reshape(label_weights, (-1,)), mstype.float32)
        numerator = self.reduce_sum(label_weights * per_example_loss, ())
        denominator = self.reduce_sum(label_weights, ()) + self.cast(F.tuple_to_array((1e-5,)), mstype.float32)
        return numerator / denominator


class TransformerNetworkWithLoss(nn.Cell):
    def __init__(self, model, vocab):
        super(TransformerNetworkWithLoss, self).__init__(auto_prefix=False)
        self.transformer = model
        self.loss = TransformerTrainingLoss(vocab)

    def construct(self, source_ids, source_mask, target_ids, target_mask, label_ids, label_weights):
        scores = self.transformer(source_ids, source_mask, target_ids, target_mask)
        return self.loss(scores, label_ids, label_weights)


class TransformerTrainOneStepCell(nn.TrainOneStepCell):
    def __init__(self, network, optimizer, sens=1.0):
        super(TransformerTrainOneStepCell, self).__init__(network, optimizer, sens=sens)
        self.cast = P.Cast()
        self.hyper_map = C.HyperMap()

    def construct(self, source_eos_ids, source_eos_mask, target_sos_ids, target_sos_mask, target_eos_ids,
                  target_eos_mask):
        weights = self.weights
        loss = self.network(source_eos_ids, source_eos_mask, target_sos_ids, target_sos_mask, target_eos_ids,
                            target_eos_mask)
        grads = self.grad(self.network, weights)(source_eos_ids, source_eos_mask, target_sos_ids, target_sos_mask,
                                                 target_eos_ids, target_eos_mask,
                                                 self.cast(F.tuple_to_array((self.sens,)), mstype.float32))
        grads = self.hyper_map(F.partial(clip_grad, 1, 1.0), grads)
        grads = self.grad_reducer(grads)
        self.optimizer(grads)
        return loss


def create_dynamic_lr(steps, learning_rate=0.01, warmup_steps=2, hidden_size=16):
    lr = []
    for step in range(1, steps + 1):
        lr.append(learning_rate * min(1.0, step / warmup_steps) * max(step, warmup_steps) ** -0.5
                  * hidden_size ** 0.5 / hidden_size ** 0.5)
    return np.array(lr, dtype=np.float32)


def main(steps=5):
    vocab, hidden, heads, inner, layers, batch, src_len, tgt_len = 24, 16, 2, 32, 1, 2, 6, 5
    zc.seeded(10)
    rng = np.random.RandomState(29)
    src = Tensor(rng.randint(1, vocab, size=(batch, src_len)).astype(np.int32))
    src_mask = Tensor(np.array([[1] * src_len, [1] * (src_len - 2) + [0, 0]], dtype=np.int32))
    tgt = rng.randint(1, vocab, size=(batch, tgt_len + 1)).astype(np.int32)
    tgt_in, tgt_out = Tensor(tgt[:, :-1]), Tensor(tgt[:, 1:])
    tgt_mask = Tensor(np.array([[1] * tgt_len, [1] * (tgt_len - 1) + [0]], dtype=np.int32))
    inputs = (src, src_mask, tgt_in, tgt_mask, tgt_out, tgt_mask)

    def build():
        return TransformerModel(vocab, hidden, heads, inner, layers, src_len, tgt_len)

    eager_net, jit_net = build(), build()
    zc.same_start(eager_net, jit_net)

    def train_net(net):
        lr = Tensor(create_dynamic_lr(steps))
        opt = nn.Adam(net.trainable_params(), lr, beta1=0.9, beta2=0.98)
        step = TransformerTrainOneStepCell(TransformerNetworkWithLoss(net, vocab), opt)
        step.set_train(True)
        return step

    context.set_context(mode=context.PYNATIVE_MODE)
    step = train_net(eager_net)
    eager = [zc.as_float(step(*inputs)) for _ in range(steps)]

    train_cell = train_net(jit_net)

    @ms.ms_function
    def train_step(*args):
        return train_cell(*args)

    before = zc.capture_counts(train_step)
    jitted = [zc.as_float(train_step(*inputs)) for _ in range(steps)]
    graphs, breaks = zc.capture_counts(train_step, since=before)
    zc.report("transformer", eager, jitted, graphs, breaks)


if __name__ == "__main__":
    main()
