"""NaN, +inf and -inf through every op that takes a maximum, a minimum or exponentials (softmax,
log_softmax, logsumexp, the losses, pooling, max/min/argmax/argmin, clamp, the activations,
maximum/minimum, fused elementwise kernels and the fused conv block), eager and jitted, in float32
and float64: each gives numpy's (and PyTorch's) values, written here as a float64 reference in
plain Python. float32 gives the reference rounded (NaN exactly where it is NaN, the same
infinities), and the jitted call gives the eager call's bits (issue 41: float32 softmax of
[[1, nan]] was [0, nan] where float64, numpy and PyTorch give [nan, nan])."""
import math
import os
import struct
import subprocess
import sys
import unittest

import pijit as pj
from pijit import nn, ops
from pijit.ops import nn_functional as NF
from jit_compare import CAPTURE_OFF_WHY, CAPTURE_ON, assert_ran_eagerly, no_stress

NAN, INF = float("nan"), float("inf")
HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "pyscripts")

# Rows of four: a NaN, +inf, -inf, all -inf, two +inf, both infinities, all NaN, finite.
ROWS = [[1.0, NAN, 2.0, 0.0], [1.0, INF, 2.0, 0.0], [1.0, -INF, 2.0, 0.0], [-INF] * 4,
        [INF, INF, 1.0, 0.0], [INF, -INF, 0.0, 1.0], [NAN] * 4, [3.0, 1.0, 2.0, 0.5]]
TARGETS = [0, 0, 1, 0, 2, 2, 3, 1]


def wide_rows(copies=40):
    """Each row's pattern repeated across 4 * copies columns, 8 * 5 rows: long enough for the
    kernels' vector bodies, oneDNN's kernels and their threads."""
    return [[v for _ in range(copies) for v in ROWS[r % 8]] for r in range(40)]


# ---- the float64 reference (numpy's semantics) ---------------------------------------------------

def exp(x):
    return x if x != x else (INF if x > 709 else math.exp(x))


def div(a, b):
    if b == 0:
        return NAN if a == 0 or a != a else math.copysign(INF, a) * math.copysign(1.0, b)
    return a / b


def log(x):
    return x if x != x else (NAN if x < 0 else (-INF if x == 0 else math.log(x)))


def nan_max(row):
    return NAN if any(v != v for v in row) else max(row)


def nan_min(row):
    return NAN if any(v != v for v in row) else min(row)


def softmax_row(row, log_=False):
    m = nan_max(row)
    e = [exp(v - m) for v in row]
    s = sum(e)
    return [(v - m) - log(s) for v in row] if log_ else [div(v, s) for v in e]


def logsumexp_row(row):
    m = nan_max(row)
    shift = 0.0 if m in (INF, -INF) else m
    return shift + log(sum(exp(v - shift) for v in row))


def arg_extreme(row, largest):
    for i, v in enumerate(row):
        if v != v:
            return i
    best = max(row) if largest else min(row)
    return row.index(best)


def transpose(rows):
    return [list(c) for c in zip(*rows)]


def sigmoid(x):
    return div(1.0, 1.0 + exp(-x))


def gelu(x):
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def softplus(x):
    return x if x != x or x > 20 else math.log1p(exp(x))


def clamp(x, lo, hi):
    return x if x != x else min(max(x, lo), hi)


def relu(x):
    return x if x != x or x > 0 else 0.0


def each(f):
    return lambda rows: [[f(v) for v in r] for r in rows]


def pair(f, a, b):
    return NAN if a != a or b != b else f(a, b)


def cross_entropy_rows(rows, targets):
    return [-softmax_row(r, True)[t] for r, t in zip(rows, targets)]


def pool_ref(planes, k, s, p, is_max):
    """max (NaN propagates) or average (padding counted) pooling of (N, C, H, W) nested lists."""
    out = []
    for n in planes:
        on = []
        for plane in n:
            h, w = len(plane), len(plane[0])
            oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
            rows = []
            for oy in range(oh):
                row = []
                for ox in range(ow):
                    vals = [plane[y][x] for y in range(oy * s - p, oy * s - p + k)
                            for x in range(ox * s - p, ox * s - p + k) if 0 <= y < h and 0 <= x < w]
                    row.append(nan_max(vals) if is_max else sum(vals) / (k * k))
                rows.append(row)
            on.append(rows)
        out.append(on)
    return out


def planes():
    """(2, 4, 6, 6): a NaN in a plane, a plane of -inf, +inf and -inf in one, finite planes."""
    out = []
    for n in range(2):
        cs = []
        for c in range(4):
            plane = [[math.sin(n * 97 + c * 31 + y * 6 + x) * 3 for x in range(6)] for y in range(6)]
            kind = (n * 4 + c) % 4
            if kind == 0:
                plane[(n + c) % 6][(2 * n + c) % 6] = NAN
            elif kind == 1:
                plane = [[-INF] * 6 for _ in range(6)]
            elif kind == 2:
                plane[1][4] = INF
                plane[4][1] = -INF
            cs.append(plane)
        out.append(cs)
    return out


# ---- comparisons ---------------------------------------------------------------------------------

def flat(v):
    if isinstance(v, (list, tuple)):
        return [x for item in v for x in flat(item)]
    return [v]


def bits(t):
    return [struct.pack("<d", v) if isinstance(v, float) else v for v in flat(t.tolist())]


class NonFiniteCase(unittest.TestCase):
    DTYPES = (("float32", 1e-5), ("float64", 1e-12))

    def assert_values(self, got, want, rtol, ctx):
        g, w = flat(got), flat(want)
        self.assertEqual(len(g), len(w), ctx)
        for i, (a, b) in enumerate(zip(g, w)):
            if isinstance(b, int):
                self.assertEqual(a, b, "%s element %d" % (ctx, i))
            elif b != b:
                self.assertTrue(a != a, "%s element %d: got %r, want nan" % (ctx, i, a))
            elif b in (INF, -INF) or b == 0:
                self.assertEqual(a, b, "%s element %d" % (ctx, i))
            else:
                self.assertLessEqual(abs(a - b), rtol * max(1.0, abs(b)), "%s element %d: %r vs %r" % (ctx, i, a, b))

    def check(self, name, fn, make_input, want, jit_graphs=1):
        """fn eager and jitted on make_input(dtype) in both dtypes: the reference `want` (nested
        lists, or a tuple of them for a tuple result) and, jitted, the eager bits."""
        for dtype, rtol in self.DTYPES:
            ctx = "%s %s" % (name, dtype)
            x = make_input(getattr(pj, dtype))
            with no_stress():
                eager = fn(x)
            jf = pj.jit(fresh(fn, ctx))
            for _ in range(2):  # the capture, then the cached graph
                jitted = jf(x)
                pairs = zip(eager, jitted) if isinstance(eager, tuple) else [(eager, jitted)]
                wants = want if isinstance(eager, tuple) else [want]
                # (the element-by-element comparison is the harness, not code under test: under
                # PIJIT_STRESS it ran every helper call through rewritten frames, 90% of the suite)
                with no_stress():
                    for (e, j), w in zip(pairs, wants):
                        self.assert_values(e.tolist(), w, rtol, ctx + " eager")
                        self.assertEqual(bits(j), bits(e), ctx + ": the jitted result is not the eager one")
            if not CAPTURE_ON:  # (no capture: jf ran eagerly, its bits eager's above)
                assert_ran_eagerly(self, jf)
                continue
            st = pj.jit_stats(jf)
            self.assertGreaterEqual(st["graphs"], jit_graphs, (ctx, st))
            self.assertEqual(st["breaks"], 0, (ctx, st["break_reasons"]))


def fresh(fn, name):
    """fn behind a code object of its own: each case gets its own capture cache (the lambdas made in
    one loop, or ops.relu and ops.exp, would share one code object and its recompile limit)."""
    ns = {"fn": fn}
    exec(compile("def run(x):\n    return fn(x)\n", "<nonfinite %s>" % name, "exec"), ns)
    return ns["run"]


def tensor(rows, shape=None):
    return lambda dt: pj.Tensor(rows, dtype=dt) if shape is None else pj.Tensor(rows, dtype=dt).reshape(shape)


class Softmaxes(NonFiniteCase):
    def test_softmax_rows(self):
        for rows in (ROWS, wide_rows()):
            n = len(rows[0])
            self.check("softmax %d" % n, lambda x: ops.softmax(x, -1), tensor(rows),
                       [softmax_row(r) for r in rows])
            self.check("log_softmax %d" % n, lambda x: ops.log_softmax(x, -1), tensor(rows),
                       [softmax_row(r, True) for r in rows])

    def test_the_issues_example(self):
        for dt in (pj.float32, pj.float64):
            y = ops.softmax(pj.Tensor([[1.0, NAN]], dtype=dt)).tolist()[0]
            self.assertTrue(y[0] != y[0] and y[1] != y[1], (dt, y))

    def test_softmax_over_the_first_axis(self):
        cols = transpose(ROWS)
        self.check("softmax axis 0", lambda x: ops.softmax(x, 0), tensor(cols),
                   transpose([softmax_row(r) for r in ROWS]))

    def test_softmax_cells_and_primitives(self):
        want = [softmax_row(r) for r in ROWS]
        sm, lsm, prim = nn.Softmax(), nn.LogSoftmax(), ops.Softmax()
        self.check("nn.Softmax", lambda x: sm(x), tensor(ROWS), want)
        self.check("ops.Softmax", lambda x: prim(x), tensor(ROWS), want)
        self.check("nn.LogSoftmax", lambda x: lsm(x), tensor(ROWS), [softmax_row(r, True) for r in ROWS])

    def test_logsumexp(self):
        for rows in (ROWS, wide_rows()):
            self.check("logsumexp", lambda x: ops.logsumexp(x, 1), tensor(rows), [logsumexp_row(r) for r in rows])


class Reductions(NonFiniteCase):
    def test_max_min_argmax_argmin(self):
        for rows in (ROWS, wide_rows()):
            self.check("amax", lambda x: ops.amax(x, 1), tensor(rows), [nan_max(r) for r in rows])
            self.check("amin", lambda x: ops.amin(x, 1), tensor(rows), [nan_min(r) for r in rows])
            self.check("argmax", lambda x: ops.argmax(x, 1), tensor(rows), [arg_extreme(r, True) for r in rows])
            self.check("argmin", lambda x: ops.argmin(x, 1), tensor(rows), [arg_extreme(r, False) for r in rows])
            self.check("ops.max", lambda x: ops.max(x, 1), tensor(rows),
                       ([nan_max(r) for r in rows], [arg_extreme(r, True) for r in rows]))
            self.check("ops.min", lambda x: ops.min(x, 1), tensor(rows),
                       ([nan_min(r) for r in rows], [arg_extreme(r, False) for r in rows]))
            cols = transpose(rows)  # down the columns: the reduction's other mode
            self.check("amax axis 0", lambda x: ops.amax(x, 0), tensor(cols), [nan_max(r) for r in rows])
            self.check("argmax axis 0", lambda x: ops.argmax(x, 0), tensor(cols),
                       [arg_extreme(r, True) for r in rows])


class Elementwise(NonFiniteCase):
    def test_activations_clamp_maximum_minimum(self):
        for rows in (ROWS, wide_rows()):
            flipped = [list(reversed(r)) for r in rows]
            cases = [
                ("relu", ops.relu, each(relu)),
                ("relu6", NF.relu6, each(lambda v: clamp(v, 0.0, 6.0))),
                ("clamp", lambda x: ops.clamp(x, -1.0, 1.5), each(lambda v: clamp(v, -1.0, 1.5))),
                ("clip_by_value", lambda x: ops.clip_by_value(x, -0.5, 2.5), each(lambda v: clamp(v, -0.5, 2.5))),
                ("leaky_relu", lambda x: NF.leaky_relu(x, 0.2), each(lambda v: v if v >= 0 else v * 0.2)),
                ("gelu", ops.gelu, each(gelu)),
                ("gelu tanh", lambda x: ops.gelu(x, "tanh"), each(gelu_tanh)),
                ("sigmoid", ops.sigmoid, each(sigmoid)),
                ("tanh", ops.tanh, each(math.tanh)),
                ("silu", ops.silu, each(lambda v: v * sigmoid(v))),
                ("softplus", ops.softplus, each(softplus)),
                ("exp", ops.exp, each(exp)),
                ("maximum", lambda x: ops.maximum(x, x[:, ::-1]),
                 lambda rs: [[pair(max, a, b) for a, b in zip(r, f)] for r, f in zip(rs, flipped)]),
                ("minimum", lambda x: ops.minimum(x[:, ::-1], x),
                 lambda rs: [[pair(min, b, a) for a, b in zip(r, f)] for r, f in zip(rs, flipped)]),
            ]
            for name, fn, ref in cases:
                self.check(name, fn, tensor(rows), ref(rows))

    def test_fused_chains(self):
        """Chains the jit fuses into one kernel (max/min, relu, clamp and the approximations in one
        loop, in either operand order) against the same reference."""
        def chain1(x):
            return ops.maximum(ops.relu(x * 2.0), x) - 1.0

        def chain2(x):
            return ops.minimum(ops.clamp(x + 1.0, -1.0, 5.0), x * 0.5)

        def chain3(x):
            return ops.tanh(ops.exp(x * 0.5)) + ops.sigmoid(x * 3.0)

        def chain4(x):
            return ops.maximum(x * 1.5, ops.minimum(x, ops.gelu(x)))

        refs = [
            (chain1, lambda v: pair(max, relu(v * 2.0), v) - 1.0),
            (chain2, lambda v: pair(min, clamp(v + 1.0, -1.0, 5.0), v * 0.5)),
            (chain3, lambda v: math.tanh(exp(v * 0.5)) + sigmoid(v * 3.0)),
            (chain4, lambda v: pair(max, v * 1.5, pair(min, v, gelu(v)))),
        ]
        for rows in (ROWS, wide_rows()):
            for fn, ref in refs:
                self.check(fn.__name__, fn, tensor(rows), each(ref)(rows))
                for dt in (pj.float32, pj.float64) if CAPTURE_ON else ():  # (the compiled graph)
                    jf = pj.jit(fn)
                    jf(pj.Tensor(rows, dtype=dt))
                    if dt == pj.float32:
                        compiled = pj.jit_stats(jf)["entries"][0]["compiled"]
                        self.assertIn("fused_elementwise", compiled, compiled)


class DenseRelu(NonFiniteCase):
    def test_dense_relu_fused_into_the_dense(self):
        """relu(dense(x)) jitted is one dense node applying the relu in place (graph/passes.h:
        fuse_dense): NaN stays NaN through the relu, as eager and numpy's maximum keep it."""
        w = [[0.5, -1.0, 0.25, 2.0], [1.0, 1.0, -0.5, 0.0], [-2.0, 0.5, 1.0, -1.0]]
        b = [0.1, -0.2, 0.3]
        dense = NF.dense

        def f(x):
            return ops.relu(dense(x, pj.Tensor(w, dtype=x.dtype), pj.Tensor(b, dtype=x.dtype)))
        want = [[relu(sum(xv * wv for xv, wv in zip(r, wr)) + bv) for wr, bv in zip(w, b)] for r in ROWS]
        self.check("relu(dense)", f, tensor(ROWS), want)
        for dt in (pj.float32, pj.float64) if CAPTURE_ON else ():  # (the compiled graph)
            jf = pj.jit(fresh(f, "dense"))
            jf(pj.Tensor(ROWS, dtype=dt))
            compiled = pj.jit_stats(jf)["entries"][0]["compiled"]
            self.assertIn("relu=True", compiled, compiled)


class Losses(NonFiniteCase):
    def test_cross_entropy_and_nll(self):
        t = pj.Tensor(TARGETS, dtype=pj.int64)
        per = cross_entropy_rows(ROWS, TARGETS)
        sce = nn.SoftmaxCrossEntropyWithLogits(sparse=True)
        for red in ("none", "mean", "sum"):
            want = per if red == "none" else (sum(per) / len(per) if red == "mean" else sum(per))
            self.check("cross_entropy " + red, lambda x, red=red: NF.cross_entropy(x, t, reduction=red),
                       tensor(ROWS), want)
            self.check("nll_loss " + red,
                       lambda x, red=red: NF.nll_loss(ops.log_softmax(x, -1), t, reduction=red), tensor(ROWS), want)
        self.check("SoftmaxCrossEntropyWithLogits", lambda x: sce(x, t), tensor(ROWS), per)
        # a -inf logit costs nothing where it is not the target, and is +inf where it is
        self.check("cross_entropy -inf", lambda x: NF.cross_entropy(x, pj.Tensor([3, 1], dtype=pj.int64),
                                                                    reduction="none"),
                   tensor([[1.0, -INF, 2.0, 0.0], [1.0, -INF, 2.0, 0.0]]),
                   cross_entropy_rows([[1.0, -INF, 2.0, 0.0]] * 2, [3, 1]))

    def test_binary_cross_entropy_with_logits(self):
        rows = [[INF, -INF, NAN, 0.0, 30.0, -30.0]] * 2
        t = [[0.5] * 6, [0.0, 1.0, 0.5, 1.0, 0.0, 1.0]]
        # PyTorch's formula: (1 - t) x + softplus(-x) (NaN where it meets inf - inf or 0 * inf)
        want = [[(1 - tv) * x + softplus(-x) for x, tv in zip(r, tr)] for r, tr in zip(rows, t)]
        for dtype, rtol in self.DTYPES:
            tt = pj.Tensor(t, dtype=getattr(pj, dtype))
            self.check("bce_with_logits " + dtype,
                       lambda x, tt=tt: NF.binary_cross_entropy_with_logits(x, tt, reduction="none"),
                       tensor(rows), want)


class Pooling(NonFiniteCase):
    def test_max_and_avg_pool(self):
        x = planes()
        for k, s, p in ((2, 2, 0), (3, 2, 1), (2, 1, 0), (3, 1, 1)):
            self.check("max_pool2d k%d s%d p%d" % (k, s, p), lambda t, k=k, s=s, p=p: NF.max_pool2d(t, k, s, p),
                       tensor(x), pool_ref(x, k, s, p, True))
            self.check("avg_pool2d k%d s%d p%d" % (k, s, p), lambda t, k=k, s=s, p=p: NF.avg_pool2d(t, k, s, p),
                       tensor(x), pool_ref(x, k, s, p, False))
        pool = nn.MaxPool2d(3, 2, pad_mode="pad", padding=1)
        self.check("nn.MaxPool2d", lambda t: pool(t), tensor(x), pool_ref(x, 3, 2, 1, True))

    def test_conv_relu_pool_block(self):
        """conv2d -> relu -> max_pool2d (3x3, stride 2, padding 1: oneDNN's pooling) is one fused
        conv2d_block when jitted; NaN and infinities in the input give the ops' bits."""
        pj.set_seed(7)
        conv = nn.Conv2d(16, 16, 3, pad_mode="pad", padding=1, has_bias=True)
        pool = nn.MaxPool2d(3, 2, pad_mode="pad", padding=1)
        net = nn.SequentialCell([conv, nn.ReLU(), pool])
        net.set_train(False)
        vals = [math.sin(i * 0.37) * 2 for i in range(2 * 16 * 10 * 10)]
        vals[3 * 100 + 44], vals[9 * 100 + 1], vals[1600 + 5 * 100 + 55] = NAN, INF, -INF

        def run(x):
            return net(x)
        x = pj.Tensor(vals, dtype=pj.float32).reshape((2, 16, 10, 10))
        with no_stress():
            eager = run(x)
        jf = pj.jit(run)
        for _ in range(2):
            self.assertEqual(bits(jf(x)), bits(eager))
        if CAPTURE_ON:
            compiled = pj.jit_stats(jf)["entries"][0]["compiled"]
            self.assertIn("conv2d_block", compiled, compiled)
        got = flat(eager.tolist())
        self.assertTrue(any(v != v for v in got), "the NaN reaches the pooled result")
        # the float64 ops give NaN at the same places
        conv64 = NF.conv2d(x.astype(pj.float64), conv.weight.astype(pj.float64), conv.bias.astype(pj.float64),
                           pad_mode="pad", padding=1)
        want = flat(NF.max_pool2d(ops.relu(conv64), 3, 2, 1).tolist())
        self.assertEqual([v != v for v in got], [v != v for v in want])


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (fused kernels run in compiled graphs)
class FusedIsas(unittest.TestCase):
    """The fused kernels' machine code for AVX-512 and for AVX2 and the interpreter give the same
    bits on NaN and infinities: vmaxps/vminps return their second operand on NaN, so each backend
    must blend the NaN in whichever operand holds it."""

    SCRIPT = r"""
import struct
import pijit as pj
from pijit import ops
nan, inf = float("nan"), float("inf")
vals = [1.0, nan, -2.0, inf, -inf, 0.0, -0.0, 7.0, 3.0, -nan, 2.5, -1.5] * 5
def f(x, y):
    a = ops.maximum(x, y) + ops.minimum(y, x)
    b = ops.maximum(ops.relu(x), ops.clamp(y, -1.0, 1.0)) * ops.sigmoid(x)
    return a, b, ops.tanh(ops.exp(x)) - ops.gelu(y)
jf = pj.jit(f)
x = pj.Tensor(vals, dtype=pj.float32)
y = pj.Tensor(vals[3:] + vals[:3], dtype=pj.float32)
for _ in range(2):
    out = jf(x, y)
assert "fused_elementwise" in pj.jit_stats(jf)["entries"][0]["compiled"]
print(pj.fused_backend() if hasattr(pj, "fused_backend") else "")
for t in out:
    print(" ".join(struct.pack("<d", v).hex() for v in t.tolist()))
"""

    def run_with(self, **env):
        e = dict(os.environ)
        e.pop("PIJIT_STRESS", None)
        e.update(env)
        e["PYTHONPATH"] = PYSCRIPTS
        r = subprocess.run([sys.executable, "-c", self.SCRIPT], env=e, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.splitlines()[1:]

    def test_every_backend_gives_the_same_bits(self):
        default = self.run_with()
        self.assertEqual(len(default), 3)
        self.assertEqual(self.run_with(PIJIT_FUSED_ISA="avx2"), default)
        self.assertEqual(self.run_with(PIJIT_FUSED_JIT="0"), default)


if __name__ == "__main__":
    unittest.main()
