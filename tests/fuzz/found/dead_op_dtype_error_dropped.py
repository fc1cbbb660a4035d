"""An op whose result is never used is dropped from the graph together with the TypeError its dtype
check raises (relu/clamp of a Bool tensor): plain Python raises, the jitted function returns.

Found by tests/fuzz (unused list comprehensions and locals over a Bool argument). The same
mechanism as capture-defects e02 (dead code drops a runtime error), which is fixed for index and
shape errors; dtype errors are still dropped -- also inside try/except, where the jitted
function then takes the other path (g; like e01).

    PYTHONPATH=pyscripts python tests/fuzz/found/dead_op_dtype_error_dropped.py     (exit 1: plain and jitted differ)
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

def f(x, y):
    t = ops.relu(y)            # unused; raises TypeError for a Bool y
    return x

def g(x, y):
    try:
        t = y - y              # unused; bool - bool raises TypeError
        return "try body finished"
    except TypeError:
        pass
    return "handler ran"

x, y = pj.Tensor([1.0, 2.0]), pj.Tensor([True, False])
plain = [outcome(f, x, y), outcome(g, x, y)]
jitted = [outcome(pj.jit(f), x, y), outcome(pj.jit(g), x, y)]

print("plain: ", plain)
print("jitted:", jitted)
print("SAME" if plain == jitted else "DIFFERENT")
sys.exit(0 if plain == jitted else 1)
