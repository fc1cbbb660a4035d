// pijit._C.TensorBase: construction, operators, comparisons, conversions, buffer protocol.
#include "pyext/tensor_object.h"

#include <cstring>

#include "pyext/augassign.h"  // what `x += y` means

#include "graph/op.h"
#include "graph/tape.h"
#include "graph/trace_context.h"
#include "kernels/copy.h"

namespace pj::py {

namespace {

PyTypeObject* g_tensor_class = &TensorBaseType;

TensorObject* as_obj(PyObject* o) { return reinterpret_cast<TensorObject*>(o); }

PyObject* tensor_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"input_data", "dtype", "shape", "init", nullptr};
  PyObject *data = Py_None, *dtype = Py_None, *shape = Py_None, *init = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOOO:Tensor", const_cast<char**>(kwlist), &data,
                                   &dtype, &shape, &init))
    return nullptr;
  PJ_PY_BEGIN
  std::optional<DType> dt = parse_optional_dtype(dtype);
  Tensor t;
  if (init != Py_None) {
    // MindSpore initialises such tensors lazily (init_data()); pijit draws the values now, from
    // the same initializer(init, shape, dtype) that Parameters use.
    if (data != Py_None) return fail(PyExc_ValueError, "Tensor(): pass either input_data or init, not both");
    if (shape == Py_None || dtype == Py_None)
      return fail(PyExc_ValueError, "Tensor(): init needs both shape and dtype");
    Ref mod(PyImport_ImportModule("pijit.common.initializer"));
    if (!mod) return nullptr;
    Ref made(PyObject_CallMethod(mod.get(), "initializer", "OOO", init, shape, dtype));
    if (!made) return nullptr;
    if (!is_tensor(made.get())) return fail(PyExc_TypeError, "Tensor(): the initializer did not produce a tensor");
    t = unwrap(made.get());
  } else if (data != Py_None) {
    if (shape != Py_None) return fail(PyExc_ValueError, "Tensor(): pass either input_data or shape, not both");
    t = tensor_from_py(data, dt);
  } else if (shape != Py_None) {
    // MindSpore creates uninitialised tensors from (dtype, shape); pijit zero-fills them. A None or
    // a pijit.Symbol in the shape makes an input_signature placeholder: that size is 0 and the
    // shape as given is kept in _input_spec (jit and Cell.set_inputs read it).
    Shape s;
    Ref seq(PySequence_Fast(shape, "Tensor(): shape must be a tuple or list of ints"));
    if (!seq) return nullptr;
    bool placeholder = false;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq.get()); ++i) {
      PyObject* item = PySequence_Fast_GET_ITEM(seq.get(), i);
      if (item == Py_None || PyObject_HasAttrString(item, "_pijit_symbol")) {
        placeholder = true;
        s.push_back(0);
        continue;
      }
      if (PyBool_Check(item) || !PyIndex_Check(item))  // (a float would be truncated by __int__)
        return PyErr_Format(PyExc_TypeError, "Tensor(): shape must be a tuple or list of ints, got an element of "
                            "type '%.200s'", Py_TYPE(item)->tp_name);
      Ref idx(PyNumber_Index(item));
      if (!idx) return nullptr;
      int overflow = 0;
      long long d = PyLong_AsLongLongAndOverflow(idx.get(), &overflow);
      if (d == -1 && PyErr_Occurred()) return nullptr;
      if (overflow) return fail(PyExc_ValueError, "Tensor(): a dim of shape does not fit in a 64-bit integer");
      s.push_back(d);
    }
    t = Tensor::zeros(s, dt.value_or(DType::Float32));
    if (placeholder) {
      PyObject* self = type->tp_alloc(type, 0);
      if (!self) return nullptr;
      new (&as_obj(self)->tensor) Tensor(std::move(t));
      Ref spec(PySequence_Tuple(shape));
      if (!spec || PyObject_SetAttrString(self, "_input_spec", spec.get()) < 0) {
        Py_DECREF(self);
        return nullptr;
      }
      return self;
    }
  } else {
    return fail(PyExc_TypeError, "Tensor() needs input_data (a number, a nested list/tuple, a Tensor or a buffer) or a shape");
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (!self) return nullptr;
  new (&as_obj(self)->tensor) Tensor(std::move(t));
  return self;
  PJ_PY_END(nullptr)
}

void tensor_dealloc(PyObject* self) {
  if (as_obj(self)->weakreflist) PyObject_ClearWeakRefs(self);
  as_obj(self)->tensor.~Tensor();
  Py_TYPE(self)->tp_free(self);
}

inline void sizes_read(const Tensor& t, int dim, const char* what) {
  if (t.is_symbolic())
    if (TraceContext* tc = trace_context()) tc->sizes_read(t, dim, what);
}
// is_contiguous() of a symbolic tensor as the tracer knows it; -1: unknown.
int traced_contiguity(PyObject* self) {
  TraceContext* tc = trace_context();
  return tc ? tc->contiguity(self) : -1;
}

Py_hash_t tensor_hash(PyObject* self) {
  if (as_obj(self)->tensor.is_symbolic())
    if (TraceContext* tc = trace_context()) tc->identity_observed(self);
  return _Py_HashPointer(self);
}

// ---- operators -----------------------------------------------------------------------------------
// Resolves both operands; false means "not ours" (return NotImplemented).
bool operands(PyObject* a, PyObject* b, Tensor* x, Tensor* y) {
  if (is_tensor(a)) {
    *x = unwrap(a);
    auto o = operand(b, x->dtype());
    if (!o) return false;
    *y = *o;
  } else {
    *y = unwrap(b);
    auto o = operand(a, y->dtype());
    if (!o) return false;
    *x = *o;
  }
  return true;
}

// Operator slots run on every `a + b`: each op name (a string literal, compared by address) is
// looked up in the registry once. Callers hold the GIL, so the table needs no lock.
const OpDef& op_named(const char* name) {
  static std::pair<const char*, const OpDef*> resolved[32];
  for (auto& e : resolved) {
    if (e.first == name) return *e.second;
    if (e.first == nullptr) {
      const OpDef* op = find_op(name);
      if (!op) PJ_THROW(NotImplemented) << "op '" << name << "' is not in this build's registry";
      e = {name, op};
      return *op;
    }
  }
  PJ_CHECK(false) << "more operator names than the resolved-op table holds";
  __builtin_unreachable();
}

PyObject* binary(const char* name, PyObject* a, PyObject* b) {
  PJ_PY_BEGIN
  Tensor x, y;
  if (!operands(a, b, &x, &y)) Py_RETURN_NOTIMPLEMENTED;
  return wrap(call_eager(op_named(name), {x, y}));
  PJ_PY_END(nullptr)
}

// numpy's in-place rule: the result is cast back to the left operand's dtype only when that does
// not lose a category ("same_kind" casting), and written into its storage (views see it).
PyObject* inplace(const char* name, PyObject* a, PyObject* b) {
  PJ_PY_BEGIN
  Tensor x, y;
  if (!operands(a, b, &x, &y)) Py_RETURN_NOTIMPLEMENTED;
  require_not_tracing("an in-place operator");
  Tensor r = call_op1(op_named(name), {x, y});
  if (category(r.dtype()) > category(x.dtype()))
    PJ_THROW(Type) << "Cannot cast ufunc '" << name << "' output from dtype('"
                   << dtype_numpy_name(r.dtype()) << "') to dtype('" << dtype_numpy_name(x.dtype())
                   << "') with casting rule 'same_kind'";
  if (r.shape() != x.shape())
    PJ_THROW(Value) << "non-broadcastable output operand with shape " << shape_str(x.shape())
                    << " doesn't match the broadcast shape " << shape_str(r.shape());
  if (tape_active()) tape_before_write(x);
  copy_into(x, r);
  x.storage()->note_write();
  if (tape_active()) tape_rebind(x, r);
  Py_INCREF(a);
  return a;
  PJ_PY_END(nullptr)
}

// MindSpore's augmented assignment (pyext/augassign.h): the plain operator unless the switch is on.
bool g_augassign_inplace = false;

#define PJ_BINARY_SLOT(fn, op) \
  PyObject* fn(PyObject* a, PyObject* b) { return binary(op, a, b); }
#define PJ_INPLACE_SLOT(fn, op) \
  PyObject* fn(PyObject* a, PyObject* b) { return g_augassign_inplace ? inplace(op, a, b) : binary(op, a, b); }
PJ_BINARY_SLOT(nb_add, "add")
PJ_BINARY_SLOT(nb_sub, "sub")
PJ_BINARY_SLOT(nb_mul, "mul")
PJ_BINARY_SLOT(nb_truediv, "div")
PJ_BINARY_SLOT(nb_floordiv, "floor_div")
PJ_BINARY_SLOT(nb_mod, "mod")
PJ_BINARY_SLOT(nb_matmul, "matmul")
// numpy's and MindSpore's &, |, ^, <<, >>: bitwise on integers, logical on bool, TypeError on floats.
PJ_BINARY_SLOT(nb_and, "bitwise_and")
PJ_BINARY_SLOT(nb_or, "bitwise_or")
PJ_BINARY_SLOT(nb_xor, "bitwise_xor")
PJ_BINARY_SLOT(nb_lshift, "bitwise_left_shift")
PJ_BINARY_SLOT(nb_rshift, "bitwise_right_shift")
PJ_INPLACE_SLOT(nb_iadd, "add")
PJ_INPLACE_SLOT(nb_isub, "sub")
PJ_INPLACE_SLOT(nb_imul, "mul")
PJ_INPLACE_SLOT(nb_itruediv, "div")
PJ_INPLACE_SLOT(nb_ifloordiv, "floor_div")
// %=, @= and **= are the plain operators in both modes (MindSpore's __imod__, __imatmul__; no
// __ipow__): their slots are nb_mod, nb_matmul and nb_pow.

PyObject* nb_pow(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) return fail(PyExc_TypeError, "pow() with a modulus is not supported for tensors");
  return binary("pow", a, b);
}

PyObject* unary(const char* name, PyObject* a) {
  PJ_PY_BEGIN
  return wrap(call_op1(op_named(name), {unwrap(a)}));
  PJ_PY_END(nullptr)
}
PyObject* nb_neg(PyObject* a) {
  if (unwrap(a).dtype() == DType::Bool)
    return fail(PyExc_TypeError, "The numpy boolean negative, the `-` operator, is not supported, "
                                 "use the `~` operator or the logical_not function instead.");
  return unary("neg", a);
}
PyObject* nb_pos(PyObject* a) { return unary("copy", a); }
PyObject* nb_abs(PyObject* a) { return unary("abs", a); }
// ~: logical NOT of bool, bitwise NOT of integers (TypeError on floats, from the op).
PyObject* nb_invert(PyObject* a) { return unary(unwrap(a).dtype() == DType::Bool ? "logical_not" : "bitwise_not", a); }

// ---- conversions ---------------------------------------------------------------------------------
int nb_bool(PyObject* a) {
  const Tensor& t = unwrap(a);
  if (t.numel() != 1) {
    PyErr_SetString(PyExc_ValueError,
                    t.numel() == 0 ? "The truth value of an empty tensor is ambiguous."
                                   : "The truth value of an array with more than one element is "
                                     "ambiguous. Use a.any() or a.all()");
    return -1;
  }
  if (refuse_symbolic(t, "bool()")) return -1;
  return t.item_double(0) != 0;
}

PyObject* nb_float(PyObject* a) {
  const Tensor& t = unwrap(a);
  if (t.numel() != 1) return fail(PyExc_TypeError, "only size-1 arrays can be converted to Python scalars");
  if (refuse_symbolic(t, "float()")) return nullptr;
  return PyFloat_FromDouble(t.item_double(0));
}

PyObject* nb_int(PyObject* a) {
  const Tensor& t = unwrap(a);
  if (t.numel() != 1) return fail(PyExc_TypeError, "only size-1 arrays can be converted to Python scalars");
  if (refuse_symbolic(t, "int()")) return nullptr;
  if (is_floating(t.dtype())) {
    Ref f(PyFloat_FromDouble(t.item_double(0)));
    return PyNumber_Long(f.get());
  }
  return PyLong_FromLongLong(t.item_int(0));
}

PyObject* nb_index(PyObject* a) {
  const Tensor& t = unwrap(a);
  if (t.ndim() != 0 || !is_integral(t.dtype(), true))
    return fail(PyExc_TypeError, "only integer scalar arrays can be converted to a scalar index");
  if (refuse_symbolic(t, "using a tensor as an index")) return nullptr;
  return PyLong_FromLongLong(t.item_int(0));
}

PyNumberMethods number_methods = [] {
  PyNumberMethods m{};
  m.nb_add = nb_add;
  m.nb_subtract = nb_sub;
  m.nb_multiply = nb_mul;
  m.nb_remainder = nb_mod;
  m.nb_power = nb_pow;
  m.nb_negative = nb_neg;
  m.nb_positive = nb_pos;
  m.nb_absolute = nb_abs;
  m.nb_bool = nb_bool;
  m.nb_invert = nb_invert;
  m.nb_and = nb_and;
  m.nb_xor = nb_xor;
  m.nb_or = nb_or;
  m.nb_lshift = nb_lshift;
  m.nb_rshift = nb_rshift;
  m.nb_int = nb_int;
  m.nb_float = nb_float;
  m.nb_inplace_add = nb_iadd;
  m.nb_inplace_subtract = nb_isub;
  m.nb_inplace_multiply = nb_imul;
  m.nb_inplace_remainder = nb_mod;
  m.nb_inplace_power = nb_pow;
  m.nb_floor_divide = nb_floordiv;
  m.nb_true_divide = nb_truediv;
  m.nb_inplace_floor_divide = nb_ifloordiv;
  m.nb_inplace_true_divide = nb_itruediv;
  m.nb_index = nb_index;
  m.nb_matrix_multiply = nb_matmul;
  m.nb_inplace_matrix_multiply = nb_matmul;
  return m;
}();

PyObject* richcompare(PyObject* a, PyObject* b, int op) {
  static const char* names[] = {"lt", "le", "eq", "ne", "gt", "ge"};
  return binary(names[op], a, b);
}

// ---- sequence-ish ---------------------------------------------------------------------------------
Py_ssize_t mp_length(PyObject* a) {
  const Tensor& t = unwrap(a);
  if (t.ndim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of unsized object");
    return -1;
  }
  sizes_read(t, 0, "len()");
  return t.dim(0);
}

PyMappingMethods mapping_methods = {mp_length, tensor_getitem, tensor_setitem};

// ---- buffer protocol --------------------------------------------------------------------------------
int getbuffer(PyObject* self, Py_buffer* view, int flags) {
  const Tensor& t = unwrap(self);
  if (refuse_symbolic(t, "the buffer protocol (memoryview, numpy)")) return -1;
  if (!*dtype_format(t.dtype())) {
    PyErr_Format(PyExc_TypeError, "a %s tensor has no buffer format (numpy has no %s); cast it to "
                 "float32 first", dtype_name(t.dtype()), dtype_numpy_name(t.dtype()));
    return -1;
  }
  int nd = t.ndim();
  // shape and strides live in one block owned by the view.
  Py_ssize_t* dims = static_cast<Py_ssize_t*>(PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (nd + 1)));
  if (!dims) {
    PyErr_NoMemory();
    return -1;
  }
  int item = itemsize(t.dtype());
  for (int i = 0; i < nd; ++i) {
    dims[i] = t.dim(i);
    dims[nd + i] = t.stride(i) * item;
  }
  view->buf = t.raw_data();
  view->obj = self;
  Py_INCREF(self);
  ++as_obj(self)->exports;
  t.storage()->begin_external_write();
  view->len = t.numel() * item;
  view->readonly = 0;
  view->itemsize = item;
  view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(dtype_format(t.dtype())) : nullptr;
  view->ndim = nd;
  view->shape = dims;
  view->strides = dims + nd;
  view->suboffsets = nullptr;
  view->internal = dims;
  // Consumers that cannot take strides (or shapes) need contiguous data.
  bool flat = (flags & PyBUF_ND) != PyBUF_ND && nd != 1;
  bool unstrided = (flags & PyBUF_STRIDES) != PyBUF_STRIDES;
  if ((flat || unstrided) && !t.is_contiguous()) {
    PyMem_Free(dims);
    --as_obj(self)->exports;
    t.storage()->end_external_write();
    Py_DECREF(self);
    view->obj = nullptr;
    PyErr_SetString(PyExc_BufferError, "tensor is not contiguous; call .contiguous() first");
    return -1;
  }
  if (flat) view->shape = nullptr;
  if (unstrided) view->strides = nullptr;
  return 0;
}

void releasebuffer(PyObject* self, Py_buffer* view) {
  PyMem_Free(view->internal);
  --as_obj(self)->exports;
  unwrap(self).storage()->end_external_write();
}

PyBufferProcs buffer_procs = {getbuffer, releasebuffer};

// ---- attributes and methods ------------------------------------------------------------------------
PyObject* shape_tuple(const Shape& s) {
  PyObject* t = PyTuple_New(s.size());
  for (size_t i = 0; i < s.size(); ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(s[i]));
  return t;
}

PyObject* get_shape(PyObject* self, void*) {
  sizes_read(unwrap(self), -1, ".shape");
  return shape_tuple(unwrap(self).shape());
}
PyObject* get_dtype(PyObject* self, void*) { return dtype_object(unwrap(self).dtype()); }
PyObject* get_ndim(PyObject* self, void*) { return PyLong_FromLong(unwrap(self).ndim()); }
PyObject* get_size(PyObject* self, void*) {
  sizes_read(unwrap(self), -1, ".size");
  return PyLong_FromLongLong(unwrap(self).numel());
}
PyObject* get_itemsize(PyObject* self, void*) { return PyLong_FromLong(itemsize(unwrap(self).dtype())); }
PyObject* get_nbytes(PyObject* self, void*) {
  sizes_read(unwrap(self), -1, ".nbytes");
  return PyLong_FromLongLong(unwrap(self).nbytes());
}
// Layout (strides, contiguity) of a graph value is the compiler's choice, not eager's: capture
// refuses to read it.
PyObject* get_strides(PyObject* self, void*) {
  const Tensor& t = unwrap(self);
  if (refuse_symbolic(t, "strides")) return nullptr;
  Shape s = t.strides();
  for (auto& x : s) x *= itemsize(t.dtype());
  return shape_tuple(s);
}

PyGetSetDef getset[] = {
    {"shape", get_shape, nullptr, "tuple of dimensions", nullptr},
    {"dtype", get_dtype, nullptr, "element type", nullptr},
    {"ndim", get_ndim, nullptr, "number of dimensions", nullptr},
    {"size", get_size, nullptr, "number of elements", nullptr},
    {"itemsize", get_itemsize, nullptr, "bytes per element", nullptr},
    {"nbytes", get_nbytes, nullptr, "bytes of the elements", nullptr},
    {"strides", get_strides, nullptr, "bytes to step in each dimension (numpy convention)", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

// t._dims(start, stop=ndim): the sizes t.shape[start:stop], for pijit's library code that needs
// only some of them: under capture only those count as read (a dynamic batch size stays dynamic
// when a convolution reads its input's height and width).
PyObject* m_dims(PyObject* self, PyObject* args) {
  const Tensor& t = unwrap(self);
  int start = 0, stop = t.ndim();
  if (!PyArg_ParseTuple(args, "i|i:_dims", &start, &stop)) return nullptr;
  if (start < 0) start += t.ndim();
  if (stop < 0) stop += t.ndim();
  start = std::max(0, std::min(start, t.ndim()));
  stop = std::max(start, std::min(stop, t.ndim()));
  for (int d = start; d < stop; ++d) sizes_read(t, d, ".shape");
  Shape s(t.shape().begin() + start, t.shape().begin() + stop);
  return shape_tuple(s);
}

PyObject* m_item(PyObject* self, PyObject* args) {
  const Tensor& t = unwrap(self);
  PyObject* index = nullptr;
  if (!PyArg_ParseTuple(args, "|O:item", &index)) return nullptr;
  if (index) {
    long long i = PyLong_AsLongLong(index);
    if (i == -1 && PyErr_Occurred()) return nullptr;
    if (i < 0) i += t.numel();
    if (i < 0 || i >= t.numel()) return fail(PyExc_IndexError, "index out of bounds");
    return element_to_py(t, i);
  }
  if (t.numel() != 1) return fail(PyExc_ValueError, "can only convert an array of size 1 to a Python scalar");
  return element_to_py(t, 0);
}

PyObject* tolist_rec(const Tensor& t, int dim, int64_t offset) {
  if (dim == t.ndim()) {
    return stored_element_to_py(t, offset);
  }
  PyObject* list = PyList_New(t.dim(dim));
  if (!list) return nullptr;
  for (int64_t i = 0; i < t.dim(dim); ++i) {
    PyObject* e = tolist_rec(t, dim + 1, offset + i * t.stride(dim));
    if (!e) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, e);
  }
  return list;
}

PyObject* m_tolist(PyObject* self, PyObject*) {
  if (refuse_symbolic(unwrap(self), "tolist()")) return nullptr;
  return tolist_rec(unwrap(self), 0, 0);
}

// While capturing, every tensor's address is refused: a tensor capture made becomes a graph
// constant, which each call returns as a fresh copy at another address.
bool refuse_address(const char* what) {
  if (!trace_context()) return false;
  PyErr_Format(g_capture_break, "data_dependent: %s reads a tensor's address, which differs on every call", what);
  return true;
}

PyObject* m_data_ptr(PyObject* self, PyObject*) {
  if (refuse_address("data_ptr()")) return nullptr;
  return PyLong_FromVoidPtr(unwrap(self).raw_data());
}
PyObject* m_storage_ptr(PyObject* self, PyObject*) {
  if (refuse_address("storage_ptr()")) return nullptr;
  return PyLong_FromVoidPtr(unwrap(self).storage()->data());
}
PyObject* m_is_contiguous(PyObject* self, PyObject*) {
  if (unwrap(self).is_symbolic()) {
    int c = traced_contiguity(self);
    if (c >= 0) return PyBool_FromLong(c);
  }
  if (unwrap(self).is_symbolic()) {
    PyErr_SetString(g_capture_break,
                    "data_dependent: is_contiguous() of a view computed in the graph (capture does not track the layout of views)");
    return nullptr;
  }
  return PyBool_FromLong(unwrap(self).is_contiguous());
}

// self when contiguous (the same object, as eager code may rely on), else a contiguous copy. In a
// graph, a value whose layout capture does not know becomes the `contiguous` op, which decides
// the same way when the graph runs.
PyObject* m_contiguous(PyObject* self, PyObject*) {
  PJ_PY_BEGIN
  const Tensor& t = unwrap(self);
  int c = !t.is_symbolic() ? t.is_contiguous() : traced_contiguity(self);
  if (c == 1) {
    Py_INCREF(self);
    return self;
  }
  return wrap(call_op1(op_named(c == 0 ? "copy" : "contiguous"), {t}));
  PJ_PY_END(nullptr)
}

// MindSpore's Tensor.assign_value: this object takes the other tensor's shape, dtype and a copy of
// its data. Views taken earlier keep the old storage; a live buffer export would dangle, so it
// refuses while one exists (as bytearray refuses to resize).
PyObject* m_assign_value(PyObject* self, PyObject* value) {
  PJ_PY_BEGIN
  if (!is_tensor(value))
    return PyErr_Format(PyExc_TypeError, "assign_value(): value must be a Tensor, got %s", Py_TYPE(value)->tp_name);
  require_not_tracing("assign_value()");
  if (refuse_symbolic(unwrap(value), "assign_value()")) return nullptr;
  if (as_obj(self)->exports > 0)
    return fail(PyExc_BufferError,
                "assign_value(): the tensor's data is exported (a memoryview or numpy array holds it); release it first");
  Tensor copy = call_op1(op_named("copy"), {unwrap(value)});
  rebind(self, std::move(copy));
  Py_INCREF(self);
  return self;
  PJ_PY_END(nullptr)
}

PyMethodDef methods[] = {
    {"contiguous", m_contiguous, METH_NOARGS, "self when its elements are row-major without gaps, else a contiguous copy"},
    {"assign_value", m_assign_value, METH_O, "takes another tensor's shape, dtype and (a copy of) its data; returns self"},
    {"item", m_item, METH_VARARGS, "the element as a Python scalar (size-1 tensors, or item(i))"},
    {"_dims", m_dims, METH_VARARGS, "_dims(start, stop=ndim): shape[start:stop], read size by size under capture"},
    {"tolist", m_tolist, METH_NOARGS, "nested lists of Python scalars"},
    {"is_contiguous", m_is_contiguous, METH_NOARGS, "whether elements are laid out row-major without gaps"},
    {"_data_ptr", m_data_ptr, METH_NOARGS, "address of the first element (tests)"},
    {"_storage_ptr", m_storage_ptr, METH_NOARGS, "address of the underlying storage (tests: views share it)"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace


PyTypeObject TensorBaseType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "pijit._C.TensorBase";
  t.tp_basicsize = sizeof(TensorObject);
  t.tp_dealloc = tensor_dealloc;
  t.tp_as_number = &number_methods;
  t.tp_as_mapping = &mapping_methods;
  t.tp_as_buffer = &buffer_procs;
  t.tp_hash = tensor_hash;
  t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  t.tp_doc = "C base of pijit.Tensor";
  t.tp_richcompare = richcompare;
  t.tp_weaklistoffset = offsetof(TensorObject, weakreflist);
  t.tp_methods = methods;
  t.tp_getset = getset;
  t.tp_new = tensor_new;
  return t;
}();

bool augassign_inplace() { return g_augassign_inplace; }
void set_augassign_inplace(bool on) { g_augassign_inplace = on; }

bool augassign_writes(Opcode op) {
  if (!g_augassign_inplace) return false;
  switch (op) {
    case Opcode::INPLACE_ADD:
    case Opcode::INPLACE_SUBTRACT:
    case Opcode::INPLACE_MULTIPLY:
    case Opcode::INPLACE_TRUE_DIVIDE:
    case Opcode::INPLACE_FLOOR_DIVIDE: return true;
    default: return false;
  }
}

namespace {
PyObject* py_set_augassign_inplace(PyObject*, PyObject* on) {
  int b = PyObject_IsTrue(on);
  if (b < 0) return nullptr;
  g_augassign_inplace = b != 0;
  Py_RETURN_NONE;
}
PyObject* py_augassign_inplace(PyObject*, PyObject*) { return PyBool_FromLong(g_augassign_inplace); }

PyMethodDef augassign_functions[] = {
    {"_set_augassign_inplace", py_set_augassign_inplace, METH_O,
     "MindSpore's JIT_ENABLE_AUGASSIGN_INPLACE: whether += -= *= /= //= write into a tensor (set it through "
     "pijit._extends.parse.compile_config, whose change recompiles)"},
    {"_augassign_inplace", py_augassign_inplace, METH_NOARGS, "the switch _set_augassign_inplace set"},
    {nullptr, nullptr, 0, nullptr}};
}  // namespace

bool init_tensor_type(PyObject* module) {
  if (PyType_Ready(&TensorBaseType) < 0) return false;
  Py_INCREF(&TensorBaseType);
  if (PyModule_AddFunctions(module, augassign_functions) < 0) return false;
  return PyModule_AddObject(module, "TensorBase", reinterpret_cast<PyObject*>(&TensorBaseType)) == 0;
}

void set_tensor_class(PyTypeObject* cls) {
  Py_INCREF(cls);
  g_tensor_class = cls;
}

void require_data(const Tensor& t, const char* what) {
  if (t.is_symbolic())
    PJ_THROW(CaptureBreak) << "data_dependent: " << what << " reads the data of a tensor being captured";
}

void require_not_tracing(const char* what) {
  if (trace_context()) PJ_THROW(CaptureBreak) << "inplace_update: " << what << " updates a tensor in place";
}

bool refuse_symbolic(const Tensor& t, const char* what) {
  if (!t.is_symbolic()) return false;
  PyErr_Format(g_capture_break, "data_dependent: %s reads the data of a tensor being captured", what);
  return true;
}

PyTypeObject* tensor_class() { return g_tensor_class; }

PyObject* wrap(Tensor t) {
  PyObject* self = g_tensor_class->tp_alloc(g_tensor_class, 0);
  if (!self) throw PythonErrorAlreadySet();
  new (&as_obj(self)->tensor) Tensor(std::move(t));
  return self;
}

PyObject* wrap_all(const std::vector<Tensor>& ts) {
  Ref tup(PyTuple_New(ts.size()));
  if (!tup) throw PythonErrorAlreadySet();
  for (size_t i = 0; i < ts.size(); ++i) PyTuple_SET_ITEM(tup.get(), i, wrap(ts[i]));
  return tup.release();
}

}  // namespace pj::py
