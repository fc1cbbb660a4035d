# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), code cell 29, verbatim.
# Run: python -m pijit run s003_cell29_jit_class_created_in_graph.py
import numpy as np
import mindspore
from mindspore import nn

@mindspore.jit_class
class InnerNet:
    def __init__(self, val):
        self.number = val + 3

class Net(nn.Cell):
    @mindspore.jit
    def construct(self):
        net = InnerNet(2)
        return net.number

net = Net()
out = net()
print(out)
