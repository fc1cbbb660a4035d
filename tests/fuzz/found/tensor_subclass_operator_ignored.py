"""A Tensor subclass's __add__ is ignored by the jitted function: x + x on a MyT argument runs
Tensor.__add__.

Found by tests/fuzz (class MyT(pj.Tensor) with __add__ overridden, X = MyT(...) as an argument).
Same as capture-defects w03.

Status: differed on 3.7 and 3.9 when the fuzzer found it; plain and jitted agree since commit
0ac63a2 (kept as a regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/tensor_subclass_operator_ignored.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops


def show(v):
    """Exact, printable: tensors with type/dtype/shape/bits (sign of zero visible), identities of lists."""
    if isinstance(v, pj.Tensor):
        return (type(v).__name__, str(v.dtype), v.shape, [repr(a) for a in v.reshape(-1).tolist()])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [show(a) for a in v])
    if isinstance(v, float):
        return repr(v)
    return repr(v)


def outcome(fn, *a, **k):
    try:
        return ("ok", show(fn(*a, **k)))
    except Exception as e:
        return ("raises", type(e).__name__, str(e))

class MyT(pj.Tensor):
    def __add__(self, other):
        return pj.Tensor.__add__(self, other) * 2.0

def f(x):
    return x + x

x = MyT(pj.Tensor([1.0, -2.0]))
plain = outcome(f, x)
jitted = outcome(pj.jit(f), x)

print("plain: ", plain)
print("jitted:", jitted)
print("SAME" if plain == jitted else "DIFFERENT")
sys.exit(0 if plain == jitted else 1)
