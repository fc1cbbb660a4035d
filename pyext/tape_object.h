// pijit._C.Tape and the module functions of eager autodiff (pyext/tape_object.cc).
#pragma once
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
}  // namespace pj::py
