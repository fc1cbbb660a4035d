# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), the program in markdown cell 45,
# verbatim. Run: python -m pijit run s003_md45_depend_npu_status.py
import numpy as np
import mindspore
from mindspore import nn, ops, Tensor

mindspore.set_device("Ascend")

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.alloc_status = ops.NPUAllocFloatStatus()
        self.get_status = ops.NPUGetFloatStatus()
        self.clear_status = ops.NPUClearFloatStatus()

    @mindspore.jit
    def construct(self, x):
        init = self.alloc_status()
        clear_status = self.clear_status(init)
        x = ops.Depend()(x, clear_status)
        res = ops.sub(x, ops.neg(x))
        init = ops.Depend()(init, res)
        get_status = self.get_status(init)
        res = ops.Depend()(res, get_status)
        return res

value = 5
data = np.full((2, 3), value, dtype=np.float16)
x = mindspore.tensor(data, dtype=mindspore.float16)
net = Net()
res = net(x)
print(res)
