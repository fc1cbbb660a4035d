// Opcode handlers: loads, stores and deletes of locals, cells, globals, attributes and items;
// subscripts; imports (op_handlers.def).
#include "py/pyport.h"  // first (Python.h)

#include "capture/sim_stack.h"
#include "capture/sim_state.h"

#include <algorithm>

#include "pyext/tensor_object.h"
#include "graph/tape.h"

#if PJ_PY_CAPTURE_BUILT

namespace pj::capture {

PyObject* Simulator::load_fast(SimFrame& fr, int i) {
  if (fr.root && !fr.loaded[i]) {
    fr.loaded[i] = 1;
    PyObject* real = py::frame_local(fr.real, i);
    PyObject* name = py::code_varname(fr.code, i);
    if (real) fr.locals[i] = wrap(real, tree_.root(guards::Access::Local, i, name));
  }
  return fr.locals[i];
}

// The object a local holds now, without loading it (no guard on it): the real frame's until the
// root frame's local is first read or written.
static PyObject* peek_local(const SimFrame& fr, int i) {
  return fr.root && !fr.loaded[i] ? py::frame_local(fr.real, i) : fr.locals[i];
}

// Rebinding or deleting a local that holds an object of the program's whose finalizer runs code:
// when that was its last reference, plain Python runs the finalizer here, in program order, and
// the rewritten code would run it only when its frame ends, after the effects replayed after the
// graph. Capture stops at the instruction instead: it runs for real.
void Simulator::check_drop(SimFrame& fr, int i) {
  PyObject* old = peek_local(fr, i);
  if (!old || sim_generator(old) || !py::finalizer_runs_code(old)) return;
  // Still held by the frame (moved to the stack, as a resume function's prologue does, or in
  // another local): not dropped.
  if (std::find(fr.stack.begin(), fr.stack.end(), old) != fr.stack.end()) return;
  for (int j = 0; j < static_cast<int>(fr.locals.size()); ++j)
    if (j != i && peek_local(fr, j) == old) return;
  stop(Break::Finalizer, "drops " + py::text(py::code_varname(fr.code, i)) +
                               " (a " + Py_TYPE(old)->tp_name + " whose finalizer runs code)");
}

// A frame dict's item under a constant key (BINARY_SUBSCR, MATCH_KEYS): the value along its guard
// path, or nullptr (no error set) with the key guarded absent. An exact dict runs no user code.
PyObject* Simulator::frame_dict_item(PyObject* d, int node, PyObject* key) {
  PyObject* v = PyDict_GetItemWithError(d, key);
  if (!v && PyErr_Occurred()) python_error("a dict lookup");
  const int at = tree_.child(node, guards::Access::Item, key);
  if (!v) {
    tree_.add_check(at, {guards::CheckKind::Absent, nullptr, 0, {}});
    return nullptr;
  }
  return wrap(v, at);
}

// LOAD_FAST / DELETE_FAST of a local that is not bound: CPython's UnboundLocalError.
[[noreturn]] static void unbound_local(Simulator* s, SimFrame& fr, int i) {
  s->stop(Break::Raises, "UnboundLocalError: " + py::unbound_local_message(py::code_varname(fr.code, i)));
}

void Simulator::LOAD_CONST(SimFrame& fr, const Instruction& ins) {
  push(fr, PyTuple_GET_ITEM(fr.code->co_consts, ins.arg));
}

void Simulator::LOAD_FAST(SimFrame& fr, const Instruction& ins) {
  PyObject* v = load_fast(fr, ins.arg);
  if (!v)
    unbound_local(this, fr, ins.arg);
  push(fr, v);
}

void Simulator::STORE_FAST(SimFrame& fr, const Instruction& ins) {
  check_drop(fr, ins.arg);
  fr.locals[ins.arg] = pop(fr);
  if (fr.root) fr.loaded[ins.arg] = fr.stored[ins.arg] = 1;
}

void Simulator::DELETE_FAST(SimFrame& fr, const Instruction& ins) {
  check_drop(fr, ins.arg);
  // Bound or not is the same on every call: the frame starts with exactly its arguments bound.
  if (!peek_local(fr, ins.arg))
    unbound_local(this, fr, ins.arg);
  fr.locals[ins.arg] = nullptr;
  if (fr.root) fr.loaded[ins.arg] = fr.stored[ins.arg] = 1;
}

void Simulator::LOAD_GLOBAL(SimFrame& fr, const Instruction& ins) {
  if (py::kGlobalPushesNull && (ins.arg & 1)) push(fr, call_slot());  // 3.11: the slot a call of the global reads
  push(fr, load_global(fr, PyTuple_GET_ITEM(fr.code->co_names, py::name_index(ins.op, ins.arg))));
}

void Simulator::LOAD_DEREF(SimFrame& fr, const Instruction& ins) {
  push(fr, load_deref(fr, ins.arg));
}

void Simulator::LOAD_CLOSURE(SimFrame& fr, const Instruction& ins) {
  load_deref(fr, ins.arg, /*must_be_bound=*/false);  // the root's cells fill lazily: fill before sharing
  push(fr, fr.cells[ins.arg]);
}

void Simulator::STORE_DEREF(SimFrame& fr, const Instruction& ins) {
  PyObject* cell = fr.cells[ins.arg];
  if (values_.created(cell, Kind::Cell)) {
    write(cell, Write::Nonlocal, "assigns a nonlocal variable of an enclosing function");
    PyCell_Set(cell, pop(fr));
  } else {
    store_nonlocal(fr, ins.arg, pop(fr));
  }
  written_cells_.insert(cell);
  if (fr.root) fr.cell_loaded[ins.arg] = 1;
}

void Simulator::LOAD_ATTR(SimFrame& fr, const Instruction& ins) {
  push(fr, load_attr(pop(fr), PyTuple_GET_ITEM(fr.code->co_names, ins.arg)));
}

void Simulator::LOAD_METHOD(SimFrame& fr, const Instruction& ins) {
  PyObject* owner = pop(fr);
  PyObject* name = PyTuple_GET_ITEM(fr.code->co_names, ins.arg);
  PyObject* v = deferred_method(owner, name);  // L.append(...) on the caller's list: replayed
  if (!v) {
    v = load_attr(owner, name);
    // A method bound here: a graph break with the pair on the stack binds it again (owner.name)
    const bool bound_here = (PyMethod_Check(v) && PyMethod_GET_SELF(v) == owner) ||
                            (PyCFunction_Check(v) && PyCFunction_GET_SELF(v) == owner);
    if (bound_here && !values_.find(v)) values_.created_method(v, owner, name, /*replayed=*/false);
  }
  push(fr, null_slot());
  push(fr, v);
}

void Simulator::STORE_ATTR(SimFrame& fr, const Instruction& ins) {
  PyObject* owner = pop(fr);
  store_attr(owner, PyTuple_GET_ITEM(fr.code->co_names, ins.arg), pop(fr));
}

void Simulator::DELETE_ATTR(SimFrame& fr, const Instruction& ins) {
  store_attr(pop(fr), PyTuple_GET_ITEM(fr.code->co_names, ins.arg), nullptr);
}

void Simulator::STORE_GLOBAL(SimFrame& fr, const Instruction& ins) {
  store_global(fr, PyTuple_GET_ITEM(fr.code->co_names, ins.arg), pop(fr));
}

void Simulator::DELETE_GLOBAL(SimFrame& fr, const Instruction& ins) {
  store_global(fr, PyTuple_GET_ITEM(fr.code->co_names, ins.arg), nullptr);
}

void Simulator::STORE_SUBSCR(SimFrame& fr, const Instruction& ins) {
  PyObject* key = pop(fr);
  PyObject* container = pop(fr);
  PyObject* value = pop(fr);
  if (user_operand(container)) return user_setitem(container, key, value);
  if (py::is_tensor(container) && py::unwrap(container).is_symbolic()) {
    // t[key] = v on a tensor of the graph: the functional index_put written into t, as `t += v`
    if (tape_active()) stop(Break::InplaceUpdate, "tensor[...] = value while a gradient tape records");
    if (!trusted(key) || !trusted(value)) stop(Break::UserObjectOperator, "tensor[...] = value with a user object");
    PyObject* r = py::tensor_setitem_value(container, materialize(key), materialize(value));
    if (!r) python_error("tensor[...] = value");
    write_tensor(container, own(r), "tensor[...] = value");
    return;
  }
  if (store_item(container, key, value)) return;  // the caller's list or dict: replayed
  write(container, Write::Item, std::string("assigns an item of a ") + Py_TYPE(container)->tp_name + " the function did not create");
  if (!trusted(container)) stop(Break::UserObjectOperator, std::string("item assignment on ") + Py_TYPE(container)->tp_name);
  if (PyObject_SetItem(container, materialize(key), value) < 0) python_error("item assignment");
}

void Simulator::DELETE_SUBSCR(SimFrame& fr, const Instruction& ins) {
  PyObject* key = pop(fr);
  PyObject* container = pop(fr);
  if (user_operand(container)) return user_setitem(container, key, nullptr);
  if (store_item(container, key, nullptr)) return;  // the caller's list or dict: replayed
  write(container, Write::DeleteItem, std::string("deletes an item of a ") + Py_TYPE(container)->tp_name + " the function did not create",
        /*preexisting=*/!trusted(container) || py::is_tensor(container));
  if (PyObject_DelItem(container, materialize(key)) < 0) python_error("del");
}

void Simulator::BINARY_SUBSCR(SimFrame& fr, const Instruction& ins) {
  PyObject* key = pop(fr);
  PyObject* obj = pop(fr);
  if (is_environ(obj)) {
    PyObject* v = environ_lookup(obj, key);
    if (!v) throw SimRaise{make_exception(reinterpret_cast<PyTypeObject*>(PyExc_KeyError), {key}, nullptr)};
    push(fr, v);
    return;
  }
  if (dirty_.count(obj) && overlay_reads(obj, key)) return push(fr, overlay_item(obj, key));  // (sim_overlay.cc)
  int node = node_of(obj);
  const bool library_tuple = node >= 0 && PyTuple_Check(obj) && !PyTuple_CheckExact(obj) &&
                             is_library_type(Py_TYPE(obj)) && PyLong_CheckExact(key);
  if (library_tuple) {  // ParameterTuple: a tuple of fixed type and length, items by index
    Py_INCREF(Py_TYPE(obj));
    tree_.add_check(node, {guards::CheckKind::Length, reinterpret_cast<PyObject*>(Py_TYPE(obj)), PyTuple_GET_SIZE(obj), {}});
  }
  if (node >= 0 && is_constant(key) && !PySlice_Check(key) &&
      (tuple_like(obj) || PyList_CheckExact(obj) || PyDict_CheckExact(obj) || library_tuple)) {
    if (PyDict_CheckExact(obj)) {
      if (PyObject* item = frame_dict_item(obj, node, key)) return push(fr, item);
      PyErr_SetObject(PyExc_KeyError, own(PyTuple_Pack(1, key)));  // KeyError(key), as dict raises it
      raise_lookup_error("indexing");
    }
    PyObject* item = PyObject_GetItem(obj, key);
    if (!item) {  // what the raise depends on: the sequence's length
      Py_INCREF(Py_TYPE(obj));
      tree_.add_check(node, {guards::CheckKind::Length, reinterpret_cast<PyObject*>(Py_TYPE(obj)), PyObject_Length(obj), {}});
      raise_lookup_error("indexing");
    }
    own(item);
    push(fr, wrap(item, tree_.child(node, guards::Access::Item, key)));
    return;
  }
  if (node >= 0 && PyObject_TypeCheck(obj, &PyBaseObject_Type) && !trusted(obj)) {
    PyObject* seq = cell_children(obj);  // CellList[i] / SequentialCell[i] / CellDict[key]
    if (seq) {
      if (is_cell_dict(obj)) {
        push(fr, cell_dict_item(obj, key));
        return;
      }
      PyObject* item = PyObject_GetItem(seq, key);
      if (!item) python_error("indexing");
      push(fr, own(item));
      return;
    }
  }
  if (user_operand(obj)) {
    push(fr, user_getitem(obj, key));
    return;
  }
  if (!trusted(obj) || !trusted(key)) stop(Break::UserObjectOperator, std::string("indexing ") + Py_TYPE(obj)->tp_name);
  if (node < 0 && (PyList_CheckExact(obj) || PyTuple_CheckExact(obj)) && !overlaid_.count(obj) && !dirty_.count(obj) &&
      (PyLong_CheckExact(key) || (PySlice_Check(key) && is_constant(key)))) {
    // A list or tuple the simulation built holds the very values it was given: `[l][0] is l`
    PyObject* r = PyObject_GetItem(obj, key);
    if (!r) raise_lookup_error("indexing");
    push(fr, own(r));
    return;
  }
  PyObject* r = PyObject_GetItem(materialize(obj), materialize(key));
  if (!r) raise_lookup_error("indexing");
  push(fr, own(r));
}

void Simulator::LOAD_ASSERTION_ERROR(SimFrame& fr, const Instruction& ins) {
  push(fr, PyExc_AssertionError);
}

void Simulator::import_statement(SimFrame& fr, const Instruction& ins) {
  stop(Break::Import, "import statement");
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
