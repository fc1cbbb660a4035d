"""Gradients through complex values against torch.autograd (Debian's python3-torch on the system
Python). PyTorch's convention: for a real loss L the gradient of a complex z is dL/dRe z + i dL/dIm z
(graph/autodiff.h). Every op with a complex-correct rule is checked on complex64 and complex128
inputs, eagerly (the tape) and jitted (graph autodiff), jitted equal to eager; a complex output is
differentiated through a real loss sum(Re f * wr + Im f * wi) with fixed weights, so the test does
not rest on either library's sensitivity convention (one test checks complex sensitivities too).
(The system Python is 3.11, where pijit.jit runs eagerly: tests/python/test_complex_grad.py checks
the captured graphs' gradients on 3.7 and 3.9.)
An op whose rule is real-only refuses complex values with a TypeError naming it."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_torch

try:
    import numpy as np
    import torch
except ImportError:  # pragma: no cover
    torch = None

import pijit as pj
from pijit import ops, mint

CDT = {"complex64": (np.complex64, np.float32, 2e-4), "complex128": (np.complex128, np.float64, 1e-10)}


def crand(shape, seed, cdt, lo=-1.5, hi=1.5):
    r = np.random.RandomState(seed)
    return (r.uniform(lo, hi, shape) + 1j * r.uniform(lo, hi, shape)).astype(cdt)


def rrand(shape, seed, rdt, lo=-1.5, hi=1.5):
    return np.random.RandomState(seed).uniform(lo, hi, shape).astype(rdt)


def p_loss(out, seed):
    """A real scalar loss of out (pijit)."""
    o = np.asarray(out.shape)
    if out.dtype in (pj.complex64, pj.complex128):
        rdt = np.float32 if out.dtype == pj.complex64 else np.float64
        wr, wi = rrand(tuple(o), seed, rdt), rrand(tuple(o), seed + 1, rdt)
        return (ops.real(out) * pj.Tensor(wr) + ops.imag(out) * pj.Tensor(wi)).sum()
    rdt = np.float32 if out.dtype == pj.float32 else np.float64
    return (out * pj.Tensor(rrand(tuple(o), seed, rdt))).sum()


def t_loss(out, seed):
    shape = tuple(out.shape)
    if out.is_complex():
        rdt = np.float32 if out.dtype == torch.complex64 else np.float64
        wr, wi = torch.from_numpy(rrand(shape, seed, rdt)), torch.from_numpy(rrand(shape, seed + 1, rdt))
        return (out.real * wr + out.imag * wi).sum()
    rdt = np.float32 if out.dtype == torch.float32 else np.float64
    return (out * torch.from_numpy(rrand(shape, seed, rdt))).sum()


class ComplexGradientsMatchTorch(unittest.TestCase):
    def setUp(self):
        require_torch(self, torch)
        torch.set_num_threads(1)

    def check(self, pfn, tfn, *arrays, tol, name=""):
        ts = [torch.from_numpy(a.copy()).requires_grad_(True) for a in arrays]
        t_loss(tfn(*ts), 7).backward()

        def loss(*xs):
            return p_loss(pfn(*xs), 7)

        grad = ops.grad(loss, grad_position=tuple(range(len(arrays))))
        pin = [pj.Tensor(a) for a in arrays]
        eager = grad(*pin)
        jitted = pj.jit(grad)(*pin)  # the tape's sweep captured into the graph
        # a captured forward differentiated as a graph (graph::differentiate) under the eager tape
        graphed = ops.grad(pj.jit(loss), grad_position=tuple(range(len(arrays))))(*pin)
        eager, jitted, graphed = [r if isinstance(r, tuple) else (r,) for r in (eager, jitted, graphed)]
        self.assertEqual(len(eager), len(ts), name)
        for k, (g, j, gr, t) in enumerate(zip(eager, jitted, graphed, ts)):
            want = t.grad.resolve_conj().numpy()
            got = np.asarray(g)
            self.assertEqual(got.dtype, want.dtype, "%s: input %d's gradient dtype" % (name, k))
            self.assertEqual(got.shape, want.shape, "%s: input %d" % (name, k))
            scale = max(np.abs(want).max(), 1.0)
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg="%s: input %d" % (name, k))
            np.testing.assert_allclose(np.asarray(j), got, rtol=tol, atol=tol * scale,
                                       err_msg="%s: input %d, jitted against eager" % (name, k))
            np.testing.assert_allclose(np.asarray(gr), got, rtol=tol, atol=tol * scale,
                                       err_msg="%s: input %d, a jitted forward's graph gradient" % (name, k))

    def each(self, cases, make):
        for dt, (cdt, rdt, tol) in CDT.items():
            for name, p, t in cases:
                with self.subTest(op=name, dtype=dt):
                    self.check(p, t, *make(cdt, rdt), tol=tol, name="%s %s" % (name, dt))

    def test_binary(self):
        cases = [("add", lambda a, b: a + b, lambda a, b: a + b),
                 ("sub", lambda a, b: a - b, lambda a, b: a - b),
                 ("mul", lambda a, b: a * b, lambda a, b: a * b),
                 ("div", lambda a, b: a / b, lambda a, b: a / b),
                 ("pow", lambda a, b: a ** b, lambda a, b: a ** b)]
        self.each(cases, lambda cdt, rdt: (crand((3, 4), 1, cdt), crand((3, 4), 2, cdt, 0.3, 1.2)))
        # broadcasting: the broadcast complex operand's gradient is summed back
        self.each(cases[:4], lambda cdt, rdt: (crand((3, 4), 3, cdt), crand((4,), 4, cdt, 0.3, 1.2)))
        # a real operand of a complex op: its gradient is the real part
        self.each(cases[:4], lambda cdt, rdt: (crand((3, 4), 5, cdt), rrand((4,), 6, rdt, 0.5, 1.5)))
        self.each(cases[:4], lambda cdt, rdt: (rrand((2, 3), 5, rdt, 0.5, 1.5), crand((2, 3), 6, cdt, 0.3, 1.2)))

    def test_unary(self):
        cases = [("neg", ops.neg, torch.neg), ("exp", ops.exp, torch.exp), ("log", ops.log, torch.log),
                 ("sqrt", ops.sqrt, torch.sqrt), ("sin", ops.sin, torch.sin), ("cos", ops.cos, torch.cos),
                 ("tan", ops.tan, torch.tan), ("tanh", ops.tanh, torch.tanh), ("square", ops.square, torch.square),
                 ("reciprocal", ops.reciprocal, torch.reciprocal), ("abs", ops.abs, torch.abs),
                 ("pow 2", lambda z: z ** 2, lambda z: z ** 2), ("pow 0.5", lambda z: z ** 0.5, lambda z: z ** 0.5),
                 ("real", ops.real, torch.real), ("imag", ops.imag, torch.imag),
                 ("conj", ops.conj, lambda z: torch.conj(z).resolve_conj()),
                 ("angle", ops.angle, torch.angle), ("angle op", lambda z: pj._C.op("angle", (z,)), torch.angle)]
        self.each(cases, lambda cdt, rdt: (crand((2, 5), 11, cdt, 0.2, 1.2),))

    def test_abs_and_angle_at_zero(self):
        # PyTorch's rules: abs'(0) and angle'(0) are 0 (the angle op's; atan2's own rule, which
        # ops.angle's composition runs, gives NaN there, as torch.atan2's does)
        for name, p, t in (("abs", ops.abs, torch.abs),
                           ("angle op", lambda z: pj._C.op("angle", (z,)), torch.angle)):
            z = np.array([0j, 1 + 1j, -2 + 0j, 0.5j], np.complex128)
            self.check(p, t, z, tol=1e-12, name=name)

    def test_complex_polar_cast(self):
        def parts(cdt, rdt):
            # (torch.polar's rule is written for abs >= 0, as its documentation asks)
            return rrand((2, 3), 21, rdt, 0.1, 1.5), rrand((2, 3), 22, rdt, -3.0, 3.0)
        self.each([("complex", ops.complex, torch.complex),
                   ("polar", lambda r, a: ops.Polar()(r, a), torch.polar),
                   ("mint.polar", mint.polar, torch.polar)], parts)
        for dt, (cdt, rdt, tol) in CDT.items():
            pc = pj.complex64 if cdt is np.complex64 else pj.complex128
            pr = pj.float32 if rdt is np.float32 else pj.float64
            tc = torch.complex64 if cdt is np.complex64 else torch.complex128
            self.check(lambda x: x.astype(pc) * (1 + 2j), lambda x: x.to(tc) * (1 + 2j), rrand((3,), 23, rdt),
                       tol=tol, name="cast real->complex " + dt)
            self.check(lambda z: ops.exp(z).astype(pr), lambda z: torch.exp(z).real, crand((3,), 24, cdt),
                       tol=tol, name="cast complex->real " + dt)

    def test_shape_ops(self):
        cases = [("reshape", lambda z: z.reshape(4, 3), lambda z: z.reshape(4, 3)),
                 ("transpose", lambda z: z.transpose(1, 0), lambda z: z.t()),
                 ("slice", lambda z: z[1:, ::2], lambda z: z[1:, ::2]),
                 ("index arrays", lambda z: z[pj.Tensor([0, 2, 0])], lambda z: z[torch.tensor([0, 2, 0])]),
                 ("broadcast_to", lambda z: ops.broadcast_to(z, (2, 3, 4)), lambda z: z.expand(2, 3, 4)),
                 ("concat", lambda z: ops.concat((z, z * 2), 1), lambda z: torch.cat((z, z * 2), 1)),
                 ("stack", lambda z: ops.stack((z, z * 1j), 0), lambda z: torch.stack((z, z * 1j), 0)),
                 ("split", lambda z: ops.split(z, 1, 0)[1] * 3, lambda z: torch.split(z, 1, 0)[1] * 3),
                 ("tile", lambda z: ops.tile(z, (2, 1)), lambda z: z.repeat(2, 1))]
        self.each(cases, lambda cdt, rdt: (crand((3, 4), 31, cdt),))
        # (pad's kernel takes items of up to 8 bytes: complex64 only)
        self.check(lambda z: ops.pad(z, (1, 2)), lambda z: torch.nn.functional.pad(z, (1, 2)),
                   crand((3, 4), 32, np.complex64), tol=2e-4, name="pad")

    def test_fft(self):
        cases = [("fft", lambda z: ops.fft(z), lambda z: torch.fft.fft(z)),
                 ("ifft ortho n", lambda z: ops.ifft(z, n=7, norm="ortho"), lambda z: torch.fft.ifft(z, n=7, norm="ortho")),
                 ("fft2", lambda z: ops.fft2(z), lambda z: torch.fft.fft2(z)),
                 ("irfft", lambda z: ops.irfft(z, n=8), lambda z: torch.fft.irfft(z, n=8)),
                 ("hfft", lambda z: ops.hfft(z), lambda z: torch.fft.hfft(z))]
        self.each(cases, lambda cdt, rdt: (crand((3, 5), 41, cdt),))
        real_cases = [("rfft", lambda x: ops.rfft(x), lambda x: torch.fft.rfft(x)),
                      ("rfft2 n", lambda x: ops.rfft2(x, s=(4, 6)), lambda x: torch.fft.rfft2(x, s=(4, 6))),
                      ("irfft(rfft(x)) * x", lambda x: ops.irfft(ops.rfft(x), n=5) * x,
                       lambda x: torch.fft.irfft(torch.fft.rfft(x), n=5) * x),
                      ("|fft(x)|^2", lambda x: ops.abs(ops.fft(x.astype(pj.complex64 if x.dtype == pj.float32 else pj.complex128))) ** 2,
                       lambda x: torch.fft.fft(x).abs() ** 2)]
        self.each(real_cases, lambda cdt, rdt: (rrand((3, 5), 42, rdt),))

    def test_spectral_convolution(self):
        # a Fourier-layer's forward: rfft, multiply the low modes by complex weights, irfft
        def p(x, w):
            xf = ops.rfft(x)
            return ops.irfft(ops.concat((xf[:, :3] * w, xf[:, 3:] * 0), 1), n=8)

        def t(x, w):
            xf = torch.fft.rfft(x)
            return torch.fft.irfft(torch.cat((xf[:, :3] * w, xf[:, 3:] * 0), 1), n=8)
        self.each([("spectral conv", p, t)], lambda cdt, rdt: (rrand((4, 8), 51, rdt), crand((3,), 52, cdt)))

    def test_complex_sensitivity(self):
        # GradOperation's sens on a complex output is torch's grad_output
        for dt, (cdt, rdt, tol) in CDT.items():
            z, s = crand((2, 3), 61, cdt), crand((2, 3), 62, cdt)
            tz = torch.from_numpy(z.copy()).requires_grad_(True)
            (torch.exp(tz) * tz).backward(torch.from_numpy(s))
            f = ops.GradOperation(sens_param=True)(lambda v: ops.exp(v) * v)
            got = f(pj.Tensor(z), pj.Tensor(s))
            np.testing.assert_allclose(np.asarray(got), tz.grad.numpy(), rtol=tol, atol=tol * 10)
            np.testing.assert_allclose(np.asarray(pj.jit(f)(pj.Tensor(z), pj.Tensor(s))), np.asarray(got),
                                       rtol=tol, atol=tol * 10)

    def test_real_only_rules_refuse_complex(self):
        z = pj.Tensor(crand((3, 2), 71, np.complex64))
        idx = pj.Tensor(np.array([0, 2], np.int32))
        for f in (lambda v: ops.real(ops.gather(v, idx, 0)).sum(),
                  lambda v: ops.real(ops.index_select(v, 0, idx)).sum()):
            with self.assertRaisesRegex(TypeError, r"cannot differentiate through '(gather|index_select)'.* on complex "
                                                   r"values: its gradient rule is for real values only"):
                ops.grad(f)(z)
            with self.assertRaisesRegex(TypeError, r"on complex values"):
                pj.jit(ops.grad(f))(z)


if __name__ == "__main__":
    unittest.main()
