# Seed document 004_4fda79d44643950a.txt (r1.5 ms_function guide), third example ("how it
# works"). The text lost its line breaks; this is the same program with them restored.
# Run: python -m pijit run s004_ex3_ms_function_in_cells.py
import numpy as np
import mindspore.nn as nn
from mindspore import context, Tensor, dtype, ms_function

class Add(nn.Cell):
    def __init__(self):
        super(Add, self).__init__()

    def construct(self, x):
        x = x + x
        x = x + x
        return x

class Mul(nn.Cell):
    def __init__(self):
        super(Mul, self).__init__()

    @ms_function
    def construct(self, x):
        x = x * x
        x = x * x
        return x

class Test(nn.Cell):
    def __init__(self):
        super(Test, self).__init__()
        self.add = Add()
        self.mul = Mul()

    def construct(self, x):
        x = self.add(x)
        x = self.mul(x)
        x = self.add(x)
        return x

context.set_context(mode=context.PYNATIVE_MODE)
x = Tensor(np.ones([3, 3], dtype=np.float32))
net = Test()
out = net(x)
print(out)
