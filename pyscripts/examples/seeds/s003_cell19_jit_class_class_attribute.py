# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), code cell 19, verbatim.
# Run: python -m pijit run s003_cell19_jit_class_class_attribute.py
import numpy as np
import mindspore
from mindspore import nn

@mindspore.jit_class
class InnerNet:
    value = mindspore.tensor(np.array([1, 2, 3]))

class Net(nn.Cell):
    @mindspore.jit
    def construct(self):
        return InnerNet().value

net = Net()
out = net()
print(out)
