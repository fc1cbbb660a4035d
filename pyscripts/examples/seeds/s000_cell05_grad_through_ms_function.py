# Seed document 000_02d44a0eed46ac72.txt (r1.8 notebook), code cell 5, verbatim.
# Run: python -m pijit run s000_cell05_grad_through_ms_function.py
import numpy as np
import mindspore.nn as nn
import mindspore.ops as ops
import mindspore as ms
from mindspore import ms_function

# 设置运行模式为动态图模式
ms.set_context(mode=ms.PYNATIVE_MODE)

class Add(nn.Cell):

    @ms_function # 使用装饰器,指定静态图模式下执行
    def construct(self, x, y):
        out = x + y
        return out

x = ms.Tensor(np.array([1.0, 2.0, 3.0]).astype(np.float32))
y = ms.Tensor(np.array([4.0, 5.0, 6.0]).astype(np.float32))

grad_ops = ops.GradOperation(get_all=True)  # 定义求导操作
net = Add()
grad_out = grad_ops(net)(x, y)

print("Infer result:\n", net(x, y))

print("Gradient result:")
print("Grad x Tensor1:\n", grad_out[0])  # 对x求导
print("Grad y Tensor2:\n", grad_out[1])  # 对y求导
