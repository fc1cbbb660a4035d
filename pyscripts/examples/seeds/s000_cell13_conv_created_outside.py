# Seed document 000_02d44a0eed46ac72.txt (r1.8 notebook), code cell 13, verbatim.
# Run: python -m pijit run s000_cell13_conv_created_outside.py
import numpy as np
import mindspore.nn as nn
import mindspore as ms
from mindspore import ms_function

ms.set_context(mode=ms.PYNATIVE_MODE)

# 对函数conv_fn中的算子conv_obj完成实例化操作
conv_obj = nn.Conv2d(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=0)
conv_obj.init_parameters_data()

@ms_function
def conv_fn(x):
    res = conv_obj(x)
    return res

input_data = np.random.randn(1, 3, 3, 3).astype(np.float32)
z = conv_fn(ms.Tensor(input_data))
print(z.asnumpy())
