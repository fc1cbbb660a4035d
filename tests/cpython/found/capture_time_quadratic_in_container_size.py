"""Hang: capturing a frame that hands a big container to real code takes time quadratic in its
size.

Simulator::materialize guards every item of a frame-sourced list/tuple/dict
(tree_.child(node, Access::Item, key) per item), and GuardTree::child looks for an existing
child by scanning every node after the parent (guards/guard_tree.cc): n items cost O(n^2)
key comparisons, on every capture (and a new capture happens on every call with a new container,
the guards pinning the first one). `a == b` on two 20000-entry dicts takes seconds instead of
microseconds; assertEqual on 100000 entries takes minutes.
Found on 3.9 by test_dict DictTest.test_copy_fuzz (~10 min under stress), test_itertools
TestBasicOps.test_combinatorics / test_compress / test_tee, test_weakref
MappingTestCase.test_threaded_weak_*_dict_*copy (~2 min each); the stress runs of these modules
took 597 s, 167 s and 419 s against 0.6 s, 3.7 s and 8.3 s stock.

    python r.py                                       -> ... list of 20000: under 1s
    PYTHONPATH=pyscripts PIJIT_STRESS=1 python r.py   -> ... dict of 20000: 8.5s, list of 20000: 7.6s
"""
try:
    import pijit  # with PIJIT_STRESS=1 in the environment this turns stress mode on
except ImportError:
    pass
import time


def equal(a, b):
    return a == b


for n in (5000, 20000):
    for kind, a in (("dict", {i: i for i in range(n)}), ("list", list(range(n)))):
        t = time.perf_counter()
        equal(a, a.copy())
        dt = time.perf_counter() - t
        print("%s of %d: %s" % (kind, n, "under 1s" if dt < 1 else "%.1fs" % dt))
