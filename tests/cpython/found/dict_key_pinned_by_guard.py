"""Leak: a guarded dict's keys are held strongly by the guard tree.

When capture reads a frame-sourced dict item by item, Simulator::materialize adds a DictKeys
check whose ref is the list PyDict_Keys(d) (it owns every key), and a child node per key
(GuardTree::child(node, Access::Item, key) increfs the key). For a key that is not a constant (an
instance, a class, a function) the guard owns the object for as long as the cache entry lives
(the code object's lifetime): weak-key dictionaries keep the entry, weakref callbacks never run.
(Identity checks hold objects weakly since commit eb138b3; dict keys were left out.)
Found by test_weakref MappingTestCase.test_weak_keyed_union_operators (3.9 at eb138b3:
"4 unexpectedly found in WeakKeyDictionary.values()" after `del o1`).

    python r.py                                       -> key freed: True
    PYTHONPATH=pyscripts PIJIT_STRESS=1 python r.py   -> key freed: False
"""
try:
    import pijit  # with PIJIT_STRESS=1 in the environment this turns stress mode on
except ImportError:
    pass
import gc
import weakref


class C:
    pass


def first_key(d):
    for k in d:
        return k


o = C()
first_key({o: 1})
r = weakref.ref(o)
del o
gc.collect()
print("key freed:", r() is None)
