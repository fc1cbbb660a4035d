// pijit._C.Tape and the module functions of eager autodiff (pyext/tape_object.cc).
#pragma once
#include <functional>
#include <string>

#include "py/py_common.h"

namespace pj {
class Tape;
}
namespace pj::py {
bool init_tape_type(PyObject* module);
// pijit._C.Tape, and whether `f` is pijit._C.tape_run (capture simulates its function inside it).
PyTypeObject* tape_type();
bool is_tape_run(PyObject* f);
// The pj::Tape of a pijit._C.Tape object.
Tape* tape_of_object(PyObject* o);

// Runs a Cell's bprop for one recorded call: `call` is the forward's positional arguments, then
// out and dout; a new reference to what bprop returned, or nullptr with a Python error set.
// Eagerly a Python call; under capture the simulator's (the bprop's ops become backward nodes).
using BpropRunner = std::function<PyObject*(PyObject* call)>;
// Records on every recording tape a call of a Cell with bprop: `fargs` (a tuple) gave `out` (a
// tensor, or nested tuples holding tensors) and `run` is its backward. Raises pj::Error (TypeError)
// for any other output.
void record_bprop_call(PyObject* fargs, PyObject* out, BpropRunner run, const std::string& name);
}  // namespace pj::py
