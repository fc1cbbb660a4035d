"""SentimentNet as the model zoo's official/nlp/LSTM writes it, at toy size: a frozen Embedding
from a pretrained-vectors Tensor, P.Transpose to time-major, a stacked bidirectional nn.LSTM with
explicit zero (h, c) states, the first and last time steps cut out with slices, squeezed and
concatenated into the decoder Dense; Momentum and the sparse softmax cross-entropy. Trained
eagerly and in GRAPH_MODE from the same start."""
import numpy as np

import mindspore.nn as nn
import mindspore.ops.operations as P
from mindspore import Tensor, context
from mindspore.common import dtype as mstype

import zoo_common as zc


def stack_lstm_default_state(batch_size, hidden_size, num_layers, bidirectional):
    """Zero (h, c) for every layer and direction, float32."""
    num_directions = 2 if bidirectional else 1
    h = Tensor(np.zeros((num_layers * num_directions, batch_size, hidden_size)).astype(np.float32))
    c = Tensor(np.zeros((num_layers * num_directions, batch_size, hidden_size)).astype(np.float32))
    return h, c


class SentimentNet(nn.Cell):
    """Sentiment classifier on top of a (bidirectional) LSTM encoder."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, bidirectional, num_classes, weight,
                 batch_size, seq_len):
        super(SentimentNet, self).__init__()
        self.embedding = nn.Embedding(vocab_size, embed_size, embedding_table=weight)
        self.embedding.embedding_table.requires_grad = False
        self.trans = P.Transpose()
        self.perm = (1, 0, 2)
        self.encoder = nn.LSTM(input_size=embed_size, hidden_size=num_hiddens, num_layers=num_layers,
                               has_bias=True, bidirectional=bidirectional, dropout=0.0)
        self.h, self.c = stack_lstm_default_state(batch_size, num_hiddens, num_layers, bidirectional)
        self.concat = P.Concat(1)
        self.squeeze = P.Squeeze(axis=0)
        self.last = seq_len - 1
        if bidirectional:
            self.decoder = nn.Dense(num_hiddens * 4, num_classes)
        else:
            self.decoder = nn.Dense(num_hiddens * 2, num_classes)

    def construct(self, inputs):
        embeddings = self.embedding(inputs)           # (batch, seq, embed)
        embeddings = self.trans(embeddings, self.perm)  # (seq, batch, embed)
        output, _ = self.encoder(embeddings, (self.h, self.c))
        encoding = self.concat((self.squeeze(output[0:1:1]), self.squeeze(output[self.last:self.last + 1:1])))
        return self.decoder(encoding)


def main(steps=6):
    vocab, embed, hidden, layers, batch, seq = 50, 8, 12, 2, 4, 10
    zc.seeded(8)
    rng = np.random.RandomState(21)
    weight = Tensor(rng.standard_normal((vocab, embed)).astype(np.float32), mstype.float32)
    tokens = Tensor(rng.randint(0, vocab, size=(batch, seq)).astype(np.int32))
    labels = Tensor(rng.randint(0, 2, size=(batch,)).astype(np.int32))

    def build():
        return SentimentNet(vocab, embed, hidden, layers, True, 2, weight, batch, seq)

    eager_net, jit_net = build(), build()
    zc.same_start(eager_net, jit_net)

    def train_net(net):
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')
        opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
        step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
        step.set_train()
        return step

    context.set_context(mode=context.PYNATIVE_MODE)
    step = train_net(eager_net)
    eager = [zc.as_float(step(tokens, labels)) for _ in range(steps)]

    context.set_context(mode=context.GRAPH_MODE)
    step = train_net(jit_net)
    before = zc.capture_counts(step)
    jitted = [zc.as_float(step(tokens, labels)) for _ in range(steps)]
    graphs, breaks = zc.capture_counts(step, since=before)
    context.set_context(mode=context.PYNATIVE_MODE)
    frozen = bool((eager_net.embedding.embedding_table.asnumpy() == weight.asnumpy()).all())
    zc.report("lstm_sentiment", eager, jitted, graphs, breaks, embedding_frozen=frozen)


if __name__ == "__main__":
    main()
