"""Lifted Python scalars and MindSpore's dynamic controls (issue 17): a Python int or float that
changes between calls becomes a graph input where it meets a tensor, so new values reuse the graph;
a comparison of it with a constant is guarded as a comparison; any other use guards its value and
says where. pijit.mutable() lifts from the first call; input_signature / Cell.set_inputs make None
and Symbol sizes dynamic up front and check every call. Results equal eager Python exactly;
compiles, recompiles and eager calls are asserted."""
import contextlib
import io
import sys
import unittest

import pijit as pj
from pijit import nn, ops
from jit_compare import same_bits as same

from jit_compare import CAPTURE_ON as SUPPORTED, CAPTURE_OFF_WHY  # noqa: E402


def counts(jf):
    st = pj.jit_stats(jf)
    return st, (st["compiles"], st["recompiles"], st["frames_default"])


def printed(fn, *args):
    """(what fn returned, what it printed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        r = fn(*args)
    return r, out.getvalue()


def notes(st):
    return [n for e in st["entries"] for n in e["dynamic"]]


X = pj.Tensor([[1.0, -2.0, 0.5], [3.0, 4.0, -0.25]])
LRS = [0.001 * (i + 1) for i in range(12)] + [0.1, 1e-30, -3.5, 7.0]


def sgd_like(w, g, lr):
    return w - lr * g


def scale_shift(x, a):
    return a / x + a - x * a


GLOBAL_SCALE = 0.5


def uses_global(x):
    return ops.relu(x * GLOBAL_SCALE) + GLOBAL_SCALE


def branch(x, t):
    if t > 0.5:
        return x * t
    return x - t


def python_arith(x, lr):
    return x * (lr ** 2)


def compare(x, t):
    return ops.where(x > t, x, x * 0)


def by_int(x, n):
    return x * n - n


def keep_k(x, k):
    return x + k


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class LiftedScalars(unittest.TestCase):
    def setUp(self):
        for f in (sgd_like, scale_shift, uses_global, branch, python_arith, compare, by_int, keep_k):
            pj.reset(f)

    def test_a_changing_learning_rate_is_a_graph_input(self):
        jf = pj.jit(sgd_like)
        g = X * 0.25
        for lr in LRS:
            self.assertTrue(same(jf(X, g, lr), sgd_like(X, g, lr)), lr)
        st, c = counts(jf)
        self.assertEqual(c, (2, 1, 0))  # static first, then one entry for every lr
        self.assertEqual(st["recompile_reasons"], ["lr: 0.001 -> 0.002"])
        e = st["entries"][0]
        self.assertIn("%2: Float32[] lr", e["graph"])
        self.assertIn("type(lr) is float", e["guards"])
        self.assertFalse([gd for gd in e["guards"] if gd.startswith("lr ==")], e["guards"])
        self.assertEqual(e["dynamic"], ["lr is a graph input (a Python float, traced with 0.002, as Float32)"])

    def test_explain_shows_what_is_dynamic(self):
        ex = pj.explain(sgd_like)
        g = X * 0.25
        for lr in (0.5, 0.25, 0.125):
            report = ex(X, g, lr)
        text = str(report)
        self.assertIn("recompiled: lr: 0.5 -> 0.25", text)
        self.assertIn("  dynamic in entry 0:\n    lr is a graph input (a Python float, traced with 0.25, as Float32)", text)
        f = [f for f in report.functions if f.code is sgd_like.__code__][0]
        self.assertEqual(f.graph_runs, 3)  # the first entry once, the lifted one twice
        self.assertEqual(f.dynamic[0], ["lr is a graph input (a Python float, traced with 0.25, as Float32)"])
        # a symbolic entry's runs count on every size's plan
        pj.reset(by_int)
        ex = pj.explain(by_int)
        for n in (3, 4, 5, 6, 4):
            report = ex(pj.ones((n, 2)), 2)
        f = [f for f in report.functions if f.code is by_int.__code__][0]
        self.assertEqual((f.compiles, f.graph_runs), (2, 5))

    def test_dtype_follows_the_operator_and_reflected_operands(self):
        jf = pj.jit(scale_shift)
        xd = pj.Tensor([[1.5, 2.0], [-4.0, 8.0]], pj.float64)
        for a in LRS:
            for x in (X, xd):
                self.assertTrue(same(jf(x, a), scale_shift(x, a)), a)
        st, c = counts(jf)
        self.assertEqual(c[2], 0)
        self.assertLessEqual(c[0], 4)  # per dtype: static, then lifted
        dyn = notes(st)
        self.assertIn("a is a graph input (a Python float, traced with 0.002, as Float32)", dyn)
        self.assertIn("a is a graph input (a Python float, traced with 0.002, as Float64)", dyn)

    def test_ints_lift_with_the_tensor_dtype(self):
        jf = pj.jit(by_int)
        xi = pj.Tensor([[1, 2], [3, -4]], pj.int32)
        for n in range(3, 15):
            for x in (xi, X):
                self.assertTrue(same(jf(x, n), by_int(x, n)), n)
        st, c = counts(jf)
        self.assertEqual((c[0], c[2]), (4, 0))
        self.assertIn("n is a graph input (a Python int, traced with 4, as Int32)", notes(st))
        self.assertIn("n is a graph input (a Python int, traced with 4, as Float32)", notes(st))

    def test_an_int_that_is_a_reshape_size_gets_a_plan_per_value(self):
        def f(x, n):
            return x.reshape((n, -1)) * 2
        pj.reset(f)
        jf = pj.jit(f)
        x = pj.arange(24).astype(pj.float32)
        for n in [2, 3, 4, 6, 8, 12, 24, 1, 3]:
            self.assertTrue(same(jf(x, n), f(x, n)), n)
        st, c = counts(jf)
        self.assertEqual(c, (3, 2, 0))  # 2; 3 makes n a symbol; 1 stays exact, as a size 1 does
        e = [e for e in st["entries"] if e["shape_plans"]["plans"]][0]
        self.assertIn("s0 = n is a size of a reshape (traced with 3): planned per value", e["dynamic"])
        self.assertIn("n >= 2", e["guards"])
        self.assertEqual(e["shape_plans"]["plans"], 6)  # 3 (captured), 4, 6, 8, 12, 24
        # a value the reshape rejects: that call runs eagerly and raises eager's error
        for fn in (f, jf):
            with self.assertRaisesRegex(ValueError, r"cannot reshape tensor of size 24 into shape \(5, -1\)"):
                fn(x, 5)
        self.assertEqual([e["shape_plans"]["rejected"] for e in pj.jit_stats(jf)["entries"]
                          if e["shape_plans"]["plans"]], [1])

    def test_reshape_sizes_with_a_dynamic_batch_and_ops_reshape(self):
        def f(x, n):
            y = ops.reshape(x, (-1, n, 5))
            return y.sum(axis=1)
        pj.reset(f)
        jf = pj.jit(f)
        for b, n in [(4, 3), (6, 3), (6, 2), (5, 4), (2, 3), (7, 6), (3, 2)]:
            x = pj.randn(b, 5 * n * 3)
            self.assertTrue(same(jf(x, n), f(x, n)), (b, n))
        st, c = counts(jf)
        # 4: static; 6: the batch a symbol; (6, 2): n and x's second size too; then plans only
        self.assertEqual(c, (3, 2, 0))
        self.assertEqual(st["entries"][0]["shape_plans"]["plans"], 5)

    def test_a_reshape_size_python_also_uses_is_specialised(self):
        def f(x, n):
            y = x.reshape((n, -1))
            return y * (n + 1), y.shape[0]
        pj.reset(f)
        jf = pj.jit(f)
        x = pj.arange(12).astype(pj.float32)
        for n in [2, 3, 4, 6]:
            self.assertTrue(same(jf(x, n), f(x, n)), n)
        self.assertEqual(counts(jf)[1], (4, 3, 0))  # n + 1 is Python arithmetic: each n its own graph

        def g(x, n):
            return x.reshape((n, n))  # two entries alike: which one is n cannot be told
        pj.reset(g)
        jg = pj.jit(g)
        for n in [2, 3, 4]:
            x = pj.arange(n * n).astype(pj.float32)
            self.assertTrue(same(jg(x, n), g(x, n)), n)
        self.assertEqual(counts(jg)[1][0], 3)

    def test_an_int_out_of_int64_raises_as_eager(self):
        jf = pj.jit(by_int)
        jf(X, 2)
        jf(X, 3)  # lifted
        for fn in (by_int, jf):
            with self.assertRaisesRegex(ValueError, "Python integer out of bounds for int64"):
                fn(X, 2 ** 70)
        self.assertTrue(same(jf(X, 5), by_int(X, 5)))

    def test_a_global_that_changes(self):
        global GLOBAL_SCALE
        jf = pj.jit(uses_global)
        try:
            for s in LRS:
                GLOBAL_SCALE = s
                self.assertTrue(same(jf(X), uses_global(X)), s)
        finally:
            GLOBAL_SCALE = 0.5
        self.assertEqual(counts(jf)[1], (2, 1, 0))

    def test_closures_over_different_floats_share_one_entry(self):
        def make(c):
            def f(x):
                return ops.relu(x * c) + c
            return f
        fs = [make(0.1 * i - 0.5) for i in range(20)]
        pj.reset(fs[0])
        jfs = [pj.jit(f) for f in fs]
        for f, jf in zip(fs, jfs):
            for _ in range(2):
                self.assertTrue(same(jf(X), f(X)))
        st, c = counts(jfs[0])  # one code object: its counters cover every closure
        self.assertEqual(c, (2, 1, 0))
        self.assertEqual(len(st["entries"]), 2)

    def test_an_attribute_of_a_cell(self):
        class Scale(nn.Cell):
            def __init__(self):
                super().__init__()
                self.dense = nn.Dense(3, 2)
                self.scale = 1.0

            def construct(self, x):
                return self.dense(x) * self.scale
        pj.set_seed(0)
        net = Scale()
        jnet = pj.jit(net)
        for s in LRS:
            net.scale = s
            self.assertTrue(same(jnet(X), net(X)), s)
        self.assertEqual(counts(jnet)[1], (2, 1, 0))

    def test_a_comparison_with_a_constant_is_guarded_as_a_comparison(self):
        jf = pj.jit(branch)
        for t in [0.1, 0.2, 0.7, 0.9, 0.3, 0.4, 0.8, 0.5]:
            self.assertTrue(same(jf(X, t), branch(X, t)), t)
        st, c = counts(jf)
        self.assertEqual(c, (3, 2, 0))  # static, then one entry per outcome of `t > 0.5`
        guards = [g for e in st["entries"] for g in e["guards"]]
        self.assertIn("not t > 0.5", guards)
        self.assertIn("t > 0.5", guards)
        self.assertIn("t: guarded t > 0.5, not its value (a comparison at %s:%d)"
                      % (__file__.replace(".pyc", ".py"), branch.__code__.co_firstlineno + 1), notes(st))

    def test_a_tensor_comparison_lifts(self):
        jf = pj.jit(compare)
        for t in [0.5, 1.5, 2.5, -1.0, 3.5]:
            self.assertTrue(same(jf(X, t), compare(X, t)), t)
        self.assertEqual(counts(jf)[1], (2, 1, 0))

    def test_arithmetic_on_the_number_specialises_and_says_where(self):
        jf = pj.jit(python_arith)
        for lr in [0.1, 0.2, 0.3]:
            self.assertTrue(same(jf(X, lr), python_arith(X, lr)), lr)
        st, c = counts(jf)
        self.assertEqual(c, (3, 2, 0))
        line = python_arith.__code__.co_firstlineno + 1
        op = "BINARY_OP **" if sys.version_info >= (3, 11) else "BINARY_POWER"  # (the instruction dis shows)
        self.assertIn("lr specialised to 0.3: used by Python (%s) at %s:%d"
                      % (op, __file__.replace(".pyc", ".py"), line), notes(st))

    def test_float_arithmetic_on_lifted_numbers_is_computed_in_the_graph(self):
        def f(x, lr, m):
            a = lr * 0.1
            b = -a + 1 / 3
            c = b / 7 - m * lr
            return x * a + c * x - x / 2.0 * b
        pj.reset(f)
        jf = pj.jit(f)
        xd = X.astype(pj.float64)
        values = [(0.5, 0.25), (-1.75, 0.9), (1e-3, -0.3), (3.0, 1e-12), (-0.0, 0.0), (7.5, -2.0)]
        for lr, m in values:
            for x in (X, xd):
                self.assertTrue(same(jf(x, lr, m), f(x, lr, m)), (lr, m))
        st, c = counts(jf)
        self.assertEqual(c, (4, 3, 0))  # per dtype: static, then lr and m lifted
        graph = st["entries"][0]["graph"]
        self.assertIn("Float64[] lr", graph)
        self.assertIn("= neg(", graph)

    def test_a_changing_divisor_is_not_derived(self):
        def f(x, d):
            return x * (1.0 / d)
        pj.reset(f)
        jf = pj.jit(f)
        for d in [2.0, 4.0, 8.0]:
            self.assertTrue(same(jf(X, d), f(X, d)))
        self.assertEqual(counts(jf)[1][0], 3)  # each value its own graph: 1.0 / d is guarded
        for fn in (f, jf):
            with self.assertRaisesRegex(ZeroDivisionError, "float division by zero"):
                fn(X, 0.0)

    def test_a_number_handed_to_a_helper_function(self):
        def update(w, g, lr):
            return w - lr * g

        def branchy(w, lr):
            if lr > 0.25:
                return w * lr
            return w + lr

        def step(w, g, lr):
            return update(w, g, lr) * 2 + branchy(g, lr)
        for f in (update, branchy, step):
            pj.reset(f)
        jf = pj.jit(step)
        for lr in [0.1, 0.2, 0.3, 0.4, 0.15, 0.05]:
            self.assertTrue(same(jf(X, X, lr), step(X, X, lr)), lr)
        st, c = counts(jf)
        self.assertEqual(c, (3, 2, 0))  # static; then one entry per outcome of lr > 0.25 in the helper
        self.assertIn("not lr > 0.25", [g for e in st["entries"] for g in e["guards"]])

    def test_a_helper_that_breaks_with_the_number_live(self):
        def helper(x, lr):
            y = x * lr
            print("step", end="")
            return y + float(x.sum()) * lr  # a value read: a graph break

        def f(x, lr):
            return helper(x, lr) - lr
        pj.reset(helper)
        pj.reset(f)
        jf = pj.jit(f)
        for lr in [0.5, 0.25, 0.75, 0.125]:
            (a, out_a), (b, out_b) = printed(jf, X, lr), printed(f, X, lr)
            self.assertTrue(same(a, b), lr)
            self.assertEqual(out_a, out_b)
        # f refuses (nothing to capture before the break), helper is captured on its own and lifts lr
        self.assertIn("lr is a graph input (a Python float, traced with 0.25, as Float32)", notes(pj.jit_stats(helper)))

    def test_dynamic_zero_keeps_numbers_constant(self):
        jf = pj.jit(sgd_like, dynamic=0)
        for lr in LRS[:5]:
            self.assertTrue(same(jf(X, X, lr), sgd_like(X, X, lr)))
        self.assertEqual(counts(jf)[1], (5, 4, 0))

    def test_the_recompile_limit_message_names_the_number_and_the_control(self):
        jf = pj.jit(keep_k, recompile_limit=2, dynamic=0)
        with self.assertLogs("pijit", "WARNING") as logs:
            for k in range(4):
                jf(X, k * 0.5)
        self.assertIn("k: 0.5 -> 1.0", logs.output[0])
        self.assertIn("A Python number keeps changing: jit(..., dynamic=None) (the default) or "
                      "pijit.mutable(value) makes it a graph input", logs.output[0])

    def test_in_place_and_a_replayed_print(self):
        def f(x, lr):
            y = x + 1
            y += lr
            print("step", end="")
            return y * lr
        pj.reset(f)
        jf = pj.jit(f)
        for lr in [0.1, 0.2, 0.3, 0.4]:
            (a, out_a), (b, out_b) = printed(jf, X, lr), printed(f, X, lr)
            self.assertTrue(same(a, b))
            self.assertEqual(out_a, out_b)
        self.assertEqual(counts(jf)[1], (2, 1, 0))


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class Mutable(unittest.TestCase):
    def setUp(self):
        pj.reset(sgd_like)

    def test_mutable_lifts_from_the_first_call(self):
        jf = pj.jit(sgd_like, dynamic=0)  # (mutable asks for it whatever dynamic says)
        for lr in LRS:
            self.assertTrue(same(jf(X, X, pj.mutable(lr)), sgd_like(X, X, lr)))
        self.assertEqual(counts(jf)[1], (1, 0, 0))
        # the path stays lifted: a plain number there reuses the graph too
        self.assertTrue(same(jf(X, X, 0.75), sgd_like(X, X, 0.75)))
        self.assertEqual(counts(jf)[1], (1, 0, 0))

    def test_mutable_values_are_equal_numbers_and_containers(self):
        for v in (0.5, 3, -2.25, 2 ** 80):
            m = pj.mutable(v)
            self.assertIs(type(m), type(v))
            self.assertEqual(m, v)
        with self.assertRaisesRegex(TypeError, "input_data is a bool"):
            pj.mutable(True)
        t = pj.mutable((1.5, [2, 3.0], {"a": 4}))
        self.assertEqual(t, (1.5, [2, 3.0], {"a": 4}))
        self.assertIs(type(t), tuple)
        x = pj.Tensor([1.0])
        self.assertIs(pj.mutable(x), x)
        with self.assertRaisesRegex(TypeError, "mutable"):
            pj.mutable("text")
        with self.assertRaisesRegex(ValueError, "dynamic_len"):
            pj.mutable(1.0, dynamic_len=True)


def relu2(x):
    return ops.relu(x) * 2


@unittest.skipUnless(SUPPORTED, CAPTURE_OFF_WHY)
class InputSignature(unittest.TestCase):
    def setUp(self):
        pj.reset(relu2)

    def test_placeholder(self):
        spec = pj.Tensor(shape=[None, 4], dtype=pj.float32)
        self.assertEqual(spec._input_spec, (None, 4))
        self.assertEqual(spec.shape, (0, 4))
        self.assertEqual(spec.dtype, pj.float32)
        s = pj.Symbol(max=8)
        self.assertEqual(pj.Tensor(shape=(s, 2), dtype=pj.int32)._input_spec, (s, 2))
        with self.assertRaises(TypeError):
            pj.Tensor(shape=["a", 2], dtype=pj.float32)

    def test_none_dims_are_dynamic_from_the_first_call(self):
        jf = pj.jit(relu2, input_signature=(pj.Tensor(shape=[None, 4], dtype=pj.float32),))
        for n in [3, 5, 8, 9, 3]:
            x = pj.randn(n, 4)
            self.assertTrue(same(jf(x), relu2(x)), n)
        st, c = counts(jf)
        self.assertEqual(c, (1, 0, 0))
        self.assertIn("x: Tensor Float32[s0, 4] (dynamic: s0 >= 2)", st["entries"][0]["guards"])

    def test_calls_are_checked_against_the_signature(self):
        jf = pj.jit(relu2, input_signature=pj.Tensor(shape=[None, 4], dtype=pj.float32))
        with self.assertRaisesRegex(ValueError, r"jit\(relu2\): argument 0 \(x\) does not match input_signature: "
                                                r"shape \(3, 5\) against \(None, 4\) \(dim 1 is 5, not 4\)"):
            jf(pj.ones((3, 5)))
        with self.assertRaisesRegex(ValueError, r"rank 1 against 2"):
            jf(pj.ones((3,)))
        with self.assertRaisesRegex(TypeError, "has dtype Float64, input_signature says Float32"):
            jf(pj.ones((3, 4), pj.float64))
        with self.assertRaisesRegex(TypeError, "must be a Tensor as input_signature says, got float"):
            jf(1.0)
        with self.assertRaisesRegex(TypeError, "describes 1 positional arguments, the call passes 0"):
            jf()
        with self.assertRaisesRegex(ValueError, "input_signature has 2 entries but relu2 takes 1"):
            pj.jit(relu2, input_signature=(pj.ones((2, 4)), pj.ones((2, 4))))
        with self.assertRaisesRegex(TypeError, r"input_signature\[0\] must be a Tensor"):
            pj.jit(relu2, input_signature=(3,))
        self.assertEqual(pj.jit_stats(jf)["compiles"], 0)  # nothing was captured for a bad call

    def test_symbol_facts(self):
        s = pj.Symbol(min=2, max=16, divisor=2)
        jf = pj.jit(relu2, input_signature=pj.Tensor(shape=[s, 4], dtype=pj.float32))
        for n in [4, 16, 2]:
            x = pj.randn(n, 4)
            self.assertTrue(same(jf(x), relu2(x)))
        with self.assertRaisesRegex(ValueError, r"dim 0: 3 % 2 != 0"):
            jf(pj.ones((3, 4)))
        with self.assertRaisesRegex(ValueError, r"dim 0: 18 > max=16"):
            jf(pj.ones((18, 4)))
        u = pj.Symbol(unique=True)

        def add(a, b):
            return a + b
        ja = pj.jit(add, input_signature=(pj.Tensor(shape=[u, 2], dtype=pj.float32),
                                          pj.Tensor(shape=[u, 2], dtype=pj.float32)))
        self.assertEqual(ja(pj.ones((3, 2)), pj.ones((3, 2))).shape, (3, 2))
        with self.assertRaisesRegex(ValueError, r"a unique Symbol's sizes differ \(3 and 4\)"):
            ja(pj.ones((3, 2)), pj.ones((4, 2)))

    def test_symbol_arguments_are_checked(self):
        for kw, exc, text in [(dict(min=0), ValueError, "min must be >= 1"),
                              (dict(max=-1), ValueError, "max must be 0"),
                              (dict(max=2, min=4), ValueError, "max must be 0 \\(no bound\\) or >= min \\(4\\)"),
                              (dict(divisor=0), ValueError, "divisor must be >= 1"),
                              (dict(divisor=2, remainder=2), ValueError, "remainder must be in"),
                              (dict(min=1.5), TypeError, "min must be an int"),
                              (dict(unique=1), TypeError, "unique must be a bool")]:
            with self.assertRaisesRegex(exc, text):
                pj.Symbol(**kw)

    def test_cell_set_inputs(self):
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(4, 3)

            def construct(self, x):
                return self.fc(x)
        pj.set_seed(1)
        net = Net()
        spec = pj.Tensor(shape=[None, 4], dtype=pj.float32)
        net.set_inputs(spec)
        self.assertEqual(net.get_inputs(), (spec,))
        jn = pj.jit(net)
        for n in [2, 6, 7, 6]:
            x = pj.randn(n, 4)
            self.assertTrue(same(jn(x), net(x)))
        self.assertEqual(counts(jn)[1], (1, 0, 0))
        pj.set_context(mode=pj.GRAPH_MODE)
        try:
            x = pj.randn(5, 4)
            y = net(x)
            self.assertEqual(y.shape, (5, 3))
            with self.assertRaisesRegex(ValueError, r"Net \(set_inputs\): argument 0 \(x\) does not match"):
                net(pj.ones((5, 3)))
        finally:
            pj.set_context(mode=pj.PYNATIVE_MODE)
        with self.assertRaisesRegex(ValueError, "input_signature has 2 entries"):
            net.set_inputs(spec, spec)


if __name__ == "__main__":
    unittest.main()
