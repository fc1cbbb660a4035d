# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), code cell 27, verbatim.
# Run: python -m pijit run s003_cell27_jit_class_method.py
import mindspore
from mindspore import nn

@mindspore.jit_class
class InnerNet:
    def __init__(self, val):
        self.number = val

    def act(self, x, y):
        return self.number * (x + y)

class Net(nn.Cell):
    def __init__(self):
        super(Net, self).__init__()
        self.inner_net = InnerNet(2)

    @mindspore.jit
    def construct(self, x, y):
        return self.inner_net.number + self.inner_net.act(x, y)

x = mindspore.tensor(2, dtype=mindspore.int32)
y = mindspore.tensor(3, dtype=mindspore.int32)
net = Net()
out = net(x, y)
print(out)
