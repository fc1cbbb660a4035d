"""The ms_function examples of MindSpore's tutorial (seeds/004). Two changes: the GradOperation
example waits for the autodiff issue, and `np.ones([3, 3], dtype=np.float32)` is spelled
`ones([3, 3], mstype.float32)`, because the Pythons pijit captures on (pyenv 3.7/3.9) have no
numpy. Run: python -m pijit run pyscripts/examples/ms_function.py

pijit follows Python semantics where the tutorial's static graph did not: in scenario 2 the
graph captured with self.value == 5 is guarded on it, so `func.value = 1` recompiles and the
second call prints 2s (plain Python prints the same), where MindSpore's cached graph printed 6s.
"""
import mindspore.nn as nn
import mindspore.ops as ops
from mindspore import context, ms_function, Tensor
from mindspore import dtype as mstype


def ones(shape, dtype):
    return Tensor([[1.0] * shape[1]] * shape[0], dtype=dtype)


# ---- decorating a standalone function -------------------------------------------------------
@ms_function
def add_func(x, y):
    return ops.add(x, y)


context.set_context(mode=context.PYNATIVE_MODE)
x = ones([3, 3], mstype.float32)
y = ones([3, 3], mstype.float32)
out = add_func(x, y)
print(out)


# ---- how it works: eager cells around a compiled one ------------------------------------------
class Add(nn.Cell):
    def __init__(self):
        super(Add, self).__init__()

    def construct(self, x):
        x = x + x
        x = x + x
        return x


class Mul(nn.Cell):
    def __init__(self):
        super(Mul, self).__init__()

    @ms_function
    def construct(self, x):
        x = x * x
        x = x * x
        return x


class Test(nn.Cell):
    def __init__(self):
        super(Test, self).__init__()
        self.add = Add()
        self.mul = Mul()

    def construct(self, x):
        x = self.add(x)
        x = self.mul(x)
        x = self.add(x)
        return x


context.set_context(mode=context.PYNATIVE_MODE)
x = ones([3, 3], mstype.float32)
net = Test()
out = net(x)
print(out)

# ---- side effects, scenario 1: `value = 1` inside func is a local ----------------------------
value = 5


@ms_function
def func(x, y):
    out = x + y
    value = 1
    return out


context.set_context(mode=context.PYNATIVE_MODE)
x = ones([3, 3], mstype.float32)
y = ones([3, 3], mstype.float32)
func(x, y)
print(value)


# ---- side effects, scenario 2: an attribute changed between calls ----------------------------
class Func(nn.Cell):
    def __init__(self):
        super(Func, self).__init__()
        self.value = 5

    @ms_function
    def construct(self, x):
        out = self.value + x
        return out


context.set_context(mode=context.PYNATIVE_MODE)
x = ones([3, 3], mstype.float32)
func = Func()
out = func(x)
func.value = 1
out = func(x)
print(out)
