"""A MindSpore-style program, unchanged: run it with `python -m pijit run` (MindSpore's import
resolves to pijit when MindSpore is not installed) or with MindSpore itself."""
import mindspore as ms
from mindspore import ops

x = ms.Tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]], ms.float32)
print("init x:\n", x)
for _ in range(2):          # the seed document's Add cell: x = x + x, twice
    x = x + x
for _ in range(2):          # its Mul cell: x = x * x, twice
    x = x * x
for _ in range(2):
    x = x + x
print("\nx:\n", x)

a = ms.Tensor([1.0, 2.0, 3.0], ms.float32)
b = ms.Tensor([4.0, 5.0, 6.0], ms.float32)
print(ops.add(a, b))
print("matmul:", ops.matmul(ms.Tensor([[1.0, 2.0], [3.0, 4.0]]), ms.Tensor([[1.0], [1.0]])).tolist())
print("mean:", x.mean().item(), "argmax:", ops.argmax(b).item())
