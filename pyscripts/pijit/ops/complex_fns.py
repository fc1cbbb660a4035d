"""MindSpore's complex-number functions: ops.real, ops.imag, ops.conj, ops.complex."""
from pijit import dtype as _dt
from pijit._ops_common import op as _op, as_tensor as _t

__all__ = ["real", "imag", "conj", "complex", "is_complex"]


def real(input):
    """The real part (a float tensor); a real tensor's values as they are."""
    return _op("real", (_t(input),))


def imag(input):
    """The imaginary part (a float tensor); zeros for a real tensor."""
    return _op("imag", (_t(input),))


def conj(input):
    """The complex conjugate; a real tensor as it is."""
    return _op("conj", (_t(input),))


def complex(real, imag):
    """A complex tensor from float32 (-> complex64) or float64 (-> complex128) parts."""
    return _op("complex", (_t(real), _t(imag)))


def is_complex(input):
    return _t(input).dtype in (_dt.complex64, _dt.complex128)
