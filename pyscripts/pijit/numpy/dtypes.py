"""mindspore.numpy's dtype names: MindSpore's types, with numpy's unsized names mapped to 32 bits
(int_ is int32, float_ float32, uint uint32), and numpy's constants."""
from pijit.dtype import (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16,
                         float32, float64, bool_)

inf = float("inf")
PINF = float("inf")
NINF = float("-inf")
nan = float("nan")
pi = 3.141592653589793

int_ = int32
uint = uint32
float_ = float32

numeric_types = ["int_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float_", "float16", "float32", "float64", "bool_"]
