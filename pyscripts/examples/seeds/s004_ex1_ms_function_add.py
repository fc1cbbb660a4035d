# Seed document 004_4fda79d44643950a.txt (r1.5 ms_function guide), first example ("decorating a
# function"). The text lost its line breaks; this is the same program with them restored.
# Run: python -m pijit run s004_ex1_ms_function_add.py
import numpy as np
import mindspore.ops as ops
from mindspore import context, Tensor, dtype, ms_function

@ms_function
def add_func(x, y):
    return ops.add(x, y)

context.set_context(mode=context.PYNATIVE_MODE)
x = Tensor(np.ones([3, 3], dtype=np.float32))
y = Tensor(np.ones([3, 3], dtype=np.float32))
out = add_func(x, y)
print(out)
