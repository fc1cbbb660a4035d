"""list(u), tuple(u), sorted(u), "".join(u) and a_list.extend(u) of a user object with __iter__
ask its __len__ for a size hint after calling __iter__ (CPython's PyObject_LengthHint): that
__len__ runs (its effects count), and a negative length raises ValueError('__len__() should
return >= 0'). Capture iterated the object through __iter__ alone: __len__ never ran, so no
ValueError, no effect of it, and the jitted function went on where plain Python raised.

Found by tests/fuzz (program 2200500876 of seed 22005 with --objects 1 --dunders 1, minimised: a
V whose __iter__ was set after the class was made and whose __len__ returned -1, read by
list(reversed(list(u))) inside try/except (TypeError, ValueError): "raise IndexError vs ok").

Status: FIXED: the builtins that size their result by a length hint run the object's __len__
after its __iter__, as CPython does (capture/sim_generators.cc; user_len raises for a negative
length and guards the number it read).

    PYTHONPATH=pyscripts python tests/fuzz/found/length_hint_of_user_object_skipped.py     (exit 1: plain and jitted differ)
"""
import pijit as pj
from _found import captured, outcome, verdict

CALLS = []


class V(object):
    def __init__(self, v, n):
        self.v = v
        self.n = n

    def __iter__(self):
        CALLS.append("iter")
        return iter([self.v, self.v * 2.0])

    def __len__(self):
        CALLS.append("len")
        return self.n


class S(V):  # strings, for str.join
    def __iter__(self):
        CALLS.append("iter")
        return iter(["a", "b"])


def f(x, u, how):
    if how == 0:
        items = list(u)
    elif how == 1:
        items = tuple(u)
    elif how == 2:
        items = sorted(u, key=lambda t: float(t.sum()))
    else:
        items = []
        items.extend(u)
    return x + items[0]


def g(x, u):
    return x, "-".join(u)


def run(fn, gn):
    x = pj.Tensor([1.0, -2.0, 0.5])
    out = []
    for how in range(4):
        for n in (2, -1):  # a negative length raises ValueError
            del CALLS[:]
            out.append((outcome(fn, x, V(pj.Tensor([0.5, 1.0, -1.0]), n), how), list(CALLS)))
    for n in (2, -1):
        del CALLS[:]
        out.append((outcome(gn, x, S(None, n)), list(CALLS)))
    return out


plain = run(f, g)
jitted = run(pj.jit(f), pj.jit(g))

verdict(plain, jitted, [captured("f", 3), captured("g", 1)])
