# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), the program in markdown cell 47,
# verbatim. Run: python -m pijit run s003_md47_assign_and_grad.py
import numpy as np
import mindspore
from mindspore import nn, ops, Tensor, Parameter

class ForwardNet(nn.Cell):
    def __init__(self):
        super(ForwardNet, self).__init__()
        self.weight = Parameter(mindspore.tensor(np.array(0), mindspore.int32), name="param")

    def construct(self, x):
        out = 0
        i = 0
        while i < 3:
            ops.assign(self.weight, i)
            out = x * self.weight + out
            i = i + 1
        return out

class BackwardNet(nn.Cell):
    def __init__(self, net):
        super(BackwardNet, self).__init__(auto_prefix=False)
        self.forward_net = net
        self.grad = ops.GradOperation(get_all=True)

    @mindspore.jit
    def construct(self, *inputs):
        grads = self.grad(self.forward_net)(*inputs)
        return grads

x = mindspore.tensor(np.array(1), mindspore.int32)
graph_forward_net = ForwardNet()
graph_backward_net = BackwardNet(graph_forward_net)
graph_mode_grads = graph_backward_net(x)
output_except = (mindspore.tensor(np.array(3), mindspore.int32),)
assert np.all(graph_mode_grads == output_except)
