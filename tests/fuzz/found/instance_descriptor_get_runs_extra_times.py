"""A user descriptor read through an instance (obj.k, k = Counter() on the class): its __get__ runs
once per call plainly, but more often jitted -- at every capture and guard check -- once the
function recompiles (here because n changes).

Found by tests/fuzz (Count descriptor on Box, read as BOX.c). Like capture-defects w16, which
reads the descriptor through the class (C.k) and is fixed; the instance path is not.

    PYTHONPATH=pyscripts python tests/fuzz/found/instance_descriptor_get_runs_extra_times.py     (exit 1: plain and jitted differ)
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

class Counter(object):
    n = 0
    def __get__(self, obj, cls):
        Counter.n += 1
        return 2.0

class C(object):
    k = Counter()

c = C()

def f(x, n):
    return x * c.k + n

def run(fn):
    Counter.n = 0
    out = [outcome(fn, pj.Tensor([1.0]), n) for n in (1, 2, 3, 4)]
    return out, "__get__ ran %d times" % Counter.n

plain = run(f)
jitted = run(pj.jit(f))

print("plain: ", plain)
print("jitted:", jitted)
print("SAME" if plain == jitted else "DIFFERENT")
sys.exit(0 if plain == jitted else 1)
