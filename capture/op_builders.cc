// Opcode handlers: building and unpacking tuples, lists, sets, dicts, strings and slices
// (op_handlers.def).
#include "py/pyport.h"  // first (Python.h)

#include "capture/sim_stack.h"
#include "capture/sim_state.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {

void Simulator::LIST_EXTEND(SimFrame& fr, const Instruction& ins) {
  PyObject* it = materialize(pop(fr));
  PyObject* list = top(fr, ins.arg);
  build_into(list, ins);
  if (_PyList_Extend(reinterpret_cast<PyListObject*>(list), it) == nullptr) python_error("list");
  Py_DECREF(Py_None);
}

void Simulator::LIST_TO_TUPLE(SimFrame& fr, const Instruction& ins) {
  push(fr, own(PyList_AsTuple(pop(fr))));
}

void Simulator::SET_UPDATE(SimFrame& fr, const Instruction& ins) {
  PyObject* it = materialize(pop(fr));
  build_into(top(fr, ins.arg), ins);
  if (_PySet_Update(top(fr, ins.arg), it) < 0) python_error("set");
}

void Simulator::dict_update(SimFrame& fr, const Instruction& ins) {
  PyObject* d = materialize(pop(fr));
  build_into(top(fr, ins.arg), ins);
  if (ins.op == Opcode::DICT_MERGE) refuse_duplicate_keywords(top(fr, ins.arg), d);
  if (PyDict_Update(top(fr, ins.arg), d) < 0) python_error("dict");
}

void Simulator::build_unpack(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> parts = pop_n(fr, ins.arg);
  PyObject* list = own(PyList_New(0));
  for (PyObject* p : parts)
    if (_PyList_Extend(reinterpret_cast<PyListObject*>(list), materialize(p)) == nullptr) python_error("unpack");
    else Py_DECREF(Py_None);
  push(fr, ins.op == Opcode::BUILD_LIST_UNPACK ? list : own(PyList_AsTuple(list)));
}

void Simulator::build_map_unpack(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> parts = pop_n(fr, ins.arg);
  PyObject* d = own(PyDict_New());
  for (PyObject* p : parts) {
    PyObject* m = materialize(p);
    if (ins.op == Opcode::BUILD_MAP_UNPACK_WITH_CALL) refuse_duplicate_keywords(d, m);
    if (PyDict_Update(d, m) < 0) python_error("unpack");
  }
  push(fr, d);
}

void Simulator::BUILD_TUPLE(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> items = pop_n(fr, ins.arg);
  PyObject* t = own(PyTuple_New(ins.arg));
  for (int i = 0; i < ins.arg; ++i) {
    Py_INCREF(items[i]);
    PyTuple_SET_ITEM(t, i, items[i]);
  }
  push(fr, t);
}

void Simulator::BUILD_LIST(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> items = pop_n(fr, ins.arg);
  PyObject* l = own(PyList_New(ins.arg));
  for (int i = 0; i < ins.arg; ++i) {
    Py_INCREF(items[i]);
    PyList_SET_ITEM(l, i, items[i]);
  }
  push(fr, l);
}

void Simulator::BUILD_SET(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> items = pop_n(fr, ins.arg);
  PyObject* s = own(PySet_New(nullptr));
  for (PyObject* v : items)
    if (PySet_Add(s, materialize(v)) < 0) python_error("set");
  push(fr, s);
}

void Simulator::BUILD_MAP(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> kv = pop_n(fr, 2 * ins.arg);
  PyObject* d = own(PyDict_New());
  for (int i = 0; i < ins.arg; ++i)
    if (PyDict_SetItem(d, materialize(kv[2 * i]), kv[2 * i + 1]) < 0) python_error("dict");
  push(fr, d);
}

void Simulator::BUILD_CONST_KEY_MAP(SimFrame& fr, const Instruction& ins) {
  PyObject* keys = pop(fr);
  std::vector<PyObject*> vals = pop_n(fr, ins.arg);
  PyObject* d = own(PyDict_New());
  for (int i = 0; i < ins.arg; ++i)
    if (PyDict_SetItem(d, PyTuple_GET_ITEM(keys, i), vals[i]) < 0) python_error("dict");
  push(fr, d);
}

void Simulator::BUILD_STRING(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> parts = pop_n(fr, ins.arg);
  PyObject* t = own(PyTuple_New(ins.arg));
  for (int i = 0; i < ins.arg; ++i) {
    Py_INCREF(parts[i]);
    PyTuple_SET_ITEM(t, i, parts[i]);
  }
  PyObject* empty = own(PyUnicode_FromString(""));
  push(fr, own(PyUnicode_Join(empty, t)));
}

void Simulator::FORMAT_VALUE(SimFrame& fr, const Instruction& ins) {
  PyObject* spec = (ins.arg & 0x04) ? pop(fr) : nullptr;
  PyObject* v = pop(fr);
  if (!is_constant(v)) stop(Break::DataDependent, "formats a " + std::string(Py_TYPE(v)->tp_name) + " into a string");
  int conv = ins.arg & 0x03;
  if (conv == 1) v = own(PyObject_Str(v));
  else if (conv == 2) v = own(PyObject_Repr(v));
  else if (conv == 3) v = own(PyObject_ASCII(v));
  push(fr, own(PyObject_Format(v, spec)));
}

void Simulator::BUILD_SLICE(SimFrame& fr, const Instruction& ins) {
  PyObject* step = ins.arg == 3 ? pop(fr) : nullptr;
  PyObject* stop_ = pop(fr);
  PyObject* start = pop(fr);
  push(fr, own(PySlice_New(start, stop_, step)));
}

void Simulator::LIST_APPEND(SimFrame& fr, const Instruction& ins) {
  PyObject* v = pop(fr);  // the list is then oparg deep
  build_into(top(fr, ins.arg), ins);
  if (PyList_Append(top(fr, ins.arg), v) < 0) python_error("list");
}

void Simulator::SET_ADD(SimFrame& fr, const Instruction& ins) {
  PyObject* v = materialize(pop(fr));
  build_into(top(fr, ins.arg), ins);
  if (PySet_Add(top(fr, ins.arg), v) < 0) python_error("set");
}

void Simulator::MAP_ADD(SimFrame& fr, const Instruction& ins) {
  PyObject* value = py::kMapAddValueOnTop ? pop(fr) : nullptr;
  PyObject* key = pop(fr);
  if (!py::kMapAddValueOnTop) value = pop(fr);
  build_into(top(fr, ins.arg), ins);
  if (PyDict_SetItem(top(fr, ins.arg), materialize(key), value) < 0) python_error("dict");
}

void Simulator::UNPACK_SEQUENCE(SimFrame& fr, const Instruction& ins) {
  std::vector<PyObject*> items = unpacked(pop(fr), static_cast<size_t>(ins.arg) + 1);
  if (static_cast<int>(items.size()) != ins.arg)
    stop(Break::Raises, "ValueError: cannot unpack " + std::to_string(items.size()) + " values into " +
                            std::to_string(ins.arg));
  for (auto it = items.rbegin(); it != items.rend(); ++it) push(fr, *it);
}

void Simulator::UNPACK_EX(SimFrame& fr, const Instruction& ins) {
  PyObject* list = own(PyList_New(0));
  for (PyObject* item : unpacked(pop(fr)))
    if (PyList_Append(list, item) < 0) python_error("unpacking");
  int before = ins.arg & 0xFF, after = ins.arg >> 8;
  Py_ssize_t n = PyList_GET_SIZE(list);
  if (n < before + after) stop(Break::Raises, "ValueError: not enough values to unpack");
  for (int i = after - 1; i >= 0; --i) push(fr, PyList_GET_ITEM(list, n - after + i));
  push(fr, own(PyList_GetSlice(list, before, n - after)));
  for (int i = before - 1; i >= 0; --i) push(fr, PyList_GET_ITEM(list, i));
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
