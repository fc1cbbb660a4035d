// pijit._C.Tape and the calls pijit/autodiff.py builds GradOperation, grad and value_and_grad on
// (graph/tape.h does the work):
//   t = Tape(); h = t.watch(x)            leaves (-1: not floating, gradient zero)
//   out = tape_run(t, fn, args, kwargs)   fn(*args, **kwargs) with t recording (stopped on return
//                                         or raise); capture simulates fn inside it
//   t.gradient(outs, seeds, handles, zeros)
//   call_with_bprop(forward, bprop, args, name)  a Cell with a hand-written bprop: forward runs
//                                         unrecorded and bprop(*args, out, dout) is its backward
#include "pyext/tape_object.h"

#include <memory>
#include <vector>

#include "graph/tape.h"
#include "pyext/tensor_object.h"

namespace pj::py {
namespace {

struct TapeObject {
  PyObject_HEAD
  Tape* tape;
};

Tape& tape_of(PyObject* o) { return *reinterpret_cast<TapeObject*>(o)->tape; }

PyObject* tape_new(PyTypeObject* type, PyObject*, PyObject*) {
  PyObject* self = type->tp_alloc(type, 0);
  if (self) reinterpret_cast<TapeObject*>(self)->tape = new Tape;
  return self;
}

void tape_dealloc(PyObject* self) {
  delete reinterpret_cast<TapeObject*>(self)->tape;
  Py_TYPE(self)->tp_free(self);
}

const Tensor& tensor_arg(PyObject* o, const char* what, Py_ssize_t i) {
  if (!is_tensor(o)) PJ_THROW(Type) << what << " " << i << " must be a Tensor, got '" << Py_TYPE(o)->tp_name << "'";
  return unwrap(o);
}

Tensors tensors_of(PyObject* seq, const char* what) {
  Ref fast(PySequence_Fast(seq, "expected a sequence of tensors"));
  if (!fast) throw PythonErrorAlreadySet();
  Tensors out;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast.get()); ++i)
    out.push_back(tensor_arg(PySequence_Fast_GET_ITEM(fast.get(), i), what, i));
  return out;
}

PyObject* m_watch(PyObject* self, PyObject* t) {
  PJ_PY_BEGIN
  return PyLong_FromLong(tape_of(self).watch(tensor_arg(t, "watched value", 0)));
  PJ_PY_END(nullptr)
}

PyObject* m_gradient(PyObject* self, PyObject* args) {
  PyObject *outs, *seeds, *leaves, *zeros;
  if (!PyArg_ParseTuple(args, "OOOO:gradient", &outs, &seeds, &leaves, &zeros)) return nullptr;
  PJ_PY_BEGIN
  Tensors o = tensors_of(outs, "output"), s = tensors_of(seeds, "sensitivity"), z = tensors_of(zeros, "zeros");
  if (o.size() != s.size())
    PJ_THROW(Value) << "gradient: " << o.size() << " outputs but " << s.size() << " sensitivities";
  Ref fast(PySequence_Fast(leaves, "leaves must be a sequence of ints"));
  if (!fast) return nullptr;
  std::vector<int> hs;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast.get()); ++i) {
    long h = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast.get(), i));
    if (h == -1 && PyErr_Occurred()) return nullptr;
    hs.push_back(static_cast<int>(h));
  }
  if (hs.size() != z.size()) PJ_THROW(Value) << "gradient: " << hs.size() << " leaves but " << z.size() << " zeros";
  return wrap_all(tape_of(self).gradient(o, s, hs, z));
  PJ_PY_END(nullptr)
}

PyObject* m_start(PyObject* self, PyObject*) {
  tape_of(self).start();
  Py_RETURN_NONE;
}

PyObject* m_stop(PyObject* self, PyObject*) {
  tape_of(self).stop();
  Py_RETURN_NONE;
}

PyObject* get_records(PyObject* self, void*) { return PyLong_FromLong(tape_of(self).num_records()); }
PyObject* get_recording(PyObject* self, void*) { return PyBool_FromLong(tape_of(self).recording()); }

PyMethodDef tape_methods[] = {
    {"watch", m_watch, METH_O, "watch(t): a leaf handle for t (-1 when t is not floating)"},
    {"start", m_start, METH_NOARGS, "record the ops that read tracked tensors"},
    {"stop", m_stop, METH_NOARGS, "stop recording"},
    {"gradient", m_gradient, METH_VARARGS,
     "gradient(outputs, sens, leaves, zeros): d sum<sens_k, out_k> / d leaf, zeros[i] where none reaches"},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef tape_getset[] = {
    {"records", get_records, nullptr, "how many ops the tape recorded", nullptr},
    {"recording", get_recording, nullptr, "whether the tape records now", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject TapeType = [] {
  PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
  t.tp_name = "pijit._C.Tape";
  t.tp_basicsize = sizeof(TapeObject);
  t.tp_dealloc = tape_dealloc;
  t.tp_flags = Py_TPFLAGS_DEFAULT;
  t.tp_doc = "a gradient tape (graph/tape.h)";
  t.tp_methods = tape_methods;
  t.tp_getset = tape_getset;
  t.tp_new = tape_new;
  return t;
}();

// tape_run(tape, fn, args, kwargs)
PyObject* py_tape_run(PyObject*, PyObject* args) {
  PyObject *tape, *fn, *fargs, *kwargs = Py_None;
  if (!PyArg_ParseTuple(args, "O!OO!|O:tape_run", &TapeType, &tape, &fn, &PyTuple_Type, &fargs, &kwargs)) return nullptr;
  if (kwargs != Py_None && !PyDict_Check(kwargs)) return fail(PyExc_TypeError, "tape_run: kwargs must be a dict");
  Tape& t = tape_of(tape);
  const bool was = t.recording();
  t.start();
  PyObject* r = PyObject_Call(fn, fargs, kwargs == Py_None ? nullptr : kwargs);
  if (!was) t.stop();
  return r;
}

// The tensors of a Cell's output, nested tuples and lists included, depth first (a bprop Cell may
// return (y, (a, b))); other leaves carry no gradient.
void flatten_output(PyObject* o, Tensors& out) {
  if (is_tensor(o)) {
    out.push_back(unwrap(o));
  } else if (PyTuple_Check(o) || PyList_Check(o)) {
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); ++i) flatten_output(PySequence_Fast_GET_ITEM(o, i), out);
  }
}

// `shape` with its tensor leaves replaced, in flatten_output's order, by leaves[next...].
PyObject* rebuild_output(PyObject* shape, PyObject* leaves, Py_ssize_t& next) {
  if (is_tensor(shape)) {
    PyObject* t = PyTuple_GET_ITEM(leaves, next++);
    Py_INCREF(t);
    return t;
  }
  if (PyTuple_Check(shape) || PyList_Check(shape)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(shape);
    const bool tuple = PyTuple_Check(shape);
    Ref r(tuple ? PyTuple_New(n) : PyList_New(n));
    if (!r) throw PythonErrorAlreadySet();
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = rebuild_output(PySequence_Fast_GET_ITEM(shape, i), leaves, next);
      if (tuple) PyTuple_SET_ITEM(r.get(), i, item);
      else PyList_SET_ITEM(r.get(), i, item);
    }
    return r.release();
  }
  Py_INCREF(shape);
  return shape;
}

// The backward of a call_with_bprop node: bprop(*args, out, dout) on tensors.
struct PyBprop {
  const BpropRunner& run;
  PyObject* args;   // the call's positional arguments, as given
  bool single;      // the forward returned one tensor (dout is passed as a tensor, not a tuple)
  const std::string& name;
  PyObject* shape;  // the forward's output (nested tuples: out and dout are given that shape)

  std::vector<int> operator()(GradContext& c, const GradArgs& g) const {
    auto& ec = dynamic_cast<EagerGradContext&>(c);
    Ref outs(PyTuple_New(g.out.size())), douts(PyTuple_New(g.out.size()));
    for (size_t k = 0; k < g.out.size(); ++k) {
      PyTuple_SET_ITEM(outs.get(), k, wrap(ec.tensor(g.out[k])));
      int d = g.dout[k] != kNoGrad ? g.dout[k] : c.zeros(c.meta(g.out[k]));
      PyTuple_SET_ITEM(douts.get(), k, wrap(ec.tensor(d)));
    }
    if (!single) {
      Py_ssize_t next_out = 0, next_dout = 0;
      Ref o(rebuild_output(shape, outs.get(), next_out)), d(rebuild_output(shape, douts.get(), next_dout));
      outs = std::move(o);
      douts = std::move(d);
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    Ref call(PyTuple_New(n + 2));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* a = PyTuple_GET_ITEM(args, i);
      Py_INCREF(a);
      PyTuple_SET_ITEM(call.get(), i, a);
    }
    PyObject* out = single ? PyTuple_GET_ITEM(outs.get(), 0) : outs.get();
    PyObject* dout = single ? PyTuple_GET_ITEM(douts.get(), 0) : douts.get();
    Py_INCREF(out);
    Py_INCREF(dout);
    PyTuple_SET_ITEM(call.get(), n, out);
    PyTuple_SET_ITEM(call.get(), n + 1, dout);
    Ref r(run(call.get()));
    if (!r) throw PythonErrorAlreadySet();
    // One gradient per tensor argument, in order (non-tensor arguments have none).
    if (is_tensor(r.get())) {
      Ref one(PyTuple_Pack(1, r.get()));
      r = std::move(one);
    }
    if (!PyTuple_Check(r.get()) && !PyList_Check(r.get()))
      PJ_THROW(Type) << name << ".bprop must return a tuple of gradients, one per input, got '"
                     << Py_TYPE(r.get())->tp_name << "'";
    Ref fast(PySequence_Fast(r.get(), ""));
    std::vector<int> grads;
    Py_ssize_t m = PySequence_Fast_GET_SIZE(fast.get()), tensor_args = 0;
    for (Py_ssize_t i = 0; i < n; ++i) tensor_args += is_tensor(PyTuple_GET_ITEM(args, i));
    if (m != tensor_args && m != n)
      PJ_THROW(Type) << name << ".bprop returned " << m << " gradients for " << n << " inputs";
    for (Py_ssize_t i = 0, j = 0; i < n; ++i) {
      if (!is_tensor(PyTuple_GET_ITEM(args, i))) {
        if (m == n) ++j;
        continue;
      }
      PyObject* gi = PySequence_Fast_GET_ITEM(fast.get(), j++);
      if (gi == Py_None) {
        grads.push_back(kNoGrad);
        continue;
      }
      if (!is_tensor(gi))
        PJ_THROW(Type) << name << ".bprop: gradient " << (j - 1) << " must be a Tensor or None, got '"
                       << Py_TYPE(gi)->tp_name << "'";
      grads.push_back(ec.add(unwrap(gi)));
    }
    return grads;
  }
};

// A reference dropped with the GIL held (the tape's record may die on another thread's call).
std::shared_ptr<PyObject> keep_with_gil(PyObject* o) {
  Py_INCREF(o);
  return std::shared_ptr<PyObject>(o, [](PyObject* p) {
    PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(p);
    PyGILState_Release(s);
  });
}

}  // namespace

void record_bprop_call(PyObject* fargs, PyObject* out, BpropRunner run, const std::string& name) {
  Tensors in;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fargs); ++i)
    if (is_tensor(PyTuple_GET_ITEM(fargs, i))) in.push_back(unwrap(PyTuple_GET_ITEM(fargs, i)));
  const bool single = is_tensor(out);
  Tensors outs = single ? Tensors{unwrap(out)} : Tensors{};
  if (!single) {
    if (!PyTuple_Check(out)) PJ_THROW(Type) << name << ": a Cell with bprop must return a Tensor or a tuple of Tensors";
    flatten_output(out, outs);
  }
  std::shared_ptr<PyObject> keep_args = keep_with_gil(fargs), keep_shape = keep_with_gil(out);
  CustomGradFn fn = [run = std::move(run), keep_args, keep_shape, single, name](GradContext& c, const GradArgs& g) {
    return PyBprop{run, keep_args.get(), single, name, keep_shape.get()}(c, g);
  };
  tape_record_custom(in, outs, fn, name + ".bprop");
}

namespace {

// call_with_bprop(forward, bprop, args, name)
PyObject* py_call_with_bprop(PyObject*, PyObject* args) {
  PyObject *forward, *bprop, *fargs;
  const char* name;
  if (!PyArg_ParseTuple(args, "OOO!s:call_with_bprop", &forward, &bprop, &PyTuple_Type, &fargs, &name)) return nullptr;
  PJ_PY_BEGIN
  Ref out;
  {
    TapePause pause;
    out = Ref(PyObject_Call(forward, fargs, nullptr));
  }
  if (!out) return nullptr;
  if (!tape_active()) return out.release();
  std::shared_ptr<PyObject> keep = keep_with_gil(bprop);
  record_bprop_call(fargs, out.get(), [keep](PyObject* call) { return PyObject_Call(keep.get(), call, nullptr); }, name);
  return out.release();
  PJ_PY_END(nullptr)
}

PyObject* py_tape_active(PyObject*, PyObject*) { return PyBool_FromLong(tape_active()); }

// mindspore.common.api._no_grad: pauses nest, each resume ends the innermost pause of this thread
// (a stack, so tapes started inside a pause are not lost when it ends).
thread_local std::vector<std::unique_ptr<TapePause>> t_pauses;

PyObject* py_tape_pause(PyObject*, PyObject*) {
  t_pauses.push_back(std::make_unique<TapePause>());
  return PyLong_FromSize_t(t_pauses.size());
}

PyObject* py_tape_resume(PyObject*, PyObject*) {
  if (t_pauses.empty()) return fail(PyExc_RuntimeError, "tape_resume: no tape_pause is active on this thread");
  t_pauses.pop_back();
  return PyLong_FromSize_t(t_pauses.size());
}

PyMethodDef tape_functions[] = {
    {"tape_run", py_tape_run, METH_VARARGS, "tape_run(tape, fn, args, kwargs=None): fn(*args, **kwargs) recorded on tape"},
    {"call_with_bprop", py_call_with_bprop, METH_VARARGS,
     "call_with_bprop(forward, bprop, args, name): forward(*args), differentiated by bprop(*args, out, dout)"},
    {"tape_active", py_tape_active, METH_NOARGS, "whether a gradient tape records on this thread"},
    {"tape_pause", py_tape_pause, METH_NOARGS, "no tape of this thread records until tape_resume (nests)"},
    {"tape_resume", py_tape_resume, METH_NOARGS, "ends the innermost tape_pause of this thread"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyTypeObject* tape_type() { return &TapeType; }
bool is_tape_run(PyObject* f) {
  return PyCFunction_Check(f) && reinterpret_cast<PyCFunctionObject*>(f)->m_ml->ml_meth == py_tape_run;
}
Tape* tape_of_object(PyObject* o) { return PyObject_TypeCheck(o, &TapeType) ? &tape_of(o) : nullptr; }

bool init_tape_type(PyObject* module) {
  if (PyType_Ready(&TapeType) < 0) return false;
  Py_INCREF(&TapeType);
  if (PyModule_AddObject(module, "Tape", reinterpret_cast<PyObject*>(&TapeType)) < 0) return false;
  return add_functions(module, tape_functions);
}

}  // namespace pj::py
