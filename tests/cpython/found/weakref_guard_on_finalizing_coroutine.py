"""Crash: an identity guard weakly references a coroutine while it is being finalized; the weak
reference is never cleared and points at freed memory.

A coroutine that dies unawaited calls warnings._warn_unawaited_coroutine(coro) from its
finalizer (_PyGen_Finalize, called by gen_dealloc). gen_dealloc clears the coroutine's weak
references *before* calling the finalizer, so the weak reference GuardTree::add_check creates
for the guard "coro is <coroutine>" during that call is never cleared, and the coroutine's
memory is freed under it. The next call's guard check reads it: id_target() returns the stale
pointer and identity() prints its type (3.9: SIGSEGV in identity(); 3.7: the same, or at exit
in weakref_dealloc from ~GuardTree). Here the freed memory is reused by bytes objects so the
stale pointer reliably reads garbage.
Found by test_coroutines CoroutineTest.test_func_9 (3.7; 25 tests never ran).

    python r.py                                       -> done
    PYTHONPATH=pyscripts PIJIT_STRESS=1 python r.py   -> Segmentation fault (rc 139)
"""
try:
    import pijit  # with PIJIT_STRESS=1 in the environment this turns stress mode on
except ImportError:
    pass
import sys
import warnings

warnings.simplefilter("ignore")


async def foo():
    pass


size = sys.getsizeof(foo())  # the coroutine's memory block, GC header included
pad = bytes(8) * ((size - 33) // 8 + 1)
keep = []
for i in range(50):
    foo()  # dies unawaited: its finalizer calls warnings._warn_unawaited_coroutine(coro)
    keep.append([pad[:-1] + bytes([i]) for _ in range(4)])  # reuse the freed memory
    for b in keep[-1]:
        hash(b)
print("done")
