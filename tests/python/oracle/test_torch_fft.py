"""pijit/ops/fft.py against torch.fft: every function of the family over dtypes, norms, lengths
(powers of two, mixed radix, generic primes, Bluestein's large primes up to 1000003), dims and
padding/truncation; stft/istft against torch.stft/istft; and the gradient rules
(graph/grads/fft_grads.cc) against torch autograd: each rule's transform applied to a cotangent
equals torch's vector-Jacobian product of the same function (complex cotangents included).
Tolerances: 1e-5 of the largest magnitude in float32/complex64, 1e-12 in float64/complex128."""
import unittest

import numpy_libm  # noqa: F401  (before numpy: glibc's transcendental functions)
from requires import require_torch, require_numpy

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

import pijit as ms
from pijit import _C, ops


def rel(got, want):
    got = np.asarray(got)
    want = want.resolve_conj().numpy() if hasattr(want, "numpy") else np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-300)) if want.size else 0.0


TOL = {np.float32: 1e-5, np.complex64: 1e-5, np.float64: 1e-12, np.complex128: 1e-12}


class TorchFFTTest(unittest.TestCase):
    def setUp(self):
        require_numpy(self, np)
        require_torch(self, torch)
        self.rng = np.random.default_rng(0)

    def data(self, shape, dtype):
        x = self.rng.standard_normal(shape)
        if np.issubdtype(dtype, np.complexfloating):
            x = x + 1j * self.rng.standard_normal(shape)
        return x.astype(dtype)

    def same(self, got, want, tol, what):
        g = got.asnumpy()
        self.assertEqual(g.dtype, want.resolve_conj().numpy().dtype, what)
        e = rel(g, want)
        self.assertLess(e, tol, "%s: relative error %.3g" % (what, e))

    def test_one_dim_lengths(self):
        for n in (1, 2, 3, 8, 12, 60, 97, 128, 210, 243, 625, 1024, 4096, 6000, 65537, 131072, 1000003):
            for dt in (np.complex64, np.complex128):
                x = self.data((n,), dt)
                tx = torch.from_numpy(x)
                self.same(ops.fft(ms.Tensor(x)), torch.fft.fft(tx), TOL[dt], ("fft", n, dt))
                self.same(ops.ifft(ms.Tensor(x)), torch.fft.ifft(tx), TOL[dt], ("ifft", n, dt))
            for dt in (np.float32, np.float64):
                x = self.data((n,), dt)
                tx = torch.from_numpy(x)
                r = ops.rfft(ms.Tensor(x))
                self.same(r, torch.fft.rfft(tx), TOL[dt], ("rfft", n, dt))
                self.same(ops.irfft(r, n=n), torch.fft.irfft(torch.fft.rfft(tx), n=n), TOL[dt], ("irfft", n, dt))

    def test_family_dims_norms(self):
        cases = [
            ("fft", dict(n=7, dim=1)), ("fft", dict(n=20, dim=0)), ("ifft", dict(dim=-1)),
            ("fft2", dict()), ("fft2", dict(s=(5, 9))), ("ifft2", dict(dim=(0, 2))),
            ("fftn", dict()), ("fftn", dict(s=(3, 4), dim=(2, 0))), ("ifftn", dict(s=(2, 6, 11))),
            ("rfft", dict()), ("rfft", dict(n=9, dim=0)), ("irfft", dict()), ("irfft", dict(n=15, dim=1)),
            ("rfft2", dict()), ("irfft2", dict(s=(6, 10))), ("rfftn", dict(dim=(0, 1))),
            ("irfftn", dict()), ("irfftn", dict(s=(4, 5), dim=(2, 1))),
            ("hfft", dict()), ("hfft", dict(n=9)), ("ihfft", dict(dim=1)),
            ("hfft2", dict()), ("ihfft2", dict()), ("hfftn", dict(s=(4, 6))), ("ihfftn", dict()),
        ]
        for name, kw in cases:
            real_in = name in ("rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn")
            for dt in ((np.float32, np.float64) if real_in else (np.complex64, np.complex128)):
                x = self.data((4, 6, 10), dt)
                for norm in (None, "backward", "forward", "ortho"):
                    got = getattr(ops, name)(ms.Tensor(x), norm=norm, **kw)
                    want = getattr(torch.fft, name)(torch.from_numpy(x), norm=norm, **kw)
                    self.same(got, want, TOL[dt], (name, kw, dt, norm))

    def test_real_and_int_inputs_promote_like_mindspore(self):
        x = self.data((5, 8), np.float32)
        for dt in (ms.float16, ms.bfloat16, ms.int32, ms.int64, ms.int16):
            t = ms.Tensor(x * 10, ms.float32).astype(dt)
            ref = torch.from_numpy(np.asarray(t.astype(ms.float32).asnumpy(), np.float32))
            self.same(ops.fft(t), torch.fft.fft(ref), 1e-5, ("fft", dt))
            self.same(ops.rfft2(t), torch.fft.rfft2(ref), 1e-5, ("rfft2", dt))
        x64 = self.data((5, 8), np.float64)
        self.same(ops.fft(ms.Tensor(x64)), torch.fft.fft(torch.from_numpy(x64)), 1e-12, "fft float64")

    def test_helpers(self):
        x = self.data((5, 6, 7), np.float32)
        tx = torch.from_numpy(x)
        for dim in (None, 0, (1, 2), -1):
            self.assertTrue(np.array_equal(ops.fftshift(ms.Tensor(x), dim=dim).asnumpy(),
                                           torch.fft.fftshift(tx, dim=dim).numpy()))
            self.assertTrue(np.array_equal(ops.ifftshift(ms.Tensor(x), dim=dim).asnumpy(),
                                           torch.fft.ifftshift(tx, dim=dim).numpy()))
        for n in (1, 4, 7, 10):
            self.same(ops.fftfreq(n, 0.3), torch.fft.fftfreq(n, 0.3), 1e-7, ("fftfreq", n))
            self.same(ops.rfftfreq(n, 0.3, dtype=ms.float64),
                      torch.fft.rfftfreq(n, 0.3, dtype=torch.float64), 1e-15, ("rfftfreq", n))

    def test_stft_istft(self):
        for dt, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
            x = self.data((3, 500), dt)
            tx = torch.from_numpy(x)
            w = np.hanning(128).astype(dt)
            tw = torch.from_numpy(w)
            for hop, win, center, mode, normalized in ((32, 128, True, "reflect", False),
                                                       (50, 100, True, "constant", True),
                                                       (40, 128, False, "reflect", False)):
                ww = w[:win] if win == 128 else np.hanning(win).astype(dt)
                got = ops.stft(ms.Tensor(x), 128, hop, win, ms.Tensor(ww), center, mode.upper(), normalized,
                               return_complex=True)
                want = torch.stft(tx, 128, hop, win, torch.from_numpy(ww), center, mode, normalized,
                                  return_complex=True)
                self.same(got, want, tol, ("stft", dt, hop, win, center))
                if center:
                    back = ops.istft(got, 128, hop, win, ms.Tensor(ww), center, normalized, length=500)
                    tback = torch.istft(want, 128, hop, win, torch.from_numpy(ww), center, normalized, length=500)
                    self.same(back, tback, 10 * tol, ("istft", dt, hop, win))
            real = ops.stft(ms.Tensor(x[0]), 64)
            treal = torch.view_as_real(torch.stft(tx[0], 64, return_complex=True))
            self.same(real, treal, tol, ("stft real out", dt))
            p = ops.STFT(64, 16, 64, False, True, True)(ms.Tensor(x), ms.Tensor(w[:64]))
            self.same(p, torch.stft(tx, 64, 16, 64, torch.from_numpy(w[:64]), center=False, return_complex=True),
                      tol, ("STFT", dt))

    def vjp(self, fn, x, g):
        tx = torch.from_numpy(x).requires_grad_(True)
        out = fn(tx)
        (gx,) = torch.autograd.grad(out, tx, torch.from_numpy(g))
        return gx

    def test_gradient_rules_match_torch_vjp(self):
        # Each forward below is the registry op a Python function emits; its rule's transform of a
        # cotangent g must equal torch's vjp. The rule attributes are built as fft_grads.cc does.
        for dt_r, dt_c, tol in ((np.float64, np.complex128, 1e-12), (np.float32, np.complex64, 1e-5)):
            xr = self.data((3, 4, 10), dt_r)
            xc = self.data((3, 4, 10), dt_c)
            cases = [
                ("fft_c2c", xc, dict(dims=[2], n=[10], inverse=False, norm=None), lambda t: torch.fft.fft(t)),
                ("fft_c2c", xc, dict(dims=[2], n=[7], inverse=True, norm="ortho"),
                 lambda t: torch.fft.ifft(t, n=7, norm="ortho")),
                ("fft_c2c", xc, dict(dims=[0, 2], n=[5, 13], inverse=False, norm="forward"),
                 lambda t: torch.fft.fftn(t, s=(5, 13), dim=(0, 2), norm="forward")),
                ("fft_r2c", xr, dict(dims=[2], n=[10], inverse=False, norm=None), lambda t: torch.fft.rfft(t)),
                ("fft_r2c", xr, dict(dims=[2], n=[7], inverse=False, norm="ortho"),
                 lambda t: torch.fft.rfft(t, n=7, norm="ortho")),
                ("fft_r2c", xr, dict(dims=[1, 2], n=[4, 12], inverse=False, norm=None),
                 lambda t: torch.fft.rfft2(t, s=(4, 12))),
                ("fft_r2c", xr, dict(dims=[1], n=[4], inverse=True, norm=None), lambda t: torch.fft.ihfft(t, dim=1)),
                ("fft_c2r", xc, dict(dims=[2], n=[18], inverse=True, norm=None), lambda t: torch.fft.irfft(t)),
                ("fft_c2r", xc, dict(dims=[2], n=[9], inverse=True, norm="forward"),
                 lambda t: torch.fft.irfft(t, n=9, norm="forward")),
                ("fft_c2r", xc, dict(dims=[0, 2], n=[3, 18], inverse=True, norm="ortho"),
                 lambda t: torch.fft.irfftn(t, dim=(0, 2), norm="ortho")),
                ("fft_c2r", xc, dict(dims=[2], n=[11], inverse=False, norm=None), lambda t: torch.fft.hfft(t, n=11)),
            ]
            for op, x, a, fn in cases:
                dims, n, inv = a["dims"], a["n"], a["inverse"]
                total = int(np.prod(n))
                norm = a["norm"] or "backward"
                scale = 1 / np.sqrt(total) if norm == "ortho" else (1.0 / total if (norm == "forward") != inv else 1.0)
                out = list(n)
                if op == "fft_r2c":
                    out[-1] = n[-1] // 2 + 1
                attrs = {"dims": dims, "n": n, "out": out, "inverse": inv, "scale": float(scale)}
                if op != "fft_c2c":
                    attrs["adjoint"] = False
                y = _C.op(op, (ms.Tensor(x),), attrs)
                want_y = fn(torch.from_numpy(x))
                self.same(y, want_y, tol, (op, a, "forward"))
                g = self.data(tuple(y.shape), dt_c if op != "fft_c2r" else dt_r)
                back = {"fft_c2c": "fft_c2c", "fft_r2c": "fft_c2r", "fft_c2r": "fft_r2c"}[op]
                battrs = dict(attrs, out=[x.shape[d] for d in dims], inverse=not inv)
                if op != "fft_c2c":
                    battrs["adjoint"] = True
                got = _C.op(back, (ms.Tensor(g),), battrs)
                self.same(got, self.vjp(fn, x, g), tol, (op, a, "vjp"))


if __name__ == "__main__":
    unittest.main()
