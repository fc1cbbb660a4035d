"""A graph with values dead-code elimination had dropped crashed (SIGSEGV, or the check "a node
without outputs") when it was planned for a new size: with_input_metas walked the values, and the
dropped nodes' values still pointed at node positions that no longer existed.

Found by tests/fuzz (seed 41, programs 4101385 and 4101297) the day dynamic shapes landed.

Status: crashed when the fuzzer found it; plain and jitted agree since the session-14 review commit
(with_input_metas walks the nodes).

    PYTHONPATH=pyscripts python tests/fuzz/found/dynamic_graph_with_dead_values_replanned.py     (exit 1: plain and jitted differ)
"""
import struct, sys, warnings
import pijit as pj
from pijit import nn, ops
from _found import captured, outcome, show, verdict


def _mk(k):
    def scale(t):
        return t * k
    return scale


CL = _mk(0.0)
CL2 = _mk(0.0)


def f(x):
    t4 = CL((CL(x) + CL2(x)))  # dead: dropped from the graph, its values left behind
    return {'out': ops.logsumexp(x, -1), 'n': 2.0}


def run(jit):
    fn = pj.jit(f) if jit else f
    x = pj.Tensor([float('inf'), 3.0, 0.5])
    return [outcome(lambda a: fn(a)["out"], a) for a in
            (x, pj.Tensor([float('inf'), 1e38, 0.5, 0.0]), x, pj.Tensor([1.0, 2.0, 3.0, 4.0, 5.0]))]


plain = run(False)
jitted = run(True)
verdict(plain, jitted, [captured("f", 2)])
