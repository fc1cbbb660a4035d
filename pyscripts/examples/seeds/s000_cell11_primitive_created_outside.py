# Seed document 000_02d44a0eed46ac72.txt (r1.8 notebook), code cell 11, verbatim.
# Run: python -m pijit run s000_cell11_primitive_created_outside.py
import numpy as np
import mindspore as ms
import mindspore.ops as ops
from mindspore import ms_function

ms.set_context(mode=ms.PYNATIVE_MODE)

add = ops.Add()

@ms_function
def add_fn(x, y):
    res = add(x, y)
    return res

x = ms.Tensor(np.array([1.0, 2.0, 3.0]).astype(np.float32))
y = ms.Tensor(np.array([4.0, 5.0, 6.0]).astype(np.float32))
z = add_fn(x, y)

print("x:", x.asnumpy(), "\ny:", y.asnumpy(), "\nz:", z.asnumpy())
