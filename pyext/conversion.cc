// Python data -> tensors (nested sequences, numbers, buffers), dtype parsing, tensor elements ->
// Python scalars.
#include "py/pyport.h"  // first (Python.h); fresh_int

#include <cmath>
#include <limits>
#include <cstring>
#include <unordered_set>

#include "graph/op.h"
#include "graph/trace_context.h"
#include "kernels/copy.h"
#include "pyext/tensor_object.h"

namespace pj::py {

namespace {

PyObject* g_dtype_objects[kNumDTypes] = {};

// The category a Python scalar contributes to dtype inference, or nullopt if it is not one.
std::optional<Category> scalar_category(PyObject* o) {
  if (PyBool_Check(o)) return Category::Bool;
  if (PyLong_Check(o)) return Category::Integer;
  if (PyFloat_Check(o)) return Category::Floating;
  if (PyComplex_Check(o)) return Category::Complex;
  return std::nullopt;
}

bool is_sequence(PyObject* o) { return PyList_Check(o) || PyTuple_Check(o); }

struct Walk {
  Shape shape;
  Category cat = Category::Bool;
  bool any_float_tensor = false;
  std::optional<DType> tensor_dtype;  // widest dtype of Tensor/buffer leaves
};

[[noreturn]] void ragged(int depth, const Shape& shape) {
  Shape prefix(shape.begin(), shape.begin() + depth);
  PJ_THROW(Value) << "setting an array element with a sequence. The requested array has an "
                     "inhomogeneous shape after "
                  << depth << " dimensions. The detected shape was " << shape_str(prefix)
                  << " + inhomogeneous part.";
}

// First pass: shape and dtype category, checking that the nesting is rectangular. Each list level
// counts against Python's recursion limit (a self-referencing list raises RecursionError).
void walk(PyObject* o, int depth, Walk* w, bool* shape_fixed) {
  if (is_tensor(o)) {
    const Tensor& t = unwrap(o);
    Shape s = t.shape();
    if (!*shape_fixed) {
      w->shape.resize(depth);
      w->shape.insert(w->shape.end(), s.begin(), s.end());
      *shape_fixed = true;
    } else if (static_cast<int>(w->shape.size()) != depth + t.ndim() ||
               !std::equal(s.begin(), s.end(), w->shape.begin() + depth)) {
      ragged(depth, w->shape);
    }
    w->tensor_dtype = w->tensor_dtype ? promote(*w->tensor_dtype, t.dtype()) : t.dtype();
    return;
  }
  if (auto c = scalar_category(o)) {
    if (!*shape_fixed) {
      w->shape.resize(depth);
      *shape_fixed = true;
    } else if (static_cast<int>(w->shape.size()) != depth) {
      ragged(depth, w->shape);
    }
    w->cat = std::max(w->cat, *c);
    return;
  }
  if (is_sequence(o)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (!*shape_fixed) {
      w->shape.resize(depth);
      w->shape.push_back(n);
      if (n == 0) {
        *shape_fixed = true;
        return;
      }
    } else if (static_cast<int>(w->shape.size()) <= depth || w->shape[depth] != n) {
      ragged(depth, w->shape);
    }
    RecursionGuard guard(" while converting nested data to a Tensor");  // (a level per list, not per leaf)
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t i = 0; i < n; ++i) walk(items[i], depth + 1, w, shape_fixed);
    return;
  }
  // Other numbers (numpy scalars): integers have __index__, floats __float__.
  if (PyIndex_Check(o)) {
    bool fixed = *shape_fixed;
    if (!fixed) { w->shape.resize(depth); *shape_fixed = true; }
    else if (static_cast<int>(w->shape.size()) != depth) ragged(depth, w->shape);
    w->cat = std::max(w->cat, Category::Integer);
    return;
  }
  if (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float) {
    if (!*shape_fixed) { w->shape.resize(depth); *shape_fixed = true; }
    else if (static_cast<int>(w->shape.size()) != depth) ragged(depth, w->shape);
    w->cat = Category::Floating;
    return;
  }
  PJ_THROW(Type) << "Tensor data must be numbers, nested lists/tuples of numbers or tensors, but "
                    "got an element of type '"
                 << Py_TYPE(o)->tp_name << "'";
}

// A Python int as integer type T, or ValueError when it does not fit (numpy's "out of bounds").
template <typename T>
T int_in_range(PyObject* idx, DType dt) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
  if (v == -1 && PyErr_Occurred()) throw PythonErrorAlreadySet();
  if constexpr (std::is_same_v<T, uint64_t>) {
    if (overflow > 0) {
      unsigned long long u = PyLong_AsUnsignedLongLong(idx);
      if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
        PyErr_Clear();
        PJ_THROW(Value) << "Python integer out of bounds for " << dtype_numpy_name(dt);
      }
      return static_cast<T>(u);
    }
  }
  if (overflow || v < static_cast<long long>(std::numeric_limits<T>::min()) ||
      (v > 0 && static_cast<unsigned long long>(v) > static_cast<unsigned long long>(std::numeric_limits<T>::max())))
    PJ_THROW(Value) << "Python integer " << (overflow ? std::string("") : std::to_string(v) + " ")
                    << "out of bounds for " << dtype_numpy_name(dt);
  return static_cast<T>(v);
}

// One leaf of nested data written into *p (type T of dtype dt).
template <typename scalar_t>
void write_leaf(PyObject* o, scalar_t* p, DType dt) {
  if constexpr (std::is_same_v<scalar_t, bool>) {
    int r = PyObject_IsTrue(o);
    if (r < 0) throw PythonErrorAlreadySet();
    *p = r;
  } else if constexpr (std::is_integral_v<scalar_t>) {
    if (PyComplex_Check(o)) PJ_THROW(Type) << "cannot convert a complex number to " << dtype_numpy_name(dt);
    if (PyFloat_Check(o) || !PyIndex_Check(o)) {
      double d = PyFloat_AsDouble(o);
      if (d == -1.0 && PyErr_Occurred()) throw PythonErrorAlreadySet();
      if (!std::isfinite(d)) PJ_THROW(Value) << "cannot convert float " << d << " to integer";
      *p = convert_scalar<scalar_t>(d);
    } else {
      Ref idx(PyNumber_Index(o));
      if (!idx) throw PythonErrorAlreadySet();
      *p = int_in_range<scalar_t>(idx.get(), dt);
    }
  } else if constexpr (is_complex_t<scalar_t>::value) {
    Py_complex c = PyComplex_AsCComplex(o);
    if (c.real == -1.0 && PyErr_Occurred()) throw PythonErrorAlreadySet();
    *p = scalar_t(static_cast<typename scalar_t::value_type>(c.real),
                  static_cast<typename scalar_t::value_type>(c.imag));
  } else {
    if (PyComplex_Check(o)) PJ_THROW(Type) << "cannot convert a complex number to " << dtype_numpy_name(dt);
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) throw PythonErrorAlreadySet();
    *p = convert_scalar<scalar_t>(d);
  }
}

[[noreturn]] void changed_while_converting() {
  PJ_THROW(Runtime) << "the data changed size or nesting while it was converted to a Tensor";
}

// Second pass: write every leaf, in row-major order, into `out` at *pos. A leaf's __index__,
// __float__ or __bool__ is user code that may mutate the lists being read: each item is held
// while it is converted, and sizes and nesting are checked against the first pass's shape again,
// so nothing is written outside `out` or read from a freed item array.
void fill(PyObject* o, const Tensor& out, int64_t* pos, size_t depth) {
  const Shape& shape = out.shape();
  if (is_tensor(o)) {
    const Tensor& t = unwrap(o);
    require_data(t, "Tensor(tensor)");
    if (depth + t.ndim() != shape.size() || !std::equal(t.shape().begin(), t.shape().end(), shape.begin() + depth) ||
        *pos + t.numel() > out.numel())
      changed_while_converting();
    Tensor dst = out.as_strided(t.shape(), contiguous_strides(t.shape()), out.offset() + *pos);
    copy_into(dst, t);
    *pos += t.numel();
    return;
  }
  if (is_sequence(o)) {
    if (depth >= shape.size()) changed_while_converting();
    const Py_ssize_t n = shape[depth];
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (PySequence_Fast_GET_SIZE(o) != n) changed_while_converting();
      Ref item(PySequence_Fast_GET_ITEM(o, i));
      Py_INCREF(item.get());
      fill(item.get(), out, pos, depth + 1);
    }
    return;
  }
  if (depth != shape.size() || *pos >= out.numel()) changed_while_converting();
  int64_t i = (*pos)++;
  PJ_DISPATCH_STORAGE(out.dtype(), [&] { write_leaf(o, out.data<scalar_t>() + i, out.dtype()); });
}

// Copies a buffer-protocol object into a new contiguous tensor.
Tensor from_buffer(PyObject* data) {
  Py_buffer view;
  if (PyObject_GetBuffer(data, &view, PyBUF_RECORDS_RO) != 0) throw PythonErrorAlreadySet();
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  DType dt;
  std::string fmt = view.format ? view.format : "B";
  if (!dtype_from_format(fmt, static_cast<int>(view.itemsize), &dt)) {
    PJ_THROW(Type) << "cannot create a Tensor from a buffer with format '" << fmt << "' (itemsize "
                   << view.itemsize << "); supported: bool, (u)int8/16/32/64, float16/32/64, "
                      "complex64/128, little-endian";
  }
  Shape shape, strides;
  for (int i = 0; i < view.ndim; ++i) {
    shape.push_back(view.shape[i]);
    Py_ssize_t st = view.strides ? view.strides[i] : 0;
    if (st % view.itemsize != 0) PJ_THROW(Value) << "unaligned buffer strides are not supported";
    strides.push_back(st / view.itemsize);
  }
  if (!view.strides) strides = contiguous_strides(shape);
  // Borrow the memory for the duration of the copy only.
  Tensor src = Tensor::view_of(Storage::borrow(view.buf, view.len, nullptr), shape, strides, 0, dt);
  return src.clone();
}

bool has_buffer(PyObject* o) { return PyObject_CheckBuffer(o) && !PyBytes_Check(o) && !PyUnicode_Check(o); }

}  // namespace

void register_dtype_objects(PyObject* seq) {
  for (int i = 0; i < kNumDTypes; ++i) {
    PyObject* o = PySequence_GetItem(seq, i);
    Py_XSETREF(g_dtype_objects[i], o);
  }
}

PyObject* dtype_object(DType t) {
  PyObject* o = g_dtype_objects[static_cast<int>(t)];
  if (!o) return PyUnicode_FromString(dtype_numpy_name(t));
  Py_INCREF(o);
  return o;
}

DType parse_dtype(PyObject* o) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (g_dtype_objects[i] == o) return static_cast<DType>(i);
  if (o == reinterpret_cast<PyObject*>(&PyFloat_Type)) return DType::Float32;
  if (o == reinterpret_cast<PyObject*>(&PyLong_Type)) return DType::Int64;
  if (o == reinterpret_cast<PyObject*>(&PyBool_Type)) return DType::Bool;
  std::string name;
  if (PyUnicode_Check(o)) {
    name = text(o);
  } else {
    // numpy dtypes and scalar types: str(np.dtype('float32')) == 'float32', np.float32.__name__.
    Ref attr(PyObject_GetAttrString(o, PyType_Check(o) ? "__name__" : "name"));
    if (!attr) PyErr_Clear();
    if (attr && PyUnicode_Check(attr.get())) name = text(attr.get());
  }
  for (auto& c : name) c = static_cast<char>(std::tolower(c));
  if (name == "float" || name == "single") return DType::Float32;
  if (name == "double") return DType::Float64;
  if (name == "int") return DType::Int64;
  if (name == "bool_") return DType::Bool;
  if (name == "half") return DType::Float16;
  if (name == "complex") return DType::Complex128;
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == dtype_numpy_name(static_cast<DType>(i))) return static_cast<DType>(i);
  Ref r(PyObject_Repr(o));
  PJ_THROW(Type) << "data type " << (r ? text(r.get()) : "?")
                 << " not understood; pijit supports bool, int8/16/32/64, uint8/16/32/64, "
                    "float16/32/64, bfloat16, complex64 and complex128";
}

std::optional<DType> parse_optional_dtype(PyObject* o) {
  if (o == nullptr || o == Py_None) return std::nullopt;
  return parse_dtype(o);
}

Tensor tensor_from_py(PyObject* data, std::optional<DType> dtype) {
  if (is_tensor(data)) {
    const Tensor& t = unwrap(data);
    if (t.is_symbolic() || trace_context())  // as ops, so capture records the copy
      return dtype && *dtype != t.dtype() ? call_op1("cast", {t}, {{"dtype", *dtype}}) : call_op1("copy", {t});
    return dtype && *dtype != t.dtype() ? cast(t, *dtype) : t.clone();
  }
  if (!is_sequence(data) && has_buffer(data)) {
    Tensor t = from_buffer(data);
    return dtype ? cast(t, *dtype) : t;
  }
  Walk w;
  bool fixed = false;
  walk(data, 0, &w, &fixed);
  DType dt;
  if (dtype) {
    dt = *dtype;
  } else {
    dt = default_dtype(w.cat);
    if (w.tensor_dtype) dt = shape_numel(w.shape) == 0 ? *w.tensor_dtype
                                                        : (w.cat == Category::Bool ? *w.tensor_dtype
                                                                                   : promote_with_scalar(*w.tensor_dtype, w.cat));
    if (!w.tensor_dtype && shape_numel(w.shape) == 0 && !w.shape.empty()) dt = DType::Float32;
  }
  Tensor out = Tensor::empty(w.shape, dt);
  int64_t pos = 0;
  fill(data, out, &pos, 0);
  if (pos != out.numel()) changed_while_converting();
  return out;
}

namespace {
// Numbers pijit.mutable() made, held so that an address names one object. Capture only needs the
// ones a frame still holds, so the oldest are let go past a bound (a mark per training step).
struct MutableNumbers {
  static constexpr size_t kMax = 4096;
  std::vector<PyObject*> ring;
  size_t next = 0;
  std::unordered_set<PyObject*> set;
};
MutableNumbers& mutable_numbers() {
  static auto* m = new MutableNumbers();  // (never destroyed: interpreter teardown order)
  return *m;
}
}  // namespace

PyObject* mark_mutable_number(PyObject* o) {
#if PJ_PY_CAPTURE_BUILT
  PyObject* fresh = PyFloat_CheckExact(o) ? PyFloat_FromDouble(PyFloat_AS_DOUBLE(o)) : py::fresh_int(o);
  if (!fresh) return nullptr;

  MutableNumbers& m = mutable_numbers();
  if (m.ring.size() < MutableNumbers::kMax) {
    m.ring.push_back(fresh);
  } else {
    PyObject*& slot = m.ring[m.next];
    m.next = (m.next + 1) % MutableNumbers::kMax;
    m.set.erase(slot);
    Py_DECREF(slot);
    slot = fresh;
  }
  Py_INCREF(fresh);
  m.set.insert(fresh);
  return fresh;
#else  // no capture on this Python: nobody asks
  Py_INCREF(o);
  return o;
#endif
}

bool is_mutable_number(PyObject* o) {
  const MutableNumbers& m = mutable_numbers();
  return !m.set.empty() && m.set.count(o) > 0;
}

Tensor number_operand(PyObject* o, DType dtype) {
  if (PyFloat_Check(o)) return Tensor::scalar(PyFloat_AS_DOUBLE(o), dtype);
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) PJ_THROW(Value) << "Python integer out of bounds for int64";
  return Tensor::scalar_int(v, dtype);
}

std::optional<Tensor> operand(PyObject* o, DType other) {
  if (is_tensor(o)) return unwrap(o);
  if (PyBool_Check(o)) return Tensor::scalar(o == Py_True, promote_with_scalar(other, Category::Bool));
  if (PyLong_Check(o) || PyFloat_Check(o)) {
    const DType dt = promote_with_scalar(other, PyFloat_Check(o) ? Category::Floating : Category::Integer);
    if (TraceContext* tc = trace_context())
      if (std::optional<Tensor> lifted = tc->lift_scalar(o, dt)) return lifted;
    return number_operand(o, dt);
  }
  if (PyComplex_Check(o)) {
    const DType dt = promote_with_scalar(other, Category::Complex);
    Py_complex c = PyComplex_AsCComplex(o);
    Tensor t = Tensor::empty({}, DType::Complex128);
    *t.data<complex128>() = complex128(c.real, c.imag);
    return cast(t, dt);
  }
  if (is_sequence(o) || has_buffer(o)) return tensor_from_py(o, std::nullopt);
  return std::nullopt;
}

PyObject* element_to_py(const Tensor& t, int64_t i) {
  if (refuse_symbolic(t, "item()")) return nullptr;
  return stored_element_to_py(t, t.element_offset(i));
}

template <typename T>
PyObject* scalar_to_py(T v) {
  if constexpr (std::is_same_v<T, bool>) return PyBool_FromLong(v);
  else if constexpr (std::is_same_v<T, uint64_t>) return PyLong_FromUnsignedLongLong(v);
  else if constexpr (std::is_integral_v<T>) return PyLong_FromLongLong(v);
  else if constexpr (is_complex_t<T>::value) return PyComplex_FromDoubles(v.real(), v.imag());
  else return PyFloat_FromDouble(convert_scalar<double>(v));
}

PyObject* stored_element_to_py(const Tensor& t, int64_t off) {
  return PJ_DISPATCH_STORAGE(t.dtype(), [&]() -> PyObject* {
    return scalar_to_py(static_cast<const scalar_t*>(t.raw_data())[off]);
  });
}

}  // namespace pj::py
