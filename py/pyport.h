// The one place that knows which CPython pijit is compiled against (STYLE.md, practice 2).
//
// Everything in capture/ (and later guards/, codegen/) that differs between Python versions asks
// this header; nothing else tests PY_VERSION_HEX. It covers:
//   (a) the PEP 523 frame-evaluation hook, behind one pijit signature (EvalFrameFn);
//   (b) line numbers of a code object (co_lnotab on 3.7-3.9);
//   (c) the per-code-object extra slot (co_extra) that holds pijit's cache;
//   (d) which opcode numbering py/opcodes.def selects, and how jump arguments are counted;
//   (e) building code objects (codegen/assembler): the constructor and the line-table encoding;
//   (f) what a namedtuple's field descriptors are (tuple_field_index);
//   (g) builtins whose calls into user code differ (kListSizesBeforeIterating).
//
// Supported: 3.7 to 3.11. 3.7 to 3.10 share one frame model (PyFrameObject with a block stack); 3.8 and 3.10 differ
// from 3.9 in opcodes (py/opcodes.def's columns), 3.10 also in jump units and line tables (PEP 626
// co_linetable). 3.11 replaced frames by _PyInterpreterFrame and added exception tables: its
// opcodes are decoded, its code objects assembled (location and exception tables), its frames read
// through the hook (py/frame311.c), and the simulator runs on them (PJ_PY_CAPTURE_BUILT); the hook
// captures there unless PIJIT_PY311_CAPTURE=0 (capture_supported()), its rewritten code called in
// place of the frame and resume functions called by it (run_in_place, call_moving_args: the
// arguments' references move). On 3.12+ this header still compiles (the extension builds for
// every interpreter on the machine) and nothing version-specific runs.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>  // PyFrameObject for the eval-frame hook (3.7/3.9: full struct)
#if PY_VERSION_HEX < 0x030B0000
#include <longintrepr.h>  // fresh_int: the digits of an int (3.11's Python.h includes it)
#else
struct _PyInterpreterFrame;  // what 3.11's eval-frame hook is given (internal/pycore_frame.h)
#endif

#include <cstdlib>  // capture_supported: getenv
#include <cstring>  // tuple_field_index: descriptor type names
#include <array>  // code_unit_spans, encode_line_table
#include <string>  // encode_line_table's buffer
#include <vector>

// (d) Which column of py/opcodes.def runs here (PJ_PY_VERSION_BIT, an OpVersion bit), and the
// block protocols the simulator models per version:
//   PJ_PY_BLOCKS_37   3.7: loop blocks (SETUP_LOOP/BREAK_LOOP), returns unwind the block stack,
//                     END_FINALLY reads WHY_* markers, POP_EXCEPT unwinds to its block's level.
//   PJ_PY_FINALLY_38  3.8: a finally body is a subroutine (BEGIN_FINALLY/CALL_FINALLY/POP_FINALLY,
//                     END_FINALLY jumps back to a return address).
//   neither           3.9/3.10: handlers are entered only by exceptions (RERAISE); finally bodies
//                     are inlined on the normal paths.
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x03080000
#define PJ_PY_VERSION_BIT (1u << 0)
#define PJ_PY_BLOCKS_37 1
#define PJ_PY_FINALLY_38 0
#define PJ_PY_CAPTURE_BUILT 1
#elif PY_VERSION_HEX >= 0x03080000 && PY_VERSION_HEX < 0x03090000
#define PJ_PY_VERSION_BIT (1u << 1)
#define PJ_PY_BLOCKS_37 0
#define PJ_PY_FINALLY_38 1
#define PJ_PY_CAPTURE_BUILT 1
#elif PY_VERSION_HEX >= 0x03090000 && PY_VERSION_HEX < 0x030A0000
#define PJ_PY_VERSION_BIT (1u << 2)
#define PJ_PY_BLOCKS_37 0
#define PJ_PY_FINALLY_38 0
#define PJ_PY_CAPTURE_BUILT 1
#elif PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030B0000
#define PJ_PY_VERSION_BIT (1u << 3)
#define PJ_PY_BLOCKS_37 0
#define PJ_PY_FINALLY_38 0
#define PJ_PY_CAPTURE_BUILT 1
#elif PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
// 3.11: the simulator runs on its opcodes, _PyInterpreterFrame read through py/frame311.c; codegen
// lowers 3.10's vocabulary to its instructions (codegen/code_builder.h).
#define PJ_PY_VERSION_BIT (1u << 4)
#define PJ_PY_BLOCKS_37 0
#define PJ_PY_FINALLY_38 0
#define PJ_PY_CAPTURE_BUILT 1
#elif PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
// 3.12: its opcode column and the decoder (py/opcodes.def, code_unit_lines/spans); the simulator
// and the hook do not run on it yet, so functions run eagerly.
#define PJ_PY_VERSION_BIT (1u << 5)
#define PJ_PY_BLOCKS_37 0
#define PJ_PY_FINALLY_38 0
#define PJ_PY_CAPTURE_BUILT 0
#else
// No column: the table holds no opcode of this interpreter, and capture refuses to run.
#define PJ_PY_VERSION_BIT 0u
#define PJ_PY_BLOCKS_37 0
#define PJ_PY_FINALLY_38 0
#define PJ_PY_CAPTURE_BUILT 0
#endif

namespace pj::py {

// PJ_PY_CAPTURE_BUILT: capture/ and codegen/ are compiled for this Python (3.7-3.11), so the
// simulator can run on a frame (_C._capture_probe). kCaptureSupported: the hook captures frames
// and runs rewritten code there. capture_supported(): that, less 3.11 under PIJIT_PY311_CAPTURE=0
// (its capture is the newest: the switch runs functions eagerly).
constexpr bool kCaptureSupported = PJ_PY_CAPTURE_BUILT;
inline bool capture_supported() {
#if PJ_PY_CAPTURE_BUILT && PY_VERSION_HEX >= 0x030B0000
  static const bool on = [] {
    const char* v = std::getenv("PIJIT_PY311_CAPTURE");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
#else
  return kCaptureSupported;
#endif
}
// PyErr_Restore of a fetched error, less its traceback's first entry when drop_head (the rewritten
// frame's, before a continuation's: drop_resume_caller_entry).
inline void restore_error(PyObject* t, PyObject* v, PyObject* tb, bool drop_head) {
  if (drop_head) {
    PyObject* rest = reinterpret_cast<PyObject*>(reinterpret_cast<PyTracebackObject*>(tb)->tb_next);
    Py_INCREF(rest);
    Py_DECREF(tb);
    tb = rest;
  }
  PyErr_Restore(t, v, tb);
}
// Code that continues a function's frame in a frame of its own: resume functions and loop bodies,
// and the code run in place of their frames (runtime notes each it makes). A traceback entry of
// such code called from the function's rewritten frame is the same level of plain Python
// (drop_resume_caller_entry); the function called again (recursion) is not.
void note_continuation_code(PyObject* code);
bool is_continuation_code(PyCodeObject* code);
// How far up a continuation's callers drop_resume_caller_entry walks: each graph break, loop body
// and loop exit nests a frame and its shadow (a body breaking inside a loop after a break: 10 and more).
constexpr int kContinuationDepth = 64;
// The opcode table has this interpreter's column and the decoder reads its bytecode (a step
// before capture: 3.11).
constexpr bool kDecodeSupported = PJ_PY_VERSION_BIT != 0u;
// Message of the NotImplementedError raised by capture entry points where capture_supported() is false.
constexpr const char* kUnsupportedPythonMessage =
    PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
        ? "pijit captures on Python 3.7-3.11 (on 3.11 unless PIJIT_PY311_CAPTURE=0, which runs functions eagerly)"
        : "pijit captures on Python 3.7-3.11; on this Python functions run eagerly";

// What CPython raises reading (or deleting) a function's own cell variable while it is unbound:
// UnboundLocalError with this message (a PyErr_Format string: "%U" the name, a str object, which
// may hold lone surrogates). A free variable raises NameError instead.
#if PY_VERSION_HEX >= 0x030B0000
constexpr const char* kUnboundCellMessage = "cannot access local variable '%U' where it is not associated with a value";
#else
constexpr const char* kUnboundCellMessage = "local variable '%U' referenced before assignment";
#endif

// MAP_ADD (dict comprehensions) pops the value, then the key from 3.8 on (PEP 572's evaluation
// order); 3.7 pops the key first.
constexpr bool kMapAddValueOnTop = PY_VERSION_HEX >= 0x03080000;
// C stack of one recursion level through pj.jit's wrapper that the hook runs as plain Python
// (py_common.h's kPlainLevelStack): measured 672 bytes on 3.7, 592 on 3.8, 448 on 3.9, 512 on 3.10,
// 592 on 3.11 (test_limits holds each under this budget).
constexpr size_t kWrappedPlainLevelStack = PY_VERSION_HEX >= 0x03080000 && PY_VERSION_HEX < 0x03090000 ? 896 : 768;
// 3.10's pattern matching: the type flag that makes a class match sequence (or mapping) patterns;
// 0 before 3.10 (no such flag, no such opcodes).
inline unsigned long match_pattern_flag(bool sequence) {
#if PY_VERSION_HEX >= 0x030A0000
  return sequence ? Py_TPFLAGS_SEQUENCE : Py_TPFLAGS_MAPPING;
#else
  (void)sequence;
  return 0;
#endif
}

// ... and the flag of the builtin classes whose class pattern's one positional sub-pattern is the
// subject itself (`case int(n)`); 0 before 3.10.
inline unsigned long match_self_flag() {
#if PY_VERSION_HEX >= 0x030A0000
  return _Py_TPFLAGS_MATCH_SELF;
#else
  return 0;
#endif
}

// MAKE_FUNCTION's annotations: 3.10 pushes a tuple of (name, value) pairs, flattened, which the
// function keeps and turns into the dict on first read; PyFunction_SetAnnotations wants the dict.
// New reference, or nullptr with a Python exception set.
inline PyObject* annotations_dict(PyObject* annotations) {
  if (!PyTuple_Check(annotations)) {
    Py_INCREF(annotations);
    return annotations;
  }
  PyObject* d = PyDict_New();
  for (Py_ssize_t i = 0; d && i + 1 < PyTuple_GET_SIZE(annotations); i += 2)
    if (PyDict_SetItem(d, PyTuple_GET_ITEM(annotations, i), PyTuple_GET_ITEM(annotations, i + 1)) < 0) Py_CLEAR(d);
  return d;
}

// 3.10's generator code starts with GEN_START, which pops the value the first send() pushed.
constexpr bool kGenStartPops = PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030B0000;

// Bytes per unit of a jump argument: 3.7-3.9 jump in bytes, 3.10 counts 2-byte code units.
constexpr int kJumpUnit = PY_VERSION_HEX >= 0x030A0000 ? 2 : 1;
// Every instruction is one 2-byte code unit (opcode, arg) since 3.6.
constexpr int kCodeUnit = 2;
// 3.11: handlers are an exception table (co_exceptiontable), not SETUP_* blocks.
constexpr bool kExceptionTables = PY_VERSION_HEX >= 0x030B0000;
// 3.7: POP_BLOCK also pops the value stack down to the block's level (3.8+ leaves it as it is).
constexpr bool kPopBlockUnwindsStack = PY_VERSION_HEX < 0x03080000;
// 3.11: LOAD_GLOBAL's argument is the name's index << 1, bit 0 asking for a NULL pushed first.
constexpr bool kGlobalPushesNull = PY_VERSION_HEX >= 0x030B0000;
// 3.11: a callable sits over a slot, NULL (PUSH_NULL, LOAD_GLOBAL's bit) or a method
// (LOAD_METHOD), that CALL and CALL_FUNCTION_EX pop with it.
constexpr bool kCallsOverNull = PY_VERSION_HEX >= 0x030B0000;
// MAKE_FUNCTION pops the qualified name over the code before 3.11 (3.11: the code's co_qualname).
constexpr bool kMakeFunctionPopsQualname = PY_VERSION_HEX < 0x030B0000;
// 3.11's MATCH_KEYS and MATCH_CLASS push their result or None, not a result and a bool (3.10).
constexpr bool kMatchPushesNone = PY_VERSION_HEX >= 0x030B0000;
// 3.11: LOAD_DEREF, STORE_DEREF, LOAD_CLOSURE and MAKE_CELL index the one array of fast locals,
// cells and free variables (an argument's cell in the argument's slot), not cells alone.
constexpr bool kDerefIndexesLocals = PY_VERSION_HEX >= 0x030B0000;

// ---- (a) the frame-evaluation hook ------------------------------------------------------------

// The frame the hook is given, which capture, guards and the runtime read through the accessors
// below (section (a')): a PyFrameObject on 3.7-3.10; on 3.11 CPython's _PyInterpreterFrame (read
// through py/frame311.c; capture does not run there yet).
#if PY_VERSION_HEX < 0x030B0000
using Frame = PyFrameObject;
#else
using Frame = ::_PyInterpreterFrame;
#endif

// pijit's one signature for a frame evaluator, whatever the running CPython passes.
using EvalFrameFn = PyObject* (*)(PyThreadState* tstate, Frame* frame, int throw_flag);

#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x03090000
// 3.7/3.8 call eval_frame(frame, throw_flag); a trampoline adds the thread state.
inline EvalFrameFn g_installed_eval_frame = nullptr;
inline PyObject* eval_frame_trampoline(PyFrameObject* f, int throw_flag) {
  return g_installed_eval_frame(PyThreadState_GET(), f, throw_flag);
}
using LegacyEvalFrame = PyObject* (*)(PyFrameObject*, int);
#if PY_VERSION_HEX < 0x03080000
inline LegacyEvalFrame interp_eval_frame() { return PyThreadState_GET()->interp->eval_frame; }
inline void set_interp_eval_frame(LegacyEvalFrame f) { PyThreadState_GET()->interp->eval_frame = f; }
#else
// 3.8's PyInterpreterState is opaque outside the core: py/interp_state38.c reads and writes its
// eval_frame through the internal header (a C file: that header is not C++).
extern "C" LegacyEvalFrame pj_interp38_eval_frame(void);
extern "C" void pj_interp38_set_eval_frame(LegacyEvalFrame f);
inline LegacyEvalFrame interp_eval_frame() { return pj_interp38_eval_frame(); }
inline void set_interp_eval_frame(LegacyEvalFrame f) { pj_interp38_set_eval_frame(f); }
#endif
#endif

// The code object a frame object (a traceback's tb_frame) runs, borrowed.
inline PyCodeObject* frame_object_code(PyFrameObject* f) {
#if PY_VERSION_HEX < 0x03090000
  return f->f_code;
#else
  PyCodeObject* co = PyFrame_GetCode(f);  // (a new reference; the frame keeps its code alive)
  Py_DECREF(co);
  return co;
#endif
}

// Installs fn as the frame evaluator of the current interpreter; nullptr restores CPython's own.
// Returns false (nothing changed) where this Python's hook is not supported yet.
inline bool set_eval_frame(EvalFrameFn fn) {
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x03090000
  g_installed_eval_frame = fn;
  set_interp_eval_frame(fn ? eval_frame_trampoline : _PyEval_EvalFrameDefault);
  return true;
#elif PY_VERSION_HEX >= 0x03090000 && PY_VERSION_HEX < 0x030C0000
  // (3.11: the same call; the hook receives a _PyInterpreterFrame, pijit's Frame there)
  _PyInterpreterState_SetEvalFrameFunc(PyThreadState_GET()->interp, fn ? fn : _PyEval_EvalFrameDefault);
  return true;
#else
  (void)fn;
  return false;  // 3.12+: not read yet
#endif
}

// The evaluator installed now, in pijit's signature; nullptr when it is CPython's default.
inline EvalFrameFn get_eval_frame() {
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x03090000
  return interp_eval_frame() == eval_frame_trampoline ? g_installed_eval_frame : nullptr;
#elif PY_VERSION_HEX >= 0x03090000 && PY_VERSION_HEX < 0x030C0000
  _PyFrameEvalFunction f = _PyInterpreterState_GetEvalFrameFunc(PyThreadState_GET()->interp);
  return f == _PyEval_EvalFrameDefault ? nullptr : f;
#else
  return nullptr;
#endif
}

// Runs a frame in CPython's own interpreter loop, bypassing any installed hook (calling
// PyEval_EvalFrameEx instead would re-enter the hook).
inline PyObject* eval_frame_default(PyThreadState* tstate, Frame* f, int throw_flag) {
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x03090000
  (void)tstate;
  return _PyEval_EvalFrameDefault(f, throw_flag);
#elif PY_VERSION_HEX >= 0x03090000 && PY_VERSION_HEX < 0x030C0000
  return _PyEval_EvalFrameDefault(tstate, f, throw_flag);
#else
  (void)tstate, (void)f, (void)throw_flag;
  PyErr_SetString(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  return nullptr;
#endif
}

// The type's method-cache version tag: CPython gives it a new one whenever the type or one of its
// bases changes (a method patched, a class attribute set), so one equal tag stands for "every
// class-level lookup through this type still finds what it found". 0 when the type has no valid
// tag (modified since the last lookup, or never looked up). Same field and flag in 3.7 to 3.12.
inline unsigned int type_version(PyTypeObject* t) {
  return PyType_HasFeature(t, Py_TPFLAGS_VALID_VERSION_TAG) ? t->tp_version_tag : 0;
}

// 3.7 takes the method-cache flag (Py_TPFLAGS_HAVE_VERSION_TAG) from every class whose metaclass
// is not `type`: type_mro_modified compares two freshly bound `mro` methods, never the same object
// (fixed in 3.8). So ABCs and their subclasses never get a version tag there. Where every metaclass
// on the MRO keeps type's mro(), that is spurious: the flag goes back on the class and its bases,
// and CPython's invalidation (PyType_Modified on every class-level change) works as in 3.8. false:
// a metaclass with an mro() of its own, whose classes really must not be cached.
inline bool restore_version_tag_flag(PyTypeObject* t) {
#if PY_VERSION_HEX < 0x03080000
  static PyObject* mro_name = PyUnicode_InternFromString("mro");
  PyObject* type_mro = _PyType_Lookup(&PyType_Type, mro_name);
  PyObject* mro = t->tp_mro;
  if (!mro) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (!PyType_HasFeature(base, Py_TPFLAGS_HAVE_VERSION_TAG) && _PyType_Lookup(Py_TYPE(base), mro_name) != type_mro)
      return false;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i)
    reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i))->tp_flags |= Py_TPFLAGS_HAVE_VERSION_TAG;
  return true;
#else
  (void)t;
  return false;
#endif
}

// The type's version tag, given one first when it has none (a lookup through its method cache
// assigns it); 0 when CPython will not (too many tags handed out, a metaclass with its own mro()).
inline unsigned int ensure_type_version(PyTypeObject* t) {
  unsigned int version = type_version(t);
  if (version) return version;
  if (!PyType_HasFeature(t, Py_TPFLAGS_HAVE_VERSION_TAG)) restore_version_tag_flag(t);
  PyType_Modified(t);
  static PyObject* probe = PyUnicode_InternFromString("__pijit_version_probe__");
  _PyType_Lookup(t, probe);
  return type_version(t);
}

// super objects keep __thisclass__ and __self__ in this layout (Objects/typeobject.c, the same in
// 3.7 to 3.12). Reading it directly avoids super.__getattribute__, which searches the instance's
// MRO first and so finds a class attribute named __self__ before the super's own.
struct SuperLayout {
  PyObject_HEAD
  PyTypeObject* type;
  PyObject* obj;
  PyTypeObject* obj_type;
};
inline PyObject* super_thisclass(PyObject* s) { return reinterpret_cast<PyObject*>(reinterpret_cast<SuperLayout*>(s)->type); }
inline PyObject* super_self(PyObject* s) { return reinterpret_cast<SuperLayout*>(s)->obj; }  // nullptr: unbound

// An OrderedDict keeps its order in a list of nodes private to Objects/odictobject.c: after the
// dict, the first and last node, then the list's state counter; a node is (key, hash, next, prev).
// The same from 3.5 to 3.13.
// Guards compare a Cell's OrderedDict of sub-cells on every call: walking the nodes reads a few
// pointers where the dict's iterator allocates and makes a call per key. odict_layout_known()
// checks the layout once on a real OrderedDict that move_to_end reordered (py_common.cc); when it
// does not hold, callers iterate.
struct OdictNode {
  PyObject* key;
  Py_hash_t hash;
  OdictNode* next;
  OdictNode* prev;
};
struct OdictLayout {
  PyDictObject dict;
  OdictNode* first;
  OdictNode* last;
  OdictNode** fast_nodes;
  Py_ssize_t fast_nodes_size;
  void* resize_sentinel;
  size_t state;  // changes whenever the list does (a key added or removed, move_to_end)
};
inline const OdictNode* odict_first(PyObject* od) { return reinterpret_cast<OdictLayout*>(od)->first; }
// With the dict's version tag, an unchanged state means an unchanged order (guards' version shortcut).
inline size_t odict_state(PyObject* od) { return reinterpret_cast<OdictLayout*>(od)->state; }
bool odict_layout_known();

// This thread's Python recursion depth (the levels RecursionError counts).
inline int recursion_depth(PyThreadState* ts) {
#if PY_VERSION_HEX < 0x030B0000
  return ts->recursion_depth;
#elif PY_VERSION_HEX < 0x030C0000
  return ts->recursion_limit - ts->recursion_remaining;
#else
  return ts->py_recursion_limit - ts->py_recursion_remaining;
#endif
}

// Calling a C type's tp_call (pijit's JitFunction wrapper) counts one recursion level that calling
// the plain Python function does not. The wrapper gives that level back for the duration of the
// call, so recursion through a jitted function reaches the depth plain Python reaches.
struct RecursionCredit {
#if PY_VERSION_HEX < 0x030B0000
  PyThreadState* ts = PyThreadState_GET();
  RecursionCredit() { --ts->recursion_depth; }
  ~RecursionCredit() { ++ts->recursion_depth; }
#elif PY_VERSION_HEX < 0x030C0000
  PyThreadState* ts = PyThreadState_GET();
  RecursionCredit() { ++ts->recursion_remaining; }
  ~RecursionCredit() { --ts->recursion_remaining; }
#else
  RecursionCredit() {}
#endif
  RecursionCredit(const RecursionCredit&) = delete;
  RecursionCredit& operator=(const RecursionCredit&) = delete;
};

// Vectorcall (PEP 590): a callable type with it takes its arguments as an array, with no tuple made
// per call and no recursion level counted. 3.8 has it under provisional names; 3.7 has none
// (kHasVectorcall false: such types take tp_call only, and vectorcall() calls through the fast-call
// entry 3.7 has).
using VectorcallFn = PyObject* (*)(PyObject*, PyObject* const*, size_t, PyObject*);
// The flag in nargsf that lets a callee borrow args[-1] (the same bit in every version).
constexpr size_t kVectorcallArgumentsOffset = size_t{1} << (8 * sizeof(size_t) - 1);
inline Py_ssize_t vector_nargs(size_t nargsf) { return static_cast<Py_ssize_t>(nargsf & ~kVectorcallArgumentsOffset); }
// A type's instances keep their vectorcall function at `offset` (3.7: nothing; tp_call serves).
inline void set_vectorcall_offset(PyTypeObject* t, Py_ssize_t offset) {
#if PY_VERSION_HEX >= 0x03080000
  t->tp_vectorcall_offset = offset;
#else
  (void)t;
  (void)offset;
#endif
}
#if PY_VERSION_HEX >= 0x03090000
constexpr bool kHasVectorcall = true;
constexpr unsigned long kTpFlagsHaveVectorcall = Py_TPFLAGS_HAVE_VECTORCALL;
inline PyObject* vectorcall(PyObject* f, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return PyObject_Vectorcall(f, args, nargsf, kwnames);
}
#elif PY_VERSION_HEX >= 0x03080000
constexpr bool kHasVectorcall = true;
constexpr unsigned long kTpFlagsHaveVectorcall = _Py_TPFLAGS_HAVE_VECTORCALL;
inline PyObject* vectorcall(PyObject* f, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return _PyObject_Vectorcall(f, args, nargsf, kwnames);
}
#else
constexpr bool kHasVectorcall = false;
constexpr unsigned long kTpFlagsHaveVectorcall = 0;
inline PyObject* vectorcall(PyObject* f, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  return _PyObject_FastCallKeywords(f, const_cast<PyObject**>(args), vector_nargs(nargsf), kwnames);
}
#endif

// A dict's version (PEP 509): CPython gives a dict a new one on every change, so one equal tag
// stands for "nothing in this namespace was rebound". Private field, present in 3.6 to 3.11.
inline uint64_t dict_version(PyObject* d) {
#if PY_VERSION_HEX < 0x030C0000
  return reinterpret_cast<PyDictObject*>(d)->ma_version_tag;
#else
  (void)d;
  return 0;
#endif
}

constexpr bool kHasDictVersions = PY_VERSION_HEX < 0x030C0000;
// Where dict_version() reads the tag (nullptr where there is none).
inline const void* dict_version_addr(PyObject* d) {
#if PY_VERSION_HEX < 0x030C0000
  return &reinterpret_cast<PyDictObject*>(d)->ma_version_tag;
#else
  (void)d;
  return nullptr;
#endif
}

// Before 3.11 an object without an instance dict has no own attributes; 3.11 keeps them inline
// until something asks for __dict__.
constexpr bool kNoDictMeansNoOwnAttrs = PY_VERSION_HEX < 0x030B0000;

// o's instance dict when one exists (nullptr: none made, or none possible). Before 3.11 the common
// case, a positive tp_dictoffset, is read here without a call.
PyObject* existing_dict(PyObject* o);
// Where o keeps its instance dict's pointer (nullptr: it can have none), read without making one.
PyObject** dict_slot(PyObject* o);
inline PyObject* existing_dict_inline(PyObject* o) {
#if PY_VERSION_HEX < 0x030B0000
  const Py_ssize_t off = Py_TYPE(o)->tp_dictoffset;
  if (off > 0) return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(o) + off);
#endif
  return existing_dict(o);
}

// The builtins dict a frame of function `func` starts with (borrowed; nullptr: none to be found).
// 3.10 gave functions their own; before, a frame read its globals' __builtins__ (a module: its dict).
inline PyObject* function_builtins(PyObject* func) {
#if PY_VERSION_HEX >= 0x030A0000
  return reinterpret_cast<PyFunctionObject*>(func)->func_builtins;
#else
  static PyObject* const name = PyUnicode_InternFromString("__builtins__");
  PyObject* b = PyDict_GetItem(PyFunction_GET_GLOBALS(func), name);
  if (b && PyModule_Check(b)) b = PyModule_GetDict(b);
  return b && PyDict_Check(b) ? b : nullptr;
#endif
}

// A tracer (sys.settrace: debuggers, coverage) or profiler (sys.setprofile, cProfile) is active
// on this thread: it must see the original code objects, lines and calls.
inline bool tracing_or_profiling(PyThreadState* ts) { return ts->c_tracefunc || ts->c_profilefunc; }

// ---- (a') frames --------------------------------------------------------------------------------
// 3.7-3.10 evaluate a PyFrameObject whose f_localsplus holds the fast locals, then the cells
// (co_cellvars), then the free variables (co_freevars). Cells are created, and arguments copied
// into them, before the evaluator is called, so the hook sees them filled.

#if PY_VERSION_HEX < 0x030B0000
inline int code_nlocals(PyCodeObject* co) { return co->co_nlocals; }
inline int code_ncells(PyCodeObject* co) { return static_cast<int>(PyTuple_GET_SIZE(co->co_cellvars)); }
inline int code_nfrees(PyCodeObject* co) { return static_cast<int>(PyTuple_GET_SIZE(co->co_freevars)); }
// Borrowed: the name of fast local i (co_varnames order), of cell or free variable i (co_cellvars,
// then co_freevars).
inline PyObject* code_varname(PyCodeObject* co, int i) { return PyTuple_GET_ITEM(co->co_varnames, i); }
inline PyObject* code_cellname(PyCodeObject* co, int i) {
  const int ncells = code_ncells(co);
  return i < ncells ? PyTuple_GET_ITEM(co->co_cellvars, i) : PyTuple_GET_ITEM(co->co_freevars, i - ncells);
}
// The cell or free variable (index as above) that the argument of LOAD_DEREF, STORE_DEREF,
// DELETE_DEREF, LOAD_CLOSURE or MAKE_CELL names; -1: none. 3.7-3.10 index cells alone.
inline int deref_cell_index(PyCodeObject*, int arg) { return arg; }
// Borrowed: the object of cell/free variable i (nullptr when unbound).
inline PyObject* frame_deref(PyFrameObject* f, int i) {
  PyObject* cell = f->f_localsplus[f->f_code->co_nlocals + i];
  return cell ? PyCell_GET(cell) : nullptr;
}
// Borrowed: the cell object of cell/free variable i itself.
inline PyObject* frame_cell(PyFrameObject* f, int i) { return f->f_localsplus[f->f_code->co_nlocals + i]; }
inline PyObject* frame_local(PyFrameObject* f, int i) { return f->f_localsplus[i]; }  // borrowed
inline PyObject* frame_globals(PyFrameObject* f) { return f->f_globals; }
inline PyObject* frame_builtins(PyFrameObject* f) { return f->f_builtins; }
inline PyCodeObject* frame_code(PyFrameObject* f) { return f->f_code; }
// Adds f's current line to the pending exception's traceback (as an exception leaving f's own
// evaluation would); -1 on failure.
inline int traceback_here(PyFrameObject* f) { return PyTraceBack_Here(f); }

// A frame for `code` to run rewritten code in place of f's own: nullptr with an exception set on
// failure. It takes f's fast locals over (f keeps none: a value the rewritten code or its
// continuation drops dies then, as in plain Python's one frame) and shares f's cells and free
// variables (new references). `code` may have more fast locals than f's code (temporaries); its
// cells and free variables are the same. give_back_locals undoes the move, for running f itself.
inline PyFrameObject* shadow_frame(PyThreadState* tstate, PyFrameObject* f, PyCodeObject* code) {
  PyFrameObject* s = PyFrame_New(tstate, code, f->f_globals, nullptr);
  if (!s) return nullptr;
  int nlocals = f->f_code->co_nlocals;
  int nextra = code_ncells(f->f_code) + code_nfrees(f->f_code);
  for (int i = 0; i < nlocals; ++i) {
    s->f_localsplus[i] = f->f_localsplus[i];
    f->f_localsplus[i] = nullptr;
  }
  for (int i = 0; i < nextra; ++i) {
    PyObject* o = f->f_localsplus[nlocals + i];
    Py_XINCREF(o);
    s->f_localsplus[code->co_nlocals + i] = o;
  }
  return s;
}
// Whether fast local i is an argument a closure captures (3.11 keeps its cell in its slot).
inline bool local_is_cell(PyCodeObject*, int) { return false; }
// (3.11's; call_moving_args and shadow frames move the references themselves here)
inline void release_moved_args(PyCodeObject*) {}
inline void in_place_started(Frame*) {}
inline void give_back_args() {}
// Runs `code` (f's own code, rewritten) in place of the frame f, which has not started, and
// returns its result: in a shadow frame that takes f's fast locals over (see shadow_frame); an
// exception leaving it has the function in its traceback once.
inline PyObject* run_in_place(PyThreadState* tstate, PyFrameObject* f, PyCodeObject* code);

// f's fast locals back from its shadow, which must not have stored any of them.
inline void give_back_locals(PyFrameObject* f, PyFrameObject* shadow) {
  for (int i = 0; i < f->f_code->co_nlocals; ++i) {
    Py_XSETREF(f->f_localsplus[i], shadow->f_localsplus[i]);
    shadow->f_localsplus[i] = nullptr;
  }
}

// fn(*args) for a function whose code takes exactly len(args) positional arguments and nothing
// else (no cells of its own, not a generator): a resume function (the caller checks:
// codegen's resume builtin). The new frame takes over the
// list's references and the list is left empty, so while the call runs its caller holds none of
// them: a value the callee drops dies there, as it would in the one frame of plain Python (a
// generator's `finally`, a file's close). A call by the tuple (CALL_FUNCTION_EX) keeps the tuple,
// and every value in it, alive until the callee returns.
// same_level: the resume function continues its caller's Python level (plain Python has one
// frame there), so it runs at the caller's recursion depth: the level CPython counted for calling
// pijit's `resume` builtin (3.7-3.10 count C function calls) and the new frame's are given back.
inline PyObject* call_moving_args(PyObject* fn, PyObject* args, bool same_level) {
  auto* co = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(fn));
  const Py_ssize_t n = PyList_GET_SIZE(args);
  PyThreadState* ts = PyThreadState_GET();
  PyFrameObject* f = PyFrame_New(ts, co, PyFunction_GET_GLOBALS(fn), nullptr);
  if (!f) return nullptr;
  PyObject** items = reinterpret_cast<PyListObject*>(args)->ob_item;
  for (Py_ssize_t i = 0; i < n; ++i) {
    f->f_localsplus[i] = items[i];  // moved: the list's reference is the frame's now
    items[i] = nullptr;
  }
  if (PyList_SetSlice(args, 0, n, nullptr) < 0) {  // (its slots are empty: nothing is released)
    Py_DECREF(f);
    return nullptr;
  }
  for (int i = 0; i < code_nfrees(co); ++i) {
    PyObject* cell = PyTuple_GET_ITEM(PyFunction_GET_CLOSURE(fn), i);
    Py_INCREF(cell);
    f->f_localsplus[co->co_nlocals + i] = cell;
  }
  const int credit = same_level ? 2 : 0;
  ts->recursion_depth -= credit;
  PyObject* r = PyEval_EvalFrameEx(f, 0);
  ts->recursion_depth += credit;
  // Released as CPython releases a call's frame: a finalizer run by it counts one level deeper.
  ++ts->recursion_depth;
  Py_DECREF(f);
  --ts->recursion_depth;
  return r;
}

// An exception leaving rewritten code through the resume function or loop body it called: the
// pending traceback holds the rewritten frame at the line of the call, then that continuation's
// frame at the line that raised, where plain Python has the function once. The first goes. A
// continuation is a frame of the same function (name, file and first line: a continuation's code
// keeps the original's) called from the rewritten frame, directly or through such frames that
// left no entry (a loop body run in a shadow frame of its own that called its resume function).
// The first line tells `super().__init__()` (another __init__ of the same file) from one.
inline void drop_resume_caller_entry(PyFrameObject* shadow) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  auto* head = tb && PyTraceBack_Check(tb) ? reinterpret_cast<PyTracebackObject*>(tb) : nullptr;
  auto same_function = [shadow](PyFrameObject* p) {
    return p->f_code->co_firstlineno == shadow->f_code->co_firstlineno &&
           PyUnicode_Compare(p->f_code->co_name, shadow->f_code->co_name) == 0 &&
           PyUnicode_Compare(p->f_code->co_filename, shadow->f_code->co_filename) == 0;
  };
  bool continuation = false;
  // (a continuation's code, not the function called again: recursion keeps its entry)
  if (head && head->tb_frame == shadow && head->tb_next && is_continuation_code(head->tb_next->tb_frame->f_code)) {
    PyFrameObject* p = head->tb_next->tb_frame;
    for (int depth = 0; p && depth < kContinuationDepth && same_function(p) && !continuation; ++depth, p = p->f_back)
      continuation = p->f_back == shadow;
  }
  restore_error(t, v, tb, continuation);
}

// Whether freeing `o` may run code beyond releasing memory: a generator, coroutine or async
// generator suspended inside a try or with block (closing it runs the block's cleanup; 3.7's loop
// blocks do not count), or an object whose type has a finalizer (a Python __del__, a file's close).
inline bool finalizer_runs_code(PyObject* o) {
  if (PyGen_Check(o) || PyCoro_CheckExact(o) || PyAsyncGen_CheckExact(o)) {
    PyFrameObject* f = reinterpret_cast<PyGenObject*>(o)->gi_frame;
    if (!f || f->f_lasti < 0) return false;  // finished, or never started: closing runs nothing
    for (int k = 0; k < f->f_iblock; ++k) {
#if PY_VERSION_HEX < 0x03080000
      constexpr int kSetupLoop = 120;  // 3.7's SETUP_LOOP (opcode.h)
      if (f->f_blockstack[k].b_type == kSetupLoop) continue;
#endif
      return true;
    }
    return false;
  }
  return Py_TYPE(o)->tp_finalize || Py_TYPE(o)->tp_del;
}

// Whether the frame must run in CPython's own loop: generators, coroutines and async generators
// (their frames are resumed, not entered once), and a frame entered to throw into.
inline bool frame_is_resumable(PyFrameObject* f) {
  return (f->f_code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)) != 0;
}
inline PyObject* run_in_place(PyThreadState* tstate, PyFrameObject* f, PyCodeObject* code) {
  PyFrameObject* shadow = shadow_frame(tstate, f, code);
  if (!shadow) return nullptr;
  PyObject* r = _PyEval_EvalFrameDefault(
#if PY_VERSION_HEX >= 0x03090000
      tstate,
#endif
      shadow, 0);
  if (!r) drop_resume_caller_entry(shadow);
  Py_DECREF(shadow);
  return r;
}
// Code run_in_place runs keeps f's signature (its shadow frame is filled, not called).
constexpr bool kRunInPlacePositional = false;
// Whether the frame ran an instruction already (a generator being resumed, not started).
inline bool frame_started(PyFrameObject* f) { return f->f_lasti >= 0; }

#elif PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
// 3.11: the hook is given a _PyInterpreterFrame, read through py/frame311.c (its layout is in the
// internal headers). One array, localsplus, holds the fast locals first, then the cell variables
// that are not arguments, then the free variables; an argument's cell takes the argument's slot.
// The code's prologue (MAKE_CELL, COPY_FREE_VARS) has not run when the hook is entered: cell slots
// still hold raw values and the free variables are only in the function's closure. The reads
// below give the same answers as on 3.7-3.10 either way.
extern "C" PyCodeObject* pj_frame311_code(Frame* f);
extern "C" PyObject* pj_frame311_globals(Frame* f);
extern "C" PyObject* pj_frame311_builtins(Frame* f);
extern "C" PyObject* pj_frame311_function(Frame* f);
extern "C" PyObject* pj_frame311_slot(Frame* f, int i);
extern "C" PyObject* pj_frame311_take_slot(Frame* f, int i);
extern "C" void pj_frame311_set_slot(Frame* f, int i, PyObject* v);
extern "C" int pj_frame311_lasti(Frame* f);
extern "C" int pj_frame311_prologue_done(Frame* f);
extern "C" int pj_frame311_cell_slot(PyCodeObject* co, int i);
extern "C" int pj_frame311_local_is_cell(PyCodeObject* co, int i);
extern "C" Py_ssize_t pj_obj311_inline_count(PyObject* o);
extern "C" void pj_obj311_inline_item(PyObject* o, Py_ssize_t k, PyObject** key, PyObject** value);
extern "C" PyObject* pj_obj311_inline_lookup(PyObject* o, PyObject* name, int* inline_values);
extern "C" PyObject** pj_obj311_dict_slot(PyObject* o);
inline int code_nlocals(PyCodeObject* co) { return co->co_nlocals; }
inline int code_ncells(PyCodeObject* co) { return co->co_ncellvars; }
inline int code_nfrees(PyCodeObject* co) { return co->co_nfreevars; }
extern "C" int pj_frame311_slot_cell(PyCodeObject* co, int slot);
inline PyObject* code_varname(PyCodeObject* co, int i) { return PyTuple_GET_ITEM(co->co_localsplusnames, i); }
inline PyObject* code_cellname(PyCodeObject* co, int i) {
  return PyTuple_GET_ITEM(co->co_localsplusnames, pj_frame311_cell_slot(co, i));
}
// (3.11 indexes localsplus: an argument's cell is the argument's slot: kDerefIndexesLocals)
inline int deref_cell_index(PyCodeObject* co, int arg) { return pj_frame311_slot_cell(co, arg); }
inline PyCodeObject* frame_code(Frame* f) { return pj_frame311_code(f); }
inline PyObject* frame_globals(Frame* f) { return pj_frame311_globals(f); }
inline PyObject* frame_builtins(Frame* f) { return pj_frame311_builtins(f); }
// Borrowed; an argument that is also a cell variable reads as unbound, as on 3.7-3.10 (its
// value is the cell's: frame_deref).
inline PyObject* frame_local(Frame* f, int i) {
  return pj_frame311_local_is_cell(frame_code(f), i) ? nullptr : pj_frame311_slot(f, i);
}
// Borrowed: the cell object of cell/free variable i; nullptr for a cell variable whose cell the
// prologue has not made yet.
inline PyObject* frame_cell(Frame* f, int i) {
  PyCodeObject* co = frame_code(f);
  if (!pj_frame311_prologue_done(f)) {
    if (i < co->co_ncellvars) return nullptr;
    PyObject* closure = reinterpret_cast<PyFunctionObject*>(pj_frame311_function(f))->func_closure;
    return closure ? PyTuple_GET_ITEM(closure, i - co->co_ncellvars) : nullptr;
  }
  const int slot = pj_frame311_cell_slot(co, i);
  return slot < 0 ? nullptr : pj_frame311_slot(f, slot);
}
// Borrowed: the object of cell/free variable i (nullptr when unbound).
inline PyObject* frame_deref(Frame* f, int i) {
  PyCodeObject* co = frame_code(f);
  if (!pj_frame311_prologue_done(f) && i < co->co_ncellvars) {
    const int slot = pj_frame311_cell_slot(co, i);  // (the raw value: an argument's, or nothing)
    return slot < 0 ? nullptr : pj_frame311_slot(f, slot);
  }
  PyObject* cell = frame_cell(f, i);
  return cell ? PyCell_GET(cell) : nullptr;
}
inline bool frame_is_resumable(Frame* f) {
  return (frame_code(f)->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)) != 0;
}
inline bool frame_started(Frame* f) { return pj_frame311_lasti(f) >= 0; }
// Code run_in_place runs takes every argument slot of f's code positionally (kRunInPlacePositional:
// codegen shapes it so).
constexpr bool kRunInPlacePositional = true;
// The references call_moving_args hands to a resume function's frame, and run_in_place to the
// code it runs in place of a frame: CPython's call takes its own (3.11 has no call that steals
// them), so the caller's go when the hook sees that frame enter (release_moved_args), before it
// runs an instruction. The one frame of plain Python holds them alone: a value it drops dies there.
struct MovedArgs {
  PyCodeObject* code;
  std::vector<PyObject*> refs;
};
inline thread_local MovedArgs* t_moved_args = nullptr;
// At the hook's entry: the frame of `co` took its arguments; the caller's references go.
inline void release_moved_args(PyCodeObject* co) {
  MovedArgs* m = t_moved_args;
  if (!m || m->code != co) return;
  t_moved_args = nullptr;
  std::vector<PyObject*> refs;
  refs.swap(m->refs);
  for (PyObject* o : refs) Py_DECREF(o);
}
// fn(*argv) with the references in `moved` (argv's) given up as fn's frame starts.
inline PyObject* call_moving(PyObject* fn, MovedArgs& moved) {
  std::vector<PyObject*> argv = moved.refs;  // (the call reads them after the hook released ours)
  MovedArgs* outer = t_moved_args;
  t_moved_args = &moved;
  PyObject* r = PyObject_Vectorcall(fn, argv.data(), argv.size(), nullptr);
  t_moved_args = outer;
  for (PyObject* o : moved.refs) Py_DECREF(o);  // (not released: the frame never started)
  moved.refs.clear();
  return r;
}

// The in-place runs under way on this thread, innermost first: the frame the hook was given, and
// the frame of the code run in its place once it started (in_place_started).
struct InPlaceRun {
  Frame* original;
  Frame* running;
  int nargs;
  int depth;  // the recursion depth run_in_place was called at: the frame's own level, less one
  InPlaceRun* outer;
};
inline thread_local InPlaceRun* t_in_place_run = nullptr;
inline void in_place_started(Frame* running) {
  if (t_in_place_run) t_in_place_run->running = running;
}
// A graph whose failure lets the original frame run eagerly (it read guarded paths, nothing
// else): the innermost in-place run gives the frame its arguments back, from the frame running in
// its place (an argument a closure captures is in its cell there: MAKE_CELL ran).
inline void give_back_args() {
  InPlaceRun* run = t_in_place_run;
  if (!run || !run->running) return;
  PyCodeObject* code = pj_frame311_code(run->running);
  for (int i = 0; i < run->nargs; ++i) {
    PyObject* v = pj_frame311_slot(run->running, i);
    if (v && pj_frame311_local_is_cell(code, i)) v = PyCell_Check(v) ? PyCell_GET(v) : v;
    pj_frame311_set_slot(run->original, i, v);
  }
}

// Runs `code` (f's code rewritten, its arguments positional) in place of the frame f, which has not
// started, and returns its result: a function of f's globals and closure called with f's
// arguments (an argument a closure captures still raw: the code's prologue makes its cell). The
// arguments move: f's slots are left empty (give_back_args puts them back).
inline void drop_resume_caller_entry(PyCodeObject* code);
inline PyObject* run_in_place(PyThreadState*, Frame* f, PyCodeObject* code) {
  PyCodeObject* co = frame_code(f);
  const int n = co->co_argcount + co->co_kwonlyargcount + ((co->co_flags & CO_VARARGS) != 0) +
                ((co->co_flags & CO_VARKEYWORDS) != 0);
  if (code->co_argcount != n) {
    PyErr_Format(PyExc_SystemError, "pijit: %U does not take its %d arguments positionally", code->co_name, n);
    return nullptr;
  }
  PyObject* fn = PyFunction_New(reinterpret_cast<PyObject*>(code), frame_globals(f));
  if (!fn) return nullptr;
  PyObject* closure = reinterpret_cast<PyFunctionObject*>(pj_frame311_function(f))->func_closure;
  if (closure && PyFunction_SetClosure(fn, closure) < 0) {
    Py_DECREF(fn);
    return nullptr;
  }
  MovedArgs moved{code, std::vector<PyObject*>(n)};
  for (int i = 0; i < n; ++i) moved.refs[i] = pj_frame311_take_slot(f, i);  // (bound: CPython binds every argument first)
  InPlaceRun run{f, nullptr, n, recursion_depth(PyThreadState_GET()), t_in_place_run};
  t_in_place_run = &run;
  PyObject* r = call_moving(fn, moved);
  t_in_place_run = run.outer;
  if (!r) drop_resume_caller_entry(code);
  Py_DECREF(fn);  // (after: fn holds `code` even if its cache entry went meanwhile)
  return r;
}
// Not on 3.11: shadow frames that take the fast locals over (run_in_place calls a function of the
// rewritten code instead, the arguments moved into it).
[[noreturn]] inline void frame_unsupported() { Py_FatalError(kUnsupportedPythonMessage); }
extern "C" int pj_frame311_traceback_here(Frame* f);
// (a frame object of its own: the hook's frame has none, and never ran)
inline int traceback_here(Frame* f) { return pj_frame311_traceback_here(f); }
inline Frame* shadow_frame(PyThreadState*, Frame*, PyCodeObject*) { frame_unsupported(); }
inline void give_back_locals(Frame*, Frame*) { frame_unsupported(); }
inline void drop_resume_caller_entry(Frame*) { frame_unsupported(); }
inline bool local_is_cell(PyCodeObject* co, int i) { return pj_frame311_local_is_cell(co, i) != 0; }

// As on 3.7-3.10: fn(*args) for a resume function, the list left empty and its references given
// up as the callee's frame starts. same_level: the resume function runs at the level of the frame
// that called it, the rewritten code run in place of the function's (plain Python has one frame
// there): the call starts at the depth that run started at. (Whether CPython counted a level for
// calling pijit's `resume` builtin depends on the call site's specialization: 3.11's
// PRECALL_BUILTIN_FAST counts none.)
inline PyObject* call_moving_args(PyObject* fn, PyObject* args, bool same_level) {
  auto* co = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(fn));
  const Py_ssize_t n = PyList_GET_SIZE(args);
  MovedArgs moved{co, {}};
  moved.refs.resize(n);
  PyObject** items = reinterpret_cast<PyListObject*>(args)->ob_item;
  for (Py_ssize_t i = 0; i < n; ++i) {
    moved.refs[i] = items[i];  // moved: the list's reference is this call's now
    items[i] = nullptr;
  }
  if (PyList_SetSlice(args, 0, n, nullptr) < 0) {  // (its slots are empty: nothing is released)
    for (PyObject* o : moved.refs) Py_DECREF(o);
    return nullptr;
  }
  PyThreadState* ts = PyThreadState_GET();
  // (with no in-place run under way, which rewritten code on 3.11 always is: the frame's own level)
  const int credit = !same_level ? 0 : t_in_place_run && t_in_place_run->running
                                           ? recursion_depth(ts) - t_in_place_run->depth : 1;
  ts->recursion_remaining += credit;
  PyObject* r = call_moving(fn, moved);
  ts->recursion_remaining -= credit;
  return r;
}
// An exception leaving rewritten code through the resume function or loop body it called: as on
// 3.7-3.10 (see there), the traceback's entry for the rewritten frame (`code`'s) goes when the
// next entry is a continuation of it.
inline void drop_resume_caller_entry(PyCodeObject* code) {
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  auto* head = tb && PyTraceBack_Check(tb) ? reinterpret_cast<PyTracebackObject*>(tb) : nullptr;
  bool continuation = false;
  PyCodeObject* head_code = head && head->tb_next ? PyFrame_GetCode(head->tb_frame) : nullptr;
  Py_XDECREF(head_code);  // (the frame, which the traceback holds, keeps it)
  if (head_code == code) {
    auto same_function = [code](PyCodeObject* c) {
      return c->co_firstlineno == code->co_firstlineno && PyUnicode_Compare(c->co_name, code->co_name) == 0 &&
             PyUnicode_Compare(c->co_filename, code->co_filename) == 0;
    };
    PyFrameObject* p = head->tb_next->tb_frame;
    PyCodeObject* first = PyFrame_GetCode(p);
    Py_DECREF(first);  // (the frame keeps it)
    if (!is_continuation_code(first)) p = nullptr;  // the function called again: recursion keeps its entry
    Py_XINCREF(p);
    for (int depth = 0; p && depth < kContinuationDepth && !continuation; ++depth) {
      PyCodeObject* c = PyFrame_GetCode(p);
      const bool same = same_function(c);
      Py_DECREF(c);
      PyFrameObject* back = same ? PyFrame_GetBack(p) : nullptr;
      continuation = back == head->tb_frame;
      Py_DECREF(p);
      p = back;
    }
    Py_XDECREF(p);
  }
  restore_error(t, v, tb, continuation);
}
extern "C" int pj_frame311_gen_in_handler(PyObject* o);
// As on 3.7-3.10: a generator, coroutine or async generator suspended where a handler covers it
// (3.11's exception table: a try's or with-block's), or an object whose type has a finalizer.
inline bool finalizer_runs_code(PyObject* o) {
  if (PyGen_Check(o) || PyCoro_CheckExact(o) || PyAsyncGen_CheckExact(o)) return pj_frame311_gen_in_handler(o) != 0;
  return Py_TYPE(o)->tp_finalize || Py_TYPE(o)->tp_del;
}
#else
// 3.12+: frames are not read yet; capture refuses to install its hook there, so these are never
// reached. They exist so the extension (tensors, kernels) still builds for that Python.
[[noreturn]] inline void frame_unsupported() { Py_FatalError(kUnsupportedPythonMessage); }
inline int code_nlocals(PyCodeObject*) { frame_unsupported(); }
inline int code_ncells(PyCodeObject*) { frame_unsupported(); }
inline int code_nfrees(PyCodeObject*) { frame_unsupported(); }
inline PyObject* code_varname(PyCodeObject*, int) { frame_unsupported(); }
inline PyObject* code_cellname(PyCodeObject*, int) { frame_unsupported(); }
inline int deref_cell_index(PyCodeObject*, int) { frame_unsupported(); }
inline PyObject* frame_deref(Frame*, int) { frame_unsupported(); }
inline PyObject* frame_cell(Frame*, int) { frame_unsupported(); }
inline PyObject* frame_local(Frame*, int) { frame_unsupported(); }
inline PyObject* frame_globals(Frame*) { frame_unsupported(); }
inline PyObject* frame_builtins(Frame*) { frame_unsupported(); }
inline PyCodeObject* frame_code(Frame*) { frame_unsupported(); }
inline int traceback_here(Frame*) { frame_unsupported(); }
inline Frame* shadow_frame(PyThreadState*, Frame*, PyCodeObject*) { frame_unsupported(); }
inline void give_back_locals(Frame*, Frame*) { frame_unsupported(); }
inline bool frame_is_resumable(Frame*) { frame_unsupported(); }
inline bool finalizer_runs_code(PyObject*) { frame_unsupported(); }
inline bool frame_started(Frame*) { frame_unsupported(); }
inline void drop_resume_caller_entry(Frame*) { frame_unsupported(); }
inline bool local_is_cell(PyCodeObject*, int) { frame_unsupported(); }
inline void release_moved_args(PyCodeObject*) {}
inline void in_place_started(Frame*) {}
inline void give_back_args() {}
inline PyObject* call_moving_args(PyObject*, PyObject*, bool) { frame_unsupported(); }
inline PyObject* run_in_place(PyThreadState*, Frame*, PyCodeObject*) { frame_unsupported(); }
constexpr bool kRunInPlacePositional = false;
#endif

#if PJ_PY_CAPTURE_BUILT
// Borrowed: the globals of a frame object as a profile function is given it.
inline PyObject* frame_object_globals(PyFrameObject* f) {
#if PY_VERSION_HEX >= 0x030B0000
  PyObject* g = PyFrame_GetGlobals(f);
  Py_XDECREF(g);  // (the frame keeps it)
  return g;
#else
  return f->f_globals;
#endif
}
#endif

// A new int equal to `v` (an exact int) that is not the small-int cache's object: capture tells a
// number read from the frame from an equal constant by identity. New reference, or nullptr.
#if PJ_PY_CAPTURE_BUILT  // (3.12 stores the digits differently)
inline PyObject* fresh_int(PyObject* v) {
  auto* src = reinterpret_cast<PyLongObject*>(v);
  Py_ssize_t size = Py_SIZE(src), n = size < 0 ? -size : size;
  // Zero too gets one digit, set to 0: 3.11's specialized list and tuple subscripts read a small
  // int's index straight from ob_digit[0] (CPython's own zero has it 0), and a fresh 0 with garbage
  // there indexed the wrong item.
  PyLongObject* r = _PyLong_New(n ? n : 1);
  if (!r) return nullptr;
  r->ob_digit[0] = 0;
#if PY_VERSION_HEX >= 0x03090000
  Py_SET_SIZE(r, size);
#else
  Py_SIZE(r) = size;
#endif
  for (Py_ssize_t i = 0; i < n; ++i) r->ob_digit[i] = src->ob_digit[i];
  return reinterpret_cast<PyObject*>(r);
}
#endif

// ---- code bytes ---------------------------------------------------------------------------------

// A new reference to the code object's bytecode as bytes (3.11 keeps only an adaptive copy in the
// struct and hands out the original through PyCode_GetCode).
inline PyObject* code_bytes(PyCodeObject* co) {
#if PY_VERSION_HEX < 0x030B0000
  Py_INCREF(co->co_code);
  return co->co_code;
#else
  return PyCode_GetCode(co);
#endif
}

// The code object's exception table (borrowed): 3.11's co_exceptiontable; nullptr before 3.11,
// whose handlers are blocks.
inline PyObject* exception_table_bytes(PyCodeObject* co) {
#if PY_VERSION_HEX >= 0x030B0000
  return co->co_exceptiontable;
#else
  (void)co;
  return nullptr;
#endif
}

// ---- (b) line numbers ---------------------------------------------------------------------------

// Fills lines[i] with the source line of the code unit at byte offset i * kCodeUnit, the way
// PyCode_Addr2Line and dis.findlinestarts read the table; ~line (negative) for a unit that has no
// line of its own (3.10's artificial instructions), `line` being the one before it. Returns false where this Python's line
// table format is not read (3.13+) or the table cannot be read.
inline bool code_unit_lines(PyCodeObject* co, std::vector<int>& lines) {
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x030A0000
  Py_ssize_t n_units = PyBytes_GET_SIZE(co->co_code) / kCodeUnit;
  lines.assign(n_units, co->co_firstlineno);
  // co_lnotab: pairs (byte increment: unsigned, line increment: signed since 3.6).
  const unsigned char* p = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(co->co_lnotab));
  Py_ssize_t pairs = PyBytes_GET_SIZE(co->co_lnotab) / 2;
  int line = co->co_firstlineno;
  Py_ssize_t addr = 0, unit = 0;
  for (Py_ssize_t k = 0; k < pairs; ++k) {
    addr += p[2 * k];
    for (; unit < n_units && unit * kCodeUnit < addr; ++unit) lines[unit] = line;
    line += static_cast<signed char>(p[2 * k + 1]);
  }
  for (; unit < n_units; ++unit) lines[unit] = line;
  return true;
#elif PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030B0000
  // co_linetable (PEP 626): pairs (byte length of a range, unsigned; line delta, signed, -128 for
  // "no line"), each range starting where the last ended.
  Py_ssize_t n_units = PyBytes_GET_SIZE(co->co_code) / kCodeUnit;
  lines.assign(n_units, co->co_firstlineno);
  const unsigned char* p = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(co->co_linetable));
  Py_ssize_t pairs = PyBytes_GET_SIZE(co->co_linetable) / 2;
  int line = co->co_firstlineno, shown = co->co_firstlineno;
  Py_ssize_t addr = 0, unit = 0;
  for (Py_ssize_t k = 0; k < pairs; ++k) {
    int delta = static_cast<signed char>(p[2 * k + 1]);
    if (delta != -128) line += delta, shown = line;
    addr += p[2 * k];
    for (; unit < n_units && unit * kCodeUnit < addr; ++unit) lines[unit] = delta == -128 ? ~shown : shown;
  }
  for (; unit < n_units; ++unit) lines[unit] = ~shown;
  return true;
#elif PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
  // The location table (PEP 657, 3.11 and 3.12) read through co_lines(): (start, end, line) ranges, line None
  // for artificial instructions (which keep the line before, as dis shows them, as ~line).
  PyObject* bytes = code_bytes(co);
  if (!bytes) return PyErr_Clear(), false;
  Py_ssize_t n_units = PyBytes_GET_SIZE(bytes) / kCodeUnit;
  Py_DECREF(bytes);
  lines.assign(n_units, co->co_firstlineno);
  PyObject* ranges = PyObject_CallMethod(reinterpret_cast<PyObject*>(co), "co_lines", nullptr);
  PyObject* it = ranges ? PyObject_GetIter(ranges) : nullptr;
  Py_XDECREF(ranges);
  if (!it) return PyErr_Clear(), false;
  int shown = co->co_firstlineno;
  while (PyObject* range = PyIter_Next(it)) {
    long start = -1, end = -1;
    PyObject* line = nullptr;
    if (PyTuple_Check(range) && PyTuple_GET_SIZE(range) == 3) {
      start = PyLong_AsLong(PyTuple_GET_ITEM(range, 0));
      end = PyLong_AsLong(PyTuple_GET_ITEM(range, 1));
      line = PyTuple_GET_ITEM(range, 2);
    }
    if (line && line != Py_None) shown = static_cast<int>(PyLong_AsLong(line));
    const bool none = !line || line == Py_None;
    Py_DECREF(range);
    for (long u = start / kCodeUnit; start >= 0 && u < end / kCodeUnit && u < n_units; ++u) lines[u] = none ? ~shown : shown;
  }
  Py_DECREF(it);
  if (PyErr_Occurred()) return PyErr_Clear(), false;
  return true;
#else
  (void)co, (void)lines;
  return false;
#endif
}

// ---- (c) the code object's extra slot -----------------------------------------------------------
// The same calls in 3.7-3.11; 3.12 names them PyUnstable_ (the old names deprecated aliases).

#if PY_VERSION_HEX >= 0x030C0000
#define PJ_CODE_EXTRA(name) PyUnstable_##name
#else
#define PJ_CODE_EXTRA(name) _Py##name
#endif
inline Py_ssize_t request_code_extra_index(freefunc free_fn) { return PJ_CODE_EXTRA(Eval_RequestCodeExtraIndex)(free_fn); }
inline void* get_code_extra(PyObject* code, Py_ssize_t index) {
  void* extra = nullptr;
  return PJ_CODE_EXTRA(Code_GetExtra)(code, index, &extra) == 0 ? extra : nullptr;
}
// Returns false with a Python exception set on failure.
inline bool set_code_extra(PyObject* code, Py_ssize_t index, void* extra) {
  return PJ_CODE_EXTRA(Code_SetExtra)(code, index, extra) == 0;
}
#if PJ_PY_CAPTURE_BUILT
// The array is CPython's private _PyCodeObjectExtra, PyMem-allocated, unchanged from 3.6 to 3.11.
struct CodeExtraLayout {
  Py_ssize_t size;
  void* slots[1];
};
// The slot's value, read in place (the hook asks on every call: no call, no error state to mind).
inline void* code_extra_slot(PyCodeObject* co, Py_ssize_t index) {
  auto* e = static_cast<CodeExtraLayout*>(co->co_extra);
  return e && index >= 0 && index < e->size ? e->slots[index] : nullptr;
}
// Empties the slot if it still holds `value`, calling no free function: a free function's own
// way to say "freed" to whoever reads the slot while the code object dies.
inline void clear_code_extra_slot(PyCodeObject* co, Py_ssize_t index, void* value) {
  auto* e = static_cast<CodeExtraLayout*>(co->co_extra);
  if (e && index >= 0 && index < e->size && e->slots[index] == value) e->slots[index] = nullptr;
}
// Frees a code object's extra array when every slot is empty, as if no co_extra user had set one:
// CPython then calls no user's free function when the code dies (it calls every registered one,
// with NULL too, for each code that has an array, and a foreign one may not survive finalization).
inline void drop_empty_code_extra(PyCodeObject* co) {
  auto* e = static_cast<CodeExtraLayout*>(co->co_extra);
  if (!e) return;
  for (Py_ssize_t i = 0; i < e->size; ++i)
    if (e->slots[i]) return;
  co->co_extra = nullptr;
  PyMem_Free(e);
}
#else
inline void* code_extra_slot(PyCodeObject* co, Py_ssize_t index) {
  return get_code_extra(reinterpret_cast<PyObject*>(co), index);
}
inline void clear_code_extra_slot(PyCodeObject* co, Py_ssize_t index, void* value) {
  if (get_code_extra(reinterpret_cast<PyObject*>(co), index) == value && !set_code_extra(reinterpret_cast<PyObject*>(co), index, nullptr))
    PyErr_Clear();  // (it calls the free function again: the caller has already let the value go)
}
#endif
#undef PJ_CODE_EXTRA

// ---- (e) building code objects ------------------------------------------------------------------
// What codegen/assembler.cc needs from the code object layout and constructor. The assembler itself
// is version-independent: it lays out instructions in kCodeUnit units, counts jumps in kJumpUnit,
// and asks here for the line table bytes and the constructor call.

// co_posonlyargcount appeared in 3.8 (PEP 570); 3.7 has none.
inline int code_posonlyargcount(PyCodeObject* co) {
#if PY_VERSION_HEX >= 0x03080000
  return co->co_posonlyargcount;
#else
  (void)co;
  return 0;
#endif
}

// co_varnames / co_freevars / co_cellvars as new references (3.11 keeps one co_localsplusnames
// and builds the three tuples on demand). False, outputs nullptr and a Python error set, on failure.
inline bool code_local_names(PyCodeObject* co, PyObject** varnames, PyObject** freevars, PyObject** cellvars) {
#if PY_VERSION_HEX < 0x030B0000
  *varnames = co->co_varnames;
  *freevars = co->co_freevars;
  *cellvars = co->co_cellvars;
  Py_INCREF(*varnames);
  Py_INCREF(*freevars);
  Py_INCREF(*cellvars);
  return true;
#else
  *varnames = PyCode_GetVarnames(co);
  *freevars = PyCode_GetFreevars(co);
  *cellvars = PyCode_GetCellvars(co);
  if (*varnames && *freevars && *cellvars) return true;
  Py_CLEAR(*varnames);
  Py_CLEAR(*freevars);
  Py_CLEAR(*cellvars);
  return false;
#endif
}

// 3.11's qualified name of a code object (borrowed); nullptr before 3.11, whose code objects have none.
inline PyObject* code_qualname(PyCodeObject* co) {
#if PY_VERSION_HEX >= 0x030B0000
  return co->co_qualname;
#else
  (void)co;
  return nullptr;
#endif
}

// The source span of every code unit beyond its line (3.11's co_positions, PEP 657): per unit, its
// end line, first column and end column (-1 where the table gives none). False before 3.11,
// whose tables hold lines only, and when the table cannot be read.
inline bool code_unit_spans(PyCodeObject* co, std::vector<std::array<int, 3>>& spans) {
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
  spans.clear();
  PyObject *type, *value, *tb;  // (an exception the caller has pending stays as it was)
  PyErr_Fetch(&type, &value, &tb);
  struct Restore {
    PyObject *t, *v, *b;
    ~Restore() { PyErr_Restore(t, v, b); }
  } restore{type, value, tb};
  PyObject* it = PyObject_CallMethod(reinterpret_cast<PyObject*>(co), "co_positions", nullptr);
  if (!it) return PyErr_Clear(), false;
  auto field = [](PyObject* t, Py_ssize_t i) {
    PyObject* v = PyTuple_GET_ITEM(t, i);
    return v == Py_None ? -1 : static_cast<int>(PyLong_AsLong(v));
  };
  while (PyObject* pos = PyIter_Next(it)) {
    if (PyTuple_Check(pos) && PyTuple_GET_SIZE(pos) == 4) spans.push_back({field(pos, 1), field(pos, 2), field(pos, 3)});
    Py_DECREF(pos);
  }
  Py_DECREF(it);
  if (PyErr_Occurred()) return PyErr_Clear(), false;
  return true;
#else
  (void)co, (void)spans;
  return false;
#endif
}

// The line table of new bytecode: offsets[k] is the byte offset where instruction k starts (its
// first EXTENDED_ARG), lines[k] its source line (negative: none, 3.10's artificial instructions;
// 3.7-3.9 have no such entry and keep the line before), in code order; code_bytes the length of the code.
// New bytes object, or nullptr with a Python exception set.
//
// 3.7-3.9: co_lnotab, pairs (byte increment 0..255, signed line increment -128..127) written at
// each line change the way compile.c's assemble_lnotab writes them, so dis.findlinestarts reads
// the same starts: a byte gap over 255 first as (255, 0) pairs, then a line jump outside a signed
// byte as (gap, +127 or -128) and (0, +127 or -128) pairs, then the rest. CPython also writes
// (gap, 0) pairs where a statement starts on the line already current; they change no line start,
// so they are left out.
// 3.10: co_linetable, one range per run of instructions on one line, as compile.c's
// assemble_line_range writes it: a line jump outside -127..127 first as (0, +-127) pairs, then the
// range's bytes in pieces of at most 254, the first carrying the line delta.
// 3.11: co_linetable is the location table (PEP 657), one entry per instruction (prefixes and
// caches included) in pieces of at most 8 code units, in the form compile.c's
// write_location_info_entry picks: none, no columns, short (same line, column < 80, width < 16),
// one line (line + 0..2, columns < 128), else long. spans[k] is instruction k's end line, column
// and end column (-1: unknown; spans may be empty: none known).
inline PyObject* encode_line_table(const std::vector<int>& offsets, const std::vector<int>& lines,
                                   const std::vector<std::array<int, 3>>& spans, int firstlineno, int code_bytes) {
  std::string table;
  auto pair = [&table](int bytes, int line) {
    table.push_back(static_cast<char>(static_cast<unsigned char>(bytes)));
    table.push_back(static_cast<char>(static_cast<signed char>(line)));
  };
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x030A0000
  (void)code_bytes, (void)spans;
  int line = firstlineno, line_offset = 0;
  for (size_t k = 0; k < offsets.size(); ++k) {
    if (lines[k] == line || lines[k] < 0) continue;  // (no line: the one before goes on)
    int d_bytes = offsets[k] - line_offset, d_line = lines[k] - line;
    if (d_bytes > 255) {
      for (int n = d_bytes / 255; n > 0; --n) pair(255, 0);
      d_bytes %= 255;
    }
    if (d_line < -128 || d_line > 127) {
      int step = d_line < 0 ? -128 : 127;
      int n = d_line < 0 ? -d_line / 128 : d_line / 127;
      d_line -= n * step;
      pair(d_bytes, step);
      for (d_bytes = 0; n > 1; --n) pair(0, step);
    }
    pair(d_bytes, d_line);
    line = lines[k];
    line_offset = offsets[k];
  }
  return PyBytes_FromStringAndSize(table.data(), static_cast<Py_ssize_t>(table.size()));
#elif PY_VERSION_HEX >= 0x030A0000 && PY_VERSION_HEX < 0x030B0000
  (void)spans;
  int prev = firstlineno;
  for (size_t k = 0; k < offsets.size();) {
    size_t end = k + 1;
    while (end < offsets.size() && lines[end] == lines[k]) ++end;
    int d_bytes = (end < offsets.size() ? offsets[end] : code_bytes) - offsets[k];
    int d_line = -128;  // a run without a line
    if (lines[k] >= 0) {
      d_line = lines[k] - prev;
      prev = lines[k];
      for (; d_line > 127; d_line -= 127) pair(0, 127);
      for (; d_line < -127; d_line += 127) pair(0, -127);
    }
    for (; d_bytes > 254; d_bytes -= 254, d_line = d_line == -128 ? -128 : 0) pair(254, d_line);
    pair(d_bytes, d_line);
    k = end;
  }
  return PyBytes_FromStringAndSize(table.data(), static_cast<Py_ssize_t>(table.size()));
#elif PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  (void)pair;
  auto byte = [&table](int b) { table.push_back(static_cast<char>(static_cast<unsigned char>(b))); };
  auto varint = [&byte](unsigned v) {  // 6-bit groups, least significant first, bit 6: more follow
    for (; v >= 64; v >>= 6) byte(64 | (v & 63));
    byte(static_cast<int>(v));
  };
  auto svarint = [&varint](int v) { varint(v < 0 ? (static_cast<unsigned>(-v) << 1) | 1 : static_cast<unsigned>(v) << 1); };
  auto first = [&byte](int form, int units) { byte(0x80 | (form << 3) | (units - 1)); };
  int prev = firstlineno;
  for (size_t k = 0; k < offsets.size(); ++k) {
    const int end_offset = k + 1 < offsets.size() ? offsets[k + 1] : code_bytes;
    const int line = lines[k];
    const std::array<int, 3> span = k < spans.size() ? spans[k] : std::array<int, 3>{-1, -1, -1};
    const int end_line = span[0], col = span[1], end_col = span[2];
    for (int units = (end_offset - offsets[k]) / kCodeUnit; units > 0;) {
      const int n = units > 8 ? 8 : units;
      units -= n;
      if (line < 0) {
        first(15, n);  // no location
        continue;
      }
      const int delta = line - prev;
      if (col < 0 || end_col < 0) {
        if (end_line == line || end_line < 0) {
          first(13, n);  // no columns
          svarint(delta);
          prev = line;
          continue;
        }
      } else if (end_line == line) {
        if (delta == 0 && col < 80 && end_col - col < 16 && end_col >= col) {
          first(col >> 3, n);  // short: column group in the form, low bits and width in one byte
          byte(((col & 7) << 4) | (end_col - col));
          continue;
        }
        if (delta >= 0 && delta < 3 && col < 128 && end_col < 128) {
          first(10 + delta, n);  // one line
          byte(col);
          byte(end_col);
          prev = line;
          continue;
        }
      }
      first(14, n);  // long
      svarint(delta);
      varint(static_cast<unsigned>(end_line < line ? 0 : end_line - line));
      varint(static_cast<unsigned>(col + 1));
      varint(static_cast<unsigned>(end_col + 1));
      prev = line;
    }
  }
  return PyBytes_FromStringAndSize(table.data(), static_cast<Py_ssize_t>(table.size()));
#else
  (void)offsets, (void)lines, (void)spans, (void)firstlineno, (void)code_bytes, (void)pair;
  PyErr_SetString(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  return nullptr;
#endif
}

// PyCode_New under one signature (3.8 added posonlyargcount, as PyCode_NewWithPosOnlyArgs; 3.11
// a qualified name and the exception table, both ignored before: qualname may be nullptr, the
// code's name then). Takes borrowed references; returns a new code object, or nullptr with a
// Python exception set.
inline PyObject* new_code(int argcount, int posonlyargcount, int kwonlyargcount, int nlocals, int stacksize,
                          int flags, PyObject* bytecode, PyObject* consts, PyObject* names, PyObject* varnames,
                          PyObject* freevars, PyObject* cellvars, PyObject* filename, PyObject* name,
                          PyObject* qualname, int firstlineno, PyObject* line_table, PyObject* exception_table) {
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x03080000
  (void)qualname, (void)exception_table;
  if (posonlyargcount != 0) {
    PyErr_SetString(PyExc_ValueError, "positional-only arguments need Python 3.8+");
    return nullptr;
  }
  return reinterpret_cast<PyObject*>(PyCode_New(argcount, kwonlyargcount, nlocals, stacksize, flags, bytecode,
                                                consts, names, varnames, freevars, cellvars, filename, name,
                                                firstlineno, line_table));
#elif PY_VERSION_HEX >= 0x03080000 && PY_VERSION_HEX < 0x030B0000
  // (3.10: line_table is the co_linetable)
  (void)qualname, (void)exception_table;
  return reinterpret_cast<PyObject*>(PyCode_NewWithPosOnlyArgs(argcount, posonlyargcount, kwonlyargcount, nlocals,
                                                               stacksize, flags, bytecode, consts, names, varnames,
                                                               freevars, cellvars, filename, name, firstlineno,
                                                               line_table));
#elif PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  return reinterpret_cast<PyObject*>(PyCode_NewWithPosOnlyArgs(
      argcount, posonlyargcount, kwonlyargcount, nlocals, stacksize, flags, bytecode, consts, names, varnames,
      freevars, cellvars, filename, name, qualname ? qualname : name, firstlineno, line_table, exception_table));
#else
  (void)argcount, (void)posonlyargcount, (void)kwonlyargcount, (void)nlocals, (void)stacksize, (void)flags;
  (void)bytecode, (void)consts, (void)names, (void)varnames, (void)freevars, (void)cellvars, (void)filename;
  (void)name, (void)qualname, (void)firstlineno, (void)line_table, (void)exception_table;
  PyErr_SetString(PyExc_NotImplementedError, kUnsupportedPythonMessage);
  return nullptr;
#endif
}

// A copy of code object `co` with the tuple `consts` (as many items as co's) as its constants; a new
// reference, or nullptr with a Python exception set. 3.8+ through code.replace(), 3.7 through
// PyCode_New with co's own fields.
inline PyObject* code_with_consts(PyObject* co, PyObject* consts) {
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x03080000
  auto* c = reinterpret_cast<PyCodeObject*>(co);
  return reinterpret_cast<PyObject*>(PyCode_New(c->co_argcount, c->co_kwonlyargcount, c->co_nlocals, c->co_stacksize,
                                                c->co_flags, c->co_code, consts, c->co_names, c->co_varnames,
                                                c->co_freevars, c->co_cellvars, c->co_filename, c->co_name,
                                                c->co_firstlineno, c->co_lnotab));
#else
  PyObject* replace = PyObject_GetAttrString(co, "replace");
  PyObject* args = replace ? PyTuple_New(0) : nullptr;
  PyObject* kwargs = args ? Py_BuildValue("{s:O}", "co_consts", consts) : nullptr;
  PyObject* out = kwargs ? PyObject_Call(replace, args, kwargs) : nullptr;
  Py_XDECREF(kwargs);
  Py_XDECREF(args);
  Py_XDECREF(replace);
  return out;
#endif
}

// Whether this Python's code objects can be built (section (e) knows its formats): 3.7 to 3.11.
constexpr bool kAssembleSupported = PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x030C0000;

// ---- (f) namedtuple fields ----------------------------------------------------------------------
// collections.namedtuple gives each field a class-level descriptor that reads self[index]: a
// `_collections._tuplegetter(index, doc)` on 3.8+, `property(operator.itemgetter(index))` on 3.7.
// Their __get__ is C code that runs no user code. Returns the index, or -1 (no Python error left)
// when `descr` is not such a descriptor.
inline Py_ssize_t tuple_field_index(PyObject* descr) {
  if (!descr) return -1;
  PyObject* getter = nullptr;  // the object whose __reduce__ gives (type, (index, ...))
#if PY_VERSION_HEX >= 0x03080000
  if (std::strcmp(Py_TYPE(descr)->tp_name, "_collections._tuplegetter") != 0) return -1;
  Py_INCREF(descr);
  getter = descr;
#else
  if (Py_TYPE(descr) != &PyProperty_Type) return -1;
  PyObject* fset = PyObject_GetAttrString(descr, "fset");
  PyObject* fdel = PyObject_GetAttrString(descr, "fdel");
  getter = PyObject_GetAttrString(descr, "fget");
  bool plain = fset == Py_None && fdel == Py_None && getter && std::strcmp(Py_TYPE(getter)->tp_name, "operator.itemgetter") == 0;
  Py_XDECREF(fset);
  Py_XDECREF(fdel);
  if (!plain) {
    Py_XDECREF(getter);
    PyErr_Clear();
    return -1;
  }
#endif
  Py_ssize_t index = -1;
  PyObject* red = PyObject_CallMethod(getter, "__reduce__", nullptr);
  Py_DECREF(getter);
  if (red && PyTuple_Check(red) && PyTuple_GET_SIZE(red) >= 2 && PyTuple_Check(PyTuple_GET_ITEM(red, 1))) {
    PyObject* args = PyTuple_GET_ITEM(red, 1);
    // 3.7's itemgetter(i, j) (several items) returns a tuple: not a field.
    if (PyTuple_GET_SIZE(args) >= 1 && PyLong_CheckExact(PyTuple_GET_ITEM(args, 0)) &&
        (PY_VERSION_HEX >= 0x03080000 || PyTuple_GET_SIZE(args) == 1))
      index = PyLong_AsSsize_t(PyTuple_GET_ITEM(args, 0));
  }
  Py_XDECREF(red);
  if (PyErr_Occurred()) PyErr_Clear();
  return index < 0 ? -1 : index;
}

// ---- (g) builtins whose calls into user code differ ---------------------------------------------
// list(obj) asks len(obj) to preallocate before iter(obj) on 3.8 and 3.9 (bpo-33234; 3.10's
// vectorcall list() no longer does); every version then asks it again for a length hint. (A
// TypeError from that first __len__ is ignored, any other error raises.)
constexpr bool kListSizesBeforeIterating = PY_VERSION_HEX >= 0x03080000 && PY_VERSION_HEX < 0x030A0000;

}  // namespace pj::py
