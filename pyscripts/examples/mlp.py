"""A MindSpore-style MLP classifier with BatchNorm and Dropout, run eagerly in eval and train mode."""
import mindspore as ms
import mindspore.nn as nn
from mindspore import ops


class MLP(nn.Cell):
    def __init__(self, in_features=32, hidden=64, num_class=5):
        super().__init__()
        self.body = nn.SequentialCell([
            nn.Dense(in_features, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(),
            nn.Dropout(p=0.1),
            nn.Dense(hidden, hidden, activation='relu'),
            nn.Dense(hidden, num_class),
        ])
        self.softmax = nn.Softmax(axis=-1)

    def construct(self, x):
        return self.softmax(self.body(x))


if __name__ == "__main__":
    ms.set_seed(0)
    net = MLP()
    x = ops.randn(8, 32)
    net.set_train(False)
    probs = net(x)
    print("eval probs rows sum to 1:", probs.sum(axis=1))
    net.set_train(True)
    before = net.body[1].moving_mean.copy()
    net(x)
    moved = (net.body[1].moving_mean - before).abs().max()
    print("train mode moved the BatchNorm statistics:", bool(moved > 0))
    print("trainable parameters:", [p.name for p in net.trainable_params()])
