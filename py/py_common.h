// Shared plumbing of the CPython extension pijit._C: the boundary between pijit's C++ (which
// raises pj::Error for bad input) and Python (which wants NULL with an exception set).
//
// Every entry point called from Python wraps its body in PJ_PY_BEGIN / PJ_PY_END(failure value),
// which turns pj::Error into the matching Python exception (ValueError, TypeError, IndexError,
// ...) and any other C++ exception into RuntimeError naming it. Nothing escapes into CPython.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/stack.h"

namespace pj::py {

void set_python_error(const Error& e);
// pijit._C.CaptureBreak (created at module init): raised where traced code reads a symbolic
// tensor's data; capture turns it into a graph-break reason.
extern PyObject* g_capture_break;
// Adds each function of a nullptr-terminated table to `module` (bound to it, as module functions
// are); false with a Python error on failure.
bool add_functions(PyObject* module, PyMethodDef* defs);

// Raises a Python exception and returns nullptr, for use in `return fail(...)`. Bytes of msg that
// are not UTF-8 (a file system path) show as \xNN.
PyObject* fail(PyObject* type, const std::string& msg);

// The text of an object that should be a str (a code object's co_filename, co_name, co_qualname;
// an attribute, global or keyword name; a module name; a repr; a user's string), as valid UTF-8,
// for messages, logs, dumps and names compared with known ones. Never fails, never raises, and
// leaves a pending Python error as it found it. Why not PyUnicode_AsUTF8: a file name byte that is
// not UTF-8 decodes (surrogateescape) to a lone surrogate, which has no UTF-8 form, so that returns
// NULL with an error set; here each lone surrogate reads \udcff (backslashreplace). A non-str (or
// nullptr) reads "<non-str TYPE>". Not one-to-one ('\udcff' and '\\udcff' read alike): a map
// keyed by name uses name_key.
std::string text(PyObject* o);
// An object's own (instance) attributes, read where they are: 3.11 keeps a plain class's inline
// until something asks for the object's __dict__ (_PyObject_GetDictPtr does), which makes a dict
// object for good, a change plain Python would not make (gc counts it, attribute loads slow down).
// own_attr: the attribute (borrowed), nullptr when the object has none of that name.
PyObject* own_attr(PyObject* o, PyObject* name);
// Whether the object can hold attributes of its own (a dict slot, or 3.11's managed dict).
bool holds_own_attrs(PyObject* o);
// ... and whether it has them now (a dict, or 3.11's inline values: none yet is false).
bool has_own_attrs_now(PyObject* o);
// The object's dict if it has one now (borrowed), else nullptr (3.11: attributes inline, or none).
PyObject* existing_dict(PyObject* o);
// Every own attribute, in the order the object's __dict__ would give them.
std::vector<std::pair<PyObject*, PyObject*>> own_attrs(PyObject* o);

// UnboundLocalError's message for local `name` (a str), in this Python's words (kUnboundCellMessage).
std::string unbound_local_message(PyObject* name);
// Whether text(o) starts with `prefix`, without building the text for an ASCII str (the hook asks
// it of a code object's file name on every frame under stress).
bool text_starts_with(PyObject* o, const std::string& prefix);
// A str's exact identity as bytes (UTF-8, lone surrogates as "surrogatepass" writes them, which is
// not valid UTF-8): one-to-one, the same as text for a str that is valid UTF-8. For keys of maps
// keyed by name, never shown. A non-str reads as text does.
std::string name_key(PyObject* o);

// Code pijit makes from part of a function (a resume function, a loop body) gets the function's
// cell variables as free variables; an unbound one would then raise NameError where the function
// raised UnboundLocalError. Its reads and deletes of them call these instead (the cell, its name):
// the cell's value, or UnboundLocalError as CPython words it; delete empties the cell.
PyObject* cell_load_function();    // borrowed, made once
PyObject* cell_delete_function();

// raise_again(e): raises exception e as it is, without the chaining a raise statement adds
// (__context__ stays what it was) and with its traceback; a resume function's prologue raises what
// its caller caught with it. Borrowed, made once.
PyObject* raise_again_function();

#if PJ_PY_CAPTURE_BUILT
// While capture runs, the frame-evaluation hooks note the globals of each Python frame that runs
// for real (the library code capture calls rather than simulates): capture guards the pijit
// namespaces among them (capture/simulator.cc sets the set; borrowed pointers).
extern thread_local std::unordered_set<PyObject*>* t_ran_globals;
inline void note_frame_ran(Frame* f) {
  if (t_ran_globals)
    if (PyObject* g = frame_globals(f)) t_ran_globals->insert(g);
}
#else
inline void note_frame_ran(Frame*) {}
#endif

// rebuild_object(cls, names, *values): object.__new__(cls) with each attribute set as the
// captured code left it, past any property or __setattr__ (a slot through its member descriptor,
// anything else into the instance __dict__): no user code runs. Borrowed, made once.
PyObject* object_rebuild_function();

// module.name imported (a new reference), or nullptr with no error pending when either is
// missing: for the library objects pijit recognises by identity (os.environ, functools.partial).
PyObject* module_attr(const char* module, const char* name);

// A dict's keys in its iteration order, as a new list: an OrderedDict's order is its own links
// (move_to_end changes them, not the dict's table, which PyDict_Keys and PyDict_Next walk).
// nullptr with a Python error set when d is an OrderedDict subclass with its own __iter__ (reading
// that order would run user code).
PyObject* dict_keys_in_order(PyObject* d);
// An iterator over an OrderedDict's keys in that order (its own iterator, which runs no user
// code); nullptr with a Python error set as above.
PyObject* odict_keys_iter(PyObject* od);

// An owned reference (RAII Py_XDECREF).
class Ref {
 public:
  Ref() = default;
  explicit Ref(PyObject* o) : o_(o) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& r) noexcept : o_(r.release()) {}
  Ref& operator=(Ref&& r) noexcept {
    Py_XDECREF(o_);
    o_ = r.release();
    return *this;
  }
  ~Ref() { Py_XDECREF(o_); }
  PyObject* get() const { return o_; }
  PyObject* release() {
    PyObject* o = o_;
    o_ = nullptr;
    return o;
  }
  explicit operator bool() const { return o_ != nullptr; }

 private:
  PyObject* o_ = nullptr;
};

// Thrown to unwind C++ frames when a Python exception is already set.
struct PythonErrorAlreadySet {};

// Whether this thread's C stack still holds every Python level the recursion limit allows from
// here at the cost of a level run as plain Python (at most 3/4 of the thread's stack is kept for
// them), plus `extra` bytes of pijit's own: the hook runs a frame its way (a cache hit, a capture,
// a resume function counted as its function's level) only then, so that a recursion plain Python
// survives, pijit survives (common/stack.h). Measured on 3.9: a plain level 400-530 bytes, a level
// through pj.jit's wrapper run as plain Python 656, a cache hit with a graph break ~1.9 KiB; the
// wrapped level differs per version (pyport.h).
constexpr size_t kPlainLevelStack = kWrappedPlainLevelStack;
// Past this, any frame entering the hook raises RecursionError rather than overflow the C stack
// (a recursion deeper than the levels kept room for below, or a thread with a small stack).
constexpr size_t kStackFloor = 256 << 10;
// A cache hit: the hook, a graph launch, a resume call, and the floor under the deepest level.
constexpr size_t kRunStackExtra = kStackFloor + (128 << 10);
constexpr size_t kCaptureStackExtra = 1 << 20;  // a capture: the simulator, passes, compiling kernels
bool stack_room_for_levels(PyThreadState* ts, size_t extra);
bool stack_room_for_levels(PyThreadState* ts, size_t extra, StackNow now);  // with stack_now() read (by value: no address taken, so callers keep their tail calls)
// RecursionError as CPython words it, with why; returns nullptr.
PyObject* raise_stack_exhausted();

// One level of C++ recursion over Python data (converters, printers, walks of nested containers)
// counted against Python's recursion limit, as CPython's own recursive C code does: past it,
// RecursionError "maximum recursion depth exceeded<where>" instead of a C stack overflow.
class RecursionGuard {
 public:
  explicit RecursionGuard(const char* where) {
    if (Py_EnterRecursiveCall(where)) throw PythonErrorAlreadySet();
  }
  ~RecursionGuard() { Py_LeaveRecursiveCall(); }
  RecursionGuard(const RecursionGuard&) = delete;
  RecursionGuard& operator=(const RecursionGuard&) = delete;
};

// Test hooks that look at a frame as the hook is given it (_frame_probe, _frame_rerun,
// _capture_probe): calls fn(*args, **kwargs) (kwargs may be nullptr) with a frame-evaluation hook
// that hands the first frame of `code` entered to `visit`, which evaluates it (in CPython's loop
// or as code of its own) and returns its result, or nullptr with an exception set; every other
// frame runs in CPython's own loop (under stress pijit's hook would capture it, and a generator it
// simulates never gets a frame). The evaluator found is restored if the hook is still this one;
// one thread at a time. Returns the call's result (new reference) or nullptr with an exception
// set: RuntimeError naming `hook` when the call returned without entering such a frame.
using FrameVisit = std::function<PyObject*(PyThreadState* ts, Frame* f, int throw_flag)>;
PyObject* call_visiting_frame(const char* hook, PyObject* fn, PyObject* args, PyObject* kwargs, PyCodeObject* code,
                              const FrameVisit& visit);

}  // namespace pj::py

#define PJ_PY_BEGIN try {
#define PJ_PY_END(failure)                                                     \
  }                                                                            \
  catch (const ::pj::py::PythonErrorAlreadySet&) {                             \
    return failure;                                                            \
  }                                                                            \
  catch (const ::pj::Error& e) {                                               \
    ::pj::py::set_python_error(e);                                             \
    return failure;                                                            \
  }                                                                            \
  catch (const std::bad_alloc&) {                                              \
    PyErr_NoMemory();                                                          \
    return failure;                                                            \
  }                                                                            \
  catch (const std::exception& e) {                                            \
    PyErr_Format(PyExc_RuntimeError, "pijit internal error: %s", e.what());    \
    return failure;                                                            \
  }
