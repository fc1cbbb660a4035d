"""numpy.real, imag, conj/conjugate, iscomplexobj, iscomplex, isrealobj for pijit's numpy
stand-in (complex64/complex128 arrays; real arrays pass through as numpy's do)."""
from pijit.numpy_lite import _scalars as _s
from pijit.numpy_lite._array import asanyarray, ndarray


def real(val):
    try:  # numpy's order: the object's own .real (Python numbers keep their type)
        return val.real
    except AttributeError:
        return asanyarray(val).real


def imag(val):
    try:
        return val.imag
    except AttributeError:
        return asanyarray(val).imag


def conjugate(x, **kwargs):
    a = x if isinstance(x, (ndarray, _s.generic)) else asanyarray(x)
    if isinstance(a, ndarray) and a.ndim == 0:
        a = a[()]  # a ufunc: 0-d in, numpy scalar out
    if a.dtype.kind != "c":
        return a.copy() if isinstance(a, ndarray) else a
    return a.conjugate() if isinstance(a, _s.generic) else a.conj()


conj = conjugate


def iscomplexobj(x):
    d = getattr(x, "dtype", None)
    if d is None:
        d = asanyarray(x).dtype
    return d.kind == "c"


def isrealobj(x):
    return not iscomplexobj(x)


def iscomplex(x):
    a = asanyarray(x)
    if a.dtype.kind != "c":
        from pijit.numpy_lite._creation import zeros
        return zeros(a.shape, bool)
    return asanyarray(a.imag != 0)
