# Seed document 000_02d44a0eed46ac72.txt (r1.8 notebook), code cell 9, verbatim.
# Run: python -m pijit run s000_cell09_side_effect_attribute.py
import numpy as np
import mindspore.nn as nn
import mindspore as ms
from mindspore import ms_function

class Func(nn.Cell):
    def __init__(self):
        super(Func, self).__init__()
        self.value = 5

    @ms_function
    def construct(self, x):
        out = self.value + x
        return out

ms.set_context(mode=ms.PYNATIVE_MODE)
x = ms.Tensor(np.array([1.0, 2.0, 3.0]).astype(np.float32))
func = Func()
print("out1:", func(x))
func.value = 1
print("out2:", func(x))
