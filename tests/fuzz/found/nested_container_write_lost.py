"""Writes through a container the function reached indirectly -- a tuple it built around a global
list, the inner lists of a list argument -- are lost by the jitted function.

Found by tests/fuzz (for _l in (G_LOG,): _l.append(n); for row in rows: row[-1] = s). Same as
capture-defects w01 (RC-1: the simulator writes to private copies).

Status: differed on 3.7 and 3.9 when the fuzzer found it; plain and jitted agree since commit
ac2e413 (kept as a regression program).

    PYTHONPATH=pyscripts python tests/fuzz/found/nested_container_write_lost.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import outcome, refused, show, verdict


def run(wrap):
    LOG = []
    rows = [[5], [0.0, -1]]
    def f(x, n):
        for l in (LOG,):
            l.append(n)
        for row in rows:
            pass
        else:
            row[-1] = n          # the last inner list of the argument
        return x + 1.0
    fn = wrap(f)
    out = [outcome(fn, pj.Tensor([1.0]), 2), outcome(fn, pj.Tensor([1.0]), 3)]
    return out, LOG, rows

plain = run(lambda f: f)
jitted = run(pj.jit)

verdict(plain, jitted, [refused("f", "B005")])
