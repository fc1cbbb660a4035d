"""A GRU sequence-to-sequence translator with attention, written as the model zoo's GRU
(official/nlp/GRU) writes it, at toy size: a bidirectional nn.GRU encoder whose last forward and
backward states pass through Dense + Tanh, additive attention (Dense, Tanh, Softmax, BatchMatMul),
a GRU decoder unrolled over the target in a Python loop with teacher forcing, log-softmax outputs
and an NLL loss made of OneHot; a custom TrainOneStepCell with GradOperation(get_by_list=True,
sens_param=True), the sens filled with P.Fill, gradients clipped by
hyper_map(F.partial(clip_grad, ...)) over a MultitypeFuncGraph, F.depend on the optimizer, Adam.
Trained eagerly and in GRAPH_MODE from the same start."""
import numpy as np

import mindspore.nn as nn
import mindspore.ops.operations as P
import mindspore.ops.composite as C
import mindspore.ops.functional as F
import mindspore.common.dtype as mstype
from mindspore import Tensor, context, ParameterTuple

import zoo_common as zc

GRADIENT_CLIP_TYPE = 1
GRADIENT_CLIP_VALUE = 1.0

clip_grad = C.MultitypeFuncGraph("clip_grad")


@clip_grad.register("Number", "Number", "Tensor")
def _clip_grad(clip_type, clip_value, grad):
    """By value (type 0) or by norm (type 1)."""
    if clip_type not in (0, 1):
        return grad
    dt = F.dtype(grad)
    if clip_type == 0:
        return C.clip_by_value(grad, F.cast(F.tuple_to_array((-clip_value,)), dt),
                               F.cast(F.tuple_to_array((clip_value,)), dt))
    return nn.ClipByNorm()(grad, F.cast(F.tuple_to_array((clip_value,)), dt))


class Encoder(nn.Cell):
    def __init__(self, vocab, embed, hidden, batch):
        super(Encoder, self).__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.rnn = nn.GRU(embed, hidden, num_layers=1, has_bias=True, batch_first=False, bidirectional=True)
        self.fc = nn.Dense(2 * hidden, hidden)
        self.tanh = P.Tanh()
        self.concat = P.Concat(1)
        self.trans = P.Transpose()

    def construct(self, src):
        embedded = self.trans(self.embedding(src), (1, 0, 2))   # (src_len, batch, embed)
        output, hidden = self.rnn(embedded)                     # hidden: (2, batch, hidden)
        hidden = self.tanh(self.fc(self.concat((hidden[-2], hidden[-1]))))
        return output, hidden


class Attention(nn.Cell):
    def __init__(self, enc_hidden, dec_hidden):
        super(Attention, self).__init__()
        self.attn = nn.Dense(enc_hidden * 2 + dec_hidden, dec_hidden)
        self.v = nn.Dense(dec_hidden, 1, has_bias=False)
        self.tanh = P.Tanh()
        self.softmax = P.Softmax()
        self.tile = P.Tile()
        self.concat = P.Concat(2)
        self.squeeze = P.Squeeze(2)
        self.expand = P.ExpandDims()
        self.trans = P.Transpose()
        self.shape = P.Shape()

    def construct(self, hidden, encoder_outputs):
        src_len = self.shape(encoder_outputs)[0]
        hidden = self.tile(self.expand(hidden, 1), (1, src_len, 1))        # (batch, src, hidden)
        encoder_outputs = self.trans(encoder_outputs, (1, 0, 2))           # (batch, src, 2 hidden)
        energy = self.tanh(self.attn(self.concat((hidden, encoder_outputs))))
        return self.softmax(self.squeeze(self.v(energy)))                  # (batch, src)


class Decoder(nn.Cell):
    def __init__(self, vocab, embed, enc_hidden, dec_hidden):
        super(Decoder, self).__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.attention = Attention(enc_hidden, dec_hidden)
        self.rnn = nn.GRU(enc_hidden * 2 + embed, dec_hidden, batch_first=False)
        self.fc_out = nn.Dense(enc_hidden * 2 + dec_hidden + embed, vocab)
        self.log_softmax = P.LogSoftmax(axis=1)
        self.bmm = P.BatchMatMul()
        self.expand = P.ExpandDims()
        self.squeeze0 = P.Squeeze(0)
        self.squeeze1 = P.Squeeze(1)
        self.concat2 = P.Concat(2)
        self.concat1 = P.Concat(1)
        self.trans = P.Transpose()

    def construct(self, token, hidden, encoder_outputs):
        embedded = self.expand(self.embedding(token), 0)                          # (1, batch, embed)
        a = self.expand(self.attention(hidden, encoder_outputs), 1)               # (batch, 1, src)
        weighted = self.bmm(a, self.trans(encoder_outputs, (1, 0, 2)))            # (batch, 1, 2 hidden)
        weighted = self.trans(weighted, (1, 0, 2))
        output, hidden = self.rnn(self.concat2((embedded, weighted)), self.expand(hidden, 0))
        prediction = self.fc_out(self.concat1((self.squeeze0(output), self.squeeze0(weighted),
                                               self.squeeze0(embedded))))
        return self.log_softmax(prediction), self.squeeze0(hidden)


class Seq2Seq(nn.Cell):
    def __init__(self, src_vocab, tgt_vocab, embed, hidden, batch, max_len):
        super(Seq2Seq, self).__init__()
        self.encoder = Encoder(src_vocab, embed, hidden, batch)
        self.decoder = Decoder(tgt_vocab, embed, hidden, hidden)
        self.max_len = max_len
        self.stack = P.Stack(axis=0)

    def construct(self, src, trg):
        encoder_outputs, hidden = self.encoder(src)
        outputs = []
        token = trg[:, 0]
        for t in range(1, self.max_len):
            output, hidden = self.decoder(token, hidden, encoder_outputs)
            outputs.append(output)
            token = trg[:, t]  # teacher forcing
        return self.stack(outputs)  # (max_len - 1, batch, vocab)


class NLLLossWithOneHot(nn.Cell):
    def __init__(self, network, vocab):
        super(NLLLossWithOneHot, self).__init__(auto_prefix=False)
        self.network = network
        self.onehot = P.OneHot()
        self.on_value = Tensor(1.0, mstype.float32)
        self.off_value = Tensor(0.0, mstype.float32)
        self.reduce_sum = P.ReduceSum()
        self.reduce_mean = P.ReduceMean()
        self.vocab = vocab
        self.trans = P.Transpose()

    def construct(self, src, trg):
        logp = self.network(src, trg)                       # (steps, batch, vocab)
        target = self.trans(trg[:, 1:], (1, 0))             # (steps, batch)
        hot = self.onehot(target, self.vocab, self.on_value, self.off_value)
        return -self.reduce_mean(self.reduce_sum(logp * hot, -1))


class GRUTrainOneStepCell(nn.TrainOneStepCell):
    """The zoo's training step: gradients with a filled sens, clipped, then the optimizer."""

    def __init__(self, network, optimizer, sens=1.0):
        super(GRUTrainOneStepCell, self).__init__(network, optimizer, sens)
        self.hyper_map = C.HyperMap()
        self.fill = P.Fill()
        self.dtype = P.DType()
        self.shape = P.Shape()
        self.weights = ParameterTuple(network.trainable_params())
        self.grad = C.GradOperation(get_by_list=True, sens_param=True)

    def construct(self, src, trg):
        weights = self.weights
        loss = self.network(src, trg)
        sens = self.fill(self.dtype(loss), self.shape(loss), self.sens)
        grads = self.grad(self.network, weights)(src, trg, sens)
        grads = self.hyper_map(F.partial(clip_grad, GRADIENT_CLIP_TYPE, GRADIENT_CLIP_VALUE), grads)
        grads = self.grad_reducer(grads)
        return F.depend(loss, self.optimizer(grads))


def main(steps=5):
    src_vocab, tgt_vocab, embed, hidden, batch, src_len, tgt_len = 20, 18, 8, 10, 3, 6, 5
    zc.seeded(9)
    rng = np.random.RandomState(23)
    src = Tensor(rng.randint(0, src_vocab, size=(batch, src_len)).astype(np.int32))
    trg = Tensor(rng.randint(0, tgt_vocab, size=(batch, tgt_len)).astype(np.int32))

    def build():
        return Seq2Seq(src_vocab, tgt_vocab, embed, hidden, batch, tgt_len)

    eager_net, jit_net = build(), build()
    zc.same_start(eager_net, jit_net)

    def train_net(net):
        opt = nn.Adam(net.trainable_params(), learning_rate=0.01)
        step = GRUTrainOneStepCell(NLLLossWithOneHot(net, tgt_vocab), opt)
        step.set_train()
        return step

    context.set_context(mode=context.PYNATIVE_MODE)
    step = train_net(eager_net)
    eager = [zc.as_float(step(src, trg)) for _ in range(steps)]

    context.set_context(mode=context.GRAPH_MODE)
    step = train_net(jit_net)
    before = zc.capture_counts(step)
    jitted = [zc.as_float(step(src, trg)) for _ in range(steps)]
    graphs, breaks = zc.capture_counts(step, since=before)
    context.set_context(mode=context.PYNATIVE_MODE)
    zc.report("gru_seq2seq", eager, jitted, graphs, breaks)


if __name__ == "__main__":
    main()
