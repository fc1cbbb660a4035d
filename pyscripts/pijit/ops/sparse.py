"""Sparse tensors' functions (mindspore.ops): coo_* and csr_* elementwise maps over the stored
values, coo_add / coo_concat / csr_add / csr_mm / csr_softmax, the conversions, and the sparse
primitives SparseToDense, SparseTensorDenseAdd, SparseTensorDenseMatmul, SparseSlice, Coalesce
and sparse_segment_mean. The tensor classes are pijit.common.sparse_tensor's."""
from pijit import _C
from pijit.common.sparse_tensor import COOTensor, CSRTensor
from pijit.ops.primitives import Primitive

_Tensor = _C.TensorBase

_UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "exp",
          "expm1", "floor", "inv", "isfinite", "isinf", "isnan", "log", "log1p", "neg", "relu",
          "relu6", "round", "sigmoid", "sin", "sinh", "softsign", "sqrt", "square", "tan", "tanh")

__all__ = (["coo_" + n for n in _UNARY] + ["csr_" + n for n in _UNARY]
           + ["coo_add", "coo_concat", "csr_add", "csr_mm", "csr_softmax", "csr_to_coo",
              "dense_to_sparse_coo", "dense_to_sparse_csr", "sparse_segment_mean",
              "SparseToDense", "SparseTensorDenseAdd", "SparseTensorDenseMatmul", "SparseSlice",
              "Coalesce"])


def _ops():
    from pijit import ops
    return ops


def _T(data, dtype):
    from pijit import Tensor
    if not data:
        return _ops().zeros((0,) if not isinstance(data, list) or not data else (len(data),), dtype)
    return Tensor(data, dtype=dtype)


def _check(who, x, cls):
    if not isinstance(x, cls):
        raise TypeError("For '%s', the input must be a %s, but got %s." % (who, cls.__name__, type(x).__name__))


def _make_unary(prefix, name):
    cls = COOTensor if prefix == "coo" else CSRTensor
    who = "%s_%s" % (prefix, name)

    def fn(x):
        _check(who, x, cls)
        values = getattr(_ops(), name)(x.values)
        if cls is COOTensor:
            return COOTensor(x.indices, values, x.shape)
        return CSRTensor(x.indptr, x.indices, values, x.shape)
    fn.__name__ = fn.__qualname__ = who
    fn.__doc__ = "ops.%s applied to the stored values of a %s (the pattern kept)." % (name, cls.__name__)
    return fn


for _name in _UNARY:
    globals()["coo_" + _name] = _make_unary("coo", _name)
    globals()["csr_" + _name] = _make_unary("csr", _name)
del _name


# ---- merging entries ------------------------------------------------------------------------------

def _groups(coords):
    """Unique coordinate tuples in row-major order and, for each input entry, its group."""
    keys = sorted(set(coords))
    pos = {k: i for i, k in enumerate(keys)}
    return keys, [pos[c] for c in coords]


def _coalesce(indices, values):
    """(indices (N, ndims), values (N,)) with duplicates summed, sorted row-major."""
    ops = _ops()
    coords = [tuple(r) for r in indices.tolist()]
    keys, seg = _groups(coords)
    if not keys:
        return indices, values
    out_idx = _T([list(k) for k in keys], indices.dtype)
    out_val = ops.unsorted_segment_sum(values, _T(seg, _C_int64()), len(keys))
    return out_idx, out_val


def _C_int64():
    from pijit import dtype
    return dtype.int64


def coo_add(x1, x2, thresh):
    """x1 + x2 as a COOTensor, entries sorted row-major; sums whose magnitude is below thresh
    are dropped."""
    _check("coo_add", x1, COOTensor)
    _check("coo_add", x2, COOTensor)
    if tuple(x1.shape) != tuple(x2.shape):
        raise ValueError("For 'coo_add', the shapes of x1 and x2 must be the same, but got %s and %s."
                         % (x1.shape, x2.shape))
    if x1.dtype is not x2.dtype:
        raise TypeError("For 'coo_add', the values of x1 and x2 must have the same dtype, but got %s and %s."
                        % (x1.dtype, x2.dtype))
    if not isinstance(thresh, _Tensor) or len(thresh.shape) != 0:
        raise ValueError("For 'coo_add', 'thresh' must be a 0-D Tensor.")
    ops = _ops()
    idx, val = _coalesce(ops.concat((x1.indices.astype(x2.indices.dtype), x2.indices), 0),
                         ops.concat((x1.values, x2.values), 0))
    limit = float(thresh.item())
    keep = [i for i, v in enumerate(val.tolist()) if abs(v) >= limit]
    if len(keep) != len(val.tolist()):
        k = _T(keep, _C_int64())
        idx, val = ops.gather(idx, k, 0), ops.gather(val, k, 0)
    return COOTensor(idx, val, x1.shape)


def coo_concat(sp_input, concat_dim=0):
    """COOTensors joined along concat_dim (the other dimensions must agree), entries sorted
    row-major."""
    if not isinstance(sp_input, (list, tuple)) or len(sp_input) < 2:
        raise ValueError("For 'coo_concat', 'sp_input' must be a list or tuple of at least 2 COOTensors.")
    for x in sp_input:
        _check("coo_concat", x, COOTensor)
    ndim = sp_input[0].ndim
    if not -ndim <= concat_dim < ndim:
        raise ValueError("For 'coo_concat', 'concat_dim' must be in [%d, %d), but got %d."
                         % (-ndim, ndim, concat_dim))
    d = concat_dim % ndim
    for x in sp_input:
        if x.ndim != ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, sp_input[0].shape)) if i != d):
            raise ValueError("For 'coo_concat', the shapes must agree except in dimension %d, but got %s."
                             % (d, [x.shape for x in sp_input]))
    ops = _ops()
    offset, parts = 0, []
    for x in sp_input:
        shift = [0] * ndim
        shift[d] = offset
        parts.append(x.indices.astype(_C_int64()) + _T(shift, _C_int64()))
        offset += x.shape[d]
    shape = list(sp_input[0].shape)
    shape[d] = offset
    idx = ops.concat(parts, 0)
    val = ops.concat([x.values for x in sp_input], 0)
    order = sorted(range(idx.shape[0]), key=lambda i, rows=idx.tolist(): rows[i])
    k = _T(order, _C_int64())
    return COOTensor(ops.gather(idx, k, 0), ops.gather(val, k, 0), tuple(shape))


def _csr_from_sorted(coords_rows, coords_cols, values, shape, idx_dtype):
    counts = [0] * (shape[0] + 1)
    for r in coords_rows:
        counts[r + 1] += 1
    for i in range(shape[0]):
        counts[i + 1] += counts[i]
    return CSRTensor(_T(counts, idx_dtype), _T(coords_cols, idx_dtype) if coords_cols else
                     _ops().zeros((0,), idx_dtype), values, shape)


def csr_add(a, b, alpha, beta):
    """alpha * a + beta * b (alpha and beta broadcast over the dense shape), a CSRTensor holding
    both patterns, columns sorted within each row."""
    _check("csr_add", a, CSRTensor)
    _check("csr_add", b, CSRTensor)
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError("For 'csr_add', the shapes of a and b must be the same, but got %s and %s."
                         % (a.shape, b.shape))
    ops = _ops()
    va = a.values * a._dense_at(alpha) if len(alpha.shape) else a.values * alpha
    vb = b.values * b._dense_at(beta) if len(beta.shape) else b.values * beta
    idx, val = _coalesce(ops.concat((a._coords().astype(_C_int64()), b._coords().astype(_C_int64())), 0),
                         ops.concat((va, vb), 0))
    rows = idx.tolist()
    return _csr_from_sorted([r[0] for r in rows], [r[1] for r in rows], val, a.shape, a.indptr.dtype)


def _dense_to_csr(dense, idx_dtype):
    nz = _ops().nonzero(dense).tolist()
    if not nz:
        return _csr_from_sorted([], [], _ops().zeros((0,), dense.dtype), tuple(dense.shape), idx_dtype)
    vals = _ops().gather_nd(dense, _T(nz, _C_int64()))
    return _csr_from_sorted([r[0] for r in nz], [r[1] for r in nz], vals, tuple(dense.shape), idx_dtype)


def csr_mm(a, b, trans_a=False, trans_b=False, adjoint_a=False, adjoint_b=False):
    """a @ b for a CSRTensor a: a CSRTensor when b is one (its stored entries the product's
    nonzeros), a dense Tensor when b is dense. trans/adjoint transpose (and conjugate) first."""
    _check("csr_mm", a, CSRTensor)
    ops = _ops()
    if not (trans_a or adjoint_a or trans_b or adjoint_b) and isinstance(b, _Tensor):
        return a.mm(b)
    da = a.to_dense()
    if trans_a or adjoint_a:
        da = ops.transpose(da, (1, 0))
        if adjoint_a and da.dtype.name.startswith("complex"):
            da = ops.conj(da)
    db = b.to_dense() if isinstance(b, CSRTensor) else b
    if trans_b or adjoint_b:
        db = ops.transpose(db, (1, 0))
        if adjoint_b and db.dtype.name.startswith("complex"):
            db = ops.conj(db)
    out = ops.matmul(da, db)
    return _dense_to_csr(out, a.indptr.dtype) if isinstance(b, CSRTensor) else out


def csr_softmax(logits, dtype=None):
    """Softmax over each row's stored values (absent entries take no part), a CSRTensor."""
    _check("csr_softmax", logits, CSRTensor)
    ops = _ops()
    v = logits.values if dtype is None else logits.values.astype(dtype)
    rows = logits._rows()
    m = logits.shape[0]
    top = ops.gather(ops.unsorted_segment_max(v, rows, m), rows, 0)
    e = ops.exp(v - ops.stop_gradient(top))
    total = ops.gather(ops.unsorted_segment_sum(e, rows, m), rows, 0)
    return CSRTensor(logits.indptr, logits.indices, e / total, logits.shape)


def csr_to_coo(tensor):
    _check("csr_to_coo", tensor, CSRTensor)
    return tensor.to_coo()


def dense_to_sparse_coo(tensor):
    """The nonzero entries of a dense Tensor as a COOTensor (int64 indices, row-major)."""
    if not isinstance(tensor, _Tensor):
        raise TypeError("For 'dense_to_sparse_coo', the input must be a Tensor, but got %s."
                        % type(tensor).__name__)
    ops = _ops()
    nz = ops.nonzero(tensor).astype(_C_int64())
    return COOTensor(nz, ops.gather_nd(tensor, nz), tuple(tensor.shape))


def dense_to_sparse_csr(tensor):
    """The nonzero entries of a 2-D dense Tensor as a CSRTensor (int32 indptr and indices)."""
    if not isinstance(tensor, _Tensor) or len(tensor.shape) != 2:
        raise ValueError("For 'dense_to_sparse_csr', the input must be a 2-D Tensor.")
    from pijit import dtype
    return _dense_to_csr(tensor, dtype.int32)


def sparse_segment_mean(x, indices, segment_ids):
    """out[s] = mean of x[indices[j]] over the j with segment_ids[j] == s (sorted ids; segments
    with no entry are 0)."""
    for name, t in (("x", x), ("indices", indices), ("segment_ids", segment_ids)):
        if not isinstance(t, _Tensor):
            raise TypeError("For 'sparse_segment_mean', '%s' must be a Tensor, but got %s." % (name, type(t).__name__))
    ids = segment_ids.tolist()
    if len(ids) != len(indices.tolist()):
        raise ValueError("For 'sparse_segment_mean', indices and segment_ids must have the same length.")
    if any(b < a for a, b in zip(ids, ids[1:])):
        raise ValueError("For 'sparse_segment_mean', segment_ids must be sorted.")
    ops = _ops()
    n = (ids[-1] + 1) if ids else 0
    rows = ops.gather(x, indices, 0)
    total = ops.unsorted_segment_sum(rows, segment_ids, n)
    counts = [0] * n
    for s in ids:
        counts[s] += 1
    shape = (n,) + (1,) * (len(x.shape) - 1)
    denom = _T([max(c, 1) for c in counts], x.dtype).reshape(shape)
    return total / denom


# ---- primitives -----------------------------------------------------------------------------------

def _shape_tuple(who, shape):
    if isinstance(shape, _Tensor):
        shape = tuple(shape.tolist())
    if not isinstance(shape, (tuple, list)):
        raise TypeError("For '%s', the shape must be a tuple or Tensor, but got %s." % (who, type(shape).__name__))
    return tuple(int(s) for s in shape)


class SparseToDense(Primitive):
    """SparseToDense()(indices, values, sparse_shape): the dense Tensor (duplicates add)."""

    def __call__(self, indices, values, sparse_shape):
        return COOTensor(indices, values, _shape_tuple("SparseToDense", sparse_shape)).to_dense()


class SparseTensorDenseAdd(Primitive):
    """SparseTensorDenseAdd()(x1_indices, x1_values, x1_shape, x2): x2 plus the sparse tensor."""

    def __call__(self, x1_indices, x1_values, x1_shape, x2):
        shape = _shape_tuple("SparseTensorDenseAdd", x1_shape)
        if shape != tuple(x2.shape):
            raise ValueError("For 'SparseTensorDenseAdd', x1_shape %s must equal the shape of x2 %s."
                             % (shape, tuple(x2.shape)))
        return _ops().tensor_scatter_add(x2, x1_indices, x1_values)


class SparseTensorDenseMatmul(Primitive):
    """SparseTensorDenseMatmul(adjoint_st=False, adjoint_dt=False)(indices, values, sparse_shape,
    dense): the 2-D sparse matrix (transposed by adjoint_st) times dense (transposed by
    adjoint_dt)."""

    def __init__(self, adjoint_st=False, adjoint_dt=False):
        super(SparseTensorDenseMatmul, self).__init__()
        for name, v in (("adjoint_st", adjoint_st), ("adjoint_dt", adjoint_dt)):
            if not isinstance(v, bool):
                raise TypeError("For 'SparseTensorDenseMatmul', '%s' must be bool, but got %s."
                                % (name, type(v).__name__))
        self.adjoint_st, self.adjoint_dt = adjoint_st, adjoint_dt

    def __call__(self, indices, values, sparse_shape, dense):
        ops = _ops()
        shape = _shape_tuple("SparseTensorDenseMatmul", sparse_shape)
        if len(shape) != 2:
            raise ValueError("For 'SparseTensorDenseMatmul', the sparse tensor must be 2-D, but got shape %s." % (shape,))
        if self.adjoint_st:
            indices = ops.stack((indices[:, 1], indices[:, 0]), 1)
            shape = (shape[1], shape[0])
        if self.adjoint_dt:
            dense = ops.transpose(dense, (1, 0))
        if dense.shape[0] != shape[1]:
            raise ValueError("For 'SparseTensorDenseMatmul', the sparse tensor's columns (%d) must equal "
                             "the dense tensor's rows (%d)." % (shape[1], dense.shape[0]))
        picked = ops.gather(dense, indices[:, 1], 0) * ops.expand_dims(values, 1)
        return ops.unsorted_segment_sum(picked, indices[:, 0], shape[0])


class SparseSlice(Primitive):
    """SparseSlice()(indices, values, shape, start, size): the entries inside the box
    [start, start + size), re-based at start -> (y_indices, y_values, y_shape)."""

    def __call__(self, indices, values, shape, start, size):
        ops = _ops()
        shp = _shape_tuple("SparseSlice", shape)
        st, sz = _shape_tuple("SparseSlice", start), _shape_tuple("SparseSlice", size)
        if not len(shp) == len(st) == len(sz):
            raise ValueError("For 'SparseSlice', shape, start and size must have the same length.")
        ends = [min(a + b, s) for a, b, s in zip(st, sz, shp)]
        keep = [i for i, r in enumerate(indices.tolist())
                if all(a <= c < e for c, a, e in zip(r, st, ends))]
        k = _T(keep, _C_int64())
        y_idx = ops.gather(indices, k, 0) - _T(list(st), indices.dtype) if keep else \
            ops.zeros((0, len(shp)), indices.dtype)
        y_val = ops.gather(values, k, 0) if keep else ops.zeros((0,), values.dtype)
        y_shape = _T([max(e - a, 0) for a, e in zip(st, ends)], _C_int64())
        return y_idx, y_val, y_shape


class Coalesce(Primitive):
    """Coalesce()(x_indices (ndims, N), x_values (N,), x_shape): duplicates summed, sorted ->
    (y_indices (ndims, M), y_values, y_shape)."""

    def __call__(self, x_indices, x_values, x_shape):
        ops = _ops()
        idx, val = _coalesce(ops.transpose(x_indices, (1, 0)), x_values)
        return ops.transpose(idx, (1, 0)), val, x_shape
