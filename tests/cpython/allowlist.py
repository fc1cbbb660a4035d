"""Differences between stock CPython and PIJIT_STRESS that are inherent to a JIT, not defects.

Each entry: (python version "3.7" / "3.9" / "*", test module, test id, why the difference is
inherent). Only what any JIT that caches compiled, value-specialised code would show belongs here:
exact object counts, reference counts, allocation statistics, timing. Anything else is a pijit
defect: it gets a reproducer in found/ and stays a failure until it is fixed.
"""
# Counting tests see the compiled code: its code objects and constant tuples are new GC objects,
# it holds references to its constants, and guards that specialise on a constant value (an
# argument that is an int, str or bytes) hold that value until their cache entry is evicted.
_GC_COUNT = ("counts len(gc.get_objects()) around the first calls of a new function; the first "
             "call compiles it, and the compiled code (code object, constant tuples) is new GC objects")
_REFCOUNT_NONE = ("exact sys.getrefcount(None) across a statement; compiled code and cache entries "
                  "made meanwhile hold references to their constants")
_REFCOUNT_BYTES = ("exact sys.getrefcount of a bytes object handed to captured functions; a guard "
                   "specialising on a constant's value holds a reference to it until its entry is "
                   "evicted (so the count can go up or down)")
_REFCOUNT_STR = ("exact sys.getrefcount of a str handed to captured functions; a guard specialising "
                 "on a constant's value holds a reference to it until its entry is evicted")

ALLOWLIST = [
    ("*", "test_descr", "test.test_descr.ClassPropertiesAndMethods.test_slots", _GC_COUNT),
    # --full modules
    ("*", "test_sys", "test.test_sys.SysModuleTest.test_refcount", _REFCOUNT_NONE),
    ("*", "test_os", "test.test_os.FileTests.test_rename", _REFCOUNT_STR),
    ("*", "test_memoryview", "test.test_memoryview.BytesMemoryviewTest.test_getbuffer", _REFCOUNT_BYTES),
    ("*", "test_memoryview", "test.test_memoryview.BytesMemorySliceTest.test_getbuffer", _REFCOUNT_BYTES),
    ("*", "test_memoryview", "test.test_memoryview.BytesMemorySliceSliceTest.test_getbuffer", _REFCOUNT_BYTES),
    ("*", "test_memoryview", "test.test_memoryview.BytesMemoryviewTest.test_getitem", _REFCOUNT_BYTES),
]
