# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), code cell 39, verbatim.
# Run: python -m pijit run s003_cell39_vmap_vs_loop.py
import numpy as np
import time
import mindspore
from mindspore import ops, vmap

def hswish_func(x):
    return ops.HSwish()(x)

@mindspore.jit
def manually_batched(xs):
    output = []
    for i in range(xs.shape[0]):
        output.append(hswish_func(xs[i]))
    return ops.stack(output)

shape = (100, 2)
prop = 100
x_np = (np.random.randn(*shape) * prop).astype(np.float32)
x = mindspore.tensor(x_np)
x = ops.sub(x, 0)

start_time = time.time()
output_vmap = vmap(hswish_func, in_axes=(0,))(x)
end_time = time.time()
print("Vmap cost time:", end_time - start_time)

start_time = time.time()
output_manually = manually_batched(x)
end_time = time.time()
print("for loop cost time:", end_time - start_time)
