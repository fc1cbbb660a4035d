# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), code cell 37, verbatim.
# Run: python -m pijit run s003_cell37_if_vs_select.py
import time
import mindspore
from mindspore import ops

@mindspore.jit
def if_net(x, y):
    out = 0
    for _ in range(100):
        if x < y:
            x = x - y
        else:
            x = x + y
        out = out + x
    return out

start_time = time.time()
out = if_net(mindspore.tensor([0]), mindspore.tensor([1]))
end_time = time.time()
print("if net cost time:", end_time - start_time)

@mindspore.jit
def select_net(x, y):
    out = x
    for _ in range(100):
        cond = x < y
        x = ops.select(cond, x - y, x + y)
        out = out + x
    return out

start_time = time.time()
out = select_net(mindspore.tensor([0]), mindspore.tensor([1]))
end_time = time.time()
print("select net cost time:", end_time - start_time)
