# Seed document 001_e2f3167b273dc22a.txt (plain-text tutorial), example [1] (Graph mode). The text
# lost its indentation; this is the same program with the indentation restored, nothing else.
# Run: python -m pijit run s001_cell1_graph_mode_mul.py
import numpy as np
import mindspore.nn as nn
import mindspore.ops as ops
import mindspore as ms

ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")

class Net(nn.Cell):
    def __init__(self):
        super(Net, self).__init__()
        self.mul = ops.Mul()

    def construct(self, x, y):
        return self.mul(x, y)

x = ms.Tensor(np.array([1.0, 2.0, 3.0]).astype(np.float32))
y = ms.Tensor(np.array([4.0, 5.0, 6.0]).astype(np.float32))

net = Net()
print(net(x, y))
