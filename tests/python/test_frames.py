"""The frame reads capture stands on (py/pyport.h, section (a')), as the frame-evaluation hook sees
a frame when it is entered: its code, fast locals (arguments bound, the rest unbound; an argument a
closure captures reads from its cell only), cell and free variables, globals and builtins. The
same answers on every Python pijit builds for, 3.11's _PyInterpreterFrame included (whose
prologue has not made the cells yet when the hook runs)."""
import builtins
import sys
import unittest

from pijit import _C
from jit_compare import CAPTURE_BUILT, CAPTURE_OFF_WHY

G = 5


def outer(a, b=2, *rest, k=3, **kw):
    c = a + b
    def inner(x, y=1):
        z = x + c + a
        return z
    return inner


def plain(x, y):
    t = x * y
    return t + G


def gen(n):
    yield n


@unittest.skipUnless(CAPTURE_BUILT, CAPTURE_OFF_WHY)  # (the probe is capture's frame reads)
class FrameReads(unittest.TestCase):
    def probe(self, fn, *args):
        return _C._frame_probe(fn, args)

    def test_arguments_defaults_varargs_and_keywords(self):
        result, rec = self.probe(outer, 1, 2, 9, 8)
        self.assertIs(rec["code"], outer.__code__)
        # a (captured by inner: read from its cell), b, k, rest, kw bound; c unbound
        self.assertEqual(outer.__code__.co_varnames, ("a", "b", "k", "rest", "kw", "inner"))
        self.assertEqual(rec["locals"], ["<unbound>", 2, 3, (9, 8), {}, "<unbound>"])
        self.assertEqual(outer.__code__.co_cellvars, ("a", "c"))
        self.assertEqual(rec["derefs"], [1, "<unbound>"])  # a's cell holds the argument; c not yet
        self.assertIs(rec["globals"], outer.__globals__)
        self.assertIs(rec["builtins"], builtins.__dict__)
        self.assertEqual((rec["started"], rec["resumable"]), (False, False))
        self.assertEqual(result(10), 10 + 3 + 1)

    def test_free_variables_come_from_the_closure(self):
        inner = outer(1, k=4, extra=7)
        result, rec = self.probe(inner, 10)
        self.assertEqual(result, 14)
        self.assertEqual(inner.__code__.co_freevars, ("a", "c"))
        self.assertEqual(rec["derefs"], [1, 3])
        self.assertEqual(rec["locals"], [10, 1, "<unbound>"])

    def test_plain_function_and_keywords(self):
        result, rec = self.probe(plain, 3, 4)
        self.assertEqual(result, 17)
        self.assertEqual(rec["locals"], [3, 4, "<unbound>"])
        self.assertEqual(rec["derefs"], [])

    def test_a_generator_frame_is_resumable(self):
        # (3.7-3.10 enter its frame at the first next(), 3.11 at the call, to make the generator)
        result, rec = _C._frame_probe(lambda n: next(gen(n)), (4,), gen.__code__)
        self.assertEqual(result, 4)
        self.assertIs(rec["code"], gen.__code__)
        self.assertEqual((rec["locals"], rec["started"], rec["resumable"]), ([4], False, True))

    def test_bad_input(self):
        with self.assertRaisesRegex(TypeError, "_frame_probe expects a Python function"):
            _C._frame_probe(len, ((),))
        with self.assertRaises(TypeError):
            _C._frame_probe(plain, [1, 2])
        with self.assertRaisesRegex(ZeroDivisionError, "division"):
            _C._frame_probe(lambda: 1 / 0, ())


if __name__ == "__main__":
    unittest.main()
