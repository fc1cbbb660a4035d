"""Eager dispatch's common case (issue 46): a float32 elementwise op on contiguous operands of one
shape runs straight into a new tensor (OpDef::eager, graph/op.h), and pijit.ops's functions reach
_C.op in one Python frame. Each test holds that path to what the general path computes and raises:
the same values bit for bit (the general path is taken here with op profiling on, which records every op), the same
dtypes for every other case, the same errors, and tape, profiler and capture still see every op.
"""
import copy
import inspect
import logging
import math
import pickle
import struct
import types
import unittest
import weakref

import pijit as pj
from jit_compare import CAPTURE_ON
from pijit import ops

SPECIAL = [0.0, -0.0, 1.5, -2.25, 3.0, float("nan"), float("inf"), -float("inf"), 1e-39, 7.0, -7.5, 0.1]
OTHER = [2.0, 0.0, -0.0, float("nan"), -3.5, 1.0, float("inf"), 4.0, -1e-39, -7.0, 2.5, 0.3]
BINARY = ["add", "sub", "mul", "div", "floor_div", "mod", "pow", "maximum", "minimum"]
UNARY = ["neg", "abs", "sign", "square", "relu", "floor", "ceil", "round", "exp", "log", "log1p", "expm1",
         "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "silu", "softplus", "erf"]


def bits(t):
    return [struct.pack("<f", v) for v in t.reshape((-1,)).tolist()]


def contiguous(values):
    return pj.Tensor([values[:6], values[6:]], pj.float32)


def general(fn, *args):
    """fn(*args) on the general path: with op profiling on, every eager op takes it (its span)."""
    pj._C.profile_ops(True)
    try:
        return fn(*args)
    finally:
        pj._C.profile_ops(False)


class SameAsTheGeneralPath(unittest.TestCase):
    def test_binary_ops_bit_for_bit(self):
        a, b = contiguous(SPECIAL), contiguous(OTHER)
        for name in BINARY:
            fn = getattr(ops, name)
            fast = fn(a, b)
            self.assertEqual(fast.dtype, pj.float32, name)
            self.assertEqual(fast.shape, (2, 6), name)
            self.assertEqual(bits(fast), bits(general(fn, a, b)), name)
        for sym, name in (("+", "add"), ("-", "sub"), ("*", "mul"), ("/", "div")):
            self.assertEqual(bits(eval("a %s b" % sym)), bits(general(getattr(ops, name), a, b)), sym)

    def test_unary_ops_bit_for_bit(self):
        a = contiguous(SPECIAL)
        for name in UNARY:
            fn = getattr(ops, name)
            fast = fn(a)
            self.assertEqual(fast.dtype, pj.float32, name)
            self.assertEqual(bits(fast), bits(general(fn, a)), name)

    def test_views_take_the_general_path_with_the_same_values(self):
        base = pj.Tensor([[v for x in SPECIAL[k:k + 6] for v in (x, 99.0)] for k in (0, 6)], pj.float32)
        view = base[:, ::2]  # (2, 6), every other column
        self.assertEqual(bits(ops.add(view, view)), bits(ops.add(contiguous(SPECIAL), contiguous(SPECIAL))))
        self.assertEqual(bits(ops.exp(view)), bits(ops.exp(contiguous(SPECIAL))))

    def test_relu_keeps_nan_as_numpy_does(self):
        r = ops.relu(pj.Tensor([float("nan"), -1.0, 2.0]))
        self.assertTrue(math.isnan(r.tolist()[0]))
        self.assertEqual(r.tolist()[1:], [0.0, 2.0])

    def test_the_result_is_a_new_tensor(self):
        a, b = pj.ones((3, 3)), pj.ones((3, 3))
        c = a + b
        self.assertNotEqual(c._storage_ptr(), a._storage_ptr())
        self.assertNotEqual(c._storage_ptr(), b._storage_ptr())
        self.assertEqual(a.tolist(), [[1.0] * 3] * 3)
        self.assertEqual(c.tolist(), [[2.0] * 3] * 3)

    def test_empty_tensors(self):
        e = pj.ones((0, 3))
        self.assertEqual((e + e).shape, (0, 3))
        self.assertEqual(ops.relu(e).shape, (0, 3))


class OtherCasesTakeTheGeneralPath(unittest.TestCase):
    def test_dtypes_promotion_and_comparisons(self):
        f = pj.Tensor([1.0, 2.0], pj.float32)
        self.assertEqual((f + pj.Tensor([1, 2], pj.int32)).dtype, pj.float32)
        self.assertEqual((f + pj.Tensor([1.0, 2.0], pj.float64)).dtype, pj.float64)
        self.assertEqual((f < f).dtype, pj.bool_)
        self.assertEqual(ops.eq(f, f).tolist(), [True, True])
        self.assertEqual((pj.Tensor([1, 2], pj.int32) + pj.Tensor([3, 4], pj.int32)).dtype, pj.int32)
        self.assertEqual(ops.div(pj.Tensor([1, 2], pj.int32), pj.Tensor([2, 2], pj.int32)).dtype, pj.float32)
        self.assertEqual(ops.relu(pj.Tensor([-1, 2], pj.int32)).tolist(), [0, 2])
        self.assertEqual(ops.exp(pj.Tensor([0.0], pj.float64)).dtype, pj.float64)

    def test_broadcasting_and_python_numbers(self):
        m = pj.Tensor([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual((m + pj.Tensor([10.0, 20.0])).tolist(), [[11.0, 22.0], [13.0, 24.0]])
        self.assertEqual(ops.add(m, 1).dtype, pj.float32)  # a Python number is a weak scalar
        self.assertEqual(ops.add(1, m).tolist(), [[2.0, 3.0], [4.0, 5.0]])
        self.assertEqual(ops.sub(m, 0.5).tolist(), [[0.5, 1.5], [2.5, 3.5]])
        self.assertEqual(ops.mul(pj.Tensor([1, 2], pj.int32), 2).dtype, pj.int32)
        self.assertEqual(ops.add(2, 3).tolist(), 5)
        self.assertEqual(ops.add(m, [1.0, 2.0]).tolist(), [[2.0, 4.0], [4.0, 6.0]])

    def test_errors_are_the_general_paths(self):
        m = pj.ones((3, 3))
        with self.assertRaisesRegex(ValueError, "broadcast"):
            ops.add(m, pj.ones((2, 2)))
        with self.assertRaisesRegex(ValueError, "broadcast"):
            m + pj.ones((2, 2))
        with self.assertRaisesRegex(TypeError, "expected a Tensor, a number or a sequence, got 'object'"):
            ops.add(m, object())
        with self.assertRaisesRegex(TypeError, r"add\(\) takes 2 tensor inputs but 1 were given"):
            pj._C.op("add", (m,))
        with self.assertRaisesRegex(TypeError, r"add\(\): input 1 must be a Tensor, got 'int'"):
            pj._C.op("add", (m, 1))
        with self.assertRaisesRegex(ValueError, "unknown op 'no_such_op'"):
            pj._C.op("no_such_op", (m,))
        with self.assertRaisesRegex(TypeError, r"op\(\) argument 1 must be str, not int"):
            pj._C.op(1, (m,))
        with self.assertRaisesRegex(TypeError, r"takes 2 or 3 arguments \(1 given\)"):
            pj._C.op("add")
        with self.assertRaisesRegex(TypeError, "unexpected attribute 'axis'"):
            pj._C.op("add", (m, m), {"axis": 1})

    def test_names_made_at_run_time(self):
        m = pj.ones((2,))
        for k in range(5000):  # (each a new str object: the name cache stays bounded and right)
            name = "".join(["a", "d", "d"]) if k % 2 else "".join(["m", "u", "l"])
            self.assertEqual(pj._C.op(name, (m, m)).tolist(), [2.0, 2.0] if k % 2 else [1.0, 1.0])


class OpsFunctionsAreEntries(unittest.TestCase):
    NAMES = list(ops._UNARY) + list(ops._BINARY)

    def test_every_elementwise_function_is_one_entry_standing_for_its_function(self):
        for name in self.NAMES + ["div", "round", "softplus"]:
            fn = getattr(ops, name)
            self.assertEqual(type(fn).__name__, "OpEntry", name)
            self.assertIsInstance(fn.__wrapped__, types.FunctionType, name)
            self.assertEqual(fn.__name__, name)
            self.assertIs(getattr(pj.ops.functional, name), fn)
        self.assertIs(ops.divide, ops.div)

    def test_signature_doc_and_binding_are_a_functions(self):
        self.assertEqual(str(inspect.signature(ops.div)), "(input, other, *, rounding_mode=None)")
        self.assertEqual(str(inspect.signature(ops.relu)), "(input)")
        self.assertIn("broadcasting", ops.add.__doc__)
        self.assertIn("rounding_mode", ops.div.__doc__)

        class Holder:
            neg = ops.neg
        t = pj.Tensor([1.0, -2.0])
        self.assertEqual(Holder.neg(t).tolist(), [-1.0, 2.0])  # read from the class: itself
        self.assertIsInstance(Holder().neg, types.MethodType)  # from an instance: bound, as a function is
        self.assertIs(Holder().neg.__func__, ops.neg)

    def test_copies_pickles_and_weak_references_as_a_function(self):
        for name in ("relu", "add", "div", "round"):
            fn = getattr(ops, name)
            self.assertEqual(fn.__module__, "pijit.ops.functional")
            self.assertIs(copy.copy(fn), fn)
            self.assertIs(copy.deepcopy({"f": fn})["f"], fn)
            self.assertIs(pickle.loads(pickle.dumps(fn)), fn)
            self.assertIs(weakref.ref(fn)(), fn)

    def test_verify_copies_state_holding_an_entry(self):
        # (verify deep-copies what a call can reach: a function holding ops.relu must not make
        # it give up, as it would for a state it cannot copy)
        records = []

        class Keep(logging.Handler):
            def emit(self, record):
                records.append(record.getMessage())
        log = logging.getLogger("pijit")
        handler = Keep(logging.WARNING)
        log.addHandler(handler)
        try:
            act = {"fn": ops.relu}

            def f(x):
                return act["fn"](x) + 1.0
            jf = pj.jit(f, verify=1)
            x = pj.Tensor([-1.0, 2.0])
            for _ in range(2):
                self.assertEqual(jf(x).tolist(), [1.0, 3.0])
        finally:
            log.removeHandler(handler)
        self.assertEqual([r for r in records if "cannot be copied" in r], [])

    def test_other_calls_are_the_functions(self):
        a, b = pj.Tensor([7.0, -7.0]), pj.Tensor([2.0, 2.0])
        self.assertEqual(ops.add(input=a, other=b).tolist(), [9.0, -5.0])
        self.assertEqual(ops.add(a, other=b).tolist(), [9.0, -5.0])
        self.assertEqual(ops.div(a, b, rounding_mode="floor").tolist(), [3.0, -4.0])
        self.assertEqual(ops.div(a, b, rounding_mode="trunc").tolist(), [3.0, -3.0])
        self.assertEqual(ops.div(a, b).tolist(), [3.5, -3.5])
        self.assertEqual(ops.round(pj.Tensor([1.25, 2.5]), decimals=1).tolist(), [1.2000000476837158, 2.5])
        self.assertEqual(ops.round(pj.Tensor([1.5, 2.5])).tolist(), [2.0, 2.0])
        self.assertEqual(ops.relu([-1.0, 3.0]).tolist(), [0.0, 3.0])
        with self.assertRaises(TypeError):
            ops.relu()
        with self.assertRaises(TypeError):
            ops.add(a)
        with self.assertRaises(TypeError):
            ops.add(a, b, b)
        with self.assertRaisesRegex(ValueError, "rounding_mode must be None, 'floor' or 'trunc'"):
            ops.div(a, b, rounding_mode="up")
        with self.assertRaisesRegex(TypeError, "softplus: beta must be a number"):
            ops.softplus(a, beta="x")

    def test_made_only_for_a_registry_op_of_its_arity(self):
        with self.assertRaisesRegex(ValueError, "_op_entry: unknown op 'no_such_op'"):
            pj._C._op_entry("no_such_op", 1, abs)
        with self.assertRaisesRegex(ValueError, "_op_entry: op 'add' takes 2 tensor inputs, not 1"):
            pj._C._op_entry("add", 1, abs)
        with self.assertRaisesRegex(TypeError, "fallback must be callable"):
            pj._C._op_entry("neg", 1, 3)


class RecordersSeeEveryOp(unittest.TestCase):
    def test_gradients_through_operators_and_ops(self):
        x = pj.Tensor([1.0, -2.0, 3.0])

        def f(v):
            return (ops.relu(v) * v + v - ops.exp(v) / 2.0).sum()
        g = pj.grad(f)(x).tolist()
        want = [(2 * v if v > 0 else 0.0) + 1.0 - math.exp(v) / 2.0 for v in [1.0, -2.0, 3.0]]
        for got, w in zip(g, want):
            self.assertAlmostEqual(got, w, places=5)

    def test_jitted_function_captures_the_ops(self):
        def f(a, b):
            return ops.relu(a + b) * b - ops.add(a, b)
        a, b = pj.Tensor([[1.0, -5.0], [0.5, 2.0]]), pj.Tensor([[2.0, 1.0], [-3.0, 0.25]])
        jf = pj.jit(f)
        want = f(a, b)
        for _ in range(2):
            self.assertEqual(bits(jf(a, b)), bits(want))
        if CAPTURE_ON:
            stats = pj.jit_stats(jf)
            self.assertEqual(len(stats["entries"]), 1)  # one graph, no recompile
            e = stats["entries"][0]
            self.assertEqual(e["ops"], 5)  # +, relu, *, ops.add, -
            self.assertEqual(e["graph_break"], None)
            self.assertTrue(any("ops.relu is <pijit._C.OpEntry" in g for g in e["guards"]), e["guards"])


if __name__ == "__main__":
    unittest.main()
