"""Leak and lost finalizer: an identity guard on an object that cannot be weakly referenced
holds it strongly.

GuardTree::add_check turns an Id check into a weak reference only when the type supports
weakrefs; otherwise the check owns a strong reference. The cache entry keeps it for the life of
the code object, also for refused captures. Objects of classes with __slots__ and no
__weakref__, int/tuple subclasses, weakref.ref objects, _threading_local.local, ... never die
while such a guard exists, and their __del__ never runs.
Found by test_weakref ReferencesTestCase.test_getweakrefs (a weakref.ref kept alive),
test_threading_local PyThreadingLocalTest.test_cycle_collection (guard
"args[0] is <local at ...>" in contextlib._GeneratorContextManagerBase.__init__), and
test_dict DictTest.test_oob_indexing_dictiter_iternextitem (an int subclass whose __del__ must
clear the dict; the RuntimeError never comes) -- 3.7 and 3.9.

    python r.py                                       -> alive: 0 / __del__ ran: True
    PYTHONPATH=pyscripts PIJIT_STRESS=1 python r.py   -> alive: 2 / __del__ ran: False
"""
try:
    import pijit  # with PIJIT_STRESS=1 in the environment this turns stress mode on
except ImportError:
    pass
import gc


class NoWeakref:
    __slots__ = ("cycle",)  # no __weakref__ slot


def call(func, *args):
    return func(*args)


call(len, [NoWeakref()])
call(id, NoWeakref())
gc.collect()
print("alive:", sum(type(o) is NoWeakref for o in gc.get_objects()))

deleted = []


class Big(int):  # int subclasses cannot be weakly referenced
    def __del__(self):
        deleted.append(int(self))


def first(d):
    for k, v in d.items():
        return v


d = {0: Big(5)}
first(d)
d[0] = None  # the last reference (for plain Python) goes away here
print("__del__ ran:", deleted == [5])
