"""mindspore.COOTensor, CSRTensor, RowTensor and the deprecated SparseTensor: sparse tensors as a
dense `values` Tensor plus integer index Tensors and a shape (a tuple).

Values stay pijit Tensors through every operation (gathers, scatters and segment sums), so
gradients reach them; index bookkeeping that reorders or merges entries (coalesce, add, concat,
slicing) reads the indices once on the host. Conversions and products follow MindSpore: to_dense
scatter-adds (duplicate coordinates sum), COO * dense gathers the dense values at the indices,
CSR * dense broadcasts the dense operand first.
"""
from pijit import _C

_Tensor = _C.TensorBase


def _ops():
    from pijit import ops
    return ops


def _tensor_cls():
    from pijit import Tensor
    return Tensor


def _check_shape(who, shape):
    if not isinstance(shape, tuple) or not all(isinstance(s, int) and not isinstance(s, bool)
                                               and s >= 0 for s in shape):
        raise TypeError("For '%s', the 'shape' must be a tuple of non-negative ints, but got %r."
                        % (who, shape))


def _check_int_dtype(who, name, t, allowed=("int16", "int32", "int64")):
    if t.dtype.name not in allowed:
        raise TypeError("For '%s', the dtype of '%s' must be one of %s, but got %s."
                        % (who, name, ", ".join(allowed), t.dtype))


class COOTensor(object):
    """dense[indices[i]] = values[i]: indices (N, ndims) int32/int64, values (N,), shape."""

    def __init__(self, indices=None, values=None, shape=None, coo_tensor=None):
        if coo_tensor is not None:
            if not isinstance(coo_tensor, COOTensor):
                raise TypeError("Expect input `coo_tensor` to be a COOTensor, but got %s" % type(coo_tensor))
            if not (indices is None and values is None and shape is None):
                raise TypeError("If input `coo_tensor` is provided, `indices`, `values`, `shapes` should all "
                                "be `None`")
            indices, values, shape = coo_tensor._indices, coo_tensor._values, coo_tensor._shape
        else:
            if not (isinstance(indices, _Tensor) and isinstance(values, _Tensor)):
                raise TypeError("Inputs must follow: COOTensor(indices, values, shape).")
            _check_shape("COOTensor", shape)
            if len(indices.shape) != 2 or len(values.shape) != 1 or indices.shape[0] != values.shape[0]:
                raise ValueError("For COOTensor, indices must be 2-D (N, ndims) and values 1-D (N,), but got "
                                 "indices shape %s and values shape %s." % (tuple(indices.shape),
                                                                            tuple(values.shape)))
            if indices.shape[1] != len(shape):
                raise ValueError("For COOTensor, indices.shape[1] must equal len(shape) (%d), but got %d."
                                 % (len(shape), indices.shape[1]))
            _check_int_dtype("COOTensor", "indices", indices, ("int32", "int64"))
            indices = _ops().stop_gradient(indices)
        self._indices, self._values, self._shape = indices, values, tuple(shape)

    indices = property(lambda self: self._indices, doc="The (N, ndims) coordinates.")
    values = property(lambda self: self._values, doc="The (N,) values.")
    shape = property(lambda self: self._shape, doc="The dense shape (a tuple).")
    dtype = property(lambda self: self._values.dtype, doc="The values' dtype.")
    size = property(lambda self: self._values.size, doc="The number of stored values.")
    itemsize = property(lambda self: self._values.itemsize)
    ndim = property(lambda self: len(self._shape))

    def __repr__(self):
        return "COOTensor(shape=%s, dtype=%s, indices=%r, values=%r)" % (
            list(self._shape), self.dtype, self._indices, self._values)

    def _same_shape(self, other):
        if tuple(other.shape) != self._shape:
            raise ValueError("Input tensors should have the same shape.")

    def __neg__(self):
        return COOTensor(self._indices, -self._values, self._shape)

    def __add__(self, other):
        self._same_shape(other)
        if isinstance(other, _Tensor):
            return _ops().tensor_scatter_add(other, self._indices, self._values)
        if isinstance(other, COOTensor):
            from pijit.ops.sparse import coo_add
            return coo_add(self, other, _tensor_cls()(0, self.dtype))
        raise TypeError("COOTensor add with %s is not supported." % type(other))

    def __sub__(self, other):
        self._same_shape(other)
        if isinstance(other, _Tensor):
            return _ops().tensor_scatter_add(-other, self._indices, self._values)
        if isinstance(other, COOTensor):
            from pijit.ops.sparse import coo_add
            return coo_add(self, -other, _tensor_cls()(0, self.dtype))
        raise TypeError("COOTensor subtract with %s is not supported." % type(other))

    def __mul__(self, other):
        self._same_shape(other)
        if isinstance(other, _Tensor):
            return COOTensor(self._indices, self._values * _ops().gather_nd(other, self._indices), self._shape)
        raise TypeError("COOTensor multiply with %s is not supported." % type(other))

    def __truediv__(self, other):
        self._same_shape(other)
        if isinstance(other, _Tensor):
            return COOTensor(self._indices, self._values / _ops().gather_nd(other, self._indices), self._shape)
        raise TypeError("COOTensor divide with %s is not supported." % type(other))

    __div__ = __truediv__

    def to_dense(self):
        """The dense Tensor (duplicate coordinates add up)."""
        ops = _ops()
        return ops.tensor_scatter_add(ops.zeros(self._shape, self.dtype), self._indices, self._values)

    def to_csr(self):
        """The CSRTensor of a 2-D COOTensor (entries ordered by row, stably)."""
        if self.ndim != 2:
            raise ValueError("Currently only support 2-D COOTensor when converting to CSRTensor.")
        ops = _ops()
        rows = self._indices[:, 0]
        order = sorted(range(len(rows.tolist())), key=rows.tolist().__getitem__)
        T = _tensor_cls()
        idx = T(order, dtype=self._indices.dtype) if order else T([], dtype=self._indices.dtype)
        counts = [0] * (self._shape[0] + 1)
        for r in rows.tolist():
            counts[r + 1] += 1
        for i in range(self._shape[0]):
            counts[i + 1] += counts[i]
        return CSRTensor(T(counts, dtype=self._indices.dtype), ops.gather(self._indices[:, 1], idx, 0),
                         ops.gather(self._values, idx, 0), self._shape)

    def to_tuple(self):
        return self._indices, self._values, self._shape

    def astype(self, dtype):
        return COOTensor(self._indices, self._values.astype(dtype), self._shape)

    def abs(self):
        return COOTensor(self._indices, self._values.abs(), self._shape)

    def add(self, other, thresh):
        from pijit.ops.sparse import coo_add
        return coo_add(self, other, thresh)

    def coalesce(self):
        """Duplicate coordinates summed, entries in row-major order of their coordinates."""
        from pijit.ops.sparse import _coalesce
        idx, vals = _coalesce(self._indices, self._values)
        return COOTensor(idx, vals, self._shape)


class SparseTensor(COOTensor):
    """The deprecated name of COOTensor (MindSpore 1.7): SparseTensor(indices, values, shape)."""

    def __init__(self, indices, values, shape):
        if not (isinstance(indices, _Tensor) and isinstance(values, _Tensor) and isinstance(shape, tuple)):
            raise TypeError("Inputs must follow: COOTensor(indices, values, shape).")
        super(SparseTensor, self).__init__(indices, values, shape)


class CSRTensor(object):
    """Compressed rows: row i holds values[indptr[i]:indptr[i+1]] at columns indices[...];
    values may carry trailing feature dimensions (values.shape[1:] == shape[2:])."""

    def __init__(self, indptr=None, indices=None, values=None, shape=None, csr_tensor=None):
        if csr_tensor is not None:
            if not isinstance(csr_tensor, CSRTensor):
                raise TypeError("Expect input `csr_tensor` to be a CSRTensor, but got %s" % type(csr_tensor))
            if not (indptr is None and indices is None and values is None and shape is None):
                raise TypeError("If input `csr_tensor` is provided, `indptr`, `indices`, `values`, `shapes` "
                                "should all be `None`")
            indptr, indices, values, shape = (csr_tensor._indptr, csr_tensor._indices, csr_tensor._values,
                                              csr_tensor._shape)
        else:
            if not all(isinstance(t, _Tensor) for t in (indptr, indices, values)):
                raise TypeError("For CSRTensor, indptr, indices and values must be Tensors.")
            _check_shape("CSRTensor", shape)
            if len(shape) < 2:
                raise ValueError("For CSRTensor, the shape must have at least 2 dimensions, but got %s."
                                 % (shape,))
            if len(indptr.shape) != 1 or len(indices.shape) != 1:
                raise ValueError("For CSRTensor, indptr and indices must be 1-D.")
            if indptr.shape[0] != shape[0] + 1:
                raise ValueError("For CSRTensor, indptr must have shape[0] + 1 = %d elements, but got %d."
                                 % (shape[0] + 1, indptr.shape[0]))
            if values.shape[0] != indices.shape[0] or tuple(values.shape[1:]) != tuple(shape[2:]):
                raise ValueError("For CSRTensor, values must have shape (%d,) + %s, but got %s."
                                 % (indices.shape[0], tuple(shape[2:]), tuple(values.shape)))
            _check_int_dtype("CSRTensor", "indptr", indptr)
            _check_int_dtype("CSRTensor", "indices", indices)
            if indptr.dtype is not indices.dtype:
                raise TypeError("For CSRTensor, indptr and indices must have the same dtype, but got %s and %s."
                                % (indptr.dtype, indices.dtype))
            ops = _ops()
            indptr, indices = ops.stop_gradient(indptr), ops.stop_gradient(indices)
        self._indptr, self._indices, self._values, self._shape = indptr, indices, values, tuple(shape)

    indptr = property(lambda self: self._indptr)
    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._values.dtype)
    size = property(lambda self: self._values.size)
    itemsize = property(lambda self: self._values.itemsize)
    ndim = property(lambda self: len(self._shape))

    def __repr__(self):
        return "CSRTensor(shape=%s, dtype=%s, indptr=%r, indices=%r, values=%r)" % (
            list(self._shape), self.dtype, self._indptr, self._indices, self._values)

    def _rows(self):
        """The row of each stored value, a Tensor of the indices' dtype."""
        ptr = self._indptr.tolist()
        rows = [r for r in range(len(ptr) - 1) for _ in range(ptr[r + 1] - ptr[r])]
        return _tensor_cls()(rows, dtype=self._indices.dtype) if rows else \
            _ops().zeros((0,), self._indices.dtype)

    def _coords(self):
        return _ops().stack((self._rows(), self._indices), 1)

    def __neg__(self):
        return CSRTensor(self._indptr, self._indices, -self._values, self._shape)

    def _dense_at(self, other):
        """other broadcast to the dense shape, read at the stored positions."""
        ops = _ops()
        dense = ops.broadcast_to(other, self._shape) if tuple(other.shape) != self._shape else other
        return ops.gather_nd(dense, self._coords())

    def __mul__(self, other):
        if not isinstance(other, _Tensor):
            raise TypeError("CSRTensor multiply with %s is not supported." % type(other))
        return CSRTensor(self._indptr, self._indices, self._values * self._dense_at(other), self._shape)

    def __truediv__(self, other):
        if not isinstance(other, _Tensor):
            raise TypeError("CSRTensor divide with %s is not supported." % type(other))
        return CSRTensor(self._indptr, self._indices, self._values / self._dense_at(other), self._shape)

    __div__ = __truediv__

    def __add__(self, other):
        if tuple(other.shape) != self._shape:
            raise ValueError("Input tensors should have the same shape.")
        if isinstance(other, CSRTensor):
            T = _tensor_cls()
            return self.add(other, T(1, self.dtype), T(1, self.dtype))
        raise TypeError("CSRTensor add with %s is not supported." % type(other))

    def __sub__(self, other):
        if tuple(other.shape) != self._shape:
            raise ValueError("Input tensors should have the same shape.")
        if isinstance(other, CSRTensor):
            T = _tensor_cls()
            return self.add(other, T(1, self.dtype), T(-1, self.dtype))
        raise TypeError("CSRTensor subtract with %s is not supported." % type(other))

    def to_tuple(self):
        return self._indptr, self._indices, self._values, self._shape

    def to_coo(self):
        if self.ndim != 2:
            raise ValueError("Currently only support 2-D CSRTensor when converting to COOTensor.")
        return COOTensor(self._coords(), self._values, self._shape)

    def to_dense(self):
        ops = _ops()
        return ops.tensor_scatter_add(ops.zeros(self._shape, self.dtype), self._coords(), self._values)

    def astype(self, dtype):
        return CSRTensor(self._indptr, self._indices, self._values.astype(dtype), self._shape)

    def abs(self):
        return CSRTensor(self._indptr, self._indices, self._values.abs(), self._shape)

    def mv(self, dense_vector):
        if not isinstance(dense_vector, _Tensor):
            raise TypeError("For 'CSRTensor.mv', the 'dense_vector' must be a Tensor, but got %s."
                            % type(dense_vector).__name__)
        if tuple(dense_vector.shape) != (self._shape[1], 1):
            raise ValueError("For 'CSRTensor.mv', the dense vector must have shape (%d, 1), but got %s."
                             % (self._shape[1], tuple(dense_vector.shape)))
        return self.mm(dense_vector)

    def mm(self, matrix):
        """self @ matrix: a dense Tensor for a dense matrix, a CSRTensor for a CSRTensor."""
        from pijit.ops.sparse import csr_mm
        if isinstance(matrix, CSRTensor):
            return csr_mm(self, matrix)
        if not isinstance(matrix, _Tensor):
            raise TypeError("For 'CSRTensor.mm', the 'matrix' must be a Tensor or CSRTensor, but got %s."
                            % type(matrix).__name__)
        if len(matrix.shape) != 2 or matrix.shape[0] != self._shape[1]:
            raise ValueError("For 'CSRTensor.mm', the matrix must be 2-D with shape[0] == %d, but got %s."
                             % (self._shape[1], tuple(matrix.shape)))
        ops = _ops()
        rows = self._gather_rows(matrix)
        return ops.unsorted_segment_sum(rows, self._rows(), self._shape[0])

    def _gather_rows(self, matrix):
        ops = _ops()
        picked = ops.gather(matrix, self._indices, 0)
        return picked * ops.expand_dims(self._values, 1)

    def sum(self, axis):
        """The sum over axis 0 or 1 (kept as a size-1 dimension), a dense Tensor."""
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError("For 'CSRTensor.sum', the 'axis' must be int, but got %s." % type(axis).__name__)
        if axis < 0:
            axis += self.ndim
        ops = _ops()
        if axis == 1:
            out = ops.unsorted_segment_sum(self._values, self._rows(), self._shape[0])
        elif axis == 0:
            out = ops.unsorted_segment_sum(self._values, self._indices, self._shape[1])
        else:
            return self.to_dense().sum(axis=axis, keepdims=True)
        return ops.expand_dims(out, axis)

    def add(self, b, alpha, beta):
        """alpha * self + beta * b, a CSRTensor (entries of both patterns, merged per row)."""
        from pijit.ops.sparse import csr_add
        return csr_add(self, b, alpha, beta)


class RowTensor(object):
    """Slices of a dense tensor: dense[indices[i], ...] = values[i, ...], of dense_shape."""

    def __init__(self, indices=None, values=None, shape=None, row_tensor=None):
        if row_tensor is not None:
            if not isinstance(row_tensor, RowTensor):
                raise TypeError("Expect input `row_tensor` to be a RowTensor, but got %s" % type(row_tensor))
            if not (indices is None and values is None and shape is None):
                raise TypeError("If input `row_tensor` is provided, `indices`, `values`, `shapes` should all "
                                "be `None`")
            indices, values, shape = row_tensor._indices, row_tensor._values, row_tensor._shape
        else:
            if not (isinstance(indices, _Tensor) and isinstance(values, _Tensor)):
                raise TypeError("For RowTensor, indices and values must be Tensors.")
            _check_shape("RowTensor", shape)
            if len(indices.shape) != 1 or values.shape[0] != indices.shape[0] or \
                    tuple(values.shape[1:]) != tuple(shape[1:]):
                raise ValueError("For RowTensor, indices must be 1-D (N,) and values (N,) + %s, but got %s and %s."
                                 % (tuple(shape[1:]), tuple(indices.shape), tuple(values.shape)))
        self._indices, self._values, self._shape = indices, values, tuple(shape)

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._shape)

    def __repr__(self):
        return "RowTensor(dense_shape=%s, indices=%r, values=%r)" % (list(self._shape), self._indices,
                                                                    self._values)

    def to_dense(self):
        ops = _ops()
        return ops.tensor_scatter_add(ops.zeros(self._shape, self._values.dtype),
                                      ops.expand_dims(self._indices, 1), self._values)
