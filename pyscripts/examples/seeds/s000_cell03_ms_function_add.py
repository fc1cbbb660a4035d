# Seed document 000_02d44a0eed46ac72.txt (r1.8 notebook), code cell 3, verbatim.
# Run: python -m pijit run s000_cell03_ms_function_add.py
import numpy as np
import mindspore.ops as ops
import mindspore as ms
from mindspore import ms_function

# 设置运行模式为动态图模式
ms.set_context(mode=ms.PYNATIVE_MODE)

# 使用装饰器,指定静态图模式下执行
@ms_function
def add_func(x, y):
    return ops.add(x, y)

x = ms.Tensor(np.array([1.0, 2.0, 3.0]).astype(np.float32))
y = ms.Tensor(np.array([4.0, 5.0, 6.0]).astype(np.float32))

out = add_func(x, y)
print(out)
