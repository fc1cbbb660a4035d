// Special methods of user classes in captured code. An operator on an instance of a class written
// in Python calls the class's special method (looked up on the class, never the instance, as
// CPython's type slots do); capture inlines that method, guarded by the class's version, and
// follows Python's protocol around it: the reflected method of the right operand (first when its
// class is a subclass of the left's that overrides it), NotImplemented passing the turn, the
// identity fallback of == and !=, __bool__ then __len__ for truth, __iter__ then __next__ with
// StopIteration for iteration. A special method capture cannot inline (one a C base class
// provides, a descriptor, a builtin) stops with its name; so does an operator whose every
// special method declined, where Python would fall back to C code or raise.
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_BUILT

#include "capture/jit_api.h"
#include "capture/sim_state.h"
#include "pyext/tensor_object.h"

namespace pj::capture {

namespace {
PyObject* interned(const char* s) { return PyUnicode_InternFromString(s); }

struct BinaryNames {
  const char* op;
  const char* rop;
  const char* iop;
  const char* symbol;
};

// The special methods of a binary opcode (its in-place form too).
BinaryNames binary_names(Opcode op) {
  switch (op) {
    case Opcode::BINARY_ADD: case Opcode::INPLACE_ADD: return {"__add__", "__radd__", "__iadd__", "+"};
    case Opcode::BINARY_SUBTRACT: case Opcode::INPLACE_SUBTRACT: return {"__sub__", "__rsub__", "__isub__", "-"};
    case Opcode::BINARY_MULTIPLY: case Opcode::INPLACE_MULTIPLY: return {"__mul__", "__rmul__", "__imul__", "*"};
    case Opcode::BINARY_MATRIX_MULTIPLY:
    case Opcode::INPLACE_MATRIX_MULTIPLY: return {"__matmul__", "__rmatmul__", "__imatmul__", "@"};
    case Opcode::BINARY_TRUE_DIVIDE:
    case Opcode::INPLACE_TRUE_DIVIDE: return {"__truediv__", "__rtruediv__", "__itruediv__", "/"};
    case Opcode::BINARY_FLOOR_DIVIDE:
    case Opcode::INPLACE_FLOOR_DIVIDE: return {"__floordiv__", "__rfloordiv__", "__ifloordiv__", "//"};
    case Opcode::BINARY_MODULO: case Opcode::INPLACE_MODULO: return {"__mod__", "__rmod__", "__imod__", "%"};
    case Opcode::BINARY_POWER: case Opcode::INPLACE_POWER: return {"__pow__", "__rpow__", "__ipow__", "**"};
    case Opcode::BINARY_LSHIFT: case Opcode::INPLACE_LSHIFT: return {"__lshift__", "__rlshift__", "__ilshift__", "<<"};
    case Opcode::BINARY_RSHIFT: case Opcode::INPLACE_RSHIFT: return {"__rshift__", "__rrshift__", "__irshift__", ">>"};
    case Opcode::BINARY_AND: case Opcode::INPLACE_AND: return {"__and__", "__rand__", "__iand__", "&"};
    case Opcode::BINARY_OR: case Opcode::INPLACE_OR: return {"__or__", "__ror__", "__ior__", "|"};
    case Opcode::BINARY_XOR: case Opcode::INPLACE_XOR: return {"__xor__", "__rxor__", "__ixor__", "^"};
    default: PJ_CHECK(false) << "not a binary opcode: " << op_name(op); return {};
  }
}

// Rich comparisons by CPython's op number (Py_LT..Py_GE), and the reflection of each.
const char* const kCompareNames[] = {"__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__"};
const char* const kCompareSymbols[] = {"<", "<=", "==", "!=", ">", ">="};
constexpr int kReflected[] = {Py_GT, Py_GE, Py_EQ, Py_NE, Py_LT, Py_LE};

std::string quoted_type(PyObject* v) { return std::string("'") + Py_TYPE(v)->tp_name + "'"; }
}  // namespace

bool Simulator::user_operand(PyObject* v) { return plain_instance(v); }

// type(obj).name, the class's version guarded (a later change to the class or a base recompiles).
// nullptr: the class has none, or only object's own (its default behaviour is modelled by the
// caller). A special method that is not a function written in Python stops capture.
PyObject* Simulator::special_method(PyObject* obj, const char* name) {
  PyTypeObject* tp = Py_TYPE(obj);
  const int node = class_node(obj);
  if (node < 0) stop(Break::UserObjectOperator, std::string(name) + " of a " + tp->tp_name + " reached without a guardable path");
  PyObject* key = interned(name);
  guard_class(node, tp, key, /*is_class=*/made_object(obj));
  PyObject* f = _PyType_Lookup(tp, key);
  if (!f || f == _PyType_Lookup(&PyBaseObject_Type, key)) return nullptr;
  if (PyObject* target = jit_target(f)) f = target;  // a jitted method inlines into this graph
  if (PyFunction_Check(f) && !is_library_code(f)) return f;
  stop(Break::UserObjectOperator, std::string(tp->tp_name) + "." + name + " is a " + Py_TYPE(f)->tp_name +
                                      (PyFunction_Check(f) ? " of pijit's" : "") + ", which capture does not inline");
}

PyObject* Simulator::call_special(PyObject* f, PyObject* self, const std::vector<PyObject*>& args) {
  return inline_call(f, self, args, nullptr);
}

// A non-user operand meeting a user object: its own C slot would answer NotImplemented (numbers,
// builtin containers, None, classes do for an operand that is not theirs). A tensor's converts
// the operand, and str/bytes % formats it (its __str__ / __repr__): capture does not follow those.
void Simulator::builtin_declines(PyObject* v, PyObject* user, const char* symbol) {
  const bool formats = std::strcmp(symbol, "%") == 0 && (PyUnicode_Check(v) || PyBytes_Check(v));
  if (py::is_tensor(v) || !trusted(v) || formats)
    stop(Break::UserObjectOperator, std::string(symbol) + " between a " + Py_TYPE(v)->tp_name + " and a " +
                                        Py_TYPE(user)->tp_name + " (the " + Py_TYPE(v)->tp_name +
                                        "'s own operator would take the " + Py_TYPE(user)->tp_name + ")");
}

// a <op> b with a user object on either side, in the order of CPython's binary_op1 and its slots
// for classes (SLOT1BINFULL). nullptr: neither operand is a user object.
PyObject* Simulator::user_binary(Opcode op, PyObject* a, PyObject* b) {
  const bool ua = user_operand(a), ub = user_operand(b);
  if (!ua && !ub) return nullptr;
  const BinaryNames n = binary_names(op);
  const bool inplace = op_name(op)[0] == 'I';
  std::string symbol = std::string(n.symbol) + (inplace ? "=" : "");
  if (inplace && ua)  // a.__iadd__(b) first; NotImplemented falls back to a + b
    if (PyObject* f = special_method(a, n.iop)) {
      PyObject* r = call_special(f, a, {b});
      if (r != Py_NotImplemented) return r;
    }
  PyTypeObject *ta = Py_TYPE(a), *tb = Py_TYPE(b);
  bool reflected_tried = ta == tb;  // the same class: only a's own method
  if (ub && ta != tb && PyType_IsSubtype(tb, ta)) {
    // b's class derives from a's: b.__radd__ goes first when it overrides a's (or a is not a user
    // object: its C slot is tried after the subclass's).
    PyObject* rb = special_method(b, n.rop);
    if (rb && (!ua || rb != special_method(a, n.rop))) {
      reflected_tried = true;
      PyObject* r = call_special(rb, b, {a});
      if (r != Py_NotImplemented) return r;
    }
  }
  // One operand's turn: its class's method, or a builtin's C slot (which declines).
  auto turn = [&](bool user, PyObject* self, PyObject* other, const char* name) {
    if (!user) {
      builtin_declines(self, other, n.symbol);
      return Py_NotImplemented;
    }
    PyObject* f = special_method(self, name);
    return f ? call_special(f, self, {other}) : Py_NotImplemented;
  };
  if (PyObject* r = turn(ua, a, b, n.op); r != Py_NotImplemented) return r;
  if (!reflected_tried)
    if (PyObject* r = turn(ub, b, a, n.rop); r != Py_NotImplemented) return r;
  // Python raises TypeError here, or (a builtin sequence on one side) tries concatenation or
  // repetition, which converts the user object with __index__ or iterates it.
  stop(Break::Raises, "TypeError: unsupported operand type(s) for " + std::string(n.op == std::string("__pow__") ? "** or pow()" : symbol) +
                          ": " + quoted_type(a) + " and " + quoted_type(b));
}

// One side's rich comparison: self's method, or object's default (== by identity, != inverting
// the class's ==, NotImplemented for ordering).
PyObject* Simulator::rich_side(PyObject* self, PyObject* other, int op) {
  if (!user_operand(self)) {
    builtin_declines(self, other, kCompareSymbols[op]);
    return Py_NotImplemented;
  }
  if (PyObject* f = special_method(self, kCompareNames[op])) return call_special(f, self, {other});
  if (op == Py_EQ) {
    is_identity(self, other);
    return self == other ? Py_True : Py_NotImplemented;
  }
  if (op == Py_NE) {
    PyObject* eq = rich_side(self, other, Py_EQ);
    if (eq == Py_NotImplemented) return eq;
    return truth(eq) ? Py_False : Py_True;
  }
  return Py_NotImplemented;
}

// a <cmp> b with a user object on either side (CPython's do_richcompare). nullptr: neither is.
PyObject* Simulator::user_compare(int op, PyObject* a, PyObject* b) {
  if (!user_operand(a) && !user_operand(b)) return nullptr;
  PyTypeObject *ta = Py_TYPE(a), *tb = Py_TYPE(b);
  bool reflected_tried = false;
  if (ta != tb && PyType_IsSubtype(tb, ta)) {
    reflected_tried = true;
    PyObject* r = rich_side(b, a, kReflected[op]);
    if (r != Py_NotImplemented) return r;
  }
  PyObject* r = rich_side(a, b, op);
  if (r != Py_NotImplemented) return r;
  if (!reflected_tried) {
    r = rich_side(b, a, kReflected[op]);
    if (r != Py_NotImplemented) return r;
  }
  if (op == Py_EQ || op == Py_NE) {
    is_identity(a, b);
    return (a == b) == (op == Py_EQ) ? Py_True : Py_False;
  }
  stop(Break::Raises, std::string("TypeError: '") + kCompareSymbols[op] + "' not supported between instances of " +
                          quoted_type(a) + " and " + quoted_type(b));
}

PyObject* Simulator::user_unary(Opcode op, PyObject* a) {
  const char* name = op == Opcode::UNARY_NEGATIVE ? "__neg__" : op == Opcode::UNARY_POSITIVE ? "__pos__" : "__invert__";
  const char* symbol = op == Opcode::UNARY_NEGATIVE ? "-" : op == Opcode::UNARY_POSITIVE ? "+" : "~";
  if (PyObject* f = special_method(a, name)) return call_special(f, a, {});
  stop(Break::Raises, std::string("TypeError: bad operand type for unary ") + symbol + ": " + quoted_type(a));
}

PyObject* Simulator::user_abs(PyObject* a) {
  if (PyObject* f = special_method(a, "__abs__")) return call_special(f, a, {});
  stop(Break::Raises, "TypeError: bad operand type for abs(): " + quoted_type(a));
}

// len(obj): __len__, whose result must be a non-negative int (CPython checks it so).
PyObject* Simulator::user_len(PyObject* obj) {
  PyObject* f = special_method(obj, "__len__");
  if (!f) stop(Break::Raises, "TypeError: object of type " + quoted_type(obj) + " has no len()");
  PyObject* r = call_special(f, obj, {});
  if (user_operand(r) || (PyLong_Check(r) && !PyLong_CheckExact(r) && !PyBool_Check(r)))
    stop(Break::UserObjectOperator, "__len__ of a " + std::string(Py_TYPE(obj)->tp_name) + " returned a " + Py_TYPE(r)->tp_name +
                                        " (converted by its __index__)");
  if (!PyLong_Check(r)) stop(Break::Raises, "TypeError: " + quoted_type(r) + " object cannot be interpreted as an integer");
  if (!unguarded_.empty()) guard_scalars(r);  // the value is read here (no instruction used it yet)
  dynamic_.guard_derived(r);
  PyObject* value = materialize(r);
  if (_PyLong_Sign(value) < 0) stop(Break::Raises, "ValueError: __len__() should return >= 0");
  if (PyLong_AsSsize_t(value) == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    stop(Break::Raises, "OverflowError: cannot fit 'int' into an index-sized integer");
  }
  if (PyBool_Check(r)) return own(PyLong_FromLong(r == Py_True));
  return r;
}

// bool(obj): __bool__ (which must return a bool), else __len__ != 0, else true.
bool Simulator::user_truth(PyObject* obj) {
  if (PyObject* f = special_method(obj, "__bool__")) {
    PyObject* r = call_special(f, obj, {});
    if (!PyBool_Check(r)) stop(Break::Raises, "TypeError: __bool__ should return bool, returned " + std::string(Py_TYPE(r)->tp_name));
    return r == Py_True;
  }
  if (special_method(obj, "__len__")) return _PyLong_Sign(materialize(user_len(obj))) != 0;
  return true;
}

PyObject* Simulator::user_getitem(PyObject* obj, PyObject* key) {
  if (PyObject* f = special_method(obj, "__getitem__")) return call_special(f, obj, {key});
  stop(Break::Raises, "TypeError: " + quoted_type(obj) + " object is not subscriptable");
}

// obj[key] = value (value nullptr: del obj[key]).
void Simulator::user_setitem(PyObject* obj, PyObject* key, PyObject* value) {
  const char* name = value ? "__setitem__" : "__delitem__";
  PyObject* f = special_method(obj, name);
  if (!f)
    stop(Break::Raises, "TypeError: " + quoted_type(obj) + " object does not support item " + (value ? "assignment" : "deletion"));
  if (value) call_special(f, obj, {key, value});
  else call_special(f, obj, {key});
}

// `needle in obj`: __contains__ made a bool; without one, Python searches what obj iterates
// (comparing only values whose == runs no user code: the operand order differs across versions).
bool Simulator::user_contains(PyObject* obj, PyObject* needle) {
  if (PyObject* f = special_method(obj, "__contains__")) return truth(call_special(f, obj, {needle}));
  PyObject* it = get_iter(obj);
  while (PyObject* item = next_item(it)) {
    if (!deep_trusted(item) || !deep_trusted(needle))
      stop(Break::UserObjectOperator, "'in' comparing a " + std::string(Py_TYPE(needle)->tp_name) + " with what a " +
                                          Py_TYPE(obj)->tp_name + " iterates (user objects, whose == is user code)");
    int eq = PyObject_RichCompareBool(materialize(item), materialize(needle), Py_EQ);
    if (eq < 0) python_error("'in'");
    if (eq) return true;
  }
  return false;
}

// iter(obj): __iter__, whose result must be an iterator: a generator (simulated), a builtin
// iterator over what the simulation holds, or a user object with __next__.
PyObject* Simulator::user_iter(PyObject* obj) {
  PyObject* f = special_method(obj, "__iter__");
  if (!f) {
    if (!special_method(obj, "__getitem__")) stop(Break::Raises, "TypeError: " + quoted_type(obj) + " object is not iterable");
    // the old sequence protocol: obj[0], obj[1], ... until IndexError or StopIteration, as a
    // generator model (pijit/_lazy_builtins.py) simulated like user code
    PyObject* model = py::module_attr("pijit._lazy_builtins", "sequence_iter_model");
    if (!model) stop(Break::Internal, "pijit._lazy_builtins.sequence_iter_model is missing");
    own(model);
    return inline_call(model, nullptr, {obj}, nullptr);
  }
  PyObject* it = call_special(f, obj, {});
  if (sim_generator(it) || (is_iterator(it) && trusted(it))) return it;
  if (user_operand(it) && special_method(it, "__next__")) return it;
  if (is_iterator(it)) {
    refuse_foreign_iterator(it);
    stop(Break::UserObjectOperator, "iterating a " + std::string(Py_TYPE(obj)->tp_name) + " whose __iter__ returns a " + Py_TYPE(it)->tp_name);
  }
  stop(Break::Raises, "TypeError: iter() returned non-iterator of type " + quoted_type(it));
}

// obj.name where the class holds `name` as an instance of a user class with a __get__ written in
// Python: descr.__get__(obj, type(obj)) inlined (C.name: descr.__get__(None, C)). The descriptor is reached as a constant of the
// class (its identity fixed by the class's version guard), so what __get__ reads of it is guarded
// along that path. nullptr: not such a descriptor.
PyObject* Simulator::user_descriptor_get(PyObject* descr, PyObject* obj, PyObject* owner) {
  PyTypeObject* dt = Py_TYPE(descr);
  if (!(dt->tp_flags & Py_TPFLAGS_HEAPTYPE) || is_library_type(dt) || !dt->tp_descr_get) return nullptr;
  if (node_of(descr) < 0) wrap(descr, tree_.root(guards::Access::Const, 0, descr));
  PyObject* get = special_method(descr, "__get__");
  if (!get) return nullptr;
  return call_special(get, descr, {obj, owner ? owner : reinterpret_cast<PyObject*>(Py_TYPE(obj))});
}

// sum(), min() and max() over values some of which are user objects: the additions and
// comparisons the builtins make, in their order, through the operators' protocol (so the
// classes' special methods are inlined). nullptr: not a call this models (keywords, ...).
PyObject* Simulator::user_reduce(const char* name, const std::vector<PyObject*>& args, PyObject* kwnames) {
  if (kwnames || args.empty()) return nullptr;
  const bool sum = std::strcmp(name, "sum") == 0;
  if (sum && args.size() > 2) return nullptr;
  std::vector<PyObject*> items;
  if (sum || args.size() == 1) {
    PyObject* it = get_iter(args[0]);
    while (PyObject* v = next_item(it)) items.push_back(v);
  } else {
    items = args;
  }
  if (sum) {
    PyObject* acc = args.size() == 2 ? args[1] : own(PyLong_FromLong(0));
    if (PyUnicode_Check(acc) || PyBytes_Check(acc) || PyByteArray_Check(acc))
      stop(Break::Raises, "TypeError: sum() can't sum strings [use ''.join(seq) instead]");
    for (PyObject* v : items) {
      PyObject* r = user_binary(Opcode::BINARY_ADD, acc, v);
      if (!r) {
        if (!trusted(acc) || !trusted(v)) stop(Break::UserObjectOperator, std::string("sum() adding a ") + Py_TYPE(v)->tp_name);
        r = PyNumber_Add(materialize(acc), materialize(v));
        if (!r) python_error("sum()");
        own(r);
      }
      acc = r;
    }
    return acc;
  }
  if (items.empty()) stop(Break::Raises, std::string("ValueError: ") + name + "() arg is an empty sequence");
  const int op = std::strcmp(name, "max") == 0 ? Py_GT : Py_LT;
  PyObject* best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    PyObject* c = user_compare(op, items[i], best);
    if (!c) {
      if (!deep_trusted(items[i]) || !deep_trusted(best))
        stop(Break::UserObjectOperator, std::string(name) + "() comparing a " + Py_TYPE(items[i])->tp_name);
      c = PyObject_RichCompare(materialize(items[i]), materialize(best), op);
      if (!c) python_error(name);
      own(c);
    }
    if (truth(c)) best = items[i];
  }
  return best;
}

// next(it) for a user iterator: __next__, where a StopIteration raised means exhausted (nullptr).
PyObject* Simulator::user_next(PyObject* it) {
  PyObject* f = special_method(it, "__next__");
  if (!f) stop(Break::Raises, "TypeError: " + quoted_type(it) + " object is not an iterator");
  try {
    return call_special(f, it, {});
  } catch (const SimRaise& raised) {
    if (PyErr_GivenExceptionMatches(reinterpret_cast<PyObject*>(Py_TYPE(raised.value)), PyExc_StopIteration)) return nullptr;
    throw;
  }
}

// The next value of an iterator the simulation may advance (its generators, user iterators, the
// builtin ones it made); nullptr: exhausted.
PyObject* Simulator::next_item(PyObject* it) {
  if (sim_generator(it)) return generator_next(it);
  if (user_operand(it)) return user_next(it);
  if (node_of(it) >= 0 || !trusted(it)) {
    refuse_foreign_iterator(it);
    stop(Break::UserObjectOperator, std::string("iterating a ") + Py_TYPE(it)->tp_name);
  }
  PyObject* v = PyIter_Next(it);
  if (v) return own(v);
  if (PyErr_Occurred()) python_error("iteration");
  return nullptr;
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
