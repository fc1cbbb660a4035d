"""Special methods of user classes in captured code (issue 18): an operator on an instance of a
class written in Python inlines the class's method, guarded by the class's version, in the order
Python's protocol calls them: the reflected method first when the right operand's class derives
from the left's and overrides it, NotImplemented passing the turn, == falling back to identity,
__bool__ then __len__ for truth, __iter__/__next__ with StopIteration for iteration. Objects both
passed in and made by the function. Each test compares plain and jitted results bit for bit and
counts graphs and breaks; exceptions Python raises come out the same (type and message)."""
import sys
import unittest

import pijit as pj
from jit_compare import no_stress, same_bits, same_calls, same_raise

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402
T = pj.Tensor
LOG = []


class Vec:
    """A tensor wrapper with arithmetic, comparisons and container methods."""

    def __init__(self, t, tag="v"):
        self.t = t
        self.tag = tag

    def __add__(self, o):
        LOG.append(("add", self.tag))
        if isinstance(o, Vec):
            return Vec(self.t + o.t, self.tag)
        if isinstance(o, (int, float)):
            return Vec(self.t + o, self.tag)
        return NotImplemented

    def __radd__(self, o):
        LOG.append(("radd", self.tag))
        return Vec(self.t + o, "r" + self.tag)

    def __iadd__(self, o):
        LOG.append(("iadd", self.tag))
        self.t = self.t + (o.t if isinstance(o, Vec) else o)
        return self

    def __mul__(self, o):
        return Vec(self.t * (o.t if isinstance(o, Vec) else o), self.tag)

    __rmul__ = __mul__

    def __matmul__(self, o):
        return (self.t * o.t).sum()

    def __sub__(self, o):
        return Vec(self.t - o.t, self.tag)

    def __truediv__(self, k):
        return Vec(self.t / k, self.tag)

    def __neg__(self):
        return Vec(-self.t, "-" + self.tag)

    def __abs__(self):
        return Vec(self.t.abs(), self.tag)

    def __eq__(self, o):
        return isinstance(o, Vec) and self.tag == o.tag

    def __lt__(self, o):
        return len(self.tag) < len(o.tag)

    def __len__(self):
        return self.t.shape[0]

    def __getitem__(self, i):
        return self.t[i]

    def __setitem__(self, i, v):
        LOG.append(("set", i))
        self.tag = self.tag + str(i)

    def __contains__(self, k):
        return k == self.tag


class SubVec(Vec):
    def __radd__(self, o):  # overrides the reflected method: Python calls it first for Vec + SubVec
        return Vec(self.t * 10.0, "sub")


class Bag:
    """Container protocol only: __len__ for truth, __iter__ as a generator, no __contains__."""

    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        for v in self.items:
            yield v


class Listed:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


class Countdown:
    """An iterator class: __iter__ returns self, __next__ raises StopIteration."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n


class Seq:
    """The old sequence protocol: __getitem__ only, IndexError ends iteration."""

    def __init__(self, items):
        self.items = list(items)

    def __getitem__(self, i):
        return self.items[i]


class Ranked:
    def __init__(self, r, t):
        self.r = r
        self.t = t

    def __lt__(self, o):
        LOG.append(("lt", self.r, o.r))
        return self.r < o.r

    def __gt__(self, o):
        LOG.append(("gt", self.r, o.r))
        return self.r > o.r


class Scaled:
    """A non-data descriptor: __get__ reads the descriptor's own state and counts its calls."""

    def __init__(self, k):
        self.k = k

    def __get__(self, obj, owner):
        if obj is None:
            return self.k
        return obj.base * self.k


class Typed:
    """A data descriptor: its __get__ wins over the instance dict."""

    def __get__(self, obj, owner):
        return getattr(obj, "_typed", 0.0) + 1.0

    def __set__(self, obj, v):
        object.__setattr__(obj, "_typed", v)


class Holder:
    double = Scaled(2.0)
    typed = Typed()

    def __init__(self, base):
        self.base = base


class Flag:
    def __init__(self, on):
        self.on = on

    def __bool__(self):
        return self.on


class BadBool:
    def __bool__(self):
        return 1


class NegLen:
    def __len__(self):
        return -1


class Plain:
    pass


def x1():
    return T([1.0, -2.0, 3.0])


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class Dunders(unittest.TestCase):
    def setUp(self):
        del LOG[:]

    def same(self, f, make_args, calls=3, view=lambda v: v):
        """Plain and jitted calls alternate; results and the special methods' LOG entries match."""
        jf = pj.jit(f)
        for _ in range(calls):
            del LOG[:]
            with no_stress():
                want = (view(f(*make_args())), list(LOG))
            del LOG[:]
            got = (view(jf(*make_args())), list(LOG))
            self.assertTrue(same_bits(want, got), (want, got))
        return jf, pj.jit_stats(jf)

    def one_graph(self, st, graphs=1):
        self.assertEqual(st["break_reasons"], [])
        self.assertEqual((st["graphs"], st["breaks"]), (graphs, 0))

    # ---- arithmetic ----
    def test_binary_reflected_and_inplace(self):
        def f(x):
            a, b = Vec(x, "a"), Vec(x * 2.0, "b")
            c = a + b            # __add__
            d = 1.5 + a          # int/float decline: __radd__
            e = a + "s"          # __add__ returns NotImplemented, str declines... then __radd__ of a? no: TypeError
            return c.t, d.t, e
        def g(x):
            a, b = Vec(x, "a"), Vec(x * 2.0, "b")
            c = a + b
            d = 1.5 + a
            a += b               # __iadd__ mutates a
            a += 2.0
            m = 3.0 * a * 2.0    # __rmul__ then __mul__
            return c.t, d.t, d.tag, a.t, m.t, (a @ b), (a - b).t, (a / 2.0).t, (-a).t, abs(a).t
        _, st = self.same(g, lambda: (x1(),), view=lambda r: r)
        self.one_graph(st)
        same_raise(self, lambda x: f(x), lambda: (x1(),), TypeError)

    def test_subclass_reflected_method_goes_first(self):
        def f(x):
            v, s = Vec(x, "v"), SubVec(x, "s")
            r = v + s            # SubVec.__radd__ overrides Vec's: it is called first
            q = s + v            # the plain order
            return r.t, r.tag, q.t, q.tag
        _, st = self.same(f, lambda: (x1(),))
        self.one_graph(st)

    def test_objects_passed_in_and_returned(self):
        def f(a, b):
            c = a + b
            a += b               # in place on the caller's object: a deferred attribute store
            return c, a.t
        def args():
            return Vec(x1(), "a"), Vec(x1() * 3.0, "b")
        _, st = same_calls(self, f, args, view=lambda r: (r[0].t, r[0].tag, r[1]))
        self.one_graph(st)
        a, b = args()
        pj.jit(f)(a, b)
        self.assertTrue(same_bits(a.t, x1() + x1() * 3.0))

    def test_unsupported_operand_raises_the_same_type_error(self):
        def f(x):
            return Plain() + x
        same_raise(self, f, lambda: (1,), TypeError)
        def g(x):
            return x - Vec(T([1.0]))  # no __rsub__
        same_raise(self, g, lambda: (1,), TypeError)

    # ---- comparisons ----
    def test_eq_ne_ordering_and_identity_fallback(self):
        def f(x):
            a, b, c = Vec(x, "a"), Vec(x, "a"), Vec(x, "ccc")
            p, q = Plain(), Plain()
            return (a == b, a != b, a == c, a != c, a < c, c > a, b == 3, 3 == b,
                    p == p, p == q, p != q, a == p)
        _, st = self.same(f, lambda: (x1(),))
        self.one_graph(st)

    def test_ordering_without_method_raises(self):
        def f(x):
            return Plain() < Plain()
        same_raise(self, f, lambda: (1,), TypeError)

    # ---- truth, len, containers ----
    def test_truth_len_getitem_setitem_contains(self):
        def f(x):
            v = Vec(x, "k")
            out = []
            if v:
                out.append(len(v))
            if not Bag([]):
                out.append("empty")
            if Flag(True) and not Flag(False):
                out.append(bool(Flag(True)))
            v[2] = 0.0
            out.append("k2" in v)
            out.append("zz" not in v)
            out.append(2 in Bag([1, 2]))
            return v[0] + v[1], out, v.tag
        _, st = self.same(f, lambda: (x1(),))
        self.one_graph(st)

    def test_bad_bool_and_negative_len_raise(self):
        same_raise(self, lambda x: 1 if BadBool() else 0, lambda: (1,), TypeError)
        same_raise(self, lambda x: len(NegLen()), lambda: (1,), ValueError)
        same_raise(self, lambda x: Plain()[0], lambda: (1,), TypeError)

    # ---- iteration ----
    def test_iter_generator_builtin_and_iterator_class(self):
        def f(x):
            total = x * 0.0
            for v in Bag([x, x * 2.0]):
                total = total + v
            a, b = Bag([1.0, 2.0])
            n = [i for i in Countdown(3)]
            s = sum(Listed([1, 2, 3]))
            t = tuple(Countdown(2))
            return total, a + b, n, s, t, list(Bag("ab")), sorted(Listed([3, 1])), any(Countdown(2)), all(Bag([1, 0]))
        _, st = self.same(f, lambda: (x1(),))
        self.one_graph(st)

    def test_old_sequence_protocol(self):
        def f(x):
            total = x * 0.0
            for v in Seq([x, x * 2.0]):
                total = total + v
            a, b = Seq([1, 2])
            return total, a + b, list(Seq("ab")), 2 in Seq([1, 2]), 5 in Seq([1, 2])
        _, st = self.same(f, lambda: (x1(),))
        self.one_graph(st)

    def test_sum_min_max_over_user_objects(self):
        def f(x):
            vs = [Vec(x, "a"), Vec(x * 2.0, "b"), Vec(x * 3.0, "c")]
            total = sum(vs)                 # 0 + a: __radd__, then __add__
            shifted = sum(vs, Vec(x, "s"))
            rs = [Ranked(2, x), Ranked(5, x * 2.0), Ranked(1, x * 3.0)]
            return total.t, total.tag, shifted.t, max(rs).t, min(rs).t, max(Ranked(0, x), Ranked(9, x)).r
        _, st = self.same(f, lambda: (x1(),))
        self.one_graph(st)

    def test_user_descriptors_get(self):
        def f(x, h):
            m = Holder(x * 3.0)
            return h.double, m.double, Holder.double, h.typed, m.typed
        jf, st = self.same(f, lambda: (x1(), Holder(x1())))
        self.one_graph(st)
        Holder.__dict__["double"].k = 5.0  # the descriptor's own state is guarded
        self.assertTrue(same_bits(jf(x1(), Holder(x1()))[0], x1() * 5.0))
        Holder.__dict__["double"].k = 2.0

    def test_iterator_passed_in_is_advanced_for_real(self):
        def f(it, x):
            first = next(it)
            return x * first, next(it, -1.0)
        def args():
            return Countdown(3), x1()
        _, st = same_calls(self, f, args)
        self.one_graph(st)
        it = Countdown(1)
        pj.jit(f)(it, x1())
        self.assertEqual(it.n, 0)

    def test_unpacking_counts_like_python(self):
        def f(x):
            a, b = Countdown(3)
        same_raise(self, f, lambda: (1,), ValueError)

    def test_cell_list_enumerate_zip_and_truth(self):
        from pijit import nn

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.layers = nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])

            def construct(self, x):
                for i, layer in enumerate(self.layers):
                    x = layer(x) * (i + 1)
                for layer, k in zip(self.layers, [1.0, 2.0]):
                    x = layer(x) * k
                if self.layers:
                    x = x + 1.0
                return x
        net = Net()
        _, st = same_calls(self, lambda x: net(x), lambda: (T([[1.0, 2.0]]),))
        self.one_graph(st)

    # ---- guards ----
    def test_changed_special_method_recompiles(self):
        class K:
            def __init__(self, t):
                self.t = t

            def __add__(self, o):
                return self.t + o

        def f(x):
            return K(x) + 1.0
        jf = pj.jit(f)
        self.assertTrue(same_bits(jf(x1()), x1() + 1.0))
        K.__add__ = lambda self, o: self.t * o
        self.assertTrue(same_bits(jf(x1()), x1() * 1.0))
        K.__radd__ = lambda self, o: self.t - o
        self.assertTrue(same_bits(jf(x1()), x1() * 1.0))
        self.assertEqual(pj.jit_stats(jf)["graphs"], 3)
        self.assertEqual(pj.jit_stats(jf)["breaks"], 0)

    def test_c_base_class_method_is_refused_with_its_name(self):
        class L(list):
            pass

        def f(l, x):
            return l + [x]
        jf = pj.jit(f)
        self.assertEqual(jf(L([1]), 2), [1, 2])
        st = pj.jit_stats(jf)
        self.assertTrue(any("L.__add__ is a wrapper_descriptor" in r for r in st["break_reasons"]), st)


if __name__ == "__main__":
    unittest.main()
