// Tensor indexing from Python keys: parses a subscript into kernels/index_ops.h IndexItems (numpy
// rules: ints, slices, None, Ellipsis, integer and boolean arrays, lists, tuples of these).
#include "graph/op.h"
#include "graph/tape.h"
#include "graph/trace_context.h"
#include "kernels/copy.h"
#include "kernels/index_ops.h"
#include "pyext/tensor_object.h"

namespace pj::py {

namespace {

[[noreturn]] void invalid_index() {
  PJ_THROW(Index) << "only integers, slices (`:`), ellipsis (`...`), None and integer or boolean "
                     "tensors are valid indices";
}

// An integer index (already through __index__) as int64; past int64 the IndexError Python's own
// sequences raise, never a wrapped value with an OverflowError left pending.
int64_t index_value(PyObject* idx) {
  long long x = PyLong_AsLongLong(idx);
  if (x == -1 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) throw PythonErrorAlreadySet();
    PyErr_Clear();
    PJ_THROW(Index) << "cannot fit 'int' into an index-sized integer";
  }
  return x;
}

std::optional<int64_t> slice_field(PyObject* v) {
  if (v == Py_None) return std::nullopt;
  if (!PyIndex_Check(v)) PJ_THROW(Type) << "slice indices must be integers or None";
  Ref idx(PyNumber_Index(v));
  if (!idx) throw PythonErrorAlreadySet();
  // Slice bounds past int64 clamp, as Python's slices do (x[0:2**64] is all of x).
  Py_ssize_t x = PyNumber_AsSsize_t(idx.get(), nullptr);
  if (x == -1 && PyErr_Occurred()) throw PythonErrorAlreadySet();
  return x;
}

IndexItem array_item(const Tensor& t) {
  if (t.dtype() != DType::Bool && !is_integral(t.dtype(), false)) invalid_index();
  return IndexItem::tensor(t);
}

IndexItem parse_item(PyObject* o) {
  if (o == Py_None) return IndexItem::new_axis();
  if (o == Py_Ellipsis) return IndexItem::ellipsis();
  if (PySlice_Check(o)) {
    PySliceObject* s = reinterpret_cast<PySliceObject*>(o);
    std::optional<int64_t> step = slice_field(s->step);
    if (step && *step == 0) PJ_THROW(Value) << "slice step cannot be zero";
    return IndexItem::slice(slice_field(s->start), slice_field(s->stop), step.value_or(1));
  }
  if (PyBool_Check(o)) return IndexItem::tensor(Tensor::scalar(o == Py_True, DType::Bool));
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) PJ_THROW(Index) << "cannot fit 'int' into an index-sized integer";
    return IndexItem::integer(v);
  }
  if (is_tensor(o)) return array_item(unwrap(o));
  if (PyList_Check(o) || PyTuple_Check(o) || PyObject_CheckBuffer(o)) {
    Tensor t = tensor_from_py(o, std::nullopt);
    if (t.numel() == 0 && t.dtype() == DType::Float32) t = Tensor::empty(t.shape(), DType::Int64);
    return array_item(t);
  }
  if (PyIndex_Check(o)) {  // numpy integers and other __index__ objects
    Ref idx(PyNumber_Index(o));
    if (!idx) throw PythonErrorAlreadySet();
    return IndexItem::integer(index_value(idx.get()));
  }
  invalid_index();
}

IndexItems parse_key(PyObject* key) {
  IndexItems items;
  if (PyTuple_Check(key)) {
    Py_ssize_t n = PyTuple_GET_SIZE(key);
    items.reserve(n);
    for (Py_ssize_t i = 0; i < n; ++i) items.push_back(parse_item(PyTuple_GET_ITEM(key, i)));
  } else {
    items.push_back(parse_item(key));
  }
  return items;
}

}  // namespace

// x[key] as a graph op ("basic_index" view or "index"), so that capture records it like any other
// op; index arrays given as lists become constant inputs.
Tensor getitem_op(const Tensor& t, PyObject* key) {
  IndexItems items = parse_key(key);
  Tensors in{t};
  for (const IndexItem& it : items)
    if (it.kind == IndexItem::Kind::Array) in.push_back(it.array);
  Attrs attrs{{"items", encode_index_items(items)}};
  return call_op1(in.size() == 1 ? "basic_index" : "index", in, attrs);
}

PyObject* tensor_getitem(PyObject* self, PyObject* key) {
  PJ_PY_BEGIN
  const Tensor& t = unwrap(self);
  if (t.is_symbolic() || trace_context() || tape_active()) return wrap(getitem_op(t, key));
  // Fast path: x[i] on the first axis.
  if (PyLong_CheckExact(key) && t.ndim() > 0) {
    long long i = PyLong_AsLongLong(key);
    if (!(i == -1 && PyErr_Occurred())) {
      int64_t n = t.dim(0);
      if (i < -n || i >= n)
        PJ_THROW(Index) << "index " << i << " is out of bounds for axis 0 with size " << n;
      if (i < 0) i += n;
      Shape s(t.shape().begin() + 1, t.shape().end()), st(t.strides().begin() + 1, t.strides().end());
      return wrap(t.as_strided(s, st, t.offset() + i * t.stride(0)));
    }
    PyErr_Clear();
  }
  return wrap(advanced_index(t, parse_key(key)));
  PJ_PY_END(nullptr)
}

namespace {
// value as an operand of t, or the TypeError eager assignment raises.
Tensor setitem_operand(const Tensor& t, PyObject* value) {
  std::optional<Tensor> v = operand(value, t.dtype());
  if (!v)
    PJ_THROW(Type) << "cannot assign a value of type '" << Py_TYPE(value)->tp_name
                   << "' to tensor elements; expected a number, a sequence or a Tensor";
  return *v;
}

Tensor index_put_value(const Tensor& t, const Tensor& v, const IndexItems& items) {
  Tensors in{t, v};
  for (const IndexItem& it : items)
    if (it.kind == IndexItem::Kind::Array) in.push_back(it.array);
  return call_op1("index_put", in, Attrs{{"items", encode_index_items(items)}});
}
}  // namespace

PyObject* tensor_setitem_value(PyObject* self, PyObject* key, PyObject* value) {
  PJ_PY_BEGIN
  const Tensor& t = unwrap(self);
  Tensor v = setitem_operand(t, value);
  return wrap(index_put_value(t, v, parse_key(key)));
  PJ_PY_END(nullptr)
}

int tensor_setitem(PyObject* self, PyObject* key, PyObject* value) {
  if (value == nullptr) {
    PyErr_SetString(PyExc_ValueError, "cannot delete tensor elements");
    return -1;
  }
  PJ_PY_BEGIN
  const Tensor& t = unwrap(self);
  require_not_tracing("tensor[...] = value");
  std::optional<Tensor> v = setitem_operand(t, value);
  IndexItems items = parse_key(key);
  if (tape_active() && (tape_tracks(t) || tape_tracks(*v))) {
    // Recorded as the functional index_put, whose result t then holds: gradients flow through it.
    Tensor r = index_put_value(t, *v, items);
    tape_before_write(t);
    copy_into(t, r);
    t.storage()->note_write();
    tape_rebind(t, r);
    return 0;
  }
  if (tape_active()) tape_before_write(t);
  index_put(t, items, *v);
  t.storage()->note_write();
  return 0;
  PJ_PY_END(-1)
}

}  // namespace pj::py
