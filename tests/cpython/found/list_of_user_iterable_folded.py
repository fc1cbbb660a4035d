"""Wrong result: list()/tuple()/set()/... of a user iterable runs at capture time and the result is
folded into the graph, with nothing guarding the iterable's contents.

Simulator::call sends a call of a pure type (pure_type(): list, tuple, dict, set, ...) straight
to trace_call, which checks only that no argument is callable, identity-guards the argument
("bag is <Bag at ...>") and runs list(bag) for real -- including the class's Python __iter__
(user code, at capture time). The answer is a constant of the graph: after the bag (or a
weakref.WeakSet) changes, cache hits still return the old contents.
Found by test_asyncgen AsyncGenAsyncioTest.test_async_gen_asyncio_shutdown_exception_02
(3.9 at eb138b3, after test_async_gen_asyncio_shutdown_exception_01): asyncio.runners.
_cancel_all_tasks inlines tasks.all_tasks(loop), whose list(_all_tasks) over a WeakSet was
captured when no task was pending; asyncio.run() then never cancelled/awaited the pending
aclose() task ("Task exception was never retrieved" instead of "unhandled exception during
asyncio.run() shutdown").

    python r.py                                       -> 0 1 / 0 1
    PYTHONPATH=pyscripts PIJIT_STRESS=1 python r.py   -> 0 0 / 0 0
"""
try:
    import pijit  # with PIJIT_STRESS=1 in the environment this turns stress mode on
except ImportError:
    pass
import weakref


class Bag:
    def __init__(self):
        self.items = []

    def __iter__(self):
        return iter(self.items)


def count(iterable):
    return len(list(iterable))


bag = Bag()
before = count(bag)
bag.items.append(1)
print(before, count(bag))


class Task:
    pass


registry = weakref.WeakSet()  # asyncio.tasks._all_tasks is one
task = Task()
before = count(registry)
registry.add(task)
print(before, count(registry))
