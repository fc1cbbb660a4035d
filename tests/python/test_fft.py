"""Fourier transforms of pijit/ops/fft.py (issue 42) against a direct O(n^2) DFT written here in
Python's complex arithmetic (float64), on the stdlib Pythons.

Lengths cover every path of kernels/fft.cc: radix 4, 2, 3, 5 stages, the generic butterfly (7,
11, 13, 61), Bluestein (67, 127, 1009: primes past radix 64, and 2 * 67), the half-length real
trick (even lengths along the last dim) and the complex path for real transforms (odd lengths,
other dims); multi-dim transforms are checked as 1-D references applied axis by axis. The
gradient rules (graph/grads/fft_grads.cc) are checked as adjoints: <A x, g> = <x, A^T g> with the
very attributes the rules build."""
import cmath
import math
import random
import unittest

import pijit as ms
from pijit import _C, ops
from jit_compare import CAPTURE_ON, assert_ran_eagerly

C64, C128, F32, F64 = ms.complex64, ms.complex128, ms.float32, ms.float64


def dft(x, inverse=False):
    n = len(x)
    sgn = 1 if inverse else -1
    return [sum(x[j] * cmath.exp(sgn * 2j * math.pi * ((j * k) % n) / n) for j in range(n)) for k in range(n)]


def fit(x, n):
    return list(x[:n]) + [0j] * (n - len(x))


def scale_of(norm, n, inverse):
    if norm == "ortho":
        return 1 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") != inverse else 1.0


def rand_c(n, rng):
    return [complex(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(n)]


def rand_r(n, rng):
    return [rng.uniform(-1, 1) for _ in range(n)]


def flat(v):
    if isinstance(v, list):
        out = []
        for e in v:
            out.extend(flat(e))
        return out
    return [v]


def rel_err(got, want):
    g, w = flat(got), flat(want)
    assert len(g) == len(w), (len(g), len(w))
    big = max(max((abs(v) for v in w), default=0.0), 1e-300)
    return max((abs(a - b) for a, b in zip(g, w)), default=0.0) / big


def along(data, axis, fn):
    """fn (list -> list, any new length) applied to every line of nested list `data` along `axis`."""
    shape = shape_of(data)
    vals = flat(data)
    outer = 1
    for d in shape[:axis]:
        outer *= d
    inner = 1
    for d in shape[axis + 1:]:
        inner *= d
    n = shape[axis]
    res, new_n = {}, None
    for o in range(outer):
        for i in range(inner):
            line = fn([vals[(o * n + j) * inner + i] for j in range(n)])
            new_n = len(line)
            for j, v in enumerate(line):
                res[(o * new_n + j) * inner + i] = v
    out_shape = shape[:axis] + [new_n] + shape[axis + 1:]
    return nest([res[k] for k in range(len(res))], out_shape)


def nest(vals, shape):
    if len(shape) == 1:
        return list(vals)
    step = len(vals) // shape[0]
    return [nest(vals[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def map_last(data, fn):
    if not isinstance(data[0], list):
        return fn(list(data))
    return [map_last(d, fn) for d in data]


def shape_of(data):
    s = []
    while isinstance(data, list):
        s.append(len(data))
        data = data[0]
    return s


class OneDimTest(unittest.TestCase):
    LENGTHS = list(range(1, 17)) + [22, 25, 27, 49, 61, 64, 67, 96, 121, 127, 134, 210, 250, 1009]

    def test_c2c_every_path(self):
        rng = random.Random(0)
        for n in self.LENGTHS:
            x = rand_c(n, rng)
            for dt, tol in ((C128, 1e-12), (C64, 2e-6)):
                t = ms.Tensor(x, dt)
                got = ops.fft(t)
                self.assertEqual((got.dtype, got.shape), (dt, (n,)))
                self.assertLess(rel_err(got.tolist(), dft(x)), tol, (n, dt))
                self.assertLess(rel_err(ops.ifft(t).tolist(), [v / n for v in dft(x, True)]), tol, (n, dt))

    def test_norm_and_length(self):
        rng = random.Random(1)
        x = rand_c(12, rng)
        t = ms.Tensor(x, C128)
        for norm in (None, "backward", "forward", "ortho"):
            for n in (5, 12, 17):
                for inv in (False, True):
                    f = ops.ifft if inv else ops.fft
                    want = [v * scale_of(norm, n, inv) for v in dft(fit(x, n), inv)]
                    self.assertLess(rel_err(f(t, n=n, norm=norm).tolist(), want), 1e-12, (norm, n, inv))

    def test_real_transforms(self):
        rng = random.Random(2)
        for n in (1, 2, 3, 4, 7, 8, 10, 15, 16, 67, 128, 134):
            x = rand_r(n, rng)
            for dt, tol in ((F64, 1e-12), (F32, 2e-6)):
                t = ms.Tensor(x, dt)
                full = dft([complex(v) for v in x])
                got = ops.rfft(t)
                self.assertEqual((got.dtype, got.shape), (C128 if dt == F64 else C64, (n // 2 + 1,)))
                self.assertLess(rel_err(got.tolist(), full[:n // 2 + 1]), tol, (n, dt))
                ih = ops.ihfft(t)
                inv = dft([complex(v) for v in x], True)
                self.assertLess(rel_err(ih.tolist(), [v / n for v in inv[:n // 2 + 1]]), tol, (n, dt))
                # irfft(rfft(x), n) == x; hfft(ihfft(x), n) == x
                back = ops.irfft(got, n=n)
                self.assertEqual(back.dtype, dt)
                self.assertLess(rel_err(back.tolist(), x), 10 * tol, (n, dt))
                self.assertLess(rel_err(ops.hfft(ih, n=n).tolist(), x), 10 * tol, (n, dt))

    def test_c2r_reads_a_hermitian_half(self):
        # irfft of any half spectrum: the Hermitian extension's inverse, imaginary parts of bin 0
        # and (even n) bin n/2 ignored; bins past n//2 ignored, missing ones zero.
        rng = random.Random(3)
        for m, n in ((5, 8), (5, 9), (5, 4), (3, 9), (6, 6)):
            X = rand_c(m, rng)
            ext = [0j] * n
            for k in range(n):
                src = k if 2 * k <= n else n - k
                v = X[src] if src < m else 0j
                if src == 0 or 2 * src == n:
                    v = complex(v.real, 0)
                ext[k] = v if 2 * k <= n else v.conjugate()
            want = [v.real / n for v in dft(ext, True)]
            got = ops.irfft(ms.Tensor(X, C128), n=n).tolist()
            self.assertLess(rel_err(got, want), 1e-12, (m, n))
            hwant = [v.real for v in dft(ext)]  # hfft = irfft(conj X) * n
            self.assertLess(rel_err(ops.hfft(ms.Tensor(X, C128), n=n).tolist(), hwant), 1e-12, (m, n))

    def test_int_and_half_inputs_promote(self):
        got = ops.fft(ms.Tensor([1, 2, 3, 4], ms.int32))
        self.assertEqual(got.dtype, C64)
        self.assertEqual(got.tolist(), [10 + 0j, -2 + 2j, -2 + 0j, -2 - 2j])
        for dt in (ms.float16, ms.bfloat16, ms.int16, ms.int64):
            self.assertEqual(ops.fft(ms.Tensor([1, 2, 3, 4], dt)).dtype, C64, dt)
            self.assertEqual(ops.rfft(ms.Tensor([1, 2, 3, 4], dt)).tolist(), [10 + 0j, -2 + 2j, -2 + 0j])
        self.assertEqual(ops.fft(ms.Tensor([1.0, 2.0], F64)).dtype, C128)
        self.assertEqual(ops.irfft(ms.Tensor([1, 2], ms.int32)).dtype, F32)
        self.assertEqual(ops.irfft(ms.Tensor([1.0, 2.0], F64)).dtype, F64)


class MultiDimTest(unittest.TestCase):
    def ref(self, data, dims, sizes, inverse, norm):
        out = data
        total = 1
        for d, n in zip(dims, sizes):
            out = along(out, d, lambda line, n=n: dft(fit(line, n), inverse))
            total *= n
        s = scale_of(norm, total, inverse)
        return map_last(out, lambda line: [v * s for v in line]) if isinstance(out[0], list) else [v * s for v in out]

    def test_fft2_fftn(self):
        rng = random.Random(4)
        data = [[rand_c(5, rng) for _ in range(6)] for _ in range(3)]  # [3, 6, 5]
        t = ms.Tensor(data, C128)
        cases = [(ops.fft2, {}, (1, 2), (6, 5), False), (ops.ifft2, {"norm": "ortho"}, (1, 2), (6, 5), True),
                 (ops.fftn, {}, (0, 1, 2), (3, 6, 5), False),
                 (ops.fftn, {"s": (4, 7)}, (1, 2), (4, 7), False),
                 (ops.ifftn, {"dim": (2, 0), "s": (3, 2), "norm": "forward"}, (2, 0), (3, 2), True),
                 (ops.fft2, {"dim": (0, -1)}, (0, 2), (3, 5), False)]
        for f, kw, dims, sizes, inv in cases:
            want = self.ref(data, dims, sizes, inv, kw.get("norm"))
            self.assertLess(rel_err(f(t, **kw).tolist(), want), 1e-12, (f.__name__, kw))

    def test_rfftn_irfftn(self):
        rng = random.Random(5)
        data = [[rand_r(6, rng) for _ in range(4)] for _ in range(3)]  # [3, 4, 6]
        t = ms.Tensor(data, F64)
        cdata = [[[complex(v) for v in row] for row in m] for m in data]
        full = self.ref(cdata, (0, 1, 2), (3, 4, 6), False, None)
        got = ops.rfftn(t)
        self.assertEqual(got.shape, (3, 4, 4))
        self.assertLess(rel_err(got.tolist(), [[row[:4] for row in m] for m in full]), 1e-12)
        self.assertLess(rel_err(ops.irfftn(got, s=(3, 4, 6)).tolist(), data), 1e-12)
        # real dim not last in memory: rfft2 over (2, 0) halves dim 0
        g2 = ops.rfft2(t, dim=(2, 0))
        self.assertEqual(g2.shape, (2, 4, 6))
        f2 = self.ref(cdata, (2, 0), (6, 3), False, None)
        self.assertLess(rel_err(g2.tolist(), f2[:2]), 1e-12)
        self.assertLess(rel_err(ops.irfft2(g2, s=(6, 3), dim=(2, 0)).tolist(), data), 1e-12)
        # hfftn / ihfftn are each other's inverse
        h = ops.ihfftn(t)
        self.assertLess(rel_err(ops.hfftn(h, s=(3, 4, 6)).tolist(), data), 1e-12)
        self.assertLess(rel_err(ops.hfft2(ops.ihfft2(t), s=(4, 6)).tolist(), data), 1e-12)

    def test_batched_lines_and_threads_agree(self):
        rng = random.Random(6)
        data = [rand_c(96, rng) for _ in range(40)]
        t = ms.Tensor(data, C64)
        n0 = ms.get_num_threads()
        try:
            ms.set_num_threads(1)
            one = ops.fft(t).tolist()
            col1 = ops.fft(t, dim=0).tolist()
            ms.set_num_threads(max(2, n0))
            many = ops.fft(t).tolist()
            colm = ops.fft(t, dim=0).tolist()
        finally:
            ms.set_num_threads(n0)
        self.assertEqual(one, many)
        self.assertEqual(col1, colm)
        want = [dft(row) for row in data]
        self.assertLess(rel_err(one, want), 2e-6)


class HelpersTest(unittest.TestCase):
    def test_shift_and_freq(self):
        x = ms.Tensor([0, 1, 2, 3, 4, -5, -4, -3, -2, -1], ms.int32)
        self.assertEqual(ops.fftshift(x).tolist(), [-5, -4, -3, -2, -1, 0, 1, 2, 3, 4])
        self.assertEqual(ops.ifftshift(ops.fftshift(x)).tolist(), x.tolist())
        y = ms.Tensor([[0, 1, 2], [3, 4, 5]])
        self.assertEqual(ops.fftshift(y).tolist(), [[5, 3, 4], [2, 0, 1]])
        self.assertEqual(ops.fftshift(y, dim=1).tolist(), [[2, 0, 1], [5, 3, 4]])
        self.assertEqual(ops.ifftshift(ms.Tensor([1, 2, 3])).tolist(), [2, 3, 1])
        f = ops.fftfreq(5, d=0.5)
        self.assertEqual(f.dtype, F32)
        self.assertEqual(f.tolist(), [0.0, 0.4000000059604645, 0.800000011920929, -0.800000011920929,
                                      -0.4000000059604645])
        self.assertEqual(ops.fftfreq(4, dtype=F64).tolist(), [0.0, 0.25, -0.5, -0.25])
        self.assertEqual(ops.rfftfreq(5, dtype=F64).tolist(), [0.0, 0.2, 0.4])
        self.assertEqual(ops.rfftfreq(4).tolist(), [0.0, 0.25, 0.5])


class ErrorsTest(unittest.TestCase):
    def test_errors(self):
        x = ms.Tensor([1.0, 2.0, 3.0])
        with self.assertRaisesRegex(TypeError, "For 'fft', the input must be a Tensor"):
            ops.fft([1.0, 2.0])
        with self.assertRaisesRegex(ValueError, "norm must be one of"):
            ops.fft(x, norm="bogus")
        with self.assertRaisesRegex(ValueError, r"'dim' must be in range \[-1, 1\), but got 1"):
            ops.fft(x, dim=1)
        with self.assertRaisesRegex(ValueError, "at least 1"):
            ops.fft(x, n=0)
        with self.assertRaisesRegex(TypeError, "'n' must be an int"):
            ops.fft(x, n=2.0)
        with self.assertRaisesRegex(TypeError, "For 'rfft', the input must be a real Tensor"):
            ops.rfft(ops.fft(x))
        with self.assertRaisesRegex(TypeError, "input dtype must be one of"):
            ops.fft(ms.Tensor([True, False]))
        with self.assertRaisesRegex(ValueError, "same length"):
            ops.fftn(ms.Tensor([[1.0]]), s=(1, 1), dim=(0,))
        with self.assertRaisesRegex(ValueError, "duplicate"):
            ops.fft2(ms.Tensor([[1.0]]), dim=(0, 0))
        with self.assertRaisesRegex(ValueError, "signal_ndim"):
            ops.FFTWithSize(4, False, False)
        with self.assertRaisesRegex(ValueError, "output length 0"):
            ops.irfft(ms.Tensor([1 + 0j]))
        with self.assertRaisesRegex(ValueError, "at least 1"):
            ops.fftfreq(0)


class FFTWithSizeTest(unittest.TestCase):
    def test_modes(self):
        rng = random.Random(7)
        xr = [rand_r(6, rng) for _ in range(2)]
        xc = [rand_c(6, rng) for _ in range(2)]
        tr, tc = ms.Tensor(xr, F64), ms.Tensor(xc, C128)
        fw = ops.FFTWithSize(1, False, False)(tc).tolist()
        self.assertLess(rel_err(fw, [dft(r) for r in xc]), 1e-12)
        iv = ops.FFTWithSize(1, True, False, norm="forward")(tc).tolist()
        self.assertLess(rel_err(iv, [dft(r, True) for r in xc]), 1e-12)
        rf = ops.FFTWithSize(1, False, True)(tr)
        self.assertEqual(rf.shape, (2, 4))
        self.assertLess(rel_err(rf.tolist(), [dft([complex(v) for v in r])[:4] for r in xr]), 1e-12)
        full = ops.FFTWithSize(1, False, True, onesided=False)(tr)
        self.assertEqual(full.shape, (2, 6))
        back = ops.FFTWithSize(1, True, True, signal_sizes=(6,))(rf)
        self.assertLess(rel_err(back.tolist(), xr), 1e-12)
        back2 = ops.FFTWithSize(1, True, True, onesided=False)(full)
        self.assertLess(rel_err(back2.tolist(), xr), 1e-12)
        two = ops.FFTWithSize(2, False, False, norm="ortho")(tc).tolist()
        self.assertLess(rel_err(two, ops.fft2(tc, norm="ortho").tolist()), 1e-15)
        self.assertIn(ops.FFTWithSize, [getattr(__import__("pijit.ops.operations", fromlist=["x"]), "FFTWithSize")])


class StftTest(unittest.TestCase):
    def test_stft_against_frames(self):
        rng = random.Random(8)
        x = rand_r(40, rng)
        w = [0.5 - 0.5 * math.cos(2 * math.pi * k / 8) for k in range(8)]
        got = ops.stft(ms.Tensor(x, F64), 8, 2, window=ms.Tensor(w, F64), center=False, return_complex=True)
        frames = [[x[t * 2 + k] * w[k] for k in range(8)] for t in range(1 + (40 - 8) // 2)]
        want = [[dft(fr)[f] for fr in frames] for f in range(5)]  # [N, T]
        self.assertEqual(got.shape, (5, 17))
        self.assertLess(rel_err(got.tolist(), want), 1e-12)
        real = ops.STFT(8, 2, 8, False, True, False)(ms.Tensor([x, x], F64), ms.Tensor(w, F64))
        self.assertEqual(real.shape, (2, 5, 17, 2))
        self.assertLess(rel_err(real.tolist()[1], [[[v.real, v.imag] for v in row] for row in want]), 1e-12)

    def test_istft_inverts_stft(self):
        rng = random.Random(9)
        x = rand_r(64, rng)
        w = ms.Tensor([0.5 - 0.5 * math.cos(2 * math.pi * k / 16) for k in range(16)], F64)
        for hop, center in ((4, True), (5, True), (4, False)):
            s = ops.stft(ms.Tensor(x, F64), 16, hop, window=w, center=center, return_complex=True)
            y = ops.istft(s, 16, hop, window=w, center=center, length=64 if center else None)
            n = y.shape[0]
            lo = 0 if center else 16  # without centring the edges are not covered twice
            self.assertLess(rel_err(y.tolist()[lo:n - lo], x[lo:n - lo]), 1e-12, (hop, center))


class AdjointTest(unittest.TestCase):
    """The gradient rules' transforms are the adjoints: Re<A x, g> = Re<x, A^T g>."""

    def dot(self, a, b):
        return sum((complex(u).conjugate() * complex(v)).real for u, v in zip(flat(a), flat(b)))

    def check(self, op, x, attrs, back_op, back_attrs, out_dtype):
        y = _C.op(op, (x,), attrs)
        rng = random.Random(10)
        n = len(flat(y.tolist()))
        cplx = out_dtype in (C64, C128)
        gv = rand_c(n, rng) if cplx else rand_r(n, rng)
        g = ms.Tensor(gv, out_dtype).reshape(y.shape)
        xt = _C.op(back_op, (g,), back_attrs)
        self.assertEqual(xt.shape, x.shape)
        lhs, rhs = self.dot(y.tolist(), g.tolist()), self.dot(x.tolist(), xt.tolist())
        self.assertLess(abs(lhs - rhs), 1e-11 * max(1.0, abs(lhs)), (op, attrs))

    def test_adjoints(self):
        rng = random.Random(11)
        xc = ms.Tensor([[rand_c(7, rng) for _ in range(5)] for _ in range(2)], C128)  # [2, 5, 7]
        xr = ms.Tensor([[rand_r(7, rng) for _ in range(5)] for _ in range(2)], F64)
        base = {"scale": 0.37}
        for dims, n in (([2], [7]), ([2], [10]), ([1, 2], [4, 9]), ([2, 0], [6, 3]), ([2], [8])):
            for inv in (False, True):
                m = n[:-1] + [n[-1] // 2 + 1]
                ins = [xc.shape[d] for d in dims]
                a = dict(base, dims=dims, n=n, out=n, inverse=inv)
                self.check("fft_c2c", xc, a, "fft_c2c", dict(a, out=ins, inverse=not inv), C128)
                for adj in (False, True):
                    r = dict(a, out=m, adjoint=adj)
                    self.check("fft_r2c", xr, r, "fft_c2r", dict(r, out=ins, inverse=not inv, adjoint=not adj), C128)
                    c = dict(a, out=n, adjoint=adj)
                    self.check("fft_c2r", xc, c, "fft_r2c", dict(c, out=ins, inverse=not inv, adjoint=not adj), F64)


class CaptureTest(unittest.TestCase):
    def test_jit_equals_eager(self):
        rng = random.Random(12)
        x = ms.Tensor([rand_r(16, rng) for _ in range(3)], F32)

        def f(t):
            spec = ops.rfft(t, norm="ortho")
            c = ops.fft2(ops.cast(t, C64), s=(4, 8))
            return ops.irfft(spec, n=16, norm="ortho") * 2.0, ops.ifft2(c), ops.fftshift(t, dim=1)

        want = [v.tolist() for v in f(x)]
        jf = ms.jit(f)
        for _ in range(2):
            got = [v.tolist() for v in jf(x)]
            self.assertEqual(got, want)
        if CAPTURE_ON:
            st = ms.jit_stats(jf)
            self.assertEqual((st["graphs"], st["break_reasons"]), (1, []))
        else:
            assert_ran_eagerly(self, jf)


if __name__ == "__main__":
    unittest.main()
