// The Python object behind pijit.Tensor: pijit._C.TensorBase holds a pj::Tensor and implements
// the hot protocol slots in C (operators, comparisons, buffer protocol, conversions, indexing).
// pijit/tensor.py subclasses it as pijit.Tensor and adds the long tail of methods in Python;
// `_C._register(Tensor, dtypes)` tells this module which class to create for results.
#pragma once

#include "py/py_common.h"

#include <optional>

#include "kernels/tensor.h"
#include "py/rebinds.h"

namespace pj::py {

struct TensorObject {
  PyObject_HEAD
  Tensor tensor;
  PyObject* weakreflist;
  Py_ssize_t exports;  // live buffer views of `tensor`'s data: assign_value() must not free it
};

extern PyTypeObject TensorBaseType;
bool init_tensor_type(PyObject* module);

inline bool is_tensor(PyObject* o) { return PyObject_TypeCheck(o, &TensorBaseType); }
inline const Tensor& unwrap(PyObject* o) { return reinterpret_cast<TensorObject*>(o)->tensor; }
// The only ways a live tensor object changes what it holds (assign_value; capture's symbolic
// stand-ins written in place by ops.assign or `p += v`): each counts in g_rebinds (py/rebinds.h),
// so a guard that saw that very object pass need not read its shape, dtype and layout again.
inline void rebind(PyObject* o, Tensor t) {
  ++g_rebinds;
  reinterpret_cast<TensorObject*>(o)->tensor = std::move(t);
}
inline void rebind_symbolic(PyObject* o, Tensor t) { rebind(o, std::move(t)); }
// A new reference to an instance of the registered tensor class (pijit.Tensor) holding t.
PyObject* wrap(Tensor t);
PyTypeObject* tensor_class();  // the registered class results are made of (pijit.Tensor)
PyObject* wrap_all(const std::vector<Tensor>& ts);  // a tuple

// dtype objects (pijit.float32, ...) registered from Python, indexed by DType.
PyObject* dtype_object(DType t);
// Parses a dtype given as a pijit dtype, a string ("float32"), a builtin type (float/int/bool),
// or anything whose str() is a numpy dtype name. Raises TypeError when it is none of these.
DType parse_dtype(PyObject* o);
std::optional<DType> parse_optional_dtype(PyObject* o);  // None -> nullopt

// Tensor from arbitrary Python data (numbers, nested sequences, buffers, tensors); always copies.
Tensor tensor_from_py(PyObject* data, std::optional<DType> dtype);
// Operand of an operator: a tensor as is, a Python number as a weak 0-d scalar whose dtype
// follows `other` (see kernels/dtype.h), other data converted. nullopt: not convertible.
std::optional<Tensor> operand(PyObject* o, DType other);
// Python scalar for element i of t.
PyObject* element_to_py(const Tensor& t, int64_t i);
// Element at storage offset `off` (from raw_data) as a Python bool/int/float/complex.
PyObject* stored_element_to_py(const Tensor& t, int64_t off);

// Throws CaptureBreak when t is symbolic (capture is tracing and `what` needs its data), or when
// `what` mutates a tensor while capture is tracing.
void require_data(const Tensor& t, const char* what);
void require_not_tracing(const char* what);
// The same for slots that return -1/nullptr with a Python error instead of throwing.
bool refuse_symbolic(const Tensor& t, const char* what);

// The 0-d tensor of `dtype` that operand() makes of a Python int or float: a lifted scalar's value
// at launch, converted exactly as the eager operator converts it.
Tensor number_operand(PyObject* number, DType dtype);
// pijit.mutable(): a fresh object for an int or float, remembered as "a graph input, not a
// constant" (capture lifts it on first sight); is_mutable_number asks.
PyObject* mark_mutable_number(PyObject* number);
bool is_mutable_number(PyObject* number);

// Indexing (pyext/indexing.cc).
PyObject* tensor_getitem(PyObject* self, PyObject* key);
int tensor_setitem(PyObject* self, PyObject* key, PyObject* value);
// What `self[key] = value` leaves in self, as a new tensor (the functional index_put, with
// tensor_setitem's checks and messages); under capture it records the op. nullptr: a Python error.
PyObject* tensor_setitem_value(PyObject* self, PyObject* key, PyObject* value);

}  // namespace pj::py
