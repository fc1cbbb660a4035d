# Seed document 000_02d44a0eed46ac72.txt (r1.8 notebook), code cell 1, verbatim.
# Run: python -m pijit run s000_cell01_ms_function_in_cells.py
import numpy as np
import mindspore.nn as nn
import mindspore as ms
from mindspore import ms_function

class Add(nn.Cell):
    """自定义类实现x自身相加"""
    def construct(self, x):
        x = x + x
        x = x + x
        return x

class Mul(nn.Cell):
    """自定义类实现x自身相乘"""
    @ms_function  # 使用ms_function修饰,此函数以静态图方式执行
    def construct(self, x):
        x = x * x
        x = x * x
        return x

class Test(nn.Cell):
    """自定义类实现x先Add(x),后Mul(x),再Add(x)"""
    def __init__(self):
        super(Test, self).__init__()
        self.add = Add()
        self.mul = Mul()

    def construct(self, x):
        x = self.add(x)
        x = self.mul(x)
        x = self.add(x)
        return x

ms.set_context(mode=ms.PYNATIVE_MODE)
x = ms.Tensor(np.ones([3, 3], dtype=np.float32))
print("init x:\n", x)
net = Test()
x = net(x)
print("\nx:\n", x)
