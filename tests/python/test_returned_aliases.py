"""Aliasing among a jitted function's returned tensors (issue 45): every relation plain Python has
holds for what the jitted call returns. Two outputs share storage exactly when they do eagerly
(a constant and a view of it, two views of one intermediate, an input and its views, an output
and its views), one tensor returned twice is one object, and nothing a call returns shares
storage with what another call returned (a constant is a new tensor each call)."""
import unittest

import pijit as pj
from pijit import Tensor
from jit_compare import CAPTURE_ON, CAPTURE_OFF_WHY


def relations(outs):
    """(identity pairs, pairs where a write through the first shows in the second)."""
    ident = [(i, j) for i in range(len(outs)) for j in range(len(outs)) if i < j and outs[i] is outs[j]]
    shows = []
    for i, t in enumerate(outs):
        before = [u.tolist() for u in outs]
        t[...] = 1000.0 + i  # through this one
        after = [u.tolist() for u in outs]
        shows += [(i, j) for j in range(len(outs)) if j != i and after[j] != before[j]]
    return ident, shows


def k_and_view():
    k = Tensor([1.0, 2.0])
    return k, k.reshape(2, 1)


def k_twice_and_slice():
    k = Tensor([[1.0, 2.0], [3.0, 4.0]])
    return k, k[1], k, k.T


def two_views_of_an_intermediate(x):
    t = x + 1
    return t.reshape(2, 1), t[1:], t[0:1]


def input_and_views(x):
    return x, x.reshape(2, 1), x[1:]


def output_and_views(x):
    y = x * 2
    return y, y.reshape(1, 2), y[0:1], y


def mixed(x):
    k = Tensor([3.0, 4.0])
    y = x * k
    return y, k, k[1:], y.reshape(2, 1), x[0:1]


def unrelated_constants():
    return Tensor([1.0, 2.0]), Tensor([1.0, 2.0])


CASES = [
    (k_and_view, ()),
    (k_twice_and_slice, ()),
    (two_views_of_an_intermediate, (lambda: Tensor([5.0, 6.0]),)),
    (input_and_views, (lambda: Tensor([5.0, 6.0]),)),
    (output_and_views, (lambda: Tensor([5.0, 6.0]),)),
    (mixed, (lambda: Tensor([5.0, 6.0]),)),
    (unrelated_constants, ()),
]


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
class ReturnedAliases(unittest.TestCase):
    def run_case(self, fn, makers):
        def calls(f):
            got = []
            kept = None
            for _ in range(3):  # the first call captures, the others run the cached graph
                args = [m() for m in makers]
                outs = f(*args)
                outs = outs if isinstance(outs, tuple) else (outs,)
                if kept is not None:  # an earlier call's results are the caller's own
                    before = [u.tolist() for u in outs]
                    for t in kept:
                        t[...] = -7.0
                    self.assertEqual([u.tolist() for u in outs], before, fn.__name__)
                got.append((relations(outs), [a.tolist() for a in args]))
                kept = outs
            return got
        want = calls(fn)
        jf = pj.jit(fn)
        self.assertEqual(calls(jf), want, fn.__name__)
        self.assertEqual(pj.jit_stats(jf)["graphs"], 1, fn.__name__)

    def test_every_relation_holds(self):
        for fn, makers in CASES:
            with self.subTest(fn=fn.__name__):
                self.run_case(fn, makers)

    def test_the_constant_and_its_view_share_storage(self):
        # the example, spelled out
        k, v = pj.jit(k_and_view)()
        k[0] = 9.0
        self.assertEqual(v.tolist(), [[9.0], [2.0]])


if __name__ == "__main__":
    unittest.main()
