"""pijit's numpy stand-in: `import numpy` under `python -m pijit run` when numpy is not installed.

MindSpore programs build their inputs with numpy (np.ones([3, 3], dtype=np.float32),
np.random.randn(...).astype(np.float32)) and print tensor.asnumpy(). Where numpy is missing (the
stdlib-only 3.7/3.9 interpreters), pijit's import hook (pijit.alias) serves this package as
`numpy`; with real numpy importable it never does. It follows numpy 1.24 for what it has:

- ndarray: a pijit tensor with numpy's semantics (dtypes bool, int8, int16, int32, int64, uint8,
  uint16, uint32, uint64, float16, float32, float64, complex64, complex128; int8/int16/uint8/
  float16 emulated exactly in pijit's int32/float32),
  indexing with views, numpy's type promotion (value-based for scalars), operators, printing.
- scalar types and dtype objects (np.float32 as dtype= and as a constructor), np.dtype.
- creation (array, asarray, zeros, ones, full, empty, *_like, arange, linspace, eye), math
  ufuncs, comparisons (all, any, allclose, isclose, array_equal), reductions in numpy's order
  (sum, mean, prod, max, min, argmax, std, var, cumsum), shapes (reshape, concatenate, stack ...),
  matmul/dot, unique, numpy.random (numpy's legacy MT19937 stream: seeded draws match numpy's),
  numpy.testing (assert_allclose, assert_array_equal, ... with numpy's messages).

Anything else raises AttributeError or NotImplementedError naming what is missing. pijit.Tensor,
mindspore.tensor and every pijit op accept these arrays directly.
"""
from pijit.numpy_lite import _dtypes
from pijit.numpy_lite._dtypes import dtype, promote_types
from pijit.numpy_lite._scalars import (generic, number, integer, signedinteger, unsignedinteger,
                                       inexact, floating, bool_, int8, int16, int32, int64, uint8,
                                       float16, float32, float64, uint16, uint32, uint64,
                                       complexfloating, complex64, complex128, ComplexWarning)
from pijit.numpy_lite._array import (ndarray, array, asarray, asanyarray, ascontiguousarray,
                                     AxisError)
from pijit.numpy_lite._print import set_printoptions, get_printoptions
from pijit.numpy_lite._reduce import (sum, mean, prod, all, any, amax, amin, argmax, argmin,
                                      cumsum, cumprod, std, var)
from pijit.numpy_lite._creation import (full, zeros, ones, empty, zeros_like, ones_like,
                                        empty_like, full_like, arange, linspace, eye, identity,
                                        copy)
from pijit.numpy_lite._funcs import (
    around, clip, where, isclose, allclose, array_equal, array_equiv,
    reshape, transpose, swapaxes, squeeze, ravel, expand_dims, shape, ndim, size, broadcast_to,
    concatenate, stack, vstack, hstack, matmul, dot, outer, result_type, issubdtype, isscalar,
    can_cast, finfo, iinfo, ufunc, make_ufuncs)
from pijit.numpy_lite._setops import unique, broadcast_shapes
from pijit.numpy_lite._complexfns import (real, imag, conj, conjugate, iscomplexobj, isrealobj,
                                          iscomplex)
from pijit.numpy_lite import random
from pijit.numpy_lite import testing

_ufuncs = make_ufuncs()  # add, multiply, sqrt, ... as ufunc objects (np.add.reduce)
globals().update(_ufuncs)
abs = _ufuncs["absolute"]
round = round_ = around
max = amax
min = amin

# Aliases numpy 1.24 has.
bool8 = bool_
byte, short, intc, int_, longlong, intp = int8, int16, int32, int64, int64, int64
ubyte = uint8
ushort, uintc, uint, ulonglong, uintp = uint16, uint32, uint64, uint64, uint64
half, single, double, float_ = float16, float32, float64, float64
csingle, singlecomplex = complex64, complex64
cdouble, cfloat, complex_ = complex128, complex128, complex128

pi = 3.141592653589793
e = 2.718281828459045
euler_gamma = 0.5772156649015329
inf = Inf = Infinity = PINF = infty = float("inf")
NINF = float("-inf")
nan = NaN = NAN = float("nan")
NZERO = -0.0
PZERO = 0.0
newaxis = None

__version__ = "1.24.0+pijit.numpy_lite"
__pijit_numpy_lite__ = True


def __getattr__(name):
    raise AttributeError("module 'numpy' has no attribute '%s' (%s)"
                         % (name, _dtypes.not_provided("numpy." + name)))


def __dir__():
    return sorted(k for k in globals() if not k.startswith("_"))
