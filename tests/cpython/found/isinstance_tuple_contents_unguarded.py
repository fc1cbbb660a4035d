"""Wrong result: isinstance/issubclass with a tuple of classes is folded without guarding the tuple.

Simulator::subclass_check walks the classinfo tuple's items with PyTuple_GET_ITEM on the real
object and folds the answer into the graph, but the tuple argument (a frame local, or an
attribute such as contextlib.suppress's self._exceptions) is only guarded by its type
("type(types) is tuple"): its length and items are not. A later call with another tuple of the
same type hits the cache and gets the first answer.
Found by test_contextlib TestSuppress.test_no_args / test_other_exception (3.9: suppress() and
suppress(TypeError) swallowed ZeroDivisionError after suppress(ZeroDivisionError, TypeError)).

    python r.py                                       -> True False False
    PYTHONPATH=pyscripts PIJIT_STRESS=1 python r.py   -> True True True
"""
try:
    import pijit  # with PIJIT_STRESS=1 in the environment this turns stress mode on
except ImportError:
    pass


def check(obj, types):
    return isinstance(obj, types)


print(check(1, (int, str)), check(1, ()), check(1, (str,)))
