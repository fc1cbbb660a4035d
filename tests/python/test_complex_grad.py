"""Gradients through complex values (graph/autodiff.h, graph/grads/complex_grads.cc), PyTorch's
convention: for a real loss L the gradient of a complex z is dL/dRe z + i dL/dIm z. Checked against
central finite differences on the real and imaginary parts and against hand-derived values, on
three paths that must agree: the eager tape, the tape's sweep captured by pijit.jit, and a captured
forward differentiated as a graph under the tape (graph::differentiate). A gradient that would
have to pass a real-only rule on complex values raises a TypeError naming the op: before, such a
path contributed a silent zero (the gradient of (irfft(rfft(x)) * x).sum() came out x, not 2x)."""
import cmath
import math
import random
import unittest

import pijit as pj
from pijit import ops
from jit_compare import CAPTURE_OFF_WHY, CAPTURE_ON


def flat(t):
    v = t.tolist() if hasattr(t, "tolist") else t
    out = []

    def walk(a):
        if isinstance(a, (list, tuple)):
            for b in a:
                walk(b)
        else:
            out.append(complex(a))
    walk(v)
    return out


def rand_c(n, seed, lo=-1.5, hi=1.5):
    r = random.Random(seed)
    return [complex(r.uniform(lo, hi), r.uniform(lo, hi)) for _ in range(n)]


def rand_r(n, seed, lo=-1.5, hi=1.5):
    r = random.Random(seed)
    return [r.uniform(lo, hi) for _ in range(n)]


def weights(n, seed):
    return rand_r(n, seed)


def loss_of(f, seed):
    """A real scalar loss of f's output: sum(Re f * wr + Im f * wi) (sum(f * w) for a real f)."""
    def loss(*xs):
        y = f(*xs)
        n = 1
        for s in y.shape:
            n *= s
        rdt = pj.float64 if y.dtype in (pj.float64, pj.complex128) else pj.float32
        wr = pj.Tensor(weights(n, seed), rdt).reshape(y.shape)
        if y.dtype in (pj.complex64, pj.complex128):
            wi = pj.Tensor(weights(n, seed + 1), rdt).reshape(y.shape)
            return (ops.real(y) * wr + ops.imag(y) * wi).sum()
        return (y * wr).sum()
    return loss


class Paths(unittest.TestCase):
    def gradients(self, loss, args):
        """Eager, jitted and graph-differentiated gradients of loss at args (one tuple each)."""
        pos = tuple(range(len(args)))
        pj.reset()  # (each check captures afresh: grad's wrapper would reach its recompile limit and run eagerly)
        eager = ops.grad(loss, grad_position=pos)(*args)
        jitted = pj.jit(ops.grad(loss, grad_position=pos))(*args)
        graphed = ops.grad(pj.jit(loss), grad_position=pos)(*args)
        return [r if isinstance(r, tuple) else (r,) for r in (eager, jitted, graphed)]

    def assert_close(self, got, want, tol, msg):
        got, want = flat(got), flat(want)
        self.assertEqual(len(got), len(want), msg)
        scale = max([1.0] + [abs(w) for w in want])
        for k, (g, w) in enumerate(zip(got, want)):
            self.assertLessEqual(abs(g - w), tol * scale, "%s: element %d: %r, want %r" % (msg, k, g, w))


class FiniteDifferences(Paths):
    H = 1e-6

    def fd(self, loss, values, dtypes, shapes):
        """Central differences of loss (float64/complex128 inputs) on each real and imaginary part."""
        def call(vals):
            ts = [pj.Tensor(v, d).reshape(s) for v, d, s in zip(vals, dtypes, shapes)]
            return flat(loss(*ts))[0].real
        grads = []
        for a, v in enumerate(values):
            g = []
            for k in range(len(v)):
                parts = [1.0, 1j] if dtypes[a] == pj.complex128 else [1.0]
                d = 0j
                for p in parts:
                    up = [list(x) for x in values]
                    dn = [list(x) for x in values]
                    up[a][k] += p * self.H
                    dn[a][k] -= p * self.H
                    d += p * (call(up) - call(dn)) / (2 * self.H)
                g.append(d)
            grads.append(g)
        return grads

    def check(self, name, f, *inputs, seed=3, tol=1e-6):
        """inputs: (values, dtype, shape) triples."""
        values = [i[0] for i in inputs]
        dtypes = [i[1] for i in inputs]
        shapes = [i[2] for i in inputs]
        loss = loss_of(f, seed)
        want = self.fd(loss, values, dtypes, shapes)
        args = [pj.Tensor(v, d).reshape(s) for v, d, s in zip(values, dtypes, shapes)]
        eager, jitted, graphed = self.gradients(loss, args)
        for k in range(len(args)):
            self.assertEqual(eager[k].dtype, dtypes[k], "%s: input %d's gradient dtype" % (name, k))
            self.assertEqual(tuple(eager[k].shape), tuple(shapes[k]), name)
            self.assert_close(eager[k], want[k], tol, "%s: input %d against finite differences" % (name, k))
            self.assert_close(jitted[k], eager[k], 1e-12, "%s: input %d, jitted against eager" % (name, k))
            self.assert_close(graphed[k], eager[k], 1e-12, "%s: input %d, graph autodiff against eager" % (name, k))

    def z(self, seed, shape=(2, 3), lo=-1.5, hi=1.5):
        n = 1
        for s in shape:
            n *= s
        return (rand_c(n, seed, lo, hi), pj.complex128, shape)

    def x(self, seed, shape=(2, 3), lo=-1.5, hi=1.5):
        n = 1
        for s in shape:
            n *= s
        return (rand_r(n, seed, lo, hi), pj.float64, shape)

    def test_binary(self):
        for name, f in (("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
                        ("div", lambda a, b: a / b), ("pow", lambda a, b: a ** b)):
            with self.subTest(op=name):
                self.check(name, f, self.z(1), self.z(2, lo=0.3, hi=1.2))
        for name, f in (("mul", lambda a, b: a * b), ("div", lambda a, b: a / b), ("add", lambda a, b: a + b)):
            with self.subTest(op=name + " broadcast"):
                self.check(name, f, self.z(3), self.z(4, (3,), 0.3, 1.2))
            with self.subTest(op=name + " real operand"):
                self.check(name, f, self.z(5), self.x(6, (3,), 0.5, 1.5))
                self.check(name, f, self.x(7, (2, 3), 0.5, 1.5), self.z(8, (2, 3), 0.3, 1.2))

    def test_unary(self):
        for name, f in (("neg", ops.neg), ("exp", ops.exp), ("log", ops.log), ("sqrt", ops.sqrt),
                        ("sin", ops.sin), ("cos", ops.cos), ("tan", ops.tan), ("tanh", ops.tanh),
                        ("square", ops.square), ("reciprocal", ops.reciprocal), ("abs", ops.abs),
                        ("pow 3", lambda v: v ** 3), ("real", ops.real), ("imag", ops.imag), ("conj", ops.conj),
                        ("angle", ops.angle), ("angle op", lambda v: pj._C.op("angle", (v,)))):
            with self.subTest(op=name):
                self.check(name, f, self.z(11, lo=0.2, hi=1.2))

    def test_parts_polar_cast(self):
        self.check("complex", ops.complex, self.x(21), self.x(22))
        self.check("complex broadcast", ops.complex, self.x(21), self.x(22, (3,)))
        self.check("polar", lambda r, a: ops.Polar()(r, a), self.x(23, lo=0.1), self.x(24, lo=-3, hi=3))
        self.check("cast real->complex", lambda v: v.astype(pj.complex128) * (0.5 - 2j), self.x(25))
        self.check("cast complex->real", lambda v: ops.exp(v).astype(pj.float64), self.z(26))

    def test_shape_ops(self):
        for name, f in (("reshape", lambda v: v.reshape(3, 2)), ("transpose", lambda v: v.transpose(1, 0)),
                        ("slice", lambda v: v[1:, ::2]), ("index arrays", lambda v: v[:, pj.Tensor([0, 2, 0])]),
                        ("broadcast_to", lambda v: ops.broadcast_to(v, (2, 2, 3))),
                        ("concat", lambda v: ops.concat((v, v * 2j), 0)), ("stack", lambda v: ops.stack((v, v), 2)),
                        ("split", lambda v: ops.split(v, 1, 0)[1] * v[0]), ("tile", lambda v: ops.tile(v, (1, 2)))):
            with self.subTest(op=name):
                self.check(name, f, self.z(31))

    def test_fft(self):
        for name, f in (("fft", ops.fft), ("ifft ortho n", lambda v: ops.ifft(v, n=5, norm="ortho")),
                        ("fft2", ops.fft2), ("irfft", lambda v: ops.irfft(v, n=4)), ("hfft", ops.hfft)):
            with self.subTest(op=name):
                self.check(name, f, self.z(41))
        for name, f in (("rfft", ops.rfft), ("rfft2 s", lambda v: ops.rfft2(v, s=(3, 4))),
                        ("irfft(rfft)", lambda v: ops.irfft(ops.rfft(v), n=3) * v)):
            with self.subTest(op=name):
                self.check(name, f, self.x(42))


class HandDerived(Paths):
    def all_paths(self, loss, args, want, tol, name):
        for path, got in zip(("eager", "jitted", "graph"), self.gradients(loss, args)):
            for k, w in enumerate(want):
                self.assert_close(got[k], w, tol, "%s (%s), input %d" % (name, path, k))

    def test_irfft_rfft_times_x(self):
        # irfft(rfft(x)) = x, so d/dx sum(x * x) = 2x (it came out x: the complex path counted zero)
        for dt, tol in ((pj.float32, 1e-5), (pj.float64, 1e-12)):
            for n in (5, 8):
                xs = rand_r(n, n)
                self.all_paths(lambda v: (ops.irfft(ops.rfft(v), n=n) * v).sum(), [pj.Tensor(xs, dt)],
                               [[2 * a for a in xs]], tol, "irfft(rfft(x)) * x, n=%d %s" % (n, dt))

    def test_fft_energy(self):
        # Parseval: sum |fft(x)|^2 = N sum |x|^2, so the gradient is 2 N x (2 N z for complex z)
        n = 6
        xs, zs = rand_r(n, 1), rand_c(n, 2)
        self.all_paths(lambda v: (ops.abs(ops.fft(v.astype(pj.complex128))) ** 2).sum(), [pj.Tensor(xs, pj.float64)],
                       [[2 * n * a for a in xs]], 1e-11, "|fft(x)|^2")
        self.all_paths(lambda v: (ops.abs(ops.fft(v)) ** 2).sum(), [pj.Tensor(zs, pj.complex128)],
                       [[2 * n * a for a in zs]], 1e-11, "|fft(z)|^2")
        self.all_paths(lambda v: (ops.real(ops.fft(v) * ops.conj(ops.fft(v)))).sum(), [pj.Tensor(zs, pj.complex64)],
                       [[2 * n * a for a in zs]], 1e-5, "fft(z) conj(fft(z)) complex64")

    def test_spectral_convolution_weight(self):
        # y = irfft(rfft(x) * w, n), L = sum(y * r): with R = rfft(r) and X = rfft(x), the gradient of
        # the complex weights is conj(X_k) c_k R_k / n (c_k = 2 for bins with a mirror partner, 1 for
        # the first and, n even, the last), and of x it is irfft(conj(w) G)'s adjoint.
        n, m = 8, 5
        xs, rs, ws = rand_r(n, 61), rand_r(n, 62), rand_c(m, 63)

        def dft(v):
            return [sum(v[t] * cmath.exp(-2j * math.pi * k * t / n) for t in range(n)) for k in range(m)]
        X, R = dft(xs), dft(rs)
        c = [1] + [2] * (m - 2) + [1]
        want_w = [X[k].conjugate() * c[k] * R[k] / n for k in range(m)]
        r = pj.Tensor(rs, pj.float64)
        self.all_paths(lambda x, w: (ops.irfft(ops.rfft(x) * w, n=n) * r).sum(),
                       [pj.Tensor(xs, pj.float64), pj.Tensor(ws, pj.complex128)],
                       [self.spectral_x_grad(ws, rs, n), want_w], 1e-11, "spectral convolution")

    def spectral_x_grad(self, ws, rs, n):
        # L = sum_t r_t y_t is linear in x: y = irfft(rfft(x) w) is x circularly convolved with the
        # real kernel h = irfft(w), so dL/dx_s = sum_t r_t h_(t - s mod n)
        m = len(ws)
        c = [1] + [2] * (m - 2) + [1]
        h = [sum((c[k] * ws[k] * cmath.exp(2j * math.pi * k * t / n)).real if 0 < k < m - 1
                 else (ws[k] * cmath.exp(2j * math.pi * k * t / n)).real for k in range(m)) / n for t in range(n)]
        return [sum(rs[t] * h[(t - s) % n] for t in range(n)) for s in range(n)]

    def test_abs_and_angle_at_zero(self):
        # PyTorch's choices: abs'(0) = 0, angle'(0) = 0
        z = pj.Tensor([0j, 3 + 4j], pj.complex128)
        self.all_paths(lambda v: ops.abs(v).sum(), [z], [[0j, (3 + 4j) / 5]], 1e-12, "abs")
        self.all_paths(lambda v: pj._C.op("angle", (v,)).sum(), [z], [[0j, 1j * (3 + 4j) / 25]], 1e-12, "angle")

    @unittest.skipUnless(CAPTURE_ON, CAPTURE_OFF_WHY)
    def test_captured(self):
        # the jitted paths compile graphs (an eager fallback would agree with eager trivially)
        x = pj.Tensor(rand_r(5, 71), pj.float64)

        def loss(v):
            return (ops.irfft(ops.rfft(v), n=5) * v).sum()
        pj.reset()
        report = pj.explain(ops.grad(loss))(x)
        # (under PIJIT_STRESS the loss's own frame may be a graph of its own too: at least one)
        self.assertGreaterEqual(report.graph_count, 1, str(report))
        self.assertEqual(report.break_count, 0, str(report))
        self.assert_close(report.outputs[0], [2 * a for a in flat(x)], 1e-12, "captured sweep")
        jl = pj.jit(loss)
        self.assert_close(ops.grad(jl)(x), [2 * a for a in flat(x)], 1e-12, "graph autodiff")
        entries = pj.cache_entries(loss)
        self.assertEqual(len(entries), 1, entries)
        self.assertGreater(entries[0]["ops"], 0, entries)


class ComplexConstantsInGraphs(unittest.TestCase):
    def test_complex_constant_with_real_part_one_is_not_simplified_away(self):
        # graph/algebra.cc's simplify read constants as doubles (the real part): x * (1+5j) became x
        x = pj.Tensor([0.5, -1.0], pj.float64)
        c = pj.complex128
        for f in (lambda v: ops.imag(v.astype(c) * pj.Tensor(1 - 2j, c)), lambda v: ops.imag(v.astype(c) * (1 - 2j)),
                  lambda v: (v.astype(c) + pj.Tensor(3j, c)) * 2, lambda v: ops.real(v.astype(c) / (1 + 1j)) * 2):
            pj.reset()
            self.assertEqual(flat(pj.jit(f)(x)), flat(f(x)))


class RealOnlyRulesRefuseComplex(unittest.TestCase):
    def test_refusals_name_the_op(self):
        z = pj.Tensor(rand_c(6, 81), pj.complex64).reshape(3, 2)
        idx = pj.Tensor([0, 2], pj.int32)
        for op, f in (("gather", lambda v: ops.real(ops.gather(v, idx, 0)).sum()),
                      ("index_select", lambda v: ops.real(ops.index_select(v, 0, idx)).sum())):
            for how, g in (("eager", ops.grad(f)), ("jitted", pj.jit(ops.grad(f))), ("graph", ops.grad(pj.jit(f)))):
                with self.subTest(op=op, path=how):
                    with self.assertRaisesRegex(TypeError, r"cannot differentiate through '%s'.* on complex values: "
                                                           r"its gradient rule is for real values only" % op):
                        g(z)

    def test_real_gradients_unchanged(self):
        # complex support adds no op to a real program's backward
        x = pj.Tensor([0.5, -1.0, 2.0], pj.float32)
        for f, want in ((lambda v: (v * v).sum(), [1.0, -2.0, 4.0]),
                        (lambda v: (ops.abs(v) * 3).sum(), [3.0, -3.0, 3.0]),
                        (lambda v: ops.exp(v).sum(), [math.exp(0.5), math.exp(-1.0), math.exp(2.0)])):
            g = ops.grad(f)(x)
            self.assertEqual(g.dtype, pj.float32)
            for a, b in zip(flat(g), want):
                self.assertAlmostEqual(a.real, b, places=5)
                self.assertEqual(a.imag, 0.0)


if __name__ == "__main__":
    unittest.main()
