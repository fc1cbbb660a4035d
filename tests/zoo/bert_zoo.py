"""BERT pre-training as the model zoo's official/nlp/Bert writes it, at toy size: a config object,
an embedding table Parameter (TruncatedNormal) looked up with P.Gather, token-type and position
nn.Embedding, LayerNorm and dropout, self-attention from Dense layers with reshapes, transposes,
BatchMatMul(transpose_b=True) and the (1 - mask) * -10000 adder, GELU intermediate layers in an
nn.CellList, a tanh pooler on the first token (StridedSlice), the masked-LM head (positions
gathered through flat offsets, the tied embedding table, BiasAdd, LogSoftmax) and the
next-sentence head, the pre-training loss from OneHot with Tensor on/off values and label
weights, and a TrainOneStepCell subclass with a cast sens and gradient clipping by norm.
Trained eagerly and in GRAPH_MODE from the same start.

    python bert_zoo.py [Momentum|AdamWeightDecay|Lamb]   (the zoo's optimizer choices)
"""
import math
import sys

import numpy as np

import mindspore.nn as nn
import mindspore.ops.operations as P
import mindspore.ops.composite as C
import mindspore.ops.functional as F
import mindspore.common.dtype as mstype
from mindspore import Tensor, Parameter, context
from mindspore.common.initializer import TruncatedNormal, initializer

import zoo_common as zc

clip_grad = C.MultitypeFuncGraph("clip_grad")


@clip_grad.register("Number", "Number", "Tensor")
def _clip_grad(clip_type, clip_value, grad):
    dt = F.dtype(grad)
    if clip_type == 0:
        return C.clip_by_value(grad, F.cast(F.tuple_to_array((-clip_value,)), dt),
                               F.cast(F.tuple_to_array((clip_value,)), dt))
    return nn.ClipByNorm()(grad, F.cast(F.tuple_to_array((clip_value,)), dt))


class BertConfig:
    def __init__(self, seq_length=8, vocab_size=40, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=32, hidden_act="gelu", hidden_dropout_prob=0.0,
                 attention_probs_dropout_prob=0.0, max_position_embeddings=16, type_vocab_size=2,
                 initializer_range=0.02, compute_type=mstype.float32):
        self.__dict__.update(locals())
        del self.__dict__["self"]


class EmbeddingLookup(nn.Cell):
    def __init__(self, config):
        super(EmbeddingLookup, self).__init__()
        self.embedding_table = Parameter(initializer(TruncatedNormal(config.initializer_range),
                                                     [config.vocab_size, config.hidden_size]))
        self.gather = P.Gather()
        self.reshape = P.Reshape()
        self.shape = (-1, config.seq_length, config.hidden_size)

    def construct(self, input_ids):
        flat_ids = self.reshape(input_ids, (-1,))
        return self.reshape(self.gather(self.embedding_table, flat_ids, 0), self.shape), self.embedding_table


class EmbeddingPostprocessor(nn.Cell):
    def __init__(self, config):
        super(EmbeddingPostprocessor, self).__init__()
        self.token_type_embedding = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.full_position_embedding = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.position_ids = Tensor(np.arange(config.seq_length).reshape(-1, config.seq_length).astype(np.int32))
        self.layernorm = nn.LayerNorm((config.hidden_size,))
        self.dropout = nn.Dropout(p=config.hidden_dropout_prob)
        self.add = P.Add()

    def construct(self, token_type_ids, word_embeddings):
        output = self.add(word_embeddings, self.token_type_embedding(token_type_ids))
        output = self.add(output, self.full_position_embedding(self.position_ids))
        return self.dropout(self.layernorm(output))


class BertAttention(nn.Cell):
    def __init__(self, config):
        super(BertAttention, self).__init__()
        self.heads = config.num_attention_heads
        self.size_per_head = config.hidden_size // self.heads
        self.seq = config.seq_length
        init = TruncatedNormal(config.initializer_range)
        self.query_layer = nn.Dense(config.hidden_size, config.hidden_size, weight_init=init)
        self.key_layer = nn.Dense(config.hidden_size, config.hidden_size, weight_init=init)
        self.value_layer = nn.Dense(config.hidden_size, config.hidden_size, weight_init=init)
        self.matmul_trans_b = P.BatchMatMul(transpose_b=True)
        self.matmul = P.BatchMatMul()
        self.multiply = P.Mul()
        self.transpose = P.Transpose()
        self.trans_shape = (0, 2, 1, 3)
        self.scores_mul = 1.0 / math.sqrt(float(self.size_per_head))
        self.reshape = P.Reshape()
        self.multiply_data = -10000.0
        self.expand_dims = P.ExpandDims()
        self.sub = P.Sub()
        self.add = P.Add()
        self.cast = P.Cast()
        self.get_dtype = P.DType()
        self.softmax = nn.Softmax()
        self.dropout = nn.Dropout(p=config.attention_probs_dropout_prob)

    def heads_first(self, x):
        return self.transpose(self.reshape(x, (-1, self.seq, self.heads, self.size_per_head)), self.trans_shape)

    def construct(self, from_tensor, attention_mask):
        q = self.heads_first(self.query_layer(from_tensor))
        k = self.heads_first(self.key_layer(from_tensor))
        v = self.heads_first(self.value_layer(from_tensor))
        scores = self.multiply(self.matmul_trans_b(q, k), self.scores_mul)
        mask = self.expand_dims(attention_mask, 1)
        adder = self.multiply(self.sub(self.cast(F.tuple_to_array((1.0,)), self.get_dtype(scores)),
                                       self.cast(mask, self.get_dtype(scores))), self.multiply_data)
        probs = self.dropout(self.softmax(self.add(adder, scores)))
        ctx = self.transpose(self.matmul(probs, v), self.trans_shape)
        return self.reshape(ctx, (-1, self.heads * self.size_per_head))


class BertOutput(nn.Cell):
    def __init__(self, in_channels, out_channels, initializer_range, dropout_prob):
        super(BertOutput, self).__init__()
        self.dense = nn.Dense(in_channels, out_channels, weight_init=TruncatedNormal(initializer_range))
        self.dropout = nn.Dropout(p=dropout_prob)
        self.add = P.Add()
        self.layernorm = nn.LayerNorm((out_channels,))

    def construct(self, hidden_status, input_tensor):
        return self.layernorm(self.add(self.dropout(self.dense(hidden_status)), input_tensor))


class BertEncoderCell(nn.Cell):
    def __init__(self, config):
        super(BertEncoderCell, self).__init__()
        self.attention = BertAttention(config)
        self.attention_output = BertOutput(config.hidden_size, config.hidden_size, config.initializer_range,
                                           config.hidden_dropout_prob)
        self.intermediate = nn.Dense(config.hidden_size, config.intermediate_size, activation=config.hidden_act,
                                     weight_init=TruncatedNormal(config.initializer_range))
        self.output = BertOutput(config.intermediate_size, config.hidden_size, config.initializer_range,
                                 config.hidden_dropout_prob)

    def construct(self, hidden_states, attention_mask):
        attention = self.attention_output(self.attention(hidden_states, attention_mask), hidden_states)
        return self.output(self.intermediate(attention), attention)


class BertModel(nn.Cell):
    def __init__(self, config, is_training):
        super(BertModel, self).__init__()
        self.seq_length, self.hidden_size = config.seq_length, config.hidden_size
        self.bert_embedding_lookup = EmbeddingLookup(config)
        self.bert_embedding_postprocessor = EmbeddingPostprocessor(config)
        self.layers = nn.CellList([BertEncoderCell(config) for _ in range(config.num_hidden_layers)])
        self.reshape = P.Reshape()
        self.cast = P.Cast()
        self.slice = P.StridedSlice()
        self.squeeze_1 = P.Squeeze(axis=1)
        self.dense = nn.Dense(config.hidden_size, config.hidden_size, activation="tanh",
                              weight_init=TruncatedNormal(config.initializer_range))
        self.batch_matmul = P.BatchMatMul()

    def attention_mask(self, input_mask):
        mask = self.cast(self.reshape(input_mask, (-1, 1, self.seq_length)), mstype.float32)
        ones = F.ones_like(self.reshape(mask, (-1, self.seq_length, 1)))
        return self.batch_matmul(ones, mask)

    def construct(self, input_ids, token_type_ids, input_mask):
        word_embeddings, embedding_tables = self.bert_embedding_lookup(input_ids)
        x = self.bert_embedding_postprocessor(token_type_ids, word_embeddings)
        mask = self.attention_mask(input_mask)
        x = self.reshape(x, (-1, self.hidden_size))
        for layer in self.layers:
            x = layer(x, mask)
        sequence_output = self.reshape(x, (-1, self.seq_length, self.hidden_size))
        first = self.squeeze_1(self.slice(sequence_output, (0, 0, 0), (F.shape(sequence_output)[0], 1,
                                                                        self.hidden_size), (1, 1, 1)))
        return sequence_output, self.dense(first), embedding_tables


class GetMaskedLMOutput(nn.Cell):
    def __init__(self, config):
        super(GetMaskedLMOutput, self).__init__()
        self.width = config.hidden_size
        self.reshape = P.Reshape()
        self.gather = P.Gather()
        self.dense = nn.Dense(self.width, config.hidden_size, activation=config.hidden_act,
                              weight_init=TruncatedNormal(config.initializer_range))
        self.layernorm = nn.LayerNorm((config.hidden_size,))
        self.output_bias = Parameter(initializer('zero', config.vocab_size))
        self.matmul = P.MatMul(transpose_b=True)
        self.log_softmax = nn.LogSoftmax(axis=-1)
        self.shape_flat_offsets = (-1, 1)
        self.last_idx = (-1,)
        self.shape_flat_sequence_tensor = (-1, self.width)
        self.seq_length_tensor = Tensor(np.array((config.seq_length,)).astype(np.int32))
        self.cast = P.Cast()
        self.bias_add = P.BiasAdd()

    def construct(self, input_tensor, output_weights, positions):
        rng = F.tuple_to_array(F.make_range(P.Shape()(input_tensor)[0]))
        flat_offsets = self.reshape(rng * self.seq_length_tensor, self.shape_flat_offsets)
        flat_position = self.reshape(positions + flat_offsets, self.last_idx)
        flat_sequence_tensor = self.reshape(input_tensor, self.shape_flat_sequence_tensor)
        x = self.layernorm(self.dense(self.gather(flat_sequence_tensor, flat_position, 0)))
        logits = self.bias_add(self.matmul(x, output_weights), self.output_bias)
        return self.log_softmax(logits)


class BertPreTraining(nn.Cell):
    def __init__(self, config, is_training):
        super(BertPreTraining, self).__init__()
        self.bert = BertModel(config, is_training)
        self.cls1 = GetMaskedLMOutput(config)
        self.cls2 = nn.SequentialCell([nn.Dense(config.hidden_size, 2,
                                                weight_init=TruncatedNormal(config.initializer_range)),
                                       nn.LogSoftmax(axis=-1)])

    def construct(self, input_ids, input_mask, token_type_id, masked_lm_positions):
        sequence_output, pooled_output, embedding_table = self.bert(input_ids, token_type_id, input_mask)
        return self.cls1(sequence_output, embedding_table, masked_lm_positions), self.cls2(pooled_output)


class BertPretrainingLoss(nn.Cell):
    def __init__(self, config):
        super(BertPretrainingLoss, self).__init__()
        self.vocab_size = config.vocab_size
        self.onehot = P.OneHot()
        self.on_value = Tensor(1.0, mstype.float32)
        self.off_value = Tensor(0.0, mstype.float32)
        self.reduce_sum = P.ReduceSum()
        self.reduce_mean = P.ReduceMean()
        self.reshape = P.Reshape()
        self.last_idx = (-1,)
        self.neg = P.Neg()
        self.cast = P.Cast()

    def construct(self, prediction_scores, seq_relationship_score, masked_lm_ids, masked_lm_weights,
                  next_sentence_labels):
        label_ids = self.reshape(masked_lm_ids, self.last_idx)
        label_weights = self.cast(self.reshape(masked_lm_weights, self.last_idx), mstype.float32)
        one_hot_labels = self.onehot(label_ids, self.vocab_size, self.on_value, self.off_value)
        per_example_loss = self.neg(self.reduce_sum(prediction_scores * one_hot_labels, self.last_idx))
        numerator = self.reduce_sum(label_weights * per_example_loss, ())
        denominator = self.reduce_sum(label_weights, ()) + self.cast(F.tuple_to_array((1e-5,)), mstype.float32)
        masked_lm_loss = numerator / denominator
        labels = self.reshape(next_sentence_labels, self.last_idx)
        one_hot_labels = self.onehot(labels, 2, self.on_value, self.off_value)
        per_example_loss = self.neg(self.reduce_sum(one_hot_labels * seq_relationship_score, self.last_idx))
        return masked_lm_loss + self.reduce_mean(per_example_loss, self.last_idx)


class BertNetworkWithLoss(nn.Cell):
    def __init__(self, config, is_training):
        super(BertNetworkWithLoss, self).__init__()
        self.bert = BertPreTraining(config, is_training)
        self.loss = BertPretrainingLoss(config)
        self.cast = P.Cast()

    def construct(self, input_ids, input_mask, token_type_id, next_sentence_labels, masked_lm_positions,
                  masked_lm_ids, masked_lm_weights):
        prediction_scores, seq_relationship_score = self.bert(input_ids, input_mask, token_type_id,
                                                              masked_lm_positions)
        total_loss = self.loss(prediction_scores, seq_relationship_score, masked_lm_ids, masked_lm_weights,
                               next_sentence_labels)
        return self.cast(total_loss, mstype.float32)


class BertTrainOneStepCell(nn.TrainOneStepCell):
    def __init__(self, network, optimizer, sens=1.0, enable_clip_grad=True):
        super(BertTrainOneStepCell, self).__init__(network, optimizer, sens)
        self.cast = P.Cast()
        self.hyper_map = C.HyperMap()
        self.enable_clip_grad = enable_clip_grad

    def construct(self, input_ids, input_mask, token_type_id, next_sentence_labels, masked_lm_positions,
                  masked_lm_ids, masked_lm_weights):
        weights = self.weights
        loss = self.network(input_ids, input_mask, token_type_id, next_sentence_labels, masked_lm_positions,
                            masked_lm_ids, masked_lm_weights)
        grads = self.grad(self.network, weights)(input_ids, input_mask, token_type_id, next_sentence_labels,
                                                 masked_lm_positions, masked_lm_ids, masked_lm_weights,
                                                 self.cast(F.tuple_to_array((self.sens,)), mstype.float32))
        if self.enable_clip_grad:
            grads = self.hyper_map(F.partial(clip_grad, 1, 1.0), grads)
        grads = self.grad_reducer(grads)
        self.optimizer(grads)
        return loss


def make_optimizer(net, name):
    params = net.trainable_params()
    if name == "Momentum":
        return nn.Momentum(params, learning_rate=0.05, momentum=0.9)
    # the zoo's AdamWeightDecay / Lamb path: decay everything but LayerNorm and biases, with a
    # warm-up + polynomial-decay schedule
    lr = nn.PolynomialDecayLR(learning_rate=0.01, end_learning_rate=0.0, decay_steps=10, power=1.0)
    decay = [p for p in params if 'layernorm' not in p.name.lower() and 'bias' not in p.name.lower()]
    other = [p for p in params if not ('layernorm' not in p.name.lower() and 'bias' not in p.name.lower())]
    groups = [{'params': decay, 'weight_decay': 0.01}, {'params': other, 'weight_decay': 0.0},
              {'order_params': params}]
    if name == "Lamb":
        return nn.Lamb(groups, learning_rate=lr, eps=1e-8)
    return nn.AdamWeightDecay(groups, learning_rate=lr, eps=1e-6)


def main(optimizer="Momentum", steps=5):
    cfg = BertConfig()
    batch, masked = 2, 3
    zc.seeded(12)
    rng = np.random.RandomState(31)
    input_ids = Tensor(rng.randint(0, cfg.vocab_size, size=(batch, cfg.seq_length)).astype(np.int32))
    input_mask = Tensor(np.array([[1] * cfg.seq_length, [1] * (cfg.seq_length - 2) + [0, 0]], dtype=np.int32))
    token_type = Tensor(np.array([[0] * 4 + [1] * 4] * batch, dtype=np.int32))
    nsp = Tensor(np.array([0, 1], dtype=np.int32))
    positions = Tensor(np.array([[1, 3, 5], [0, 2, 4]], dtype=np.int32))
    lm_ids = Tensor(rng.randint(0, cfg.vocab_size, size=(batch, masked)).astype(np.int32))
    lm_weights = Tensor(np.array([[1, 1, 1], [1, 1, 0]], dtype=np.float32))
    inputs = (input_ids, input_mask, token_type, nsp, positions, lm_ids, lm_weights)

    eager_net, jit_net = BertNetworkWithLoss(cfg, True), BertNetworkWithLoss(cfg, True)
    zc.same_start(eager_net, jit_net)

    def train_net(net):
        step = BertTrainOneStepCell(net, make_optimizer(net, optimizer))
        step.set_train(True)
        return step

    context.set_context(mode=context.PYNATIVE_MODE)
    step = train_net(eager_net)
    eager = [zc.as_float(step(*inputs)) for _ in range(steps)]

    context.set_context(mode=context.GRAPH_MODE)
    step = train_net(jit_net)
    before = zc.capture_counts(step)
    jitted = [zc.as_float(step(*inputs)) for _ in range(steps)]
    graphs, breaks = zc.capture_counts(step, since=before)
    context.set_context(mode=context.PYNATIVE_MODE)
    zc.report("bert_" + optimizer, eager, jitted, graphs, breaks)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "Momentum")
