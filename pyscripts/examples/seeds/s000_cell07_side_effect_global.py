# Seed document 000_02d44a0eed46ac72.txt (r1.8 notebook), code cell 7, verbatim.
# Run: python -m pijit run s000_cell07_side_effect_global.py
import numpy as np
import mindspore as ms
from mindspore import ms_function

# pylint: disable=W0612

value = 5

@ms_function
def func(x, y):
    out = x + y
    value = 1
    return out

ms.set_context(mode=ms.PYNATIVE_MODE)
x = ms.Tensor(np.array([1.0, 2.0, 3.0]).astype(np.float32))
y = ms.Tensor(np.array([1.0, 2.0, 3.0]).astype(np.float32))
func(x, y)
print(value)
