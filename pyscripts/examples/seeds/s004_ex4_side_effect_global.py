# Seed document 004_4fda79d44643950a.txt (r1.5 ms_function guide), side-effect scenario 1. The
# text lost its line breaks; this is the same program with them restored.
# Run: python -m pijit run s004_ex4_side_effect_global.py
import numpy as np
from mindspore import context, Tensor, dtype, ms_function

value = 5

@ms_function
def func(x, y):
    out = x + y
    value = 1
    return out

context.set_context(mode=context.PYNATIVE_MODE)
x = Tensor(np.ones([3, 3], dtype=np.float32))
y = Tensor(np.ones([3, 3], dtype=np.float32))
func(x, y)
print(value)
