/* Python 3.11 only: the PEP 523 hook is given a _PyInterpreterFrame, whose layout is in the
 * internal headers (Py_BUILD_CORE, C: they include <stdatomic.h>). py/pyport.h declares these
 * accessors and builds pijit's frame reads (section (a')) on them. Borrowed references. */
#include <Python.h>
#include <frameobject.h>  /* PyFrame_New */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
#define Py_BUILD_CORE 1
#include <internal/pycore_code.h>
#include <internal/pycore_dict.h>
#include <internal/pycore_frame.h>

PyCodeObject* pj_frame311_code(struct _PyInterpreterFrame* f) { return f->f_code; }
PyObject* pj_frame311_globals(struct _PyInterpreterFrame* f) { return f->f_globals; }
PyObject* pj_frame311_builtins(struct _PyInterpreterFrame* f) { return f->f_builtins; }
PyObject* pj_frame311_function(struct _PyInterpreterFrame* f) { return (PyObject*)f->f_func; }
PyObject* pj_frame311_slot(struct _PyInterpreterFrame* f, int i) { return f->localsplus[i]; }
/* Takes the slot's reference (the slot is left empty). */
PyObject* pj_frame311_take_slot(struct _PyInterpreterFrame* f, int i) {
  PyObject* v = f->localsplus[i];
  f->localsplus[i] = NULL;
  return v;
}
/* Stores a new reference to v (or NULL) in the slot, releasing what it held. */
void pj_frame311_set_slot(struct _PyInterpreterFrame* f, int i, PyObject* v) {
  PyObject* old = f->localsplus[i];
  Py_XINCREF(v);
  f->localsplus[i] = v;
  Py_XDECREF(old);
}

/* Whether fast local i is also a cell variable (an argument a closure captures): 3.7-3.10 keep
 * such an argument in its cell only, its local slot empty. */
int pj_frame311_local_is_cell(PyCodeObject* co, int i) {
  return (PyBytes_AS_STRING(co->co_localspluskinds)[i] & CO_FAST_CELL) != 0;
}

/* The code unit index of the last instruction run; -1 before the first. */
int pj_frame311_lasti(struct _PyInterpreterFrame* f) { return _PyInterpreterFrame_LASTI(f); }

/* Whether the code's prologue (MAKE_CELL, COPY_FREE_VARS) ran: before it, a cell variable's slot
 * holds its raw value (an argument's, or nothing) and the free variables are only in the
 * function's closure. Generators' frames always have. */
int pj_frame311_prologue_done(struct _PyInterpreterFrame* f) { return !_PyFrame_IsIncomplete(f); }

/* The localsplus slot of cell variable i (co_cellvars order), or of free variable i - ncells
 * (co_freevars order); -1 when out of range. */
int pj_frame311_cell_slot(PyCodeObject* co, int i) {
  const char* kinds = PyBytes_AS_STRING(co->co_localspluskinds);
  int seen_cells = 0, seen_frees = 0;
  for (int k = 0; k < co->co_nlocalsplus; ++k) {
    if (kinds[k] & CO_FAST_CELL) {
      if (seen_cells++ == i) return k;
    } else if (kinds[k] & CO_FAST_FREE) {
      if (co->co_ncellvars + seen_frees++ == i) return k;
    }
  }
  return -1;
}

/* One varint of the exception table: 6-bit groups, most significant first, bit 6 = more follow. */
static int read_varint(const unsigned char** p, const unsigned char* end) {
  int v = 0;
  while (*p < end) {
    const unsigned char b = *(*p)++;
    v = (v << 6) | (b & 63);
    if (!(b & 64)) break;
  }
  return v;
}

/* Whether a generator, coroutine or async generator is suspended at an instruction an exception-
 * table entry covers: closing it runs that handler (a try's or a with-block's cleanup). Not
 * started, running or finished: closing runs nothing. */
int pj_frame311_gen_in_handler(PyObject* o) {
  PyGenObject* g = (PyGenObject*)o;
  if (g->gi_frame_state != FRAME_SUSPENDED) return 0;
  _PyInterpreterFrame* f = (_PyInterpreterFrame*)g->gi_iframe;
  const int at = _PyInterpreterFrame_LASTI(f);
  const unsigned char* p = (const unsigned char*)PyBytes_AS_STRING(f->f_code->co_exceptiontable);
  const unsigned char* end = p + PyBytes_GET_SIZE(f->f_code->co_exceptiontable);
  while (p < end) {
    const int start = read_varint(&p, end), size = read_varint(&p, end);
    read_varint(&p, end); /* target */
    read_varint(&p, end); /* depth and lasti */
    if (at >= start && at < start + size) return 1;
  }
  return 0;
}

/* Adds the pending exception's traceback entry of a frame that never ran (its first line), as
 * 3.7-3.10's PyTraceBack_Here on the hook's frame does: a frame object of its own for it. */
int pj_frame311_traceback_here(struct _PyInterpreterFrame* f) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyFrameObject* fo = PyFrame_New(PyThreadState_Get(), f->f_code, f->f_globals, NULL);
  PyErr_Restore(type, value, tb);
  if (!fo) return -1;
  fo->f_lineno = f->f_code->co_firstlineno;
  const int r = PyTraceBack_Here(fo);
  Py_DECREF(fo);
  return r;
}

/* 3.11 keeps a plain class's instance attributes inline (a "managed dict": values in the object,
 * keys shared by the class) until something asks for its __dict__, which then becomes a dict
 * object for good. pijit reads them where they are.
 * The number of attributes held inline, or -1 when the object holds none that way (it has a dict,
 * or none at all); pj_obj311_inline_item gives the k-th in insertion order (borrowed). */
/* (pycore_object.h's _PyObject_ValuesPointer and _PyObject_ManagedDictPointer: that header clashes
 * with the public one's _PyObject_LookupSpecial macro) */
static PyDictValues** values_pointer(PyObject* o) { return ((PyDictValues**)o) - 4; }
static PyObject** managed_dict_pointer(PyObject* o) { return ((PyObject**)o) - 3; }

Py_ssize_t pj_obj311_inline_count(PyObject* o) {
  if (!(Py_TYPE(o)->tp_flags & Py_TPFLAGS_MANAGED_DICT)) return -1;
  PyDictValues* values = *values_pointer(o);
  return values ? ((uint8_t*)values)[-2] : -1;
}
void pj_obj311_inline_item(PyObject* o, Py_ssize_t k, PyObject** key, PyObject** value) {
  PyDictValues* values = *values_pointer(o);
  const int ix = ((uint8_t*)values)[-3 - k];  /* (the insertion order array: [-2] its size) */
  PyDictKeysObject* keys = ((PyHeapTypeObject*)Py_TYPE(o))->ht_cached_keys;
  *key = DK_UNICODE_ENTRIES(keys)[ix].me_key;
  *value = values->values[ix];
}
/* o's inline attribute `name` (borrowed; NULL when it has none), *inline_values set when o keeps
 * its attributes inline at all (else the caller looks in its dict). One pass by identity (names
 * are interned, as the class's shared keys are), then by value. Guards read through this on every
 * call. */
PyObject* pj_obj311_inline_lookup(PyObject* o, PyObject* name, int* inline_values) {
  *inline_values = 0;
  if (!(Py_TYPE(o)->tp_flags & Py_TPFLAGS_MANAGED_DICT)) return NULL;
  PyDictValues* values = *values_pointer(o);
  if (!values) return NULL;
  *inline_values = 1;
  const int n = ((uint8_t*)values)[-2];
  PyDictUnicodeEntry* entries = DK_UNICODE_ENTRIES(((PyHeapTypeObject*)Py_TYPE(o))->ht_cached_keys);
  for (int k = 0; k < n; ++k) {
    const int ix = ((uint8_t*)values)[-3 - k];
    if (entries[ix].me_key == name) return values->values[ix];
  }
  if (!PyUnicode_Check(name)) return NULL;
  for (int k = 0; k < n; ++k) {
    const int ix = ((uint8_t*)values)[-3 - k];
    if (PyUnicode_Compare(entries[ix].me_key, name) == 0) return values->values[ix];
  }
  return NULL;
}

/* The slot of o's instance dict, without making one: NULL when o has no such slot; the slot
 * holds NULL while the attributes are inline (or o has none yet). */
PyObject** pj_obj311_dict_slot(PyObject* o) {
  if (Py_TYPE(o)->tp_flags & Py_TPFLAGS_MANAGED_DICT) return managed_dict_pointer(o);
  return _PyObject_GetDictPtr(o);  /* (a dict at tp_dictoffset: nothing is made) */
}

/* The inverse: the cell index (as above) of localsplus slot `slot`; -1 when it holds no cell. */
int pj_frame311_slot_cell(PyCodeObject* co, int slot) {
  const char* kinds = PyBytes_AS_STRING(co->co_localspluskinds);
  if (slot < 0 || slot >= co->co_nlocalsplus) return -1;
  int cells = 0, frees = 0;
  for (int k = 0; k < slot; ++k) {
    if (kinds[k] & CO_FAST_CELL) ++cells;
    else if (kinds[k] & CO_FAST_FREE) ++frees;
  }
  if (kinds[slot] & CO_FAST_CELL) return cells;
  if (kinds[slot] & CO_FAST_FREE) return co->co_ncellvars + frees;
  return -1;
}
#endif
