"""mindspore.ops' dense linear algebra (MindSpore 2.5 names and signatures): inverse, det,
slogdet/logdet, matrix_solve, cholesky and its inverse/solve, triangular solves, qr, svd, pinv,
matrix_power, matrix_exp, matrix_band_part, adjoint, eigh; and the primitive classes
(MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, MatrixSolve, Cholesky, CholeskyInverse,
CholeskySolve, MatrixTriangularSolve, Qr, Svd, MatrixExp, MatrixPower, MatrixBandPart, Geqrf,
Orgqr, Lstsq, Eigh, LuSolve, LuUnpack) with lu_factor/lu_solve/lu_unpack. Not here: Eig (general
eigenproblems, complex results) and MatrixLogarithm (complex only).

The kernels are pijit's own (kernels/linalg.h: LU with partial pivoting, Householder QR,
one-sided Jacobi SVD, Padé exponential), computed in double for float32 too, in parallel over
the batch. Matrices are the last two dims; leading dims are a batch (two-input forms broadcast
them). Inputs must be float32 or float64 (TypeError). Errors as MindSpore raises them: ValueError
for a non-square matrix (naming the shape), for an exactly singular matrix in matrix_solve and a
matrix that is not positive definite in cholesky; inverse/det of a singular matrix give inf/0 as
MindSpore's CPU kernels do. Gradients: inverse, det, slogdet, solve, triangular solve, cholesky,
qr (square or tall), svd, eigh, cholesky_solve (so cholesky_inverse) (graph/grads/linalg_grads.cc).

Accuracy (float64, measured against numpy/torch): inverse and solve residuals |A X - I| ~1e-15
times cond(A); det and slogdet within a few ulps of a pivoted elimination; qr's Q orthogonal to
~1e-15 and R equal to LAPACK's (signs included); svd: singular values within ~1e-14 of s_max,
U and V orthogonal to ~sqrt(n) * 1e-15 (Jacobi's stopping rule: 2e-14 at n = 512); eigh as svd;
matrix_exp within ~1e-14 relative of torch.matrix_exp. float32 results are the double results
rounded once. Speed (512 x 512 float64, 2 shared cores): det 6.6 ms (numpy/OpenBLAS 7.7),
solve 27 ms (20), inverse 48 ms (19), svd 0.6 s (0.15 s): the Jacobi SVD is the slow one.
"""
import builtins as _b

from pijit import _C
from pijit import creation as _creation
from pijit import dtype as _dt
from pijit._ops_common import op as _op
from pijit.ops import functional as F
from pijit.ops.complex_fns import conj as _conj
from pijit.ops.primitives import Primitive

_Tensor = _C.TensorBase

__all__ = ["inverse", "det", "matrix_determinant", "slogdet", "log_matrix_determinant", "logdet",
           "matrix_solve", "cholesky", "cholesky_inverse", "cholesky_solve",
           "solve_triangular", "qr", "svd", "pinv", "matrix_power", "matrix_exp",
           "matrix_band_part", "adjoint", "eigh", "geqrf", "orgqr", "lu_factor", "lu_solve",
           "lu_unpack",
           "MatrixInverse", "MatrixDeterminant", "LogMatrixDeterminant", "MatrixSolve",
           "Cholesky", "CholeskyInverse", "CholeskySolve", "MatrixTriangularSolve", "Qr", "Svd",
           "MatrixExp", "MatrixPower", "MatrixBandPart", "Geqrf", "Orgqr", "Lstsq", "Eigh",
           "LuSolve", "LuUnpack"]


def _tensor(who, name, x):
    if not isinstance(x, _Tensor):
        raise TypeError("For '%s', the input '%s' must be a Tensor, but got %s"
                        % (who, name, type(x).__name__))
    return x


def _bool(who, name, v):
    if not isinstance(v, bool):
        raise TypeError("For '%s', the '%s' must be a bool, but got %r" % (who, name, v))
    return v


def _int(who, name, v):
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("For '%s', the '%s' must be an int, but got %r" % (who, name, v))
    return v


def _square(who, name, x):
    """ValueError naming the shape unless x is a batch of square matrices (the C++ ops check it
    too; this one runs before any Python-side composition does)."""
    _tensor(who, name, x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("For '%s', the '%s' must be a batch of square matrices [..., M, M], but got "
                         "shape %s" % (who, name, tuple(x.shape)))
    return x


def _mT(x):
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return _op("transpose", (x,), perm=perm)


def _broadcast_batch(who, a, b):
    """a [..., n, n] and b [..., n, k] with their batch dims broadcast together."""
    if a.ndim < 2 or b.ndim < 2:
        return a, b
    ba, bb = tuple(a.shape[:-2]), tuple(b.shape[:-2])
    if ba == bb:
        return a, b
    try:
        batch = _broadcast_shape(ba, bb)
    except ValueError:
        raise ValueError("For '%s', the batch dims of %s and %s cannot broadcast"
                         % (who, tuple(a.shape), tuple(b.shape)))
    batch = tuple(batch)
    if ba != batch:
        a = F.broadcast_to(a, batch + tuple(a.shape[-2:]))
    if bb != batch:
        b = F.broadcast_to(b, batch + tuple(b.shape[-2:]))
    return a, b


def _broadcast_shape(x, y):
    n = _b.max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + tuple(x), (1,) * (n - len(y)) + tuple(y)
    out = []
    for p, q in zip(x, y):
        if p != q and p != 1 and q != 1:
            raise ValueError("shapes do not broadcast")
        out.append(q if p == 1 else p)
    return tuple(out)


# ---- functional forms ----------------------------------------------------------------------------

def inverse(input):
    """The inverse of each square matrix (MatrixInverse). A singular matrix gives inf/nan, as
    MindSpore's CPU kernel."""
    return _op("matrix_inverse", (_square("MatrixInverse", "input", input),), adjoint=False)


def det(input):
    """det(A) of each square matrix, shape input.shape[:-2]."""
    return _op("matrix_determinant", (_square("MatrixDeterminant", "input", input),))


matrix_determinant = det


def slogdet(input):
    """(sign, log|det|) of each square matrix; a singular matrix gives (0, -inf)."""
    sign, logabs = _op("log_matrix_determinant", (_square("LogMatrixDeterminant", "input", input),))
    return sign, logabs


log_matrix_determinant = slogdet


def logdet(input):
    """log(det(A)): nan where the determinant is negative, -inf where it is 0."""
    sign, logabs = slogdet(input)
    nan = _C.as_operand(float("nan"), logabs)
    return F.where(sign < 0, nan, logabs)


def matrix_solve(matrix, rhs, adjoint=False):
    """x with matrix @ x = rhs ([..., M, M] and [..., M, K]; adjoint: matrix^T @ x = rhs). An
    exactly singular matrix raises ValueError, as MindSpore's CPU kernel."""
    _tensor("MatrixSolve", "matrix", matrix)
    _tensor("MatrixSolve", "rhs", rhs)
    _bool("MatrixSolve", "adjoint", adjoint)
    matrix, rhs = _broadcast_batch("MatrixSolve", matrix, rhs)
    return _op("matrix_solve", (matrix, rhs), adjoint=adjoint)


def cholesky(input_x, upper=False):
    """L with L @ L^T = A (upper: U with U^T @ U = A). Reads A's lower (upper) triangle; a matrix
    that is not positive definite raises ValueError."""
    _bool("Cholesky", "upper", upper)
    return _op("cholesky", (_square("Cholesky", "input_x", input_x),), upper=upper)


def cholesky_solve(input, input2, upper=False):
    """x with A @ x = input, A = L @ L^T given its factor input2 = L (upper: A = U^T @ U)."""
    _tensor("CholeskySolve", "input", input)
    _square("CholeskySolve", "input2", input2)
    _bool("CholeskySolve", "upper", upper)
    input2, input = _broadcast_batch("CholeskySolve", input2, input)
    return _op("cholesky_solve", (input, input2), upper=upper)


def cholesky_inverse(input_x, upper=False):
    """The inverse of A = L @ L^T (upper: U^T @ U) from its Cholesky factor."""
    _square("CholeskyInverse", "input_x", input_x)
    _bool("CholeskyInverse", "upper", upper)
    n = input_x.shape[-1]
    eye = F.broadcast_to(_creation.eye(n, n, input_x.dtype), tuple(input_x.shape))
    return _op("cholesky_solve", (eye, input_x), upper=upper)


def solve_triangular(a, b, *, lower=True, adjoint=False, unit_diagonal=False):
    """x with T @ x = b, T the lower (or upper) triangle of a, transposed when adjoint; the other
    triangle is not read (MatrixTriangularSolve)."""
    _square("MatrixTriangularSolve", "matrix", a)
    _tensor("MatrixTriangularSolve", "rhs", b)
    for name, v in (("lower", lower), ("adjoint", adjoint), ("unit_diagonal", unit_diagonal)):
        _bool("MatrixTriangularSolve", name, v)
    a, b = _broadcast_batch("MatrixTriangularSolve", a, b)
    return _op("matrix_triangular_solve", (a, b), lower=lower, adjoint=adjoint,
               unit_diagonal=unit_diagonal)


def qr(input, mode="reduced"):
    """(Q, R) with input = Q @ R, Q orthonormal columns, R upper triangular; mode 'reduced' (K =
    min(M, N)) or 'complete' (Q square)."""
    _tensor("qr", "input", input)
    if mode not in ("reduced", "complete"):
        raise ValueError("For 'qr', the 'mode' must be 'reduced' or 'complete', but got %r" % (mode,))
    q, r = _op("qr", (input,), full_matrices=mode == "complete")
    return q, r


def svd(input, full_matrices=False, compute_uv=True):
    """(s, u, v) with input = u @ diag(s) @ v^T, s descending (MindSpore returns v, not v^T); s
    alone when compute_uv is False."""
    _tensor("Svd", "input", input)
    _bool("Svd", "full_matrices", full_matrices)
    _bool("Svd", "compute_uv", compute_uv)
    out = _op("svd", (input,), full_matrices=full_matrices, compute_uv=compute_uv)
    if not compute_uv:
        return out[0] if isinstance(out, (tuple, list)) else out
    s, u, v = out
    return s, u, v


def pinv(x, *, atol=None, rtol=None, hermitian=False):
    """Moore-Penrose pseudo-inverse through the SVD: singular values at or below
    max(atol, rtol * s_max) count as zero; with neither given, rtol = eps * max(M, N)."""
    _tensor("pinv", "x", x)
    if x.ndim < 2:
        raise ValueError("For 'pinv', the 'x' must have at least 2 dimensions, but got shape %s"
                         % (tuple(x.shape),))
    s, u, v = svd(x, full_matrices=False)
    m, n = x.shape[-2], x.shape[-1]
    if atol is None and rtol is None:
        rtol = (1.1920928955078125e-07 if x.dtype == _dt.float32 else 2.220446049250313e-16) * _b.max(m, n)
    if s.shape[-1] == 0:
        return _creation.zeros(tuple(x.shape[:-2]) + (n, m), dtype=x.dtype)
    smax = F.amax(s, -1, True)
    tol = None
    if rtol is not None:
        tol = smax * rtol
    if atol is not None:
        a = atol if isinstance(atol, _Tensor) else _C.as_operand(float(atol), s)
        tol = a if tol is None else F.maximum(tol, a)
    keep = s > tol
    zero = _C.as_operand(0.0, s)
    one = _C.as_operand(1.0, s)
    sinv = F.where(keep, one / F.where(keep, s, one), zero)
    # V diag(1/s) U^T
    return F.matmul(v * F.expand_dims(sinv, -2), _mT(u))


def matrix_power(input, n):
    """input multiplied by itself n times (n = 0: identity; n < 0: the inverse's power), by
    repeated squaring, so its gradient is matmul's."""
    _square("MatrixPower", "input", input)
    _int("MatrixPower", "n", n)
    if n == 0:
        k = input.shape[-1]
        return F.broadcast_to(_creation.eye(k, k, input.dtype), tuple(input.shape))
    x = inverse(input) if n < 0 else input
    n = abs(n)
    result = None
    while True:
        if n & 1:
            result = x if result is None else F.matmul(result, x)
        n >>= 1
        if not n:
            return result
        x = F.matmul(x, x)


def matrix_exp(input):
    """exp(A) of each square matrix (scaling and squaring with the [13/13] Padé approximant)."""
    return _op("matrix_exp", (_square("MatrixExp", "input", input),))


def matrix_band_part(x, lower, upper):
    """x with the elements outside the band (i - j <= lower, j - i <= upper; a negative bound keeps
    that whole triangle) set to 0."""
    _tensor("matrix_band_part", "x", x)
    lower, upper = (int(v) if isinstance(v, _Tensor) else v for v in (lower, upper))
    _int("matrix_band_part", "lower", lower)
    _int("matrix_band_part", "upper", upper)
    return _op("matrix_band_part", (x,), lower=lower, upper=upper)


def adjoint(x):
    """The conjugate transpose of each matrix."""
    _tensor("adjoint", "x", x)
    t = _mT(x)
    return _conj(t) if x.dtype in (_dt.complex64, _dt.complex128) else t


def eigh(a, lower=True, eigvals_only=False):
    """(w, v) of a symmetric matrix (w ascending, a = v @ diag(w) @ v^T) from its lower (or upper)
    triangle; w alone with eigvals_only (cyclic Jacobi: accurate, slower than LAPACK for n > 100)."""
    _square("Eigh", "a", a)
    out = _op("eigh", (a,), lower=bool(lower), compute_v=not eigvals_only)
    if eigvals_only:
        return out[0] if isinstance(out, (tuple, list)) else out
    w, v = out
    return w, v


def geqrf(input):
    """LAPACK's packed QR: (y, tau), y holding R on and above the diagonal and the Householder
    vectors below it, tau [..., min(M, N)] their scales (Q = H_0 ... H_{k-1}, H = I - tau v v^T)."""
    y, tau = _op("geqrf", (_tensor("Geqrf", "x", input),))
    return y, tau


def orgqr(input, input2):
    """The first N columns of Q from geqrf's (y [..., M, N], tau [..., K]), M >= N >= K."""
    return _op("orgqr", (_tensor("Orgqr", "x", input), _tensor("Orgqr", "tau", input2)))


def lu_factor(A):
    """(LU, pivots) with A = P L U (partial pivoting, as torch.linalg.lu_factor): L (unit diagonal)
    below LU's diagonal, U on and above it; pivots int32 [..., n], 1-based: row i was swapped with
    row pivots[i] at step i."""
    lu, piv = _op("lu_factor", (_square("lu_factor", "A", A),))
    return lu, piv


def lu_solve(b, LU_data, LU_pivots):
    """x with A x = b from lu_factor's (LU_data, LU_pivots); batch dims broadcast."""
    _tensor("LuSolve", "b", b)
    _square("LuSolve", "LU_data", LU_data)
    _tensor("LuSolve", "LU_pivots", LU_pivots)
    LU_data, b = _broadcast_batch("LuSolve", LU_data, b)
    want = tuple(LU_data.shape[:-1])
    if tuple(LU_pivots.shape) != want and LU_pivots.ndim >= 1:
        LU_pivots = F.broadcast_to(LU_pivots, want)
    return _op("lu_solve", (b, LU_data, LU_pivots))


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) with A = P @ L @ U from lu_factor's output; a part not unpacked is an empty
    tensor (as torch.lu_unpack)."""
    _square("LuUnpack", "LU_data", LU_data)
    _tensor("LuUnpack", "LU_pivots", LU_pivots)
    _bool("LuUnpack", "unpack_data", unpack_data)
    _bool("LuUnpack", "unpack_pivots", unpack_pivots)
    empty = _creation.zeros((0,), dtype=LU_data.dtype)
    p = _op("lu_permutation", (LU_data, LU_pivots)) if unpack_pivots else empty
    if not unpack_data:
        return p, empty, empty
    n = LU_data.shape[-1]
    strict = _op("matrix_band_part", (LU_data,), lower=-1, upper=0) - \
        _op("matrix_band_part", (LU_data,), lower=0, upper=0)
    l = strict + _creation.eye(n, n, LU_data.dtype)
    u = _op("matrix_band_part", (LU_data,), lower=0, upper=-1)
    return p, l, u


def _lstsq(matrix, rhs, l2_regularizer):
    """min |A x - B|^2 + l2 |x|^2 through the regularised normal equations (MindSpore's fast
    path): tall or square A: (A^T A + l2 I) x = A^T B; wide: x = A^T (A A^T + l2 I)^-1 B."""
    _tensor("Lstsq", "matrix", matrix)
    _tensor("Lstsq", "rhs", rhs)
    if matrix.ndim < 2 or rhs.ndim < 1:
        raise ValueError("For 'Lstsq', the 'matrix' must have at least 2 dimensions, but got shape %s"
                         % (tuple(matrix.shape),))
    vector = rhs.ndim == matrix.ndim - 1
    b = F.expand_dims(rhs, -1) if vector else rhs
    if b.shape[-2] != matrix.shape[-2]:
        raise ValueError("For 'Lstsq', the rows of 'matrix' %s and 'rhs' %s must agree"
                         % (tuple(matrix.shape), tuple(rhs.shape)))
    m, n = matrix.shape[-2], matrix.shape[-1]
    at = _mT(matrix)
    if m >= n:
        gram = F.matmul(at, matrix)
        if l2_regularizer:
            gram = gram + _creation.eye(n, n, gram.dtype) * l2_regularizer
        x = matrix_solve(gram, F.matmul(at, b))
    else:
        gram = F.matmul(matrix, at)
        if l2_regularizer:
            gram = gram + _creation.eye(m, m, gram.dtype) * l2_regularizer
        x = F.matmul(at, matrix_solve(gram, b))
    return F.squeeze(x, -1) if vector else x


# ---- primitives ----------------------------------------------------------------------------------

class MatrixInverse(Primitive):
    """MatrixInverse(adjoint=False)(x): the inverse (of x^T with adjoint)."""

    def __init__(self, adjoint=False):
        super().__init__(adjoint=_bool("MatrixInverse", "adjoint", adjoint))

    def __call__(self, x):
        return _op("matrix_inverse", (_square("MatrixInverse", "x", x),), adjoint=self.attrs["adjoint"])


class MatrixDeterminant(Primitive):
    def __call__(self, x):
        return det(x)


class LogMatrixDeterminant(Primitive):
    """LogMatrixDeterminant()(x) -> (sign, log|det|)."""

    def __call__(self, x):
        return slogdet(x)


class MatrixSolve(Primitive):
    def __init__(self, adjoint=False):
        super().__init__(adjoint=_bool("MatrixSolve", "adjoint", adjoint))

    def __call__(self, matrix, rhs):
        return matrix_solve(matrix, rhs, self.attrs["adjoint"])


class Cholesky(Primitive):
    def __init__(self, upper=False):
        super().__init__(upper=_bool("Cholesky", "upper", upper))

    def __call__(self, input_x):
        return cholesky(input_x, self.attrs["upper"])


class CholeskyInverse(Primitive):
    def __init__(self, upper=False):
        super().__init__(upper=_bool("CholeskyInverse", "upper", upper))

    def __call__(self, x):
        return cholesky_inverse(x, self.attrs["upper"])


class CholeskySolve(Primitive):
    """CholeskySolve(upper=False)(x1, x2): solves A x = x1 with A's Cholesky factor x2."""

    def __init__(self, upper=False):
        super().__init__(upper=_bool("CholeskySolve", "upper", upper))

    def __call__(self, x1, x2):
        return cholesky_solve(x1, x2, self.attrs["upper"])


class MatrixTriangularSolve(Primitive):
    def __init__(self, lower=True, adjoint=False):
        super().__init__(lower=_bool("MatrixTriangularSolve", "lower", lower),
                         adjoint=_bool("MatrixTriangularSolve", "adjoint", adjoint))

    def __call__(self, matrix, rhs):
        return solve_triangular(matrix, rhs, lower=self.attrs["lower"], adjoint=self.attrs["adjoint"])


class Qr(Primitive):
    def __init__(self, full_matrices=False):
        super().__init__(full_matrices=_bool("Qr", "full_matrices", full_matrices))

    def __call__(self, x):
        return qr(x, "complete" if self.attrs["full_matrices"] else "reduced")


class Svd(Primitive):
    """Svd(full_matrices=False, compute_uv=True)(a) -> (s, u, v); without compute_uv, u and v are
    zeros of their usual shapes, as MindSpore returns them."""

    def __init__(self, full_matrices=False, compute_uv=True):
        super().__init__(full_matrices=_bool("Svd", "full_matrices", full_matrices),
                         compute_uv=_bool("Svd", "compute_uv", compute_uv))

    def __call__(self, a):
        full = self.attrs["full_matrices"]
        if self.attrs["compute_uv"]:
            return svd(a, full, True)
        s = svd(a, full, False)
        m, n = a.shape[-2], a.shape[-1]
        k = _b.min(m, n)
        batch = tuple(a.shape[:-2])
        u = _creation.zeros(batch + (m, m if full else k), dtype=a.dtype)
        v = _creation.zeros(batch + (n, n if full else k), dtype=a.dtype)
        return s, u, v


class Eigh(Primitive):
    """Eigh(compute_eigenvectors=True, lower=True)(a) -> (w, v) of a symmetric matrix (w
    ascending); without eigenvectors v is zeros of a's shape."""

    def __init__(self, compute_eigenvectors=True, lower=True):
        super().__init__(compute_eigenvectors=_bool("Eigh", "compute_eigenvectors", compute_eigenvectors),
                         lower=_bool("Eigh", "lower", lower))

    def __call__(self, a):
        if self.attrs["compute_eigenvectors"]:
            return eigh(a, self.attrs["lower"])
        w = eigh(a, self.attrs["lower"], eigvals_only=True)
        return w, _creation.zeros(tuple(a.shape), dtype=a.dtype)


class MatrixExp(Primitive):
    def __call__(self, x):
        return matrix_exp(x)


class MatrixPower(Primitive):
    def __init__(self, n):
        super().__init__(n=_int("MatrixPower", "n", n))

    def __call__(self, x):
        return matrix_power(x, self.attrs["n"])


class MatrixBandPart(Primitive):
    def __call__(self, x, lower, upper):
        return matrix_band_part(x, lower, upper)


class Geqrf(Primitive):
    """Geqrf()(x) -> (y, tau): LAPACK's packed Householder QR."""

    def __call__(self, x):
        return geqrf(x)


class Orgqr(Primitive):
    def __call__(self, x, tau):
        return orgqr(x, tau)


class Lstsq(Primitive):
    """Lstsq(fast=True, l2_regularizer=0.0)(matrix, rhs): the least-squares solution, through the
    regularised normal equations (for either value of fast: pijit has one method; full-rank
    inputs give the same solution)."""

    def __init__(self, fast=True, l2_regularizer=0.0):
        _bool("Lstsq", "fast", fast)
        if isinstance(l2_regularizer, bool) or not isinstance(l2_regularizer, (int, float)):
            raise TypeError("For 'Lstsq', the 'l2_regularizer' must be a float, but got %r" % (l2_regularizer,))
        super().__init__(fast=fast, l2_regularizer=float(l2_regularizer))

    def __call__(self, matrix, rhs):
        return _lstsq(matrix, rhs, self.attrs["l2_regularizer"])


class LuSolve(Primitive):
    """LuSolve()(x, lu_data, lu_pivots): solves A y = x from A's LU factors (1-based pivots)."""

    def __call__(self, x, lu_data, lu_pivots):
        return lu_solve(x, lu_data, lu_pivots)


class LuUnpack(Primitive):
    """LuUnpack(unpack_data=True, unpack_pivots=True)(LU_data, LU_pivots) -> (P, L, U)."""

    def __init__(self, unpack_data=True, unpack_pivots=True):
        super().__init__(unpack_data=_bool("LuUnpack", "unpack_data", unpack_data),
                         unpack_pivots=_bool("LuUnpack", "unpack_pivots", unpack_pivots))

    def __call__(self, LU_data, LU_pivots):
        return lu_unpack(LU_data, LU_pivots, self.attrs["unpack_data"], self.attrs["unpack_pivots"])


# ---- Tensor methods (MindSpore's Tensor has these; they live beside the functions they call) ----

def _install_tensor_methods():
    from pijit.tensor import Tensor
    methods = {
        "inverse": lambda self: inverse(self),
        "det": lambda self: det(self),
        "matrix_determinant": lambda self: det(self),
        "slogdet": lambda self: slogdet(self),
        "log_matrix_determinant": lambda self: slogdet(self),
        "logdet": lambda self: logdet(self),
        "matrix_power": lambda self, n: matrix_power(self, n),
        "svd": lambda self, full_matrices=False, compute_uv=True: svd(self, full_matrices, compute_uv),
        "cholesky": lambda self, upper=False: cholesky(self, upper),
        "cholesky_inverse": lambda self, upper=False: cholesky_inverse(self, upper),
    }
    for name, fn in methods.items():
        if name not in Tensor.__dict__:
            fn.__name__ = fn.__qualname__ = name
            setattr(Tensor, name, fn)


_install_tensor_methods()
del _install_tensor_methods


def _singular_value_norm(x, dims, ord, keepdim, who="norm"):
    """The matrix norm ord 2 (largest singular value), -2 (smallest) or 'nuc' (their sum) of the
    matrices over the two dims of x."""
    if len(dims) != 2:
        raise RuntimeError("For '%s', a matrix norm takes 2 dims, but got %r" % (who, dims))
    nd = x.ndim
    d0, d1 = (d % nd if nd else d for d in dims)
    if nd < 2 or d0 == d1 or not (0 <= d0 < nd and 0 <= d1 < nd):
        raise RuntimeError("For '%s', the matrix norm needs 2 distinct dims of a tensor of 2 or more "
                           "dims, but got dims %r of shape %r" % (who, dims, tuple(x.shape)))
    rest = [i for i in range(nd) if i not in (d0, d1)]
    m = _op("transpose", (x,), perm=tuple(rest) + (d0, d1)) if (d0, d1) != (nd - 2, nd - 1) else x
    s = svd(m, compute_uv=False)
    reduce = {"nuc": "sum", 2: "max", -2: "min"}[ord]
    out = _op(reduce, (s,), axis=(-1,), keepdims=False)
    if keepdim:
        out = _op("reshape", (out,), shape=tuple(1 if i in (d0, d1) else x.shape[i] for i in range(nd)))
    return out
