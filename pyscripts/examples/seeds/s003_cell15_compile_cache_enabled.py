# Seed document 003_c18c83e99aa71963.txt (r2.9 notebook), code cell 15, verbatim.
# Run: python -m pijit run s003_cell15_compile_cache_enabled.py
import os
import time
import mindspore
from mindspore import nn

mindspore.set_context(mode=mindspore.GRAPH_MODE)

class Model(nn.Cell):
    def construct(self, input_x, input_y):
        output = input_x
        for _ in range(200):
            output = input_x + input_x * input_y + output
        return output

os.environ['MS_COMPILER_CACHE_ENABLE'] = '1'
os.environ['MS_COMPILER_CACHE_PATH'] = 'my_compile_cache'
x = mindspore.tensor([1], mindspore.float32)
y = mindspore.tensor([2], mindspore.float32)
model = Model()
start_time = time.time()
out = model(x, y)
end_time = time.time()
os.environ['MS_COMPILER_CACHE_ENABLE'] = '0'
print("Enable compile_cache cost time:", end_time - start_time)
