"""MindSpore's Fourier transforms: the functional family of mindspore.ops 2.3+ (fft, ifft, fft2,
ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2, rfftn, irfftn, hfft, ihfft, hfft2, ihfft2, hfftn,
ihfftn, fftshift, ifftshift, fftfreq, rfftfreq), ops.stft / ops.istft, and the primitives
ops.FFTWithSize and ops.STFT.

Every transform is one of three registry ops (graph/ops/fft_ops.cc, kernels/fft.h): fft_c2c,
fft_r2c (real in, one-sided spectrum out) and fft_c2r (one-sided spectrum in, real out), each
with the transformed dims, their lengths n (zero-padding or truncating the input), the lengths
kept in the output, the direction and the whole normalisation as one scale. Eager calls, capture
and gradients read those declarations.

dtypes as MindSpore documents: int16/int32/int64, float16/bfloat16/float32 and complex64 inputs
compute in complex64 (real outputs float32), float64 and complex128 in complex128 (float64);
other dtypes raise TypeError. norm is None ('backward'), 'backward', 'forward' or 'ortho'.
"""
import math as _math

from pijit import _C
from pijit import dtype as _dt
from pijit.ops.primitives import Primitive

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
           "fftshift", "ifftshift", "fftfreq", "rfftfreq", "stft", "istft", "FFTWithSize", "STFT"]

_Tensor = _C.TensorBase
_C64_IN = (_dt.int16, _dt.int32, _dt.int64, _dt.float16, _dt.bfloat16, _dt.float32, _dt.complex64)
_C128_IN = (_dt.float64, _dt.complex128)
_NORMS = (None, "backward", "forward", "ortho")


def _tensor(who, x):
    if not isinstance(x, _Tensor):
        raise TypeError("For '%s', the input must be a Tensor, but got %s." % (who, type(x).__name__))
    return x


def _cast(x, dtype):
    return x if x.dtype == dtype else _C.op("cast", (x,), {"dtype": dtype})


def _as_complex(who, x):
    if x.dtype in _C128_IN:
        return _cast(x, _dt.complex128)
    if x.dtype in _C64_IN:
        return _cast(x, _dt.complex64)
    raise TypeError("For '%s', the input dtype must be one of int16, int32, int64, float16, bfloat16, "
                    "float32, float64, complex64, complex128, but got %s." % (who, x.dtype))


def _as_real(who, x):
    if x.dtype in (_dt.complex64, _dt.complex128):
        raise TypeError("For '%s', the input must be a real Tensor, but got %s." % (who, x.dtype))
    if x.dtype == _dt.float64:
        return x
    if x.dtype in _C64_IN:
        return _cast(x, _dt.float32)
    raise TypeError("For '%s', the input dtype must be one of int16, int32, int64, float16, bfloat16, "
                    "float32, float64, but got %s." % (who, x.dtype))


def _norm_scale(who, norm, count, inverse):
    """The factor MindSpore's norm names mean for a transform over `count` points."""
    if norm not in _NORMS:
        raise ValueError("For '%s', norm must be one of 'backward', 'forward', 'ortho' or None, but got %r."
                         % (who, norm))
    norm = norm or "backward"
    if norm == "ortho":
        return 1.0 / _math.sqrt(count)
    return 1.0 / count if (norm == "forward") != inverse else 1.0


def _int(who, name, v):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("For '%s', '%s' must be an int, but got %s." % (who, name, type(v).__name__))
    return v


def _dims_sizes(who, x, s, dim, default_dims):
    """Normalised dims and their transform lengths (None entries: the input's own), numpy's rules:
    dim None means the last len(s) dims when s is given, else `default_dims`."""
    nd = x.ndim
    if s is not None:
        s = (s,) if isinstance(s, int) else tuple(s)
        for v in s:
            _int(who, "s", v)
    if dim is None:
        dims = tuple(range(nd - len(s), nd)) if s is not None else default_dims(nd)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        _int(who, "dim", d)
        if not -nd <= d < nd:
            raise ValueError("For '%s', the value of 'dim' must be in range [%d, %d), but got %d."
                             % (who, -nd, nd, d))
        out.append(d % nd)
    if len(set(out)) != len(out):
        raise ValueError("For '%s', 'dim' must not contain duplicate dims, but got %s." % (who, tuple(dims)))
    if s is not None and len(s) != len(out):
        raise ValueError("For '%s', 's' and 'dim' must have the same length, but got %d and %d."
                         % (who, len(s), len(out)))
    if not out:
        raise ValueError("For '%s', at least one dim must be transformed." % who)
    sizes = [None if s is None or s[i] == -1 else s[i] for i in range(len(out))]
    for v in sizes:
        if v is not None and v < 1:
            raise ValueError("For '%s', the signal length (n or s) must be at least 1, but got %d." % (who, v))
    return out, sizes


def _c2c(who, x, s, dim, norm, inverse, default_dims):
    x = _as_complex(who, _tensor(who, x))
    dims, sizes = _dims_sizes(who, x, s, dim, default_dims)
    n = [sizes[i] or x.shape[d] for i, d in enumerate(dims)]
    if 0 in n:
        raise ValueError("For '%s', cannot transform a dim of length 0." % who)
    scale = _norm_scale(who, norm, _prod(n), inverse)
    return _C.op("fft_c2c", (x,), {"dims": dims, "n": n, "out": n, "inverse": inverse, "scale": scale})


def _r2c(who, x, s, dim, norm, inverse, default_dims):
    x = _as_real(who, _tensor(who, x))
    dims, sizes = _dims_sizes(who, x, s, dim, default_dims)
    n = [sizes[i] or x.shape[d] for i, d in enumerate(dims)]
    if 0 in n:
        raise ValueError("For '%s', cannot transform a dim of length 0." % who)
    out = n[:-1] + [n[-1] // 2 + 1]
    scale = _norm_scale(who, norm, _prod(n), inverse)
    return _C.op("fft_r2c", (x,), {"dims": dims, "n": n, "out": out, "inverse": inverse, "scale": scale,
                                   "adjoint": False})


def _c2r(who, x, s, dim, norm, inverse, default_dims):
    x = _as_complex(who, _tensor(who, x))
    dims, sizes = _dims_sizes(who, x, s, dim, default_dims)
    n = [sizes[i] or x.shape[d] for i, d in enumerate(dims[:-1])]
    n.append(sizes[-1] or 2 * (x.shape[dims[-1]] - 1))
    if n[-1] < 1:
        raise ValueError("For '%s', the output length %d along dim %d is invalid (give n or s)."
                         % (who, n[-1], dims[-1]))
    if 0 in n:
        raise ValueError("For '%s', cannot transform a dim of length 0." % who)
    scale = _norm_scale(who, norm, _prod(n), inverse)
    return _C.op("fft_c2r", (x,), {"dims": dims, "n": n, "out": n, "inverse": inverse, "scale": scale,
                                   "adjoint": False})


def _prod(v):
    p = 1
    for a in v:
        p *= a
    return p


def _last(nd):
    return (nd - 1,)


def _last2(nd):
    return (nd - 2, nd - 1)


def _all(nd):
    return tuple(range(nd))


def fft(input, n=None, dim=-1, norm=None):
    """The 1-D discrete Fourier transform along `dim` (input zero-padded or truncated to n)."""
    return _c2c("fft", input, None if n is None else (_int("fft", "n", n),), dim, norm, False, _last)


def ifft(input, n=None, dim=-1, norm=None):
    """The 1-D inverse transform along `dim` (1/n by default)."""
    return _c2c("ifft", input, None if n is None else (_int("ifft", "n", n),), dim, norm, True, _last)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2c("fft2", input, s, dim, norm, False, _last2)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2c("ifft2", input, s, dim, norm, True, _last2)


def fftn(input, s=None, dim=None, norm=None):
    return _c2c("fftn", input, s, dim, norm, False, _all)


def ifftn(input, s=None, dim=None, norm=None):
    return _c2c("ifftn", input, s, dim, norm, True, _all)


def rfft(input, n=None, dim=-1, norm=None):
    """The transform of a real signal: bins 0..n//2 (the others are their conjugates)."""
    return _r2c("rfft", input, None if n is None else (_int("rfft", "n", n),), dim, norm, False, _last)


def irfft(input, n=None, dim=-1, norm=None):
    """The real signal of length n (default 2 * (input.shape[dim] - 1)) whose rfft is `input`."""
    return _c2r("irfft", input, None if n is None else (_int("irfft", "n", n),), dim, norm, True, _last)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return _r2c("rfft2", input, s, dim, norm, False, _last2)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2r("irfft2", input, s, dim, norm, True, _last2)


def rfftn(input, s=None, dim=None, norm=None):
    return _r2c("rfftn", input, s, dim, norm, False, _all)


def irfftn(input, s=None, dim=None, norm=None):
    return _c2r("irfftn", input, s, dim, norm, True, _all)


def hfft(input, n=None, dim=-1, norm=None):
    """The (real) transform of a signal with Hermitian symmetry given by its first half."""
    return _c2r("hfft", input, None if n is None else (_int("hfft", "n", n),), dim, norm, False, _last)


def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of hfft: the first n//2 + 1 bins of a real signal's inverse transform."""
    return _r2c("ihfft", input, None if n is None else (_int("ihfft", "n", n),), dim, norm, True, _last)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return _c2r("hfft2", input, s, dim, norm, False, _last2)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return _r2c("ihfft2", input, s, dim, norm, True, _last2)


def hfftn(input, s=None, dim=None, norm=None):
    return _c2r("hfftn", input, s, dim, norm, False, _all)


def ihfftn(input, s=None, dim=None, norm=None):
    return _r2c("ihfftn", input, s, dim, norm, True, _all)


def _shift(who, x, dim, sign):
    from pijit.ops.functional2 import roll
    x = _tensor(who, x)
    if x.ndim == 0:
        return x
    dims = tuple(range(x.ndim)) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    if not dims:
        return x
    for d in dims:
        if not -x.ndim <= _int(who, "dim", d) < x.ndim:
            raise ValueError("For '%s', the value of 'dim' must be in range [%d, %d), but got %d."
                             % (who, -x.ndim, x.ndim, d))
    shifts = tuple(sign * (x.shape[d] // 2) for d in dims)
    return roll(x, shifts, dims)


def fftshift(input, dim=None):
    """Moves the zero-frequency bin to the centre (a roll by n // 2 along each dim)."""
    return _shift("fftshift", input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of fftshift (a roll by -(n // 2))."""
    return _shift("ifftshift", input, dim, -1)


def _freq_tensor(who, vals, dtype):
    from pijit.tensor import Tensor
    dtype = _dt.float32 if dtype is None else dtype
    if dtype not in (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64):
        raise TypeError("For '%s', dtype must be a float type, but got %s." % (who, dtype))
    return Tensor(vals, dtype=dtype)


def fftfreq(n, d=1.0, dtype=None):
    """The bin frequencies [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n)."""
    _int("fftfreq", "n", n)
    if n < 1:
        raise ValueError("For 'fftfreq', n must be at least 1, but got %d." % n)
    k = list(range((n - 1) // 2 + 1)) + list(range(-(n // 2), 0))
    return _freq_tensor("fftfreq", [v / (d * n) for v in k], dtype)


def rfftfreq(n, d=1.0, dtype=None):
    """The frequencies of rfft's bins: [0, 1, ..., n//2] / (d * n)."""
    _int("rfftfreq", "n", n)
    if n < 1:
        raise ValueError("For 'rfftfreq', n must be at least 1, but got %d." % n)
    return _freq_tensor("rfftfreq", [v / (d * n) for v in range(n // 2 + 1)], dtype)


# ---- FFTWithSize ---------------------------------------------------------------------------

class FFTWithSize(Primitive):
    """FFTWithSize(signal_ndim, inverse, real, norm='backward', onesided=True, signal_sizes=())(x):
    FFT / IFFT (real=False, complex input), RFFT (real=True, inverse=False: real input, the one-sided
    spectrum unless onesided=False) or IRFFT (real=True, inverse=True: a one-sided spectrum to a real
    signal of length signal_sizes[-1], default 2 * (last - 1); the whole spectrum when onesided=False)
    over the last signal_ndim (1, 2 or 3) dims."""

    def __init__(self, signal_ndim, inverse, real, norm="backward", onesided=True, signal_sizes=()):
        super().__init__()
        if isinstance(signal_ndim, bool) or not isinstance(signal_ndim, int):
            raise TypeError("For 'FFTWithSize', 'signal_ndim' must be an int, but got %s."
                            % type(signal_ndim).__name__)
        if signal_ndim not in (1, 2, 3):
            raise ValueError("For 'FFTWithSize', 'signal_ndim' must be 1, 2 or 3, but got %d." % signal_ndim)
        for name, v in (("inverse", inverse), ("real", real), ("onesided", onesided)):
            if not isinstance(v, bool):
                raise TypeError("For 'FFTWithSize', '%s' must be a bool, but got %s." % (name, type(v).__name__))
        if norm not in ("backward", "forward", "ortho"):
            raise ValueError("For 'FFTWithSize', 'norm' must be one of 'backward', 'forward', 'ortho', "
                             "but got %r." % (norm,))
        self.signal_ndim, self.inverse, self.real = signal_ndim, inverse, real
        self.norm, self.onesided, self.signal_sizes = norm, onesided, tuple(signal_sizes)
        self.attrs = dict(signal_ndim=signal_ndim, inverse=inverse, real=real, norm=norm, onesided=onesided,
                          signal_sizes=self.signal_sizes)

    def __call__(self, *args):
        self._arity(args, 1)
        x = _tensor("FFTWithSize", args[0])
        k = self.signal_ndim
        if x.ndim < k:
            raise ValueError("For 'FFTWithSize', the input must have at least signal_ndim (%d) dims, but got %d."
                             % (k, x.ndim))
        dims = tuple(range(x.ndim - k, x.ndim))
        if not self.real:
            return _c2c("FFTWithSize", x, None, dims, self.norm, self.inverse, _all)
        if not self.inverse:
            if self.onesided:
                return _r2c("FFTWithSize", x, None, dims, self.norm, False, _all)
            return _c2c("FFTWithSize", _as_real("FFTWithSize", x), None, dims, self.norm, False, _all)
        sizes = None
        if self.signal_sizes:
            if len(self.signal_sizes) != k:
                raise ValueError("For 'FFTWithSize', 'signal_sizes' must have signal_ndim (%d) entries, but got %s."
                                 % (k, self.signal_sizes))
            sizes = self.signal_sizes
            last = x.shape[-1]
            if self.onesided and sizes[-1] // 2 + 1 != last:
                raise ValueError("For 'FFTWithSize', signal_sizes[-1] // 2 + 1 must equal the input's last dim "
                                 "(%d), but got signal_sizes %s." % (last, sizes))
        elif not self.onesided:
            sizes = tuple(x.shape[-k:])
        return _c2r("FFTWithSize", x, sizes, dims, self.norm, True, _all)


# ---- STFT ----------------------------------------------------------------------------------

def _frames(x, n_fft, hop):
    """[..., T, n_fft] frames x[..., t * hop + k] of the last dim (gathered: differentiable)."""
    from pijit.tensor import Tensor
    from pijit.ops.functional import gather
    length = x.shape[-1]
    t = 1 + (length - n_fft) // hop
    idx = Tensor([[f * hop + k for k in range(n_fft)] for f in range(t)], dtype=_dt.int64)
    return gather(x, idx, x.ndim - 1)


def _window(who, window, win_length, n_fft, dtype):
    from pijit.tensor import Tensor
    from pijit.ops.nn_functional import pad
    if window is None:
        w = Tensor([1.0] * win_length, dtype=_dt.float32)
    else:
        w = _tensor(who, window)
        if w.ndim != 1:
            raise TypeError("For '%s', 'window' must be a 1-D Tensor, but got %d-D." % (who, w.ndim))
        if w.shape[0] != win_length:
            raise ValueError("For '%s', the window must have win_length (%d) points, but got %d."
                             % (who, win_length, w.shape[0]))
    if win_length < n_fft:  # centred in n_fft points, zeros either side
        left = (n_fft - win_length) // 2
        w = pad(w, (left, n_fft - win_length - left))
    return w


def _stft_args(who, n_fft, hop_length, win_length):
    _int(who, "n_fft", n_fft)
    hop = n_fft // 4 if hop_length is None else _int(who, "hop_length", hop_length)
    win = n_fft if win_length is None else _int(who, "win_length", win_length)
    if n_fft < 1 or hop < 1 or not 0 < win <= n_fft:
        raise ValueError("For '%s', expected 0 < n_fft, 0 < hop_length and 0 < win_length <= n_fft, but got "
                         "n_fft=%d, hop_length=%d, win_length=%d." % (who, n_fft, hop, win))
    return hop, win


def _stft(who, x, n_fft, hop, win, window, normalized, onesided, return_complex):
    from pijit.ops.functional import transpose, mul, stack
    from pijit.ops.complex_fns import real, imag
    w = _window(who, window, win, n_fft, x.dtype)
    cplx = x.dtype in (_dt.complex64, _dt.complex128) or w.dtype in (_dt.complex64, _dt.complex128)
    if onesided is None:
        onesided = not cplx
    if return_complex is None:
        return_complex = cplx
    if onesided and cplx:
        raise ValueError("For '%s', onesided=True needs a real input and a real window." % who)
    if x.shape[-1] < n_fft:
        raise ValueError("For '%s', the signal (%d points) is shorter than n_fft (%d)." % (who, x.shape[-1], n_fft))
    if cplx:
        x, w = _as_complex(who, x), _as_complex(who, w)
        if x.dtype != w.dtype:
            x, w = _cast(x, _dt.complex128), _cast(w, _dt.complex128)
    else:
        x, w = _as_real(who, x), _as_real(who, w)
        if x.dtype != w.dtype:  # one of them float64
            x, w = _cast(x, _dt.float64), _cast(w, _dt.float64)
    fr = mul(_frames(x, n_fft, hop), w)  # [..., T, n_fft]
    norm = "ortho" if normalized else "backward"
    spec = rfft(fr, norm=norm) if onesided else fft(fr, norm=norm)  # [..., T, N]
    perm = tuple(range(spec.ndim - 2)) + (spec.ndim - 1, spec.ndim - 2)
    spec = transpose(spec, perm)  # [..., N, T]
    if return_complex:
        return spec
    return stack((real(spec), imag(spec)), -1)


def stft(x, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="REFLECT",
         normalized=False, onesided=None, return_complex=None):
    """The short-time Fourier transform of a 1-D or 2-D (batch, time) signal: [*, N, T] bins (complex,
    or real with a last dim of (real, imag) when return_complex is False; default complex only for
    a complex input or window). center pads n_fft // 2 points each side with pad_mode."""
    from pijit.ops.nn_functional import pad
    x = _tensor("stft", x)
    if x.ndim not in (1, 2):
        raise TypeError("For 'stft', the input must be a 1-D or 2-D Tensor, but got %d-D." % x.ndim)
    for name, v in (("center", center), ("normalized", normalized), ("onesided", onesided),
                    ("return_complex", return_complex)):
        if v is not None and not isinstance(v, bool):
            raise TypeError("For 'stft', '%s' must be a bool, but got %s." % (name, type(v).__name__))
    if not isinstance(pad_mode, str):
        raise TypeError("For 'stft', 'pad_mode' must be a str, but got %s." % type(pad_mode).__name__)
    hop, win = _stft_args("stft", n_fft, hop_length, win_length)
    if center:
        mode = pad_mode.lower()
        if mode not in ("reflect", "constant", "replicate", "circular"):
            raise ValueError("For 'stft', pad_mode must be 'REFLECT', 'CONSTANT', 'REPLICATE' or 'CIRCULAR', "
                             "but got %r." % pad_mode)
        p = n_fft // 2
        x2 = x if x.ndim == 2 else x.reshape((1, x.shape[0]))
        x2 = pad(x2.reshape((1,) + tuple(x2.shape)), (p, p), mode=mode)
        x = x2.reshape(tuple(x.shape[:-1]) + (x2.shape[-1],))
    return _stft("stft", x, n_fft, hop, win, window, normalized, onesided, return_complex)


def istft(x, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of stft by overlap-add: frames' inverse transforms times the window, summed, divided
    by the summed squared window (torch.istft's method); `length` trims or zero-pads the result."""
    from pijit.creation import ones
    from pijit.ops.functional import transpose, mul, div, reshape
    from pijit.ops.nn_functional import pad
    x = _tensor("istft", x)
    if x.dtype not in (_dt.complex64, _dt.complex128):
        raise TypeError("For 'istft', the input must be a complex Tensor, but got %s." % x.dtype)
    if x.ndim not in (2, 3):
        raise ValueError("For 'istft', the input must be [N, T] or [batch, N, T], but got %d-D." % x.ndim)
    hop, win = _stft_args("istft", n_fft, hop_length, win_length)
    w = _window("istft", window, win, n_fft, None)
    if onesided is None:
        onesided = x.shape[-2] != n_fft
    if onesided and return_complex:
        raise ValueError("For 'istft', return_complex=True needs onesided=False.")
    want = n_fft // 2 + 1 if onesided else n_fft
    if x.shape[-2] != want:
        raise ValueError("For 'istft', expected %d frequency bins, but got %d." % (want, x.shape[-2]))
    batched = x.ndim == 3
    if not batched:
        x = x.reshape((1,) + tuple(x.shape))
    b, t = x.shape[0], x.shape[-1]
    fr = transpose(x, (0, 2, 1))  # [B, T, N]
    norm = "ortho" if normalized else "backward"
    if onesided:
        fr = irfft(fr, n=n_fft, norm=norm)
    else:
        fr = ifft(fr, n=n_fft, norm=norm)
        if not return_complex:
            from pijit.ops.complex_fns import real
            fr = real(fr)
    w = _cast(w, _dt.float64 if fr.dtype in (_dt.float64, _dt.complex128) else _dt.float32)
    y = _overlap_add(mul(fr, w), hop)
    # The window envelope sum_t w[n - t hop]^2 the frames were weighted by (torch.istft's method;
    # where it is 0 the result is not finite: the window fails NOLA there).
    env = _overlap_add(mul(reshape(mul(w, w), (1, 1, n_fft)), ones((1, t, 1), w.dtype)), hop)
    start = n_fft // 2 if center else 0
    end = y.shape[-1] - (n_fft // 2 if center else 0) if length is None else min(start + length, y.shape[-1])
    y = div(y[:, start:end], env[:, start:end])
    if length is not None and y.shape[-1] < length:
        y = pad(y, (0, length - y.shape[-1]))
    return y if batched else y.reshape((y.shape[-1],))


def _overlap_add(fr, hop):
    """[B, T, n] frames -> [B, (T - 1) * hop + n'] sums, frame t starting at t * hop (n' = n rounded
    up to hops): each frame is cut into r hop-long pieces; piece j of frame t lands on hop t + j, so
    piece j of all frames is one shifted [B, T, hop] block."""
    from pijit.ops.functional import transpose, reshape
    from pijit.ops.nn_functional import pad
    b, t, n = fr.shape
    r = -(-n // hop)
    if r * hop != n:
        fr = pad(fr, (0, r * hop - n))
    pieces = reshape(fr, (b, t, r, hop))
    total = t + r - 1
    acc = None
    for j in range(r):
        pj = transpose(pieces[:, :, j, :], (0, 2, 1))  # [B, hop, T]
        pj = pad(pj, (j, total - t - j))  # [B, hop, total]
        acc = pj if acc is None else acc + pj
    return reshape(transpose(acc, (0, 2, 1)), (b, total * hop))


class STFT(Primitive):
    """STFT(n_fft, hop_length, win_length, normalized, onesided, return_complex)(x, window): frames
    of x (no centre padding) times the window, transformed: [*, N, T] (complex) or [*, N, T, 2]."""

    def __init__(self, n_fft, hop_length, win_length, normalized, onesided, return_complex):
        super().__init__()
        self.n_fft, self.hop_length, self.win_length = n_fft, hop_length, win_length
        self.normalized, self.onesided, self.return_complex = normalized, onesided, return_complex
        _stft_args("STFT", n_fft, hop_length, win_length)
        for name, v in (("normalized", normalized), ("onesided", onesided), ("return_complex", return_complex)):
            if not isinstance(v, bool):
                raise TypeError("For 'STFT', '%s' must be a bool, but got %s." % (name, type(v).__name__))
        self.attrs = dict(n_fft=n_fft, hop_length=hop_length, win_length=win_length, normalized=normalized,
                          onesided=onesided, return_complex=return_complex)

    def __call__(self, *args):
        self._arity(args, 2)
        x = _tensor("STFT", args[0])
        if x.ndim not in (1, 2):
            raise ValueError("For 'STFT', the input must be a 1-D or 2-D Tensor, but got %d-D." % x.ndim)
        return _stft("STFT", x, self.n_fft, self.hop_length, self.win_length, args[1], self.normalized,
                     self.onesided, self.return_complex)
