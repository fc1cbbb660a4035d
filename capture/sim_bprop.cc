// A Cell with a hand-written bprop, called while a gradient tape records (MindSpore's custom
// backward). Eagerly (pijit/autodiff.py call_cell) its construct runs with the tapes paused and
// the tapes record one call whose backward is bprop(*inputs, out, dout). Capture does the same
// with both halves simulated: the construct inline with the tapes paused, and the bprop when the
// backward sweep reaches the recorded call, so its ops are nodes of the backward graph. What the
// bprop cannot be simulated through stops capture there, with its reason.
#include "py/pyport.h"  // first (Python.h)

#if PJ_PY_CAPTURE_BUILT

#include "capture/sim_state.h"
#include "graph/tape.h"
#include "pyext/tape_object.h"
#include "pyext/tensor_object.h"

namespace pj::capture {

PyObject* Simulator::call_with_bprop(PyObject* cell, PyObject* construct, const std::vector<PyObject*>& args,
                                     PyObject* kwnames) {
  const std::string name = Py_TYPE(cell)->tp_name;
  // A tape of the interpreter's records this frame (an eager grad of a function captured under
  // stress): its backward runs outside any graph, and differentiates the graph as a whole.
  if (tape_depth() > own_tapes_) stop(Break::UnsupportedCall, "differentiates a " + name + ", whose bprop runs eagerly");
  if (kwnames) stop(Break::Raises, "TypeError: " + name + ": a Cell with bprop takes positional inputs only");
  static PyObject* bprop_name = PyUnicode_InternFromString("bprop");
  PyObject* bprop = load_attr(cell, bprop_name);
  PyObject* out;
  {
    TapePause pause;
    out = materialize(call(construct, args, nullptr));
  }
  if (!py::is_tensor(out) && !PyTuple_Check(out))
    stop(Break::Raises, "TypeError: " + name + ": a Cell with bprop must return a Tensor or a tuple of Tensors");
  PyObject* fargs = own(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    PyObject* a = materialize(args[i]);
    Py_INCREF(a);
    PyTuple_SET_ITEM(fargs, static_cast<Py_ssize_t>(i), a);
  }
  // The runner lives on the tape, which the capture made and drops; it refuses to run once the
  // simulation is gone. A stop inside the bprop leaves through the sweep (C++ and the library's
  // Python frames) as a Python error and is thrown again where the library call returns.
  std::weak_ptr<int> alive = alive_;
  py::BpropRunner run = [this, alive, bprop, name](PyObject* call_args) -> PyObject* {
    if (alive.expired()) {
      PyErr_Format(PyExc_RuntimeError, "pijit: %s.bprop was recorded during a capture that has ended", name.c_str());
      return nullptr;
    }
    try {
      std::vector<PyObject*> a(&PyTuple_GET_ITEM(call_args, 0), &PyTuple_GET_ITEM(call_args, 0) + PyTuple_GET_SIZE(call_args));
      for (PyObject* x : a) {  // (the simulation may hold them past this tuple)
        Py_INCREF(x);
        own(x);
      }
      PyObject* r = materialize(call(bprop, a, nullptr));
      Py_INCREF(r);
      return r;
    } catch (StopCapture& s) {
      // (an interruption's exception, pending now, is the caller's: kept to be raised again)
      if (s.reason == Break::Interrupted && PyErr_Occurred() && !pending_exc_.type) {
        PyErr_Fetch(&pending_exc_.type, &pending_exc_.value, &pending_exc_.tb);
      }
      if (!pending_stop_) pending_stop_ = std::make_unique<StopCapture>(std::move(s));
    } catch (const SimRaise& r) {  // the bprop raised: the interpreter runs it, as it would
      if (!pending_stop_) {
        PyObject* text = r.value ? PyObject_Str(r.value) : nullptr;
        std::string msg = text && PyUnicode_Check(text) ? py::text(text) : "";
        Py_XDECREF(text);
        PyErr_Clear();
        pending_stop_ = std::make_unique<StopCapture>(StopCapture{
            Break::Raises, std::string(r.value ? Py_TYPE(r.value)->tp_name : "exception") + ": " + msg + " (in " + name + ".bprop)",
            current_line(), current_code()});
      }
    } catch (...) {  // (nothing may unwind through the sweep's C frames)
      if (!pending_stop_)
        pending_stop_ = std::make_unique<StopCapture>(StopCapture{Break::Internal, name + ".bprop: an internal error", 0});
    }
    PyErr_Format(PyExc_RuntimeError, "pijit: %s.bprop could not be captured", name.c_str());
    return nullptr;
  };
  try {
    py::record_bprop_call(fargs, out, std::move(run), name);
  } catch (const std::exception& e) {
    stop(Break::Internal, std::string("recording ") + name + ".bprop: " + e.what());
  }
  return out;
}

void Simulator::rethrow_pending_stop() {
  if (!pending_stop_) return;
  PyErr_Clear();
  if (pending_exc_.type) {  // the interruption's own exception, pending again for the caller
    PyErr_Restore(pending_exc_.type, pending_exc_.value, pending_exc_.tb);
    pending_exc_ = {};
  }
  StopCapture s = std::move(*pending_stop_);
  pending_stop_.reset();
  throw s;
}

}  // namespace pj::capture

#endif  // PJ_PY_CAPTURE_BUILT
