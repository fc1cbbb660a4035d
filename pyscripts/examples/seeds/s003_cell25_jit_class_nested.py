# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), code cell 25, verbatim.
# Run: python -m pijit run s003_cell25_jit_class_nested.py
import numpy as np
import mindspore
from mindspore import nn

@mindspore.jit_class
class Inner:
    def __init__(self):
        self.value = mindspore.tensor(np.array([1, 2, 3]))

@mindspore.jit_class
class InnerNet:
    def __init__(self):
        self.inner = Inner()

class Net(nn.Cell):
    def __init__(self):
        super(Net, self).__init__()
        self.inner_net = InnerNet()

    @mindspore.jit
    def construct(self):
        out = self.inner_net.inner.value
        return out

net = Net()
out = net()
print(out)
