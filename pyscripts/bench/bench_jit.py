"""Cache-hit cost of jitted calls vs eager on tiny inputs (where per-call overhead dominates).

    PYTHONPATH=pyscripts $(pyenv prefix 3.9)/bin/python pyscripts/bench/bench_jit.py
"""
import timeit, pijit as pj
from pijit import nn, ops
def ident(x): return x
def f(x, y): return ops.relu(x * y + 1) - y
x = pj.ones((4, 4)); y = pj.ones((4, 4))
ji = pj.jit(ident); jf = pj.jit(f); ji(x); jf(x, y)
net = nn.SequentialCell(nn.Dense(16, 16), nn.ReLU(), nn.Dense(16, 4)); jn = pj.jit(net); z = pj.ones((2, 16)); jn(z)
n = 20000
def t(fn, *a): return min(timeit.repeat(lambda: fn(*a), number=n, repeat=5)) / n * 1e6
print("plain ident %.2f us, jitted ident (hook+guards+shadow frame) %.2f us" % (t(ident, x), t(ji, x)))
print("f eager %.2f us, jitted %.2f us" % (t(f, x, y), t(jf, x, y)))
print("MLP eager %.2f us, jitted %.2f us, guards %d" % (t(net, z), t(jn, z), pj.jit_stats(jn)["entries"][0]["num_guards"]))
