"""The graph compiler (issue 12): captured graphs go through passes (dce, cse, fuse) into an
execution plan. What a user relies on: jitted results equal eager ones bit for bit (fused float32
elementwise loops included: exp, log, tanh, sigmoid and silu run the same approximations eagerly),
each call's outputs are its own, and what was compiled can be seen (jit_stats, PIJIT_LOGS=passes,
PIJIT_DUMP_DIR, PIJIT_PASSES)."""
import math
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import pijit as pj
from pijit import ops
from jit_compare import CAPTURE_OFF_WHY, CAPTURE_ON, assert_ran_eagerly, eager

HERE = os.path.dirname(os.path.abspath(__file__))
PYSCRIPTS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "pyscripts")


def bits(t):
    return [struct.pack("<f", v) for v in t.reshape((-1,)).tolist()] if t.ndim else [struct.pack("<f", t.tolist())]


def values(shape, seed=0):
    n = 1
    for d in shape:
        n *= d
    special = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 1e-40, 88.5, -90.0, 0.5, 2.5]
    out, s = [], seed * 7919 + 1
    for i in range(n):
        s = (s * 1103515245 + 12345) % (1 << 31)
        out.append(special[s % len(special)] if s % 5 == 0 else (s % 20001) / 1000.0 - 10.0)
    return pj.Tensor(out).reshape(shape) if shape else pj.Tensor(out[0])


def activations(x, b):
    y = ops.exp(x * 0.1) + b
    y = ops.tanh(y) * ops.sigmoid(x)
    y = ops.silu(y - b) + ops.log(ops.abs(x) + 1.0)
    return ops.maximum(ops.relu(y), b * 0.5) / 3.0


def stats(fn):
    return pj.jit_stats(fn)["entries"][0]


class FusedResults(unittest.TestCase):
    def counters(self, jf):
        st = pj.jit_stats(jf)
        return [st.get(k, 0) for k in ("compiles", "breaks", "cache_hits", "graph_failures")]

    def check(self, fn, *args):
        # Static sizes: each shape compiles its own fused kernels (checked below); several shapes of
        # one function share its code's cache, and an automatic symbolic entry would serve them.
        jf = pj.jit(fn, dynamic=0)
        before = self.counters(jf)
        for _ in range(2):  # the first call captures, the second runs the cached plan
            want, got = eager(fn, *args), jf(*args)
            want = want if isinstance(want, tuple) else (want,)
            got = got if isinstance(got, tuple) else (got,)
            for w, g in zip(want, got):
                self.assertEqual(w.shape, g.shape)
                self.assertEqual(bits(w), bits(g))
        # compiled once, no break, the second call a cache hit, the graph never failed
        delta = [a - b for a, b in zip(self.counters(jf), before)]
        if not CAPTURE_ON:  # (no capture: jf ran eagerly, nothing compiled; None for the entry)
            self.assertEqual(delta, [0, 0, 0, 0])
            return None
        self.assertEqual(delta, [1, 0, 1, 0])
        return stats(jf)

    def test_chain_with_transcendentals_is_one_kernel_and_bit_exact(self):
        for shape in [(7,), (3, 5), (4, 33), (2, 3, 9)]:
            e = self.check(activations, values(shape, 1), values(shape[-1:], 2))
            if CAPTURE_ON:
                self.assertEqual(e["compiled"].count("fused_elementwise"), 1, e["compiled"])
                self.assertEqual(e["ops"], 16)

    def test_erf_and_gelu_fuse_and_match_eager(self):
        def f(x):
            return ops.gelu(x) + ops.gelu(x * 0.5, approximate="tanh") - ops.erf(x)
        x = values((64, 33), seed=9)
        self.check(f, x)
        if CAPTURE_ON:
            jf = pj.jit(f)
            jf(x)
            self.assertEqual(stats(jf)["compiled"].count("fused_elementwise"), 1, stats(jf)["compiled"])

    def test_broadcast_scalar_and_transposed_inputs(self):
        x = values((6, 4), 3)
        self.check(lambda a, c: ops.tanh(a.transpose() * c + 1.0) - c, x, values((1, 6), 4))
        self.check(lambda a, c: ops.exp(a - c) * a, values((5, 1), 5), values((), 6))

    def test_large_tensors_run_on_threads_and_match_eager(self):
        old = pj.get_num_threads()
        pj.set_num_threads(2)
        try:
            e = self.check(activations, values((300, 257), 7), values((257,), 8))
        finally:
            pj.set_num_threads(old)
        if CAPTURE_ON:
            self.assertIn("fused_elementwise", e["compiled"])

    def test_interpreter_and_machine_code_agree(self):
        x, b = values((9, 11), 9), values((11,), 10)
        jf = pj.jit(activations)
        machine = jf(x, b)
        old = pj._C.set_fused_jit(False)
        try:
            interpreted = jf(x, b)
            eager_bits = bits(eager(activations, x, b))
        finally:
            pj._C.set_fused_jit(old)
        self.assertEqual(bits(machine), bits(interpreted))
        self.assertEqual(bits(machine), eager_bits)

    def test_backend_and_kernel_bytes(self):
        backend = pj._C.fused_backend()
        self.assertIn(backend, ("asmjit-avx2", "asmjit-avx512", "interpreter"))
        code = pj._C.fused_kernel_bytes("in=2; r2=mul(r0,r1); out=(r2)")
        if backend != "interpreter":
            self.assertGreater(len(code), 16)
            # vzeroupper, the callee-saved registers the held row pointers used popped, ret
            at = code.find(b"\xc5\xf8\x77")
            self.assertGreaterEqual(at, 0)
            self.assertTrue(set(code[at + 3:code.index(b"\xc3", at)]) <= set(range(0x58, 0x60)) | {0x41}, code[at:])
        with self.assertRaises(ValueError):
            pj._C.fused_kernel_bytes("in=1; r1=frob(r0); out=(r1)")


class FusedReductions(unittest.TestCase):
    """A sum, mean, max or min over trailing axes of a fused loop's value is done by the loop as it
    computes the value (fused_reduce): the value is not stored, and the bits are eager's."""
    counters = FusedResults.counters
    check = FusedResults.check

    def assert_fused_reduces(self, e, n):
        if CAPTURE_ON:  # (where capture is off check compiled nothing: e is None)
            self.assertEqual(e["compiled"].count("fused_reduce"), n, e["compiled"])

    def test_losses_and_row_reductions(self):
        def mse(p, y):
            d = p - y
            return (d * d).mean()
        self.assert_fused_reduces(self.check(mse, values((64, 100), 1), values((64, 100), 2)), 1)
        def rows_sum(x, w):
            return ops.tanh(x * w + 1.0).sum(axis=-1)

        def rows_mean(x, w):
            return ops.tanh(x * w + 1.0).mean(axis=-1)

        def rows_max(x, w):
            return ops.tanh(x * w + 1.0).max(axis=-1)

        def rows_min(x, w):
            return ops.tanh(x * w + 1.0).min(axis=-1, keepdims=True)
        for rows in (rows_sum, rows_mean, rows_max, rows_min):  # NaN, inf and -0.0 rows among them
            for shape in [(33, 257), (5, 32), (2, 3, 40)]:
                self.assert_fused_reduces(self.check(rows, values(shape, 3), values(shape[-1:], 4)), 1)

    def test_layer_norm_takes_two_loops(self):
        def norm(x, g):
            m = x.mean(axis=-1, keepdims=True)
            d = x - m
            v = (d * d).mean(axis=-1, keepdims=True)
            return d / (v + 1e-5).sqrt() * g
        e = self.check(norm, values((16, 96), 5), values((96,), 6))
        # x - m and its variance in one loop (the mean of an input stays a plain reduction); then
        # sqrt(v + eps) over [16, 1] and the [16, 96] result: two more loops
        self.assert_fused_reduces(e, 1)
        if CAPTURE_ON:
            self.assertEqual(e["compiled"].count("fused_elementwise"), 2, e["compiled"])

    def test_long_rows_on_threads(self):
        old = pj.get_num_threads()
        pj.set_num_threads(2)
        try:
            e = self.check(lambda x: (x * x).sum(axis=1), values((3, 70000), 7))
        finally:
            pj.set_num_threads(old)
        self.assert_fused_reduces(e, 1)

    def test_other_reductions_stay_nodes_and_match_eager(self):
        # leading axes, rows shorter than 32 (eager reduces across rows there), var
        for fn in (lambda x: ops.exp(x).sum(axis=0), lambda x: ops.exp(x).max(axis=1),
                   lambda x: ops.exp(x).var(axis=1)):
            self.assert_fused_reduces(self.check(fn, values((40, 31), 8)), 0)


class FusedCasts(unittest.TestCase):
    """Int32 and Float64 values cast to float32 join the loop that reads them: converted as they
    are loaded, rounded as the eager cast rounds."""
    counters = FusedResults.counters
    check = FusedResults.check

    def test_int32_and_float64_inputs(self):
        def f(i, d, x):
            y = i.astype(pj.float32) * x + d.astype(pj.float32)
            return ops.tanh(y) - 1.0, d.astype(pj.float32)
        n = 4 * 37
        ints = [(k * 2654435761) % (1 << 32) - (1 << 31) for k in range(n)]  # large: rounded to float32
        reals = [v * 1e30 if k % 3 else v for k, v in enumerate(values((n,), 3).tolist())]
        e = self.check(f, pj.Tensor(ints).astype(pj.int32).reshape((4, 37)),
                       pj.Tensor(reals).astype(pj.float64).reshape((4, 37)), values((4, 37), 4))
        if CAPTURE_ON:
            self.assertEqual(e["compiled"].count("fused_elementwise"), 1, e["compiled"])
            self.assertNotIn("cast", e["compiled"])
            self.assertIn("r0:Int32", e["compiled"])

    def test_a_cast_and_its_reduction(self):
        def total(i):
            return i.astype(pj.float32).sum()
        e = self.check(total, pj.Tensor(list(range(-500, 500))).astype(pj.int32))
        if CAPTURE_ON:
            self.assertEqual(e["compiled"].count("fused_reduce"), 1, e["compiled"])


class Plans(unittest.TestCase):
    def test_each_call_returns_its_own_outputs(self):
        def f(x):
            h = x * 2.0 + 1.0
            return h, h.transpose(), ops.exp(h).sum()

        jf = pj.jit(f)
        x = values((3, 4), 11)
        a, at, s = jf(x)
        b, bt, s2 = jf(x)
        self.assertEqual(bits(a), bits(b))
        ops.assign(a, pj.zeros((3, 4)))  # writing into one call's result ...
        self.assertEqual(bits(b), bits(eager(f, x)[0]))  # ... leaves the next call's alone
        self.assertEqual(bits(at), bits(a.transpose()))  # and the view still views its base
        self.assertEqual(bits(bt), bits(eager(f, x)[1]))

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_stats_show_the_compiled_graph_and_its_plan(self):
        def f(x):
            y = ops.exp(x) + ops.exp(x)  # cse merges the two exps
            return ops.relu(y.sum(axis=1)) * 2.0

        jf = pj.jit(f)
        jf(values((4, 5), 12))
        e = stats(jf)
        self.assertEqual(e["graph"].count("exp("), 2)
        self.assertEqual(e["compiled"].count("exp"), 1)
        self.assertRegex(e["plan"], r"^arena [0-9.]+ KiB, \d+ buffers \(\d+ in place\), 1 fresh output$")

    def test_impure_ops_are_not_merged(self):
        def f(x):
            return ops.dropout(x, 0.5)[0] if False else (pj.rand((3,)) + x, pj.rand((3,)) + x)

        jf = pj.jit(f)
        a, b = jf(pj.zeros((3,)))
        self.assertNotEqual(a.tolist(), b.tolist())
        if CAPTURE_ON:
            self.assertEqual(stats(jf)["compiled"].count("rand("), 2)


def run_child(code, **env):
    full = dict(os.environ, PYTHONPATH=PYSCRIPTS, **env)
    full.pop("PIJIT_STRESS", None)  # (stress mode would capture pijit's own frames too: more graphs)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)


CHILD = """
import pijit as pj
from pijit import ops
def f(x):
    return ops.tanh(x * 2.0) + 1.0
jf = pj.jit(f)
print(jf(pj.ones((2, 2))).tolist())
print(pj.jit_stats(jf)["entries"][0]["compiled"].count("fused_elementwise"))
"""


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (the passes, logs and dumps of compiled graphs)
class Configuration(unittest.TestCase):
    def test_passes_can_be_chosen(self):
        r = run_child(CHILD, PIJIT_PASSES="none")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split("\n")[1], "0")
        r = run_child(CHILD, PIJIT_PASSES="dce,fuse")
        self.assertEqual(r.stdout.split("\n")[1], "1")

    def test_an_unknown_pass_is_reported_and_the_default_runs(self):
        r = run_child(CHILD, PIJIT_PASSES="dce,fusion")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("PIJIT_PASSES ignored: unknown graph pass 'fusion' (known: lower, fold, simplify, dce, cse, fuse_conv, layout, fuse_dense, fuse)", r.stderr)
        self.assertEqual(r.stdout.split("\n")[1], "1")

    def test_logs_show_the_graph_after_each_pass(self):
        for logs in ("passes", "graph"):  # (graph: the captured IR too, then each pass's)
            r = run_child(CHILD, PIJIT_LOGS=logs)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("[pijit passes] after fuse (3 changed) in f (", r.stderr)
            self.assertIn("fused_elementwise(%0, %1, %2) program='in=3; r3=mul(r0,r1); r4=tanh(r3); r5=add(r4,r2); out=(r5)'",
                          r.stderr)
            self.assertEqual("[pijit graph] captured f (" in r.stderr, logs == "graph", logs)

    def test_dump_dir_gets_every_stage(self):
        with tempfile.TemporaryDirectory() as d:
            r = run_child(CHILD, PIJIT_DUMP_DIR=d)
            self.assertEqual(r.returncode, 0, r.stderr)
            folders = [n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n))]
            self.assertEqual(len(folders), 1, folders)  # one captured code object: f
            self.assertRegex(folders[0], r"^001_f_")
            folder = os.path.join(d, folders[0])
            names = sorted(n for n in os.listdir(folder) if n.endswith(".ir"))
            self.assertEqual(names, ["entry0.graph.%s" % s for s in ("0.captured.ir", "1.lower.ir", "2.fold.ir",
                                                                     "3.simplify.ir", "4.dce.ir", "5.cse.ir",
                                                                     "6.fuse_conv.ir", "7.layout.ir",
                                                                     "8.fuse_dense.ir", "9.fuse.ir")])
            with open(os.path.join(folder, names[-1])) as fh:
                self.assertIn("fused_elementwise", fh.read())


SEQUENTIAL_CHILD = """
import pijit as pj
from pijit import nn
pj.set_seed(3)
net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 8), nn.ReLU(), nn.Dense(8, 2)])
jnet = pj.jit(net)
x = pj.randn(3, 4)
for _ in range(2):
    assert jnet(x).tolist() == net(x).tolist()
net[2].weight.set_data(pj.randn(8, 8))      # the same Parameter, new values
net[4] = nn.Dense(8, 2)                     # another cell: a guard fails, capture again
for _ in range(2):
    assert jnet(x).tolist() == net(x).tolist()
print(pj.jit_stats(jnet)["compiles"])
"""


class DenseRelu(unittest.TestCase):
    """A dense whose result only a relu reads applies the relu itself (fuse_dense): the eager relu's
    bits, NaN kept (oneDNN's own ReLU post-op would make it 0)."""

    def test_mlp_layers_absorb_their_relus(self):
        from pijit import nn
        pj.set_seed(4)
        net = nn.SequentialCell([nn.Dense(6, 16), nn.ReLU(), nn.Dense(16, 16), nn.ReLU(), nn.Dense(16, 3)])

        def run(x):
            return net(x)
        jf = pj.jit(run)
        x = values((5, 6), seed=12)  # NaN, inf, -0.0, denormals among them
        for _ in range(2):
            self.assertEqual(bits(jf(x)), bits(eager(net, x)))
        if CAPTURE_ON:
            compiled = stats(jf)["compiled"]
            self.assertEqual(compiled.count("relu=True"), 2, compiled)
            self.assertNotIn("= relu(", compiled)

    def test_a_result_read_elsewhere_keeps_its_relu_node(self):
        pj.set_seed(5)
        w = pj.randn(4, 4)

        def f(x):
            h = ops.dense(x, w)
            return ops.relu(h), h * 2.0
        jf = pj.jit(f)
        x = values((3, 4), seed=13)
        for _ in range(2):
            self.assertEqual([bits(t) for t in jf(x)], [bits(t) for t in eager(f, x)])
        if CAPTURE_ON:
            self.assertNotIn("relu=True", stats(jf)["compiled"])


@unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (the rewritten code's loads)
class GraphInputLoads(unittest.TestCase):
    def test_parameters_of_sibling_cells_share_their_attribute_chains(self):
        # self._cells['0']._params['weight'] and ...['bias']: the rewritten code reads
        # self._cells once and each cell's _params once, not once per Parameter
        with tempfile.TemporaryDirectory() as d:
            r = run_child(SEQUENTIAL_CHILD, PIJIT_DUMP_DIR=d)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), ["2"])
            folder = [os.path.join(d, n) for n in os.listdir(d) if "construct" in n]
            self.assertEqual(len(folder), 1, os.listdir(d))
            for entry in (0, 1):
                with open(os.path.join(folder[0], "entry%d.rewritten.dis" % entry)) as fh:
                    dis = fh.read()
                loads = [ln.split()[-1].strip("()") for ln in dis.splitlines() if " LOAD_ATTR " in ln]
                self.assertEqual(loads, ["_cells", "_params", "_params", "_params"], dis)


class FoldingAndSimplification(unittest.TestCase):
    def test_constant_work_is_done_once_and_identities_vanish(self):
        def f(x):
            table = pj.Tensor([0.5, -1.0, 2.0]) * 3.0  # made during capture: a constant
            y = (x * 1.0 - 0.0) / 1.0
            return y + ops.exp(table) + ops.cast(y, pj.float32)
        jf = pj.jit(f)
        x = values((4, 3), seed=5)
        for _ in range(2):
            self.assertEqual(bits(jf(x)), bits(eager(f, x)))
        if not CAPTURE_ON:  # (jf ran eagerly: nothing compiled)
            return
        compiled = stats(jf)["compiled"]
        self.assertNotIn("exp", compiled)
        self.assertNotIn("cast(", compiled)
        self.assertEqual(compiled.count("constant"), 1, compiled)
        # the last fused program reads x directly: no multiply, subtract or divide is left
        self.assertNotIn("mul", compiled)
        self.assertNotIn("div", compiled)
        self.assertNotIn("sub", compiled)

    def test_a_zero_that_changes_the_sign_of_zero_stays(self):
        def f(x):
            return x + 0.0  # -0.0 + 0.0 is +0.0
        jf = pj.jit(f)
        x = pj.Tensor([-0.0, 1.0, -2.0])
        self.assertEqual(bits(jf(x)), bits(eager(f, x)))
        self.assertEqual(bits(jf(x))[0], struct.pack("<f", 0.0))


class ConvBlocks(unittest.TestCase):
    """conv2d -> inference batch_norm -> relu -> max_pool2d runs as one conv2d_block kept in oneDNN's
    blocked layout; results equal the eager ops' bit for bit, NaN and infinities included."""

    def net(self, cin, cout, pool=True, bn=True, relu=True, stride=1, pool_pad=0, ceil=False):
        from pijit import nn
        pj.set_seed(cin * 100 + cout)
        cells = [nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1, has_bias=True)]
        if bn:
            b = nn.BatchNorm2d(cout)
            b.moving_mean.set_data(pj.randn(cout) * 0.1)
            b.moving_variance.set_data(ops.abs(pj.randn(cout)) + 0.5)
            b.gamma.set_data(pj.randn(cout))
            b.beta.set_data(pj.randn(cout))
            cells.append(b)
        if relu:
            cells.append(nn.ReLU())
        if pool:
            cells.append(nn.MaxPool2d(3 if pool_pad else 2, 2, pad_mode="pad", padding=pool_pad, ceil_mode=ceil)
                         if pool_pad or ceil else nn.MaxPool2d(2, 2))
        net = nn.SequentialCell(cells)
        net.set_train(False)
        return net

    def check(self, net, x, blocks):
        def run(x):  # a code object of its own: SequentialCell.construct's cache is shared by every test
            return net(x)
        jnet = pj.jit(run)
        # `run`'s code is shared by every check: count what these three calls add (one compile, a
        # recompile when an earlier check left a graph for another net, no break).
        keys = ("compiles", "breaks")
        before = [pj.jit_stats(jnet).get(k, 0) for k in keys]
        for _ in range(3):
            self.assertEqual(bits(jnet(x)), bits(eager(net, x)))
        if not CAPTURE_ON:  # (no capture: jnet ran eagerly, nothing compiled; None for the graph)
            assert_ran_eagerly(self, jnet)
            return None
        st = pj.jit_stats(jnet)
        compiled = stats(jnet)["compiled"]
        self.assertEqual(compiled.count("conv2d_block"), blocks, compiled)
        self.assertEqual([st.get(k, 0) - b for k, b in zip(keys, before)], [1, 0], st)
        if "batch_norm_coeffs" in compiled:  # the coefficients read only Parameters: computed once
            self.assertGreaterEqual(stats(jnet)["memo_reuses"], 2)
        return compiled

    def test_block_equals_eager_with_special_values(self):
        x = values((4, 3, 12, 12), seed=2)  # NaN, inf, -0.0, denormals among them
        compiled = self.check(self.net(3, 16), x, 1)
        if CAPTURE_ON:
            self.assertNotIn("batch_norm(", compiled)
            self.assertNotIn("max_pool2d(", compiled)

    def test_a_nan_wins_its_pooling_window_as_in_pytorch(self):
        # One NaN pixel of image 0 reaches the conv's 3x3 neighbourhood of it (rows and columns
        # 4-6), and every 2x2 window of the pool that sees any of those: outputs 2-3 x 2-3 of each
        # channel, NaN in the block and eagerly alike (oneDNN's pooling, used before, dropped some).
        x = pj.ones((2, 16, 10, 10))
        x[0, :, 5, 5] = float("nan")
        net = self.net(16, 16)
        self.check(net, x, 1)
        out = eager(net, x).tolist()
        for n in range(2):
            for c in range(16):
                for i in range(5):
                    for j in range(5):
                        self.assertEqual(math.isnan(out[n][c][i][j]), n == 0 and 2 <= i < 4 and 2 <= j < 4,
                                         (n, c, i, j))

    def test_variants(self):
        x = values((2, 16, 10, 10), seed=3)
        for kw in ({}, {"pool": False}, {"bn": False}, {"relu": False}, {"stride": 2}, {"pool_pad": 1},
                   {"ceil": True}):
            with self.subTest(**kw):
                self.check(self.net(16, 32, **kw), x, 1)

    def test_blocks_in_a_row_hand_each_other_the_blocked_layout(self):
        from pijit import nn
        net = nn.SequentialCell(list(self.net(3, 16)) + list(self.net(16, 32)) + list(self.net(32, 64, pool=False)))
        net.set_train(False)
        x = values((4, 3, 16, 16), seed=8)  # NaN, inf, -0.0, denormals among them
        compiled = self.check(net, x, 3)
        # oneDNN's nChw16c convolutions need AVX-512 (the fused loops' ISA says whether this CPU has
        # it); elsewhere the blocks run op by op and no layout is handed over
        kept = 2 if "avx512" in pj._C.fused_backend() else 0
        if CAPTURE_ON:
            self.assertEqual((compiled.count("blocked_out=True"), compiled.count("blocked_in=True")), (kept, kept), compiled)

    def test_blocked_chain_over_new_batch_sizes(self):
        # a symbolic batch: each new size prepares the blocks again, layouts handed over as before
        from pijit import nn
        net = nn.SequentialCell(list(self.net(3, 16)) + list(self.net(16, 32, pool=False)))
        net.set_train(False)

        def run(x):
            return net(x)
        jnet = pj.jit(run)
        for n in (8, 5, 3, 12, 5):
            x = values((n, 3, 12, 12), seed=n)
            self.assertEqual(bits(jnet(x)), bits(eager(net, x)), n)
        if not CAPTURE_ON:
            assert_ran_eagerly(self, jnet)
            return
        st = pj.jit_stats(jnet)
        self.assertEqual((st["compiles"], st["breaks"]), (2, 0), st)
        kept = 1 if "avx512" in pj._C.fused_backend() else 0
        self.assertEqual(st["entries"][0]["compiled"].count("blocked_in=True"), kept)

    def test_a_block_result_read_by_more_than_one_block_stays_nchw(self):
        a, b, c = self.net(16, 32, pool=False), self.net(32, 32, pool=False), self.net(32, 32, pool=False)

        def two_readers(x):
            y = a(x)
            return b(y), c(y)

        def returned_too(x):
            y = a(x)
            return b(y), y
        x = values((2, 16, 8, 8), seed=9)
        for f in (two_readers, returned_too):
            with self.subTest(f.__name__):
                jf = pj.jit(f)
                for _ in range(2):
                    self.assertEqual([bits(t) for t in jf(x)], [bits(t) for t in eager(f, x)])
                if CAPTURE_ON:
                    compiled = stats(jf)["compiled"]
                    self.assertEqual(compiled.count("conv2d_block"), 2 if f is returned_too else 3, compiled)
                    self.assertNotIn("blocked_", compiled)

    def test_channels_oneDNN_does_not_block_run_op_by_op(self):
        x = values((2, 3, 9, 9), seed=4)
        self.check(self.net(3, 24), x, 1)  # conv2d_block is kept; its kernel runs the ops one by one

    def test_a_vector_along_width_is_not_taken_for_a_channel(self):
        pj.set_seed(7)
        w, b, v = pj.randn(16, 16, 3, 3), pj.randn(16), pj.randn(16)

        def f(x):
            return ops.relu(ops.conv2d(x, w, b, 1, "pad", 1) - v)  # v broadcasts along W (16 wide)
        x = values((2, 16, 16, 16), seed=6)
        jf = pj.jit(f)
        for _ in range(2):
            self.assertEqual(bits(jf(x)), bits(eager(f, x)))
        if CAPTURE_ON:
            self.assertNotIn("conv2d_block", stats(jf)["compiled"])

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_training_batch_norm_is_not_lowered(self):
        net = self.net(3, 16)
        net.set_train(True)
        jnet = pj.jit(lambda x: net(x))
        x = values((4, 3, 8, 8), seed=5)
        jnet(x)
        self.assertIn("batch_norm(", stats(jnet)["compiled"])


class ParameterMemo(unittest.TestCase):
    """What depends only on Parameters is computed once and reused while they keep their storage
    and write version: constant folding guarded by versions."""

    def setUp(self):
        pj.set_seed(11)
        self.w = pj.Parameter(pj.randn(8, 6), name="w")
        self.x = pj.randn(4, 6)

    def f(self, x):
        scaled = ops.exp(self.w * 0.5)  # only the Parameter: memoized
        return ops.dense(x, scaled), scaled.reshape((-1,))  # the second output is a view of it

    def same(self, a, b):
        self.assertEqual([bits(t) for t in a], [bits(t) for t in b])

    def reuses(self, jf):
        return stats(jf)["memo_reuses"]

    def assert_reuses(self, jf, want):
        self.assertEqual(self.reuses(jf), want)

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)  # (a compiled plan's memo)
    def test_memoized_work_is_reused_and_refreshed_by_every_kind_of_write(self):
        jf = pj.jit(self.f)
        self.same(jf(self.x), eager(self.f, self.x))
        self.assertIn("memoized", stats(jf)["plan"])
        before = self.reuses(jf)
        for _ in range(3):
            self.same(jf(self.x), eager(self.f, self.x))
        self.assert_reuses(jf, before + 3)
        for write in (lambda: self.w.__setitem__(0, 3.0), lambda: self.w.set_data(pj.randn(8, 6)),
                      lambda: ops.assign(self.w, pj.ones((8, 6)))):
            write()
            before = self.reuses(jf)
            got = jf(self.x)  # recomputed: the write moved the version
            self.assertEqual(self.reuses(jf), before)
            self.same(got, eager(self.f, self.x))
            before = self.reuses(jf)
            got = jf(self.x)  # then reused again
            self.assertEqual(self.reuses(jf), before + 1)
            self.same(got, eager(self.f, self.x))
        mv = memoryview(self.w).cast("B")  # an outside writer: the memo is not trusted while it lives
        jf(self.x)
        before = self.reuses(jf)
        mv[0:4] = struct.pack("<f", -2.0)
        got = jf(self.x)
        self.assertEqual(self.reuses(jf), before)
        self.same(got, eager(self.f, self.x))
        mv.release()
        self.same(jf(self.x), eager(self.f, self.x))
        st = pj.jit_stats(jf)
        self.assertEqual((st["compiles"], st["breaks"], st.get("recompiles", 0)), (1, 0, 0))

    def test_a_returned_view_of_a_memo_is_the_callers_own(self):
        jf = pj.jit(self.f)
        jf(self.x)
        out = jf(self.x)[1]
        out[0] = 1000.0
        self.same(jf(self.x), eager(self.f, self.x))

    def test_a_new_parameter_object_recomputes(self):
        jf = pj.jit(self.f)
        jf(self.x)
        self.w = pj.Parameter(pj.randn(8, 6), name="w")
        self.same(jf(self.x), eager(self.f, self.x))

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_a_parameter_written_by_the_graph_is_not_memoized(self):
        from pijit import nn
        bn = nn.BatchNorm2d(4)
        bn.set_train(True)
        x = pj.randn(2, 4, 3, 3)

        def g(x):
            return bn(x) + ops.exp(bn.moving_mean.reshape((4, 1, 1)))
        jg = pj.jit(g)
        jg(x)
        self.assertNotIn("memoized", stats(jg)["plan"])


class PreparedWeights(unittest.TestCase):
    """dense reads its weights in oneDNN's blocked layout, reordered once per weight version: a
    steady-state call reorders nothing, and every way of writing a weight is seen by the next call,
    eager or jitted, with the same bits."""

    def setUp(self):
        pj.set_seed(3)
        self.w = pj.Parameter(pj.randn(64, 48), name="w")
        self.b = pj.Parameter(pj.randn(64), name="b")
        self.x = pj.randn(16, 48)

    def layer(self, x):
        return ops.relu(ops.dense(x, self.w, self.b))

    def same(self, a, b):
        self.assertEqual(bits(a), bits(b))

    def test_steady_state_reorders_nothing_and_matches_eager(self):
        jf = pj.jit(self.layer)
        for _ in range(2):
            self.same(jf(self.x), eager(self.layer, self.x))
        before = pj._C.weight_cache_info()
        for _ in range(5):
            self.same(jf(self.x), eager(self.layer, self.x))
        after = pj._C.weight_cache_info()
        self.assertEqual(after["reorders"], before["reorders"])
        self.assertGreaterEqual(after["hits"] - before["hits"], 10)

    def check_write_is_seen(self, write):
        jf = pj.jit(self.layer)
        old = jf(self.x)
        jf(self.x)
        before = pj._C.weight_cache_info()["reorders"]
        write()
        got, want = jf(self.x), eager(self.layer, self.x)
        self.same(got, want)
        self.assertNotEqual(bits(got), bits(old))
        self.assertGreater(pj._C.weight_cache_info()["reorders"], before)

    def test_setitem_is_seen(self):
        def write():
            self.w[3] = 2.5
        self.check_write_is_seen(write)

    def test_inplace_operator_is_seen(self):
        # `w *= 0.5` writes in place under MindSpore's JIT_ENABLE_AUGASSIGN_INPLACE (by default it
        # rebinds w, as MindSpore's does on the CPU); mul_ writes in place always
        from pijit._extends.parse import compile_config
        saved = compile_config.JIT_ENABLE_AUGASSIGN_INPLACE
        compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = "1"
        try:
            def write():
                w = self.w
                w *= 0.5
            self.check_write_is_seen(write)
        finally:
            compile_config.JIT_ENABLE_AUGASSIGN_INPLACE = saved
        self.check_write_is_seen(lambda: self.w.mul_(0.5))

    def test_set_data_and_assign_are_seen(self):
        self.check_write_is_seen(lambda: self.w.set_data(pj.randn(64, 48)))
        self.check_write_is_seen(lambda: ops.assign(self.w, pj.ones((64, 48))))

    def test_write_through_a_buffer_export_is_seen(self):
        def write():
            mv = memoryview(self.w).cast("B")
            mv[0:4] = struct.pack("<f", 7.0)
            mv.release()
        self.check_write_is_seen(write)
        # While an export is alive its holder may write at any time: every call checks the bytes.
        jf = pj.jit(self.layer)
        mv = memoryview(self.w).cast("B")
        jf(self.x)
        mv[4:8] = struct.pack("<f", -3.0)
        self.same(jf(self.x), eager(self.layer, self.x))
        mv.release()

    def test_weights_computed_in_the_graph_are_never_stale(self):
        # w * s lives in the plan's arena: the same buffer on every call, and within a call the
        # buffer of another value later. Both dense layers must see this call's weights.
        def f(x, w, s):
            h = ops.dense(x, w * s)
            return ops.dense(h[:, :48], ops.exp(w * 0.5))
        jf = pj.jit(f)
        for seed in range(4):
            pj.set_seed(10 + seed)
            w, s = pj.randn(64, 48), pj.randn(64, 48)
            self.same(jf(self.x, w, s), eager(f, self.x, w, s))

    def test_a_new_parameter_at_the_same_place_is_not_confused(self):
        jf = pj.jit(self.layer)
        jf(self.x)
        for seed in range(3):
            pj.set_seed(seed)
            self.w = pj.Parameter(pj.randn(64, 48), name="w")
            self.same(jf(self.x), eager(self.layer, self.x))


if __name__ == "__main__":
    unittest.main()
