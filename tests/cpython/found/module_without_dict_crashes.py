"""Crash: capture reads an attribute of a module object whose __init__ never ran.

ModuleType.__new__(ModuleType) makes a module with no __dict__ (md_dict is NULL).
Simulator::load_attr does PyDict_GetItem(PyModule_GetDict(v), name) on it: a NULL dict.
Found by test_descr ClassPropertiesAndMethods.test_uninitialized_modules (3.7 and 3.9).

    python r.py                                       -> False
    PYTHONPATH=pyscripts PIJIT_STRESS=1 python r.py   -> Segmentation fault (rc 139)
"""
try:
    import pijit  # with PIJIT_STRESS=1 in the environment this turns stress mode on
except ImportError:
    pass
from types import ModuleType


def has(obj, name):
    return hasattr(obj, name)


m = ModuleType.__new__(ModuleType)
print(has(m, "__name__"))
