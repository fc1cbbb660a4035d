"""Leak: type guards hold the class strongly, for as long as the code object lives.

Type, TypeVersion and ClassVersion checks own a strong reference to the class
(Simulator::guard_class builds (tp, {...}) with Py_BuildValue("(ON)"); CheckKind::Type stores
the type itself), unlike Id checks, which guards/guard_tree.cc turns into weak references. The
cache entry belongs to the code object of C.__init__, a constant of make()'s code, which lives
as long as the module: every class ever made by make() stays alive, with its weakref callbacks
never called.
Found by test_weakref ReferencesTestCase.test_callback_in_cycle_resurrection (3.7 and 3.9).

    python r.py                                       -> class freed: True
    PYTHONPATH=pyscripts PIJIT_STRESS=1 python r.py   -> class freed: False
"""
try:
    import pijit  # with PIJIT_STRESS=1 in the environment this turns stress mode on
except ImportError:
    pass
import gc
import weakref


def make():
    class C:
        def __init__(self, value):
            self.value = value
    return C


C = make()
C(1)
wr = weakref.ref(C)
del C
gc.collect()
print("class freed:", wr() is None)
