"""len() of a user object whose __len__ returns a number capture has stopped guarding (it changed
between calls, so the cached code takes any value): a negative length passes, where plain Python
raises ValueError('__len__() should return >= 0'). The same for truth by __len__ (bool(u),
`if u:`, `u or 0` on a class without __bool__), and for a length past sys.maxsize (plain:
OverflowError). Here the third call returns instead of raising.

Found by tests/fuzz (program 4100825 of seed 41 with --dunders 1, minimised: V without __bool__,
int(bool(u or 0)) on a V passed in whose __len__ returns 1, 2, then -1:
"exception message (ValueError)", where a later operation raised instead).

Status: FIXED: the number __len__ returned was read by capture's own code (the sign and size
checks), not by an instruction, so nothing guarded it; len() and truth() now guard the numbers
they read (capture/sim_dunders.cc user_len, sim_values.cc truth).

    PYTHONPATH=pyscripts python tests/fuzz/found/negative_len_of_user_object_not_checked.py     (exit 1: plain and jitted differ)
"""
import pijit as pj
from _found import captured, outcome, verdict


class V(object):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


W = pj.Tensor([-2.0, -1.5, -0.5])


def f(x, u):
    n = len(u)                  # raises ValueError when __len__ returns a negative number
    return x + W


def run(fn):
    x = pj.Tensor([1.0, -2.0, 0.5])
    return [outcome(fn, x, V(1)), outcome(fn, x, V(2)), outcome(fn, x, V(-1))]


plain = run(f)
jitted = run(pj.jit(f))

verdict(plain, jitted, [captured("f", 2)])
