"""The remaining mindspore.ops names of issue 42 (pijit/ops/ops_rest.py, kernels/rnnt.h,
pijit/nn/layers5.py): the primitive base exports, DataType / ReduceOp, the collectives in a world
of one process (values, shapes, gradients, capture, errors), the summary primitives (argument
checks, no effect on capture), ops.Custom ('pyfunc', 'hybrid' with ops.kernel, 'aot' through a
compiled C function, bprop, errors) and its registration builders, RNNTLoss against a direct
Python recursion (costs, the returned gradient, its use by autodiff, jitted == eager), and
FractionalMaxPool / FractionalAvgPool (TF-style sequences: shape, steps, seeds, values by hand,
gradients). The torch comparisons (fixed-kernel fractional pooling, ops.LSTM) are in
oracle/test_torch_ops_rest.py."""
import math
import os
import random
import shutil
import subprocess
import tempfile
import unittest

import pijit as ms
from pijit import nn, ops
import pijit.communication as comm
from pijit.ops import ops_rest as R
from jit_compare import CAPTURE_ON, assert_ran_eagerly

F64 = ms.float64


def T(v, dtype=None):
    return ms.Tensor(v) if dtype is None else ms.Tensor(v, dtype)


def close(tc, got, want, tol=1e-9):
    def flat(v):
        if isinstance(v, (list, tuple)):
            return [x for e in v for x in flat(e)]
        return [v]
    g, w = flat(got), flat(want)
    tc.assertEqual(len(g), len(w))
    for a, b in zip(g, w):
        tc.assertTrue(abs(a - b) <= tol * (1 + abs(b)), "%r != %r (got %r)" % (a, b, got))


class Exports(unittest.TestCase):
    def test_names(self):
        from pijit.ops import primitive as P
        for name in ("constexpr", "PrimitiveWithInfer", "PrimitiveWithCheck", "prim_attr_register"):
            self.assertIs(getattr(ops, name), getattr(P, name))
        self.assertEqual((ops.ReduceOp.SUM, ops.ReduceOp.MAX, ops.ReduceOp.MIN, ops.ReduceOp.PROD),
                         ("sum", "max", "min", "prod"))
        self.assertEqual(ops.DataType.F32_Default, ("float32", "DefaultFormat"))
        self.assertEqual(ops.DataType.I64_5HD, ("int64", "NC1HWC0"))
        self.assertEqual(ops.DataType.None_None, ("", ""))
        from pijit.ops.operations import comm_ops
        self.assertIs(comm_ops.AllReduce, ops.AllReduce)
        self.assertIs(comm_ops.NeighborExchangeV2, ops.NeighborExchangeV2)

    def test_prim_attr_register_subclass(self):
        class Scale(ops.PrimitiveWithInfer):
            @ops.prim_attr_register
            def __init__(self, alpha=2.0):
                pass

            def __call__(self, x):
                return x * self.alpha
        s = Scale(3.0)
        self.assertEqual(s.attrs, {"alpha": 3.0})
        self.assertEqual(s(T([1.0, 2.0])).tolist(), [3.0, 6.0])


class Collectives(unittest.TestCase):
    def setUp(self):
        comm.init()

    def test_values_and_shapes(self):
        x = T([[1.0, -2.0], [3.0, 4.0]])
        for op in ("sum", "max", "min", "prod"):
            y = ops.AllReduce(op)(x)
            self.assertEqual(y.tolist(), x.tolist())
            self.assertIsNot(y, x)
        self.assertEqual(ops.AllGather()(x).shape, (2, 2))
        self.assertEqual(ops.ReduceScatter()(x).tolist(), x.tolist())
        ys = ops.Broadcast(0)((x, T([1, 2])))
        self.assertEqual([y.tolist() for y in ys], [x.tolist(), [1, 2]])
        self.assertEqual(ops.AlltoAll(1, 0, 1)(x).tolist(), x.tolist())
        z = T([[[[1.0, 2.0], [3.0, 4.0]]]])
        self.assertEqual(ops.NeighborExchangeV2([-1] * 8, [0, 0, 0, 0], [-1] * 8, [0, 0, 0, 0])(z).tolist(),
                         z.tolist())
        self.assertEqual(ops.NeighborExchange([], [], [], [], ms.float32)(()), ())
        a = ops.AllGather()
        self.assertEqual((a.rank_size, a.rank, a.group), (1, 0, comm.GlobalComm.WORLD_COMM_GROUP))

    def test_gradient_and_capture(self):
        ar = ops.AllReduce()

        def f(x):
            return (ar(x) * x).sum()
        x = T([1.0, 2.0, 3.0])
        self.assertEqual(ms.grad(f)(x).tolist(), [2.0, 4.0, 6.0])
        g = ms.jit(lambda x: ops.AllGather()(ar(x) * 2) + 1)
        self.assertEqual(g(x).tolist(), [3.0, 5.0, 7.0])
        if CAPTURE_ON:
            st = ms.jit_stats(g)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, g)

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "'op' should be str"):
            ops.AllReduce(1)
        with self.assertRaisesRegex(ValueError, "'op' must be one of"):
            ops.AllReduce("mean")
        with self.assertRaisesRegex(TypeError, "'group' must be a str"):
            ops.AllGather(group=3)
        with self.assertRaisesRegex(ValueError, "was not created"):
            ops.AllGather(group="nope")
        with self.assertRaisesRegex(ValueError, "'root_rank' must be in \\[0, 1\\)"):
            ops.Broadcast(1)
        with self.assertRaisesRegex(TypeError, "tuple of Tensors"):
            ops.Broadcast(0)(T([1.0]))
        with self.assertRaisesRegex(ValueError, "'split_count' must be equal to the group size 1"):
            ops.AlltoAll(2, 0, 0)
        with self.assertRaisesRegex(NotImplementedError, "exchanging with rank 1 needs a multi-process backend"):
            ops.NeighborExchangeV2([1] + [-1] * 7, [1, 0, 0, 0], [-1] * 8, [0] * 4)(T([[[[1.0]]]]))

    def test_larger_group_names_the_case(self):
        ar = ops.AllReduce()
        ar.rank_size = 4  # what a multi-process group would report
        with self.assertRaisesRegex(NotImplementedError, "AllReduce\\(sum\\) over a group of 4 processes"):
            ar(T([1.0]))


class Summaries(unittest.TestCase):
    def test_checks_and_no_effect(self):
        self.assertIsNone(ops.ScalarSummary()("loss", T(1.5)))
        self.assertIsNone(ops.ScalarSummary()("loss", T([1.5])))
        self.assertIsNone(ops.TensorSummary()("t", T([[1.0, 2.0]])))
        self.assertIsNone(ops.ImageSummary()("img", ops.zeros((1, 3, 2, 2))))
        self.assertIsNone(ops.HistogramSummary()("h", T([1.0, 2.0])))
        with self.assertRaisesRegex(TypeError, "the type of 'name' must be str"):
            ops.ScalarSummary()(1, T(1.0))
        with self.assertRaisesRegex(ValueError, "'name' must not be an empty string"):
            ops.TensorSummary()("", T(1.0))
        with self.assertRaisesRegex(TypeError, "the type of 'value' must be Tensor"):
            ops.HistogramSummary()("h", 1.0)
        with self.assertRaisesRegex(ValueError, "shape of 'value' must be \\(\\) or \\(1,\\)"):
            ops.ScalarSummary()("s", T([1.0, 2.0]))
        with self.assertRaisesRegex(ValueError, "dimension of 'value' must be 4"):
            ops.ImageSummary()("i", T([1.0]))

    def test_capture_is_not_broken(self):
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.s = ops.ScalarSummary()
                self.h = ops.HistogramSummary()

            def construct(self, x):
                y = x * 2
                self.s("sum", y.sum())
                self.h("y", y)
                return y + 1
        net = Net()
        f = ms.jit(net.construct)
        x = T([1.0, 2.0])
        self.assertEqual(f(x).tolist(), [3.0, 5.0])
        if CAPTURE_ON:
            st = ms.jit_stats(f)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, f)


class CustomPyfunc(unittest.TestCase):
    def test_pyfunc_values_shapes_dtypes(self):
        def add_mul(a, b):
            return a + b, a * b
        op = ops.Custom(add_mul, out_shape=lambda a, b: (a, a), out_dtype=lambda a, b: (a, a), func_type="pyfunc")
        s, p = op(T([1.0, 2.0]), T([3.0, 4.0]))
        self.assertEqual((s.tolist(), p.tolist()), ([4.0, 6.0], [3.0, 8.0]))
        cast = ops.Custom(lambda a: a * 2, out_shape=(2,), out_dtype=ms.float64, func_type="pyfunc")
        y = cast(T([1.0, 2.5]))
        self.assertEqual((y.dtype, y.tolist()), (ms.float64, [2.0, 5.0]))
        bad = ops.Custom(lambda a: a, out_shape=(3,), out_dtype=ms.float32, func_type="pyfunc")
        with self.assertRaisesRegex(ValueError, "output 0 has shape \\(2,\\) but out_shape declares \\(3,\\)"):
            bad(T([1.0, 2.0]))

    def test_bprop(self):
        def square(x):
            return x * x

        def bprop(x, out, dout):
            return (dout * 2 * x,)
        op = ops.Custom(square, lambda s: s, lambda d: d, "pyfunc", bprop=bprop)
        x = T([1.0, 3.0])
        self.assertEqual(op(x).tolist(), [1.0, 9.0])
        self.assertEqual(ms.grad(lambda v: op(v).sum())(x).tolist(), [2.0, 6.0])

    def test_errors(self):
        with self.assertRaisesRegex(NotImplementedError, "func_type 'tbe' builds an Ascend kernel"):
            ops.Custom("x.py:f", (1,), ms.float32, "tbe")
        with self.assertRaisesRegex(NotImplementedError, "func_type 'aicpu'"):
            ops.Custom("f", (1,), ms.float32, "aicpu")
        with self.assertRaisesRegex(NotImplementedError, "Julia"):
            ops.Custom("a.jl:M:f", (1,), ms.float32, "julia")
        with self.assertRaisesRegex(ValueError, "'func_type' must be one of"):
            ops.Custom(lambda a: a, (1,), ms.float32, "cuda")
        with self.assertRaisesRegex(TypeError, "'func' must be a function"):
            ops.Custom("notfn", (1,), ms.float32, "pyfunc")
        with self.assertRaisesRegex(TypeError, "'path/to/library.so:function_name'"):
            ops.Custom("nolib", (1,), ms.float32, "aot")
        with self.assertRaisesRegex(ValueError, "does not exist"):
            ops.Custom("/nonexistent/lib.so:f", (1,), ms.float32, "aot")


class CustomHybrid(unittest.TestCase):
    def test_kernel_function(self):
        @ops.kernel
        def outer_add(a, b):
            c = output_tensor((a.shape[0], b.shape[0]), "float32")  # noqa: F821 (a DSL intrinsic)
            for i in range(a.shape[0]):
                for j in serial(b.shape[0]):  # noqa: F821
                    c[i, j] = a[i] + sqrt(b[j])  # noqa: F821
            return c
        a, b = T([1.0, 2.0]), T([4.0, 9.0, 16.0])
        want = [[3.0, 4.0, 5.0], [4.0, 5.0, 6.0]]
        self.assertEqual(ms.Tensor(outer_add(a, b)).tolist(), want)  # called directly: Python
        y = ops.Custom(outer_add, func_type="hybrid")(a, b)  # shapes from the result
        self.assertEqual((y.shape, y.tolist()), ((2, 3), want))
        y = ops.Custom(outer_add, lambda sa, sb: (sa[0], sb[0]), lambda da, db: da)(a, b)  # default: hybrid
        self.assertEqual(y.tolist(), want)

    def test_grid_and_allocate(self):
        @ops.kernel
        def rowsum(x):
            acc = allocate((x.shape[0],), "float32")  # noqa: F821
            out = output_tensor((x.shape[0],), "float32")  # noqa: F821
            for i, j in grid(x.shape):  # noqa: F821
                acc[i] = acc[i] + x[i, j]
            for i in parallel(x.shape[0]):  # noqa: F821
                out[i] = acc[i]
            return out
        self.assertEqual(ops.Custom(rowsum, func_type="hybrid")(T([[1.0, 2.0], [3.0, 4.0]])).tolist(), [3.0, 7.0])

    def test_registration_builders(self):
        info = ops.CustomRegOp("add").input(0, "x").input(1, "y").output(0, "z") \
            .dtype_format(ops.DataType.F32_Default, ops.DataType.F32_Default, ops.DataType.F32_Default) \
            .attr("scale", "required", "float", 1.0).target("CPU").get_op_info()
        self.assertEqual(info["op_name"], "add")
        self.assertEqual([i["name"] for i in info["inputs"]], ["x", "y"])
        self.assertEqual(info["dtype_format"], [[("float32", "DefaultFormat")] * 3])
        self.assertEqual(info["attr"][0]["defaultValue"], "1.0")
        self.assertEqual(info["target"], "CPU")

        @ops.custom_info_register(ops.CustomRegOp().input(0, "x").output(0, "y"))
        def ident(x):
            return x
        self.assertEqual(ident.reg_info[0]["inputs"][0]["name"], "x")
        self.assertIs(ops.Custom(ident, (2,), ms.float32, "pyfunc").reg_info, ident.reg_info)

        @ops.op_info_register({"op_name": "X"})
        def impl():
            pass
        self.assertEqual(impl.op_info, {"op_name": "X"})
        with self.assertRaisesRegex(ValueError, "param_type must be"):
            ops.CustomRegOp().input(0, "x", "sometimes")
        with self.assertRaisesRegex(ValueError, "target: must be"):
            ops.CustomRegOp().target("TPU")
        fn = ops.get_vm_impl_fn(ops.Add())
        self.assertEqual(fn(T([1.0]), T([2.0])).tolist(), [3.0])
        self.assertEqual(ops.get_vm_impl_fn("Abs")(T([-2.0])).tolist(), [2.0])
        self.assertIsNone(ops.get_vm_impl_fn("NoSuchPrimitive"))


_AOT_SRC = r"""
#include <stdint.h>
#include <string.h>
int scale_add(int nparam, void** params, int* ndims, int64_t** shapes, const char** dtypes,
              void* stream, void* extra) {
  if (nparam != 3 || strcmp(dtypes[0], "float32") != 0) return 1;
  const float* x = (const float*)params[0];
  const float* y = (const float*)params[1];
  float* z = (float*)params[2];
  int64_t n = 1;
  for (int i = 0; i < ndims[2]; ++i) n *= shapes[2][i];
  for (int64_t i = 0; i < n; ++i) z[i] = 2.0f * x[i] + y[i];
  return 0;
}
"""


class CustomAot(unittest.TestCase):
    def test_compiled_function(self):
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            self.skipTest("no C compiler on this machine to build the aot library")
        d = tempfile.mkdtemp()
        src, lib = os.path.join(d, "k.c"), os.path.join(d, "libk.so")
        with open(src, "w") as f:
            f.write(_AOT_SRC)
        subprocess.check_call([cc, "-shared", "-fPIC", "-O1", src, "-o", lib])
        op = ops.Custom(lib + ":scale_add", out_shape=lambda a, b: a, out_dtype=lambda a, b: a, func_type="aot")
        x = T([[1.0, 2.0], [3.0, 4.0]])
        y = T([[0.5, 0.5], [1.0, 1.0]])
        self.assertEqual(op(x, y).tolist(), [[2.5, 4.5], [7.0, 9.0]])
        self.assertEqual(op(x.T, y).tolist(), [[2.5, 6.5], [5.0, 9.0]])  # a strided input is made contiguous
        with self.assertRaisesRegex(RuntimeError, "returned 1"):
            op(T([1.0], F64), T([1.0], F64))
        with self.assertRaisesRegex(ValueError, "has no function 'missing'"):
            ops.Custom(lib + ":missing", (1,), ms.float32, "aot")


# ----- RNNTLoss ----------------------------------------------------------------------------

def rnnt_reference(acts, labels, T_, U_, blank):
    """-log P(labels | acts) for one sample by the direct recursion over the (T x U+1) lattice
    in probability space (acts[t][u] are logits over V), and d cost / d acts by central
    differences of that function."""
    def cost(a):
        def probs(t, u):
            row = a[t][u]
            m = max(row)
            e = [math.exp(v - m) for v in row]
            s = sum(e)
            return [v / s for v in e]
        alpha = [[0.0] * (U_ + 1) for _ in range(T_)]
        alpha[0][0] = 1.0
        for t in range(T_):
            for u in range(U_ + 1):
                if t == 0 and u == 0:
                    continue
                v = 0.0
                if t > 0:
                    v += alpha[t - 1][u] * probs(t - 1, u)[blank]
                if u > 0:
                    v += alpha[t][u - 1] * probs(t, u - 1)[labels[u - 1]]
                alpha[t][u] = v
        return -math.log(alpha[T_ - 1][U_] * probs(T_ - 1, U_)[blank])
    c = cost(acts)
    grad = [[[0.0] * len(acts[0][0]) for _ in acts[0]] for _ in acts]
    h = 1e-6
    for t in range(len(acts)):
        for u in range(len(acts[0])):
            for v in range(len(acts[0][0])):
                up = [[list(r) for r in p] for p in acts]
                dn = [[list(r) for r in p] for p in acts]
                up[t][u][v] += h
                dn[t][u][v] -= h
                grad[t][u][v] = (cost(up) - cost(dn)) / (2 * h) if t < T_ and u <= U_ else 0.0
    return c, grad


class RNNT(unittest.TestCase):
    def setUp(self):
        rng = random.Random(7)
        self.B, self.Tm, self.U, self.V = 3, 4, 2, 4
        self.acts = [[[[rng.uniform(-2, 2) for _ in range(self.V)] for _ in range(self.U + 1)]
                      for _ in range(self.Tm)] for _ in range(self.B)]
        self.labels = [[1, 2], [3, 3], [2, 0]]
        self.in_len = [4, 3, 2]
        self.lab_len = [2, 2, 1]

    def run_op(self, dtype=F64, blank=0):
        return ops.RNNTLoss(blank)(T(self.acts, dtype), T(self.labels, ms.int32), T(self.in_len, ms.int32),
                                   T(self.lab_len, ms.int32))

    def test_against_recursion(self):
        costs, grads = self.run_op()
        self.assertEqual((costs.shape, grads.shape), ((3,), (3, 4, 3, 4)))
        for b in range(self.B):
            c, g = rnnt_reference(self.acts[b], self.labels[b], self.in_len[b], self.lab_len[b], 0)
            close(self, costs.tolist()[b], c, 1e-12)
            close(self, grads.tolist()[b], g, 1e-6)
        c32, g32 = self.run_op(ms.float32)
        self.assertEqual(c32.dtype, ms.float32)
        close(self, c32.tolist(), costs.tolist(), 1e-5)
        c16, g16 = self.run_op(ms.float16)
        self.assertEqual((c16.dtype, g16.dtype), (ms.float16, ms.float16))
        close(self, c16.astype(F64).tolist(), costs.tolist(), 5e-3)

    def test_blank_other_than_zero(self):
        self.labels = [[1, 2], [0, 0], [2, 1]]
        costs, _ = self.run_op(blank=3)
        for b in range(self.B):
            c, _ = rnnt_reference(self.acts[b], self.labels[b], self.in_len[b], self.lab_len[b], 3)
            close(self, costs.tolist()[b], c, 1e-12)

    def test_autodiff_uses_the_gradient_and_jit_equals_eager(self):
        acts = T(self.acts, F64)
        lab, il, ll = T(self.labels, ms.int32), T(self.in_len, ms.int32), T(self.lab_len, ms.int32)
        w = T([1.0, 2.0, -0.5], F64)
        loss = ops.RNNTLoss()

        def f(a):
            return (loss(a, lab, il, ll)[0] * w).sum()
        g = ms.grad(f)(acts)
        _, grads = loss(acts, lab, il, ll)
        want = [[[[v * [1.0, 2.0, -0.5][b] for v in r] for r in p] for p in s] for b, s in enumerate(grads.tolist())]
        close(self, g.tolist(), want, 1e-12)
        jf = ms.jit(f)
        close(self, jf(acts).tolist(), f(acts).tolist(), 1e-12)
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, jf)

    def test_errors(self):
        with self.assertRaisesRegex(TypeError, "dtype of 'acts' must be float16 or float32"):
            ops.RNNTLoss()(T([[[[1, 2]]]], ms.int32), T([[]], ms.int32), T([1], ms.int32), T([0], ms.int32))
        with self.assertRaisesRegex(ValueError, "labels.shape\\[1\\] must be acts.shape\\[2\\] - 1 = 2"):
            ops.RNNTLoss()(T(self.acts, F64), T([[1], [1], [1]], ms.int32), T(self.in_len, ms.int32),
                           T(self.lab_len, ms.int32))
        with self.assertRaisesRegex(ValueError, "input_lengths\\[1\\] must be in \\[1, 4\\]"):
            ops.RNNTLoss()(T(self.acts, F64), T(self.labels, ms.int32), T([4, 5, 1], ms.int32),
                           T(self.lab_len, ms.int32))
        with self.assertRaisesRegex(ValueError, "labels\\[0, 1\\] must be a class in \\[0, 4\\)"):
            ops.RNNTLoss()(T(self.acts, F64), T([[1, 7], [1, 1], [1, 1]], ms.int32), T(self.in_len, ms.int32),
                           T(self.lab_len, ms.int32))
        with self.assertRaisesRegex(ValueError, "'blank_label' must be in \\[0, 4\\)"):
            ops.RNNTLoss(4)(T(self.acts, F64), T(self.labels, ms.int32), T(self.in_len, ms.int32),
                            T(self.lab_len, ms.int32))


# ----- TF-style fractional pooling -----------------------------------------------------------

class FractionalTF(unittest.TestCase):
    def x(self, n=1, h=7, w=9, c=2):
        return T([[[[float((i * 31 + j * 17 + k * 5 + b * 3) % 23) for k in range(c)] for j in range(w)]
                   for i in range(h)] for b in range(n)], F64)

    def check_sequence(self, seq, n_in, n_out):
        self.assertEqual((seq[0], seq[-1], len(seq)), (0, n_in, n_out + 1))
        steps = {b - a for a, b in zip(seq, seq[1:])}
        base = n_in // n_out
        self.assertTrue(steps <= {base, base + 1}, (seq, steps))

    def test_sequences_and_values(self):
        x = self.x()
        xs = x.tolist()
        for pseudo in (False, True):
            for over in (False, True):
                for cls in (ops.FractionalMaxPool, ops.FractionalAvgPool):
                    y, rows, cols = cls([1.0, 1.4, 2.0, 1.0], pseudo_random=pseudo, overlapping=over, seed=3)(x)
                    rows, cols = rows.tolist(), cols.tolist()
                    self.assertEqual(y.shape, (1, 5, 4, 2))
                    self.check_sequence(rows, 7, 5)
                    self.check_sequence(cols, 9, 4)
                    for i in range(5):
                        for j in range(4):
                            r = range(rows[i], min(rows[i + 1] + over, 7))
                            c = range(cols[j], min(cols[j + 1] + over, 9))
                            for k in range(2):
                                vals = [xs[0][a][b][k] for a in r for b in c]
                                want = max(vals) if cls is ops.FractionalMaxPool else sum(vals) / len(vals)
                                close(self, y.tolist()[0][i][j][k], want, 1e-12)

    def test_seeds_and_determinism(self):
        x = self.x(h=20, w=20, c=1)
        r = [1.0, 1.7, 1.3, 1.0]
        a = ops.FractionalMaxPool(r, seed=5, seed2=2)
        b = ops.FractionalMaxPool(r, seed=5, seed2=2)
        runs_a = [a(x)[1].tolist() for _ in range(3)]
        self.assertEqual(runs_a, [b(x)[1].tolist() for _ in range(3)])  # reproducible per seed
        self.assertGreater(len({tuple(s) for s in runs_a}), 1)           # successive calls draw anew
        d = ops.FractionalMaxPool(r, deterministic=True, seed=1)
        self.assertEqual(len({tuple(d(x)[1].tolist()) for _ in range(3)}), 1)

    def test_gradients(self):
        x = self.x(n=2, h=6, w=6, c=1)
        mp = ops.FractionalMaxPool([1.0, 1.5, 1.5, 1.0], deterministic=True, seed=2)
        _, rows, cols = mp(x)
        g = ms.grad(lambda v: mp(v)[0].sum())(x).tolist()
        xs = x.tolist()
        rows, cols = rows.tolist(), cols.tolist()
        want = [[[[0.0] for _ in range(6)] for _ in range(6)] for _ in range(2)]
        for b in range(2):
            for i in range(4):
                for j in range(4):
                    cells = [(p, q) for p in range(rows[i], rows[i + 1]) for q in range(cols[j], cols[j + 1])]
                    p, q = max(cells, key=lambda pq: xs[b][pq[0]][pq[1]][0])
                    want[b][p][q][0] += 1.0
        self.assertEqual(g, want)
        ap = ops.FractionalAvgPool([1.0, 1.5, 1.5, 1.0], deterministic=True, seed=2)
        ga = ms.grad(lambda v: ap(v)[0].sum())(x).tolist()
        _, rows, cols = ap(x)
        rows, cols = rows.tolist(), cols.tolist()
        wa = [[[[0.0] for _ in range(6)] for _ in range(6)] for _ in range(2)]
        for b in range(2):
            for i in range(4):
                for j in range(4):
                    n = (rows[i + 1] - rows[i]) * (cols[j + 1] - cols[j])
                    for p in range(rows[i], rows[i + 1]):
                        for q in range(cols[j], cols[j + 1]):
                            wa[b][p][q][0] += 1.0 / n
        close(self, ga, wa, 1e-12)

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "first and last elements of 'pooling_ratio' must be 1.0"):
            ops.FractionalMaxPool([2.0, 1.5, 1.5, 1.0])
        with self.assertRaisesRegex(ValueError, "must be >= 1.0"):
            ops.FractionalAvgPool([1.0, 0.5, 1.5, 1.0])
        with self.assertRaisesRegex(TypeError, "list of 4 floats"):
            ops.FractionalMaxPool([1.0, 1.5, 1.0])
        with self.assertRaisesRegex(ValueError, "dimension of 'x' must be 4"):
            ops.FractionalMaxPool([1.0, 1.5, 1.5, 1.0])(T([[1.0]]))


class FixedKsizeHand(unittest.TestCase):
    """Fixed-window fractional pooling where the intervals are fixed by hand: samples 0 give
    starts floor(i * alpha)."""

    def test_hand_intervals(self):
        x = T([[[[float(i * 10 + j) for j in range(7)] for i in range(7)]]])
        s = T([[[0.0, 0.0]]])
        y, idx = ops.FractionalMaxPoolWithFixedKsize(2, (3, 3))(x, s)
        # alpha = (7 - 2) / 2 = 2.5: starts 0, 2, then the last at 7 - 2 = 5; window maxima at +1
        self.assertEqual(y.tolist(), [[[[11.0, 13.0, 16.0], [31.0, 33.0, 36.0], [61.0, 63.0, 66.0]]]])
        self.assertEqual(idx.tolist(), [[[[8, 10, 13], [22, 24, 27], [43, 45, 48]]]])

    def test_float16(self):
        x = T([[[[float(i * 10 + j) for j in range(7)] for i in range(7)]]])
        s = T([[[0.0, 0.0]]])
        y, idx = ops.FractionalMaxPoolWithFixedKsize(2, (3, 3))(x.astype(ms.float16), s.astype(ms.float16))
        self.assertEqual(y.dtype, ms.float16)
        self.assertEqual(y.astype(ms.float32).tolist(), [[[[11.0, 13.0, 16.0], [31.0, 33.0, 36.0], [61.0, 63.0, 66.0]]]])
        self.assertEqual(idx.tolist(), [[[[8, 10, 13], [22, 24, 27], [43, 45, 48]]]])

    def test_hand_intervals_3d(self):
        # depth 4, window 2, 2 outputs: alpha = 2, samples 0.5: starts floor(0.5 * 2) - floor(0.5 * 2) = 0, then 2
        x = T([[[[[float(d * 100 + i * 10 + j) for j in range(4)] for i in range(4)] for d in range(4)]]])
        s = T([[[0.5, 0.5, 0.5]]])
        y, idx = ops.FractionalMaxPool3DWithFixedKsize(2, 2)(x, s)
        self.assertEqual(y.tolist(), [[[[[111.0, 113.0], [131.0, 133.0]], [[311.0, 313.0], [331.0, 333.0]]]]])
        self.assertEqual(idx.tolist()[0][0][1][1][1], 3 * 16 + 3 * 4 + 3)
        y2, idx2 = ops.fractional_max_pool3d(x[0], 2, output_size=2, return_indices=True, _random_samples=s)
        self.assertEqual((y2.tolist(), idx2.tolist()), (y.tolist()[0], idx.tolist()[0]))
        self.assertEqual(nn.FractionalMaxPool3d(2, output_size=(2, 2, 2), _random_samples=s)(x).tolist(), y.tolist())

    def test_errors(self):
        x = ops.zeros((1, 1, 5, 5))
        with self.assertRaisesRegex(ValueError, "must be less than the input size 5"):
            ops.FractionalMaxPoolWithFixedKsize(3, (3, 3))(x, ops.zeros((1, 1, 2)))
        with self.assertRaisesRegex(ValueError, "shape of 'random_samples' must be \\(1, 1, 2\\)"):
            ops.FractionalMaxPoolWithFixedKsize(2, (2, 2))(x, ops.zeros((1, 2)))
        with self.assertRaisesRegex(ValueError, "can not be None at the same time"):
            nn.FractionalMaxPool2d(2)
        with self.assertRaisesRegex(ValueError, "'output_ratio' must be 2 numbers in \\(0, 1\\)"):
            ops.fractional_max_pool2d(x, 2, output_ratio=1.5)
        y = ops.fractional_max_pool2d(x, 2, output_ratio=0.5)  # samples drawn when not given
        self.assertEqual(y.shape, (1, 1, 2, 2))


if __name__ == "__main__":
    unittest.main()


class Capture(unittest.TestCase):
    """What users put in a jitted construct: captured whole (one graph, no break), equal to eager."""

    def test_lstm_primitive(self):
        prim = ops.LSTM(3, 4, 2, True, True, 0.0)
        rng = random.Random(1)
        x = T([[[rng.uniform(-1, 1) for _ in range(3)] for _ in range(2)] for _ in range(4)])
        h = T([[[rng.uniform(-1, 1) for _ in range(4)] for _ in range(2)] for _ in range(4)])
        w = T([[[rng.uniform(-0.4, 0.4)]] for _ in range(prim.weight_size())])

        def f(a, b, c, d):
            out, hn, cn, _, _ = prim(a, b, c, d)
            return out, hn, cn
        e = f(x, h, h, w)
        jf = ms.jit(f)
        j = jf(x, h, h, w)
        for a, b in zip(e, j):
            close(self, b.tolist(), a.tolist(), 1e-6)
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, jf)
        gx = ms.grad(lambda a: f(a, h, h, w)[0].sum())(x)
        self.assertEqual(gx.shape, (4, 2, 3))

    def test_fractional_max_pool2d(self):
        rng = random.Random(2)
        x = T([[[[rng.uniform(-1, 1) for _ in range(9)] for _ in range(8)] for _ in range(2)]])
        s = T([[[rng.random(), rng.random()] for _ in range(2)]])
        cell = nn.FractionalMaxPool2d((2, 3), output_size=(4, 5), return_indices=True, _random_samples=s)

        def f(a):
            y, i = cell(a)
            return y * 2, i
        e = f(x)
        jf = ms.jit(f)
        j = jf(x)
        self.assertEqual(j[0].tolist(), e[0].tolist())
        self.assertEqual(j[1].tolist(), e[1].tolist())
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, jf)

    def test_custom_pyfunc_under_jit(self):
        op = ops.Custom(lambda a: a * 3, lambda s: s, lambda d: d, "pyfunc")

        def f(x):
            return op(x + 1) - 1
        x = T([1.0, 2.0])
        self.assertEqual(ms.jit(f)(x).tolist(), f(x).tolist())
        self.assertEqual(f(x).tolist(), [5.0, 8.0])
