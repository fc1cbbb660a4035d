# Seed document 004_4fda79d44643950a.txt (r1.5 ms_function guide), side-effect scenario 2. The
# text lost its line breaks; this is the same program with them restored.
# Run: python -m pijit run s004_ex5_side_effect_attribute.py
import numpy as np
import mindspore.nn as nn
from mindspore import context, Tensor, dtype, ms_function

class Func(nn.Cell):
    def __init__(self):
        super(Func, self).__init__()
        self.value = 5

    @ms_function
    def construct(self, x):
        out = self.value + x
        return out

context.set_context(mode=context.PYNATIVE_MODE)
x = Tensor(np.ones([3, 3], dtype=np.float32))
func = Func()
out = func(x)
func.value = 1
out = func(x)
print(out)
