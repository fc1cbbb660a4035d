"""pijit's numpy stand-in (pijit.numpy_lite) against the real numpy, side by side in one process
(system python3 with Debian's numpy 1.24; each test fails where numpy is absent: requires.py).

Randomised but seeded: thousands of arrays of every supported dtype are printed (str and repr,
also under other print options), combined with every operator (arrays, 0-d arrays, numpy and
Python scalars: promotion, value-based casting, wrap-around, float16 rounding, error types), and
reduced, indexed, cast and transformed. Results must match exactly: dtype, shape and every value
(floats bit for bit, sums included). The one accepted difference: results numpy would give as
uint16/uint32/uint64, which the stand-in refuses with NotImplementedError.
"""
import operator
import random
import unittest
import warnings

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_numpy

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

import pijit.numpy_lite as lnp
from pijit import _C
from pijit.numpy_lite import _print

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
BIG_UNSIGNED = ("uint16", "uint32", "uint64")


def same(want, got):
    """Comparable summaries of two results (arrays, scalars, Python values, tuples)."""
    def norm(r):
        if isinstance(r, (np.ndarray, lnp.ndarray)):
            return ("array", str(r.dtype), r.shape, repr(r.tolist()))
        if isinstance(r, (np.generic, lnp.generic)):
            return ("scalar", type(r).__name__, repr(r.item()))
        if isinstance(r, tuple):
            return tuple(norm(x) for x in r)
        return ("python", type(r).__name__, repr(r))
    return norm(want), norm(got)


def outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                return "ok", fn()
    except NotImplementedError as e:
        return "notimpl", str(e)
    except TypeError:
        return "error", "TypeError"
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "error", type(e).__name__


class StandInCase(unittest.TestCase):
    def setUp(self):
        require_numpy(self, np)
        self.rng = random.Random(self.id())

    def values(self, dt, n, special=True):
        rng = self.rng
        if dt == "bool":
            return [rng.random() < 0.5 for _ in range(n)]
        if dt.startswith("float"):
            pool = [lambda: rng.uniform(-100, 100), lambda: float(rng.randint(-5, 5)),
                    lambda: rng.gauss(0, 1) * 10 ** rng.randint(-6, 9)]
            if special:
                pool += [lambda: float("nan"), lambda: -0.0, lambda: float("inf")]
            return [rng.choice(pool)() for _ in range(n)]
        return [rng.randint(-300, 300) for _ in range(n)]

    def pair(self, dt, shape, special=True):
        n = 1
        for s in shape:
            n *= s
        with np.errstate(all="ignore"):
            a = np.array(self.values(dt, n, special)).astype(dt).reshape(shape)
        return a, lnp.array(a.tolist() if shape else a.item(), dtype=dt)

    def compare(self, what, fn_np, fn_lnp):
        w, g = outcome(fn_np), outcome(fn_lnp)
        if g[0] == "notimpl" and w[0] == "ok" and any(u in g[1] for u in BIG_UNSIGNED) and \
                str(getattr(w[1], "dtype", "")) in BIG_UNSIGNED:
            return
        if w[0] == "error" or g[0] == "error":
            self.assertEqual(w, g, what)
            return
        self.assertEqual(g[0], "ok", "%s: %s" % (what, g[1]))
        want, got = same(w[1], g[1])
        self.assertEqual(want, got, what)


class TestPrinting(StandInCase):
    def check_arrays(self, count):
        for _ in range(count):
            dt = self.rng.choice(DTYPES)
            shape = self.rng.choice([(), (1,), (4,), (2, 3), (3, 1, 4), (1001,), (30, 40),
                                     (2, 2, 2, 2)])
            a, b = self.pair(dt, shape)
            self.assertEqual(str(b), str(a), (dt, shape))
            self.assertEqual(repr(b), repr(a), (dt, shape))
            if shape and dt in ("float32", "float64", "int32", "int64", "bool"):
                # the Python printer (repr, emulated dtypes) and the C one (str) agree
                self.assertEqual(_print.array_str(b.tolist(), b.shape, b.dtype), _C.format_str(b))
            if shape and a.size:
                x, y = a.reshape(-1)[0], b.reshape(-1)[0]
                self.assertEqual((str(y), repr(y)), (str(x), repr(x)), (dt, x))

    def test_str_and_repr(self):
        self.check_arrays(1500)

    def test_print_options(self):
        for opts in (dict(precision=3), dict(suppress=True), dict(threshold=10, edgeitems=2),
                     dict(linewidth=40), dict(precision=4, suppress=True, linewidth=60)):
            np.set_printoptions(**opts)
            lnp.set_printoptions(**opts)
            try:
                self.check_arrays(150)
            finally:
                defaults = dict(edgeitems=3, threshold=1000, linewidth=75, precision=8,
                                suppress=False)
                np.set_printoptions(**defaults)
                lnp.set_printoptions(**defaults)


OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
       operator.mod, operator.pow, operator.and_, operator.or_, operator.xor, operator.eq,
       operator.ne, operator.lt, operator.le, operator.gt, operator.ge, operator.lshift,
       operator.rshift]


class TestOperators(StandInCase):
    def operand(self):
        rng = self.rng
        kind = rng.choice(["array", "array", "scalar", "python", "0-d"])
        dt = rng.choice(DTYPES)
        if kind == "array":
            return self.pair(dt, rng.choice([(3,), (2, 3), (1, 3), (3, 1)]))
        if kind == "0-d":
            return self.pair(dt, ())
        if kind == "scalar":
            a, _ = self.pair(dt, ())
            x = a[()]
            return x, getattr(lnp, "bool_" if dt == "bool" else dt)(x.item())
        v = rng.choice([1, -1, 2, 0, 300, 70000, 1.5, -2.5, 0.1, True, False, 1e10, 2 ** 40,
                        float("nan"), 3])
        return v, v

    def test_promotion_and_values(self):
        for _ in range(4000):
            f = self.rng.choice(OPS)
            (na, la), (nb, lb) = self.operand(), self.operand()
            if not any(isinstance(x, (np.ndarray, np.generic)) for x in (na, nb)):
                continue
            self.compare((f.__name__, repr(na), repr(nb)), lambda: f(na, nb), lambda: f(la, lb))

    def test_unary(self):
        for _ in range(500):
            f = self.rng.choice([operator.neg, operator.pos, operator.abs, operator.invert])
            na, la = self.operand()
            if not isinstance(na, (np.ndarray, np.generic)):
                continue
            self.compare((f.__name__, repr(na)), lambda: f(na), lambda: f(la))


def _iadd(a):
    b = a.copy()
    b += 1
    return b


def _setitem(a):
    b = a.copy()
    b[0] = 7
    v = b.reshape(-1)
    v[-1] = 3
    return b


FUNCS = [
    ("sum", lambda m, a, ax: m.sum(a, axis=ax)),
    ("sum keepdims", lambda m, a, ax: m.sum(a, axis=ax, keepdims=True)),
    ("sum of a transpose", lambda m, a, ax: m.sum(a.T, axis=ax)),
    ("mean", lambda m, a, ax: m.mean(a, axis=ax)),
    ("prod", lambda m, a, ax: m.prod(a, axis=ax)),
    ("max", lambda m, a, ax: m.max(a, axis=ax)),
    ("min", lambda m, a, ax: m.min(a, axis=ax)),
    ("argmax", lambda m, a, ax: m.argmax(a, axis=ax if not isinstance(ax, tuple) else None)),
    ("argmin", lambda m, a, ax: m.argmin(a, axis=ax if not isinstance(ax, tuple) else None)),
    ("std", lambda m, a, ax: m.std(a, axis=ax)),
    ("var", lambda m, a, ax: m.var(a, axis=ax, ddof=1)),
    ("cumsum", lambda m, a, ax: m.cumsum(a, axis=ax if not isinstance(ax, tuple) else None)),
    ("all", lambda m, a, ax: m.all(a, axis=ax)),
    ("any", lambda m, a, ax: m.any(a, axis=ax)),
    ("allclose", lambda m, a, ax: m.allclose(a, a * 1.000001)),
    ("isclose", lambda m, a, ax: m.isclose(a, a + 1e-6)),
    ("array_equal", lambda m, a, ax: m.array_equal(a, a)),
    ("sqrt", lambda m, a, ax: m.sqrt(m.abs(a))),
    ("square", lambda m, a, ax: m.square(a)),
    ("sign", lambda m, a, ax: m.sign(a)),
    ("floor", lambda m, a, ax: m.floor(a)),
    ("round", lambda m, a, ax: m.round(a)),
    ("round 2", lambda m, a, ax: m.round(a, 2)),
    ("clip", lambda m, a, ax: m.clip(a, -3, 50)),
    ("maximum", lambda m, a, ax: m.maximum(a, 0)),
    ("minimum", lambda m, a, ax: m.minimum(a, a[..., :1])),
    ("where", lambda m, a, ax: m.where(a > 0, a, 0.5)),
    ("isnan", lambda m, a, ax: m.isnan(a)),
    ("isfinite", lambda m, a, ax: m.isfinite(a)),
    ("** 2", lambda m, a, ax: a ** 2),
    ("** 2.0", lambda m, a, ax: a ** 2.0),
    ("** -1", lambda m, a, ax: a ** -1),
    ("** 0.5", lambda m, a, ax: a ** 0.5),
    ("concatenate", lambda m, a, ax: m.concatenate([a, a], axis=-1)),
    ("stack", lambda m, a, ax: m.stack([a, a], axis=1)),
    ("T", lambda m, a, ax: a.T),
    ("a[..., 0]", lambda m, a, ax: a[..., 0]),
    ("a[0]", lambda m, a, ax: a[0]),
    ("a[mask]", lambda m, a, ax: a[a > 0] if a.dtype.kind != "b" else a[a]),
    ("a[[0, 0]]", lambda m, a, ax: a[[0, 0]]),
    ("+= 1", lambda m, a, ax: _iadd(a)),
    ("setitem", lambda m, a, ax: _setitem(a)),
    ("flatten", lambda m, a, ax: a.flatten()),
    ("matmul", lambda m, a, ax: (a.reshape(a.shape[0], -1) @ a.reshape(a.shape[0], -1).T)
     if a.dtype.kind != "f" else a[:0]),
]


class TestFunctions(StandInCase):
    def test_reductions_and_functions(self):
        for _ in range(5000):
            name, f = self.rng.choice(FUNCS)
            dt = self.rng.choice(DTYPES)
            shape = self.rng.choice([(5,), (3, 4), (2, 3, 4), (17,), (130,), (300,), (1, 7),
                                     (4, 1, 9), (2, 200)])
            a, b = self.pair(dt, shape, special=self.rng.random() < 0.3)
            nd = len(shape)
            ax = self.rng.choice([None, 0, -1, nd - 1, tuple(range(nd)),
                                  (0, nd - 1) if nd > 1 else 0, 1 if nd > 1 else None])
            self.compare((name, dt, shape, ax), lambda: f(np, a, ax), lambda: f(lnp, b, ax))

    def test_casts(self):
        for _ in range(1500):
            src, dst = self.rng.choice(DTYPES), self.rng.choice(DTYPES)
            a, b = self.pair(src, self.rng.choice([(4,), (2, 3)]))
            self.compare(("astype", src, dst), lambda: a.astype(dst), lambda: b.astype(dst))

    def test_long_sums_in_buffers(self):
        # numpy adds pairwise within 8192-element buffers and the buffers one after another
        rs = np.random.RandomState(0)
        for shape, ax, dt in [((1, 3, 224, 224), None, "float32"),
                              ((1, 3, 224, 224), (2, 3), "float32"),
                              ((300000,), None, "float64"), ((7, 9000), -1, "float32"),
                              ((9000, 7), 0, "float64"), ((2, 20000), None, "float16"),
                              ((300, 500), 1, "float16")]:
            a = (rs.randn(*shape) * 10).astype(dt)
            b = lnp.array(a.tolist(), dtype=dt)
            for name in ("sum", "mean", "std"):
                self.compare((name, shape, ax, dt), lambda: getattr(np, name)(a, axis=ax),
                             lambda: getattr(lnp, name)(b, axis=ax))


class TestRandom(StandInCase):
    def test_streams_match_numpys(self):
        for seed in (0, 1, 42, 2 ** 32 - 1, [1, 2, 3]):
            ra, rb = np.random.RandomState(seed), lnp.random.RandomState(seed)
            for call in (lambda r: r.randn(3, 4), lambda r: r.rand(5), lambda r: r.randn(),
                         lambda r: r.randint(0, 10, 7), lambda r: r.randint(5),
                         lambda r: r.randint(-5, 2 ** 40, 3), lambda r: r.uniform(-1, 1, (2, 2)),
                         lambda r: r.normal(3, 2, 4), lambda r: r.random_sample(3),
                         lambda r: r.standard_normal((2,)), lambda r: r.permutation(6),
                         lambda r: r.choice(5, 3), lambda r: r.choice(5, 3, replace=False),
                         lambda r: r.randint(0, 2 ** 31, 4, dtype="int32")):
                self.compare(("random", seed), lambda: call(ra), lambda: call(rb))

    def test_global_generator(self):
        np.random.seed(5)
        lnp.random.seed(5)
        for call in ("randn(2, 3)", "rand()", "randint(3, 9, size=(2,))", "randn()", "randn()"):
            self.compare(call, lambda: eval("np.random." + call, {"np": np}),
                         lambda: eval("np.random." + call, {"np": lnp}))
        a, b = np.arange(10), lnp.arange(10)
        np.random.shuffle(a)
        lnp.random.shuffle(b)
        self.assertEqual(a.tolist(), b.tolist())


class TestCreation(StandInCase):
    EXPRS = """
        np.arange(10)
        np.arange(0.0, 1.0, 0.1)
        np.arange(1, 2, 0.3, dtype=np.float32)
        np.arange(10, 0, -3)
        np.linspace(-2.5, 3.3, 11, dtype=np.float32)
        np.linspace(0, 10, 4, dtype=np.int32)
        np.linspace(0, 1, 7, endpoint=False, retstep=True)
        np.eye(2, 3, k=1, dtype=np.int32)
        np.full((2, 3), 5.5, dtype=np.float16)
        np.full(3, np.float32(1.5))
        np.full((2, 2), [1, 2])
        np.full(2, 1e10, dtype=np.int32)
        np.array([1e10], dtype=np.int32)
        np.array([300], dtype=np.int8)
        np.array([[1, 2], [3, 4]], dtype=np.uint8)
        np.array([np.float16(1), np.int8(2)])
        np.array([1, [2, 3]])
        np.array((1, 2), ndmin=3)
        np.array(range(5))
        np.zeros_like(np.ones((2, 3), np.float32))
        np.full_like(np.ones((2,), np.int32), 7.9)
        np.float32(0.1) * 3
        np.float16(0.1) + np.float16(0.2)
        np.int64(7) / 2
        np.around(np.float32(2.675), 2)
        np.round(np.array([15, 25, 35]), -1)
        np.finfo(np.float32).eps
        np.iinfo(np.int8).min
        np.result_type(np.array([1], np.int8), 1000).name
        np.promote_types("int8", "uint8").name
        np.dot(np.arange(6).reshape(2, 3), np.arange(3))
        np.outer([1, 2], [3, 4])
        np.broadcast_to(np.arange(3), (2, 3))
        np.expand_dims(np.ones(3), 0).shape
        np.squeeze(np.ones((1, 3, 1))).shape
        np.hstack([[1, 2], [3]])
        np.vstack([[1, 2], [3, 4]])
    """

    def test_expressions(self):
        for e in self.EXPRS.strip().splitlines():
            e = e.strip()
            self.compare(e, lambda: eval(e, {"np": np}), lambda: eval(e, {"np": lnp}))


if __name__ == "__main__":
    unittest.main()


# ---- complex64/complex128, uint16/uint32, numpy.testing, unique ------------------------------

NEW_DTYPES = ["complex64", "complex128", "uint16", "uint32"]


class TestNewDtypes(StandInCase):
    def cvalues(self, n):
        rng = self.rng
        pool = [lambda: complex(rng.uniform(-100, 100), rng.uniform(-100, 100)),
                lambda: complex(rng.randint(-5, 5), rng.randint(-5, 5)),
                lambda: complex(rng.gauss(0, 1) * 10 ** rng.randint(-6, 9), 0.5),
                lambda: complex(0.0, rng.uniform(-3, 3))]
        return [rng.choice(pool)() for _ in range(n)]

    def npair(self, dt, shape):
        n = 1
        for s in shape:
            n *= s
        if dt.startswith("complex"):
            vals = self.cvalues(n)
        else:
            vals = [self.rng.randint(0, 70000) for _ in range(n)]
        with np.errstate(all="ignore"):
            a = np.array(vals).astype(dt).reshape(shape)
        return a, lnp.array(a.tolist() if shape else a.item(), dtype=dt)

    def test_printing(self):
        for _ in range(600):
            dt = self.rng.choice(NEW_DTYPES)
            shape = self.rng.choice([(), (1,), (4,), (2, 3), (3, 1, 4), (30, 40)])
            a, b = self.npair(dt, shape)
            self.assertEqual(str(b), str(a), (dt, shape))
            self.assertEqual(repr(b), repr(a), (dt, shape))
            if shape and a.size:
                x, y = a.reshape(-1)[0], b.reshape(-1)[0]
                self.assertEqual((str(y), repr(y)), (str(x), repr(x)), (dt, x))

    def test_operators(self):
        ops = [operator.add, operator.sub, operator.mul, operator.truediv, operator.eq,
               operator.ne]
        for _ in range(1500):
            f = self.rng.choice(ops)
            dt = self.rng.choice(NEW_DTYPES)
            a, b = self.npair(dt, self.rng.choice([(3,), (2, 3)]))
            kind = self.rng.choice(["same", "python", "other"])
            if kind == "same":
                c, d = self.npair(dt, a.shape)
            elif kind == "python":
                c = d = self.rng.choice([2, 1.5, 1j, 2 - 0.5j, True])
            else:
                c, d = self.pair(self.rng.choice(["float32", "float64", "int32", "int8"]),
                                 a.shape, special=False)
            if dt.startswith("uint") and f is operator.sub:
                continue  # numpy 1.24 warns and wraps the same way; covered by the unit tests
            self.compare((f.__name__, repr(a), repr(c)), lambda: f(a, c), lambda: f(b, d))

    def test_functions(self):
        funcs = [lambda m, a: m.abs(a), lambda m, a: a.astype(m.float64),
                 lambda m, a: a.astype(m.complex64), lambda m, a: a.real,
                 lambda m, a: a.imag, lambda m, a: a.conj(), lambda m, a: m.sqrt(a),
                 lambda m, a: m.isclose(a, a * (1 + 1e-6)), lambda m, a: m.allclose(a, a + 1),
                 lambda m, a: a.sum(), lambda m, a: a[0], lambda m, a: a.tolist(),
                 lambda m, a: m.isfinite(a), lambda m, a: m.concatenate([a, a]),
                 lambda m, a: m.zeros(a.shape, a.dtype), lambda m, a: m.ones(2, a.dtype),
                 lambda m, a: m.real(a), lambda m, a: m.imag(a), lambda m, a: m.conj(a),
                 lambda m, a: m.iscomplexobj(a), lambda m, a: m.iscomplex(a),
                 lambda m, a: m.conjugate(a[0]), lambda m, a: a.sum(axis=0),
                 lambda m, a: m.mean(a, axis=-1), lambda m, a: m.sum(a.T, axis=1)]
        for _ in range(800):
            i = self.rng.randrange(len(funcs))
            dt = self.rng.choice(NEW_DTYPES)
            a, b = self.npair(dt, self.rng.choice([(4,), (2, 3), (130,), (3, 70), (2, 3, 5)]))
            f = funcs[i]
            self.compare((i, dt, a.tolist()), lambda: f(np, a), lambda: f(lnp, b))

    def test_names(self):
        for name in ("uint16", "uint32", "uint64", "complex64", "complex128", "cdouble",
                     "csingle", "uint", "ushort", "uintc", "complex_"):
            self.assertEqual(str(lnp.dtype(getattr(lnp, name))), str(np.dtype(getattr(np, name))))
        for code in ("u2", "<u4", "u8", "c8", "c16", "F", "D", "H", "I"):
            self.assertEqual(str(lnp.dtype(code)), str(np.dtype(code)))
            self.assertEqual(lnp.dtype(code).char, np.dtype(code).char)
            self.assertEqual(lnp.dtype(code).str, np.dtype(code).str)
        for t in ("uint16", "complex64", "complex128", "uint64"):
            for u in ("int8", "int16", "int32", "int64", "uint8", "float16", "float32",
                      "float64", "complex64", "uint32"):
                self.assertEqual(str(lnp.promote_types(t, u)), str(np.promote_types(t, u)),
                                 (t, u))


def _message(fn):
    try:
        fn()
    except AssertionError as e:
        return "AssertionError", str(e)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, ""
    return "ok", ""


class TestTestingAndUnique(StandInCase):
    def test_assertions_and_messages(self):
        cases = [
            ("assert_allclose", ([1.0, 2.0, 3.0], [1.0, 2.0, 3.1]), {}),
            ("assert_allclose", ([1.0, float("nan")], [1.0, float("nan")]), {}),
            ("assert_allclose", ([1.0, float("nan")], [1.0, float("nan")]),
             dict(equal_nan=False)),
            ("assert_allclose", ([1.0, float("nan")], [1.0, 2.0]), {}),
            ("assert_allclose", ([1.0, 2.0], [1.0, 2.0, 3.0]), {}),
            ("assert_allclose", ([[1.0, 1.0], [1.0, 1.0]], 1.0001), dict(rtol=1e-5,
                                                                        err_msg="hello")),
            ("assert_allclose", ([1, 0], [1, 0.5]), dict(atol=0.1)),
            ("assert_allclose", ([1, 0], [1, 0.05]), dict(atol=0.1)),
            ("assert_allclose", ([0.0, 0.0], [0.0, 1e-9]), {}),
            ("assert_allclose", ([float("inf"), 1.0], [float("inf"), 1.0]), {}),
            ("assert_array_equal", ([1, 2, 3], [1, 2, 4]), {}),
            ("assert_array_equal", ([1, 2, 3], [1, 2, 3]), {}),
            ("assert_array_equal", ([[1.5, 2.0]], [[1.5, 2.5]]), {}),
            ("assert_array_almost_equal", ([1.0, 2.000001], [1.0, 2.0]), {}),
            ("assert_array_almost_equal", ([1.0, 2.01], [1.0, 2.0]), dict(decimal=3)),
            ("assert_almost_equal", (1.0, 1.1), {}),
            ("assert_almost_equal", (1.0, 1.00000001), {}),
            ("assert_almost_equal", ([1.0, 2.0], [1.0, 2.1]), {}),
            ("assert_equal", (1, 2), {}),
            ("assert_equal", (1, 1), {}),
            ("assert_equal", ([1, (2, 3)], [1, (2, 4)]), {}),
            ("assert_equal", ({"a": 1}, {"a": 2}), {}),
            ("assert_array_less", ([1, 2], [2, 2]), {}),
        ]
        for name, args, kwargs in cases:
            want = _message(lambda: getattr(np.testing, name)(*args, **kwargs))
            got = _message(lambda: getattr(lnp.testing, name)(*args, **kwargs))
            self.assertEqual(want, got, (name, args, kwargs))
        for dt in ("float32", "float64", "complex64", "uint16", "int32"):
            a, b = self.pair("float64", (2, 3), special=False)
            x, y = a.astype(dt), lnp.asarray(b).astype(dt)
            for rtol in (1e-7, 1e-3):
                want = _message(lambda: np.testing.assert_allclose(x, x * 1.0001, rtol=rtol))
                got = _message(lambda: lnp.testing.assert_allclose(y, y * 1.0001, rtol=rtol))
                self.assertEqual(want, got, (dt, rtol))

    def test_assert_raises(self):
        with lnp.testing.assert_raises(ZeroDivisionError):
            1 / 0
        lnp.testing.assert_raises(ValueError, int, "x")
        with self.assertRaises(AssertionError):
            lnp.testing.assert_raises(ValueError, int, "1")

    def test_unique(self):
        for _ in range(300):
            dt = self.rng.choice(["float32", "float64", "int32", "int64", "uint8", "bool",
                                  "int8"])
            shape = self.rng.choice([(0,), (7,), (3, 4), (5, 2)])
            a, b = self.pair(dt, shape, special=self.rng.random() < 0.3)
            a = np.round(a / 20) if dt.startswith("float") else a // 50 if dt != "bool" else a
            b = lnp.array(a.tolist(), dtype=dt)
            flags = dict(return_index=self.rng.random() < 0.5,
                         return_inverse=self.rng.random() < 0.5,
                         return_counts=self.rng.random() < 0.5)
            axis = self.rng.choice([None, None, 0, -1]) if a.ndim > 1 or a.size else None
            if axis is not None and dt.startswith("float"):
                continue  # rows with NaN: numpy compares bytes there
            self.compare(("unique", dt, repr(a), flags, axis),
                         lambda: np.unique(a, axis=axis, **flags),
                         lambda: lnp.unique(b, axis=axis, **flags))
        self.assertEqual(lnp.broadcast_shapes((2, 1), (3,)), np.broadcast_shapes((2, 1), (3,)))
