# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), the program in markdown cell 21,
# verbatim. Run: python -m pijit run s003_md21_jit_class_on_cell_error.py
import mindspore
from mindspore import nn

@mindspore.jit_class
class Net(nn.Cell):
    @mindspore.jit
    def construct(self, x):
        return x

x = mindspore.tensor(1)
net = Net()
net(x)
