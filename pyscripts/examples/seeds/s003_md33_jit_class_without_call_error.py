# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), the program in markdown cell 33,
# verbatim. Run: python -m pijit run s003_md33_jit_class_without_call_error.py
import numpy as np
import mindspore
from mindspore import nn

@mindspore.jit_class
class InnerNet:
    def __init__(self, number):
        self.number = number

class Net(nn.Cell):
    @mindspore.jit
    def construct(self, x, y):
        net = InnerNet(2)
        out = net(x, y)
        return out

x = mindspore.tensor(2, dtype=mindspore.int32)
y = mindspore.tensor(3, dtype=mindspore.int32)
net = Net()
out = net(x, y)
print(out)
