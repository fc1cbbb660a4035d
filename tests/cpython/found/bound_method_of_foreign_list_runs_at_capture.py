"""Wrong result: a builtin method bound to a list the frame reached only through the method
(box.push = out.append) runs for real at capture time.

Simulator::call treats a PyCFunction whose __self__ is a trusted container as "a method of a
builtin container" and, unless frame_object(self) says the frame read that container through a
guarded path, runs it with trace_call at capture time. `out` was reached only as __self__ of the
bound method loaded from box.push, so it has no guard node: out.append(x) runs during capture.
If the capture then succeeds, the graph code never appends again (cache hits lose the append);
if it is refused afterwards (the attribute store below), the frame runs for real and appends a
second time.
Found by test_enum TestStdLib.test_pydoc (3.7 and 3.9): pydoc's HorizontalRule.maybe pushes
through push = contents.append and printed extra rules.

    python r.py                                       -> [7, 7, 7] / ['a']
    PYTHONPATH=pyscripts PIJIT_STRESS=1 python r.py   -> [7] / ['a', 'a']
"""
try:
    import pijit  # with PIJIT_STRESS=1 in the environment this turns stress mode on
except ImportError:
    pass


class Box:
    pass


def push(box, x):
    box.push(x)


def push_then_store(box, x):
    box.push(x)
    box.last = x  # a write capture refuses, after the push


out = []
box = Box()
box.push = out.append
for i in range(3):
    push(box, 7)
print(out)
del out[:]
push_then_store(box, "a")
print(out)
