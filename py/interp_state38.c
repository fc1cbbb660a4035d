/* Python 3.8 only: its PyInterpreterState is opaque in the public headers, so the PEP 523 hook
 * (interp->eval_frame) is read and written here, through the internal header, which needs
 * Py_BUILD_CORE and C (it includes <stdatomic.h>). py/pyport.h declares these two functions. */
#include <Python.h>
#if PY_VERSION_HEX >= 0x03080000 && PY_VERSION_HEX < 0x03090000
#define Py_BUILD_CORE 1
#include <internal/pycore_pystate.h>

_PyFrameEvalFunction pj_interp38_eval_frame(void) { return _PyThreadState_GET()->interp->eval_frame; }
void pj_interp38_set_eval_frame(_PyFrameEvalFunction f) { _PyThreadState_GET()->interp->eval_frame = f; }
#endif
