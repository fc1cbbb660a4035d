// pijit._C module: registration with the Python package, the generic op call, runtime knobs.
#include "py/pyport.h"  // first (Python.h)

#include <asmjit/core/api-config.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>

#include "graph/op.h"
#include "oneapi/dnnl/dnnl.h"
#include "graph/tape.h"
#include "kernels/copy.h"
#include "kernels/cuda/backend.h"
#include "kernels/dnnl_context.h"
#include "kernels/format.h"
#include "kernels/fused.h"
#include "kernels/machine_probe.h"
#include "kernels/random.h"
#include "kernels/threading.h"
#include "kernels/weight_cache.h"
#include "pyext/tape_object.h"
#include "pyext/op_entry.h"
#include "pyext/vmap_run.h"
#include "pyext/tensor_object.h"
#include "runtime/eval_frame.h"

namespace pj::py {

void register_dtype_objects(PyObject* seq);
void set_tensor_class(PyTypeObject* cls);
void register_py_functions(PyObject* module);       // py/py_module.cc
void register_capture_functions(PyObject* module);  // capture/capture_module.cc
void register_codegen_functions(PyObject* module);  // codegen/codegen_module.cc

namespace {

// An int attribute (an int, or anything with __index__) as int64; ValueError naming the attribute
// when it does not fit (a dim of 2**64 must not wrap to a small or negative one).
int64_t int_attr(PyObject* key, PyObject* v) {
  Ref idx(PyNumber_Index(v));
  if (!idx) throw PythonErrorAlreadySet();
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(idx.get(), &overflow);
  if (x == -1 && PyErr_Occurred()) throw PythonErrorAlreadySet();
  if (overflow) {
    Ref r(PyObject_Repr(idx.get()));
    PJ_THROW(Value) << "'" << text(key) << "': " << (r ? text(r.get()) : std::string("the integer"))
                    << " does not fit in a 64-bit integer";
  }
  return static_cast<int64_t>(x);
}

AttrValue attr_from_py(PyObject* key, PyObject* v) {
  if (v == Py_None) return std::monostate{};
  if (PyBool_Check(v)) return static_cast<bool>(v == Py_True);
  if (PyLong_Check(v)) return int_attr(key, v);
  if (PyFloat_Check(v)) return PyFloat_AS_DOUBLE(v);
  if (PyUnicode_Check(v)) return text(v);
  if (PyList_Check(v) || PyTuple_Check(v)) {
    IntList out;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* e = PySequence_Fast_GET_ITEM(v, i);
      if (!PyIndex_Check(e) || PyBool_Check(e))
        PJ_THROW(Type) << "'" << text(key) << "' must be an int or a tuple of ints, got an element of type '"
                       << Py_TYPE(e)->tp_name << "'";
      out.push_back(int_attr(key, e));
    }
    return out;
  }
  if (PyIndex_Check(v)) return int_attr(key, v);  // numpy ints, 0-d integer tensors
  return parse_dtype(v);  // raises TypeError naming the value if it is not a dtype either
}

// The op a str names, remembered by the str's identity: ops.* pass the same name object on every
// call. The map holds a reference to each name, so its address never becomes another string's.
const OpDef* op_of_name(PyObject* name) {
  static auto* known = new std::unordered_map<PyObject*, const OpDef*>();  // (never destroyed: outlives finalization)
  auto it = known->find(name);
  if (it != known->end()) return it->second;
  const OpDef* op = find_op(text(name));
  if (op && known->size() < 4096) {  // (names built per call would otherwise grow it without bound)
    Py_INCREF(name);
    known->emplace(name, op);
  }
  return op;
}

// _C.op(name, inputs, attrs=None): runs one registered op eagerly.
PyObject* py_op(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2 || nargs > 3)
    return fail(PyExc_TypeError, "op(name, inputs, attrs=None) takes 2 or 3 arguments (" + std::to_string(nargs) + " given)");
  if (!PyUnicode_Check(args[0]))
    return fail(PyExc_TypeError, std::string("op() argument 1 must be str, not ") + Py_TYPE(args[0])->tp_name);
  PyObject *inputs = args[1], *attrs = nargs > 2 ? args[2] : Py_None;
  PJ_PY_BEGIN
  const OpDef* op = op_of_name(args[0]);
  if (!op) return fail(PyExc_ValueError, "unknown op '" + text(args[0]) + "'");
  const std::string& name = op->name;
  Ref seq(PySequence_Fast(inputs, "op inputs must be a sequence of tensors"));
  if (!seq) return nullptr;
  Tensors ts;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.get());
  auto input = [&](Py_ssize_t i) -> Tensor {
    PyObject* e = PySequence_Fast_GET_ITEM(seq.get(), i);
    if (!is_tensor(e))
      PJ_THROW(Type) << name << "(): input " << i << " must be a Tensor, got '" << Py_TYPE(e)->tp_name << "'";
    return unwrap(e);
  };
  // ops.*'s common call: no attributes, one output, the op's eager path (no vector)
  if (op->eager && (attrs == Py_None || (PyDict_Check(attrs) && PyDict_Size(attrs) == 0)) && n >= 1 && n <= 2) {
    const Tensor in[2] = {input(0), n == 2 ? input(1) : Tensor()};
    return wrap(call_eager(*op, absl::MakeConstSpan(in, static_cast<size_t>(n))));
  }
  ts.reserve(n);
  for (Py_ssize_t i = 0; i < n; ++i) ts.push_back(input(i));
  Attrs at;
  if (attrs != Py_None) {
    if (!PyDict_Check(attrs)) return fail(PyExc_TypeError, "op attrs must be a dict");
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(attrs, &pos, &k, &v)) {
      if (!PyUnicode_Check(k)) return fail(PyExc_TypeError, std::string("op attrs: names must be str, not ") + Py_TYPE(k)->tp_name);
      at.set(text(k), attr_from_py(k, v));
    }
  }
  Tensors out = call_op(*op, ts, at);
  if (out.size() == 1) return wrap(out[0]);
  return wrap_all(out);
  PJ_PY_END(nullptr)
}

// _C.as_operand(x, like): x itself when it is a tensor, else x converted the way an operator
// converts its other operand (Python numbers are weak scalars of `like`'s dtype).
PyObject* py_as_operand(PyObject*, PyObject* args) {
  PyObject *data, *like;
  if (!PyArg_ParseTuple(args, "OO:as_operand", &data, &like)) return nullptr;
  PJ_PY_BEGIN
  if (!is_tensor(like)) return fail(PyExc_TypeError, "as_operand: 'like' must be a Tensor");
  if (is_tensor(data)) {
    Py_INCREF(data);
    return data;
  }
  auto t = operand(data, unwrap(like).dtype());
  if (!t) PJ_THROW(Type) << "expected a Tensor, a number or a sequence, got '" << Py_TYPE(data)->tp_name << "'";
  return wrap(*t);
  PJ_PY_END(nullptr)
}

// _C.write_back(target, value): a captured ops.assign replayed after its graph. Capture checked
// the assignment (value has the target's shape and dtype); this is the write itself, into the
// target's storage, as eager assign's `target[...] = value` makes it.
PyObject* py_write_back(PyObject*, PyObject* args) {
  PyObject *target, *value;
  if (!PyArg_ParseTuple(args, "OO:write_back", &target, &value)) return nullptr;
  PJ_PY_BEGIN
  if (!is_tensor(target) || !is_tensor(value)) return fail(PyExc_TypeError, "write_back: expected two tensors");
  const Tensor &t = unwrap(target), &v = unwrap(value);
  if (t.shape() != v.shape() || t.dtype() != v.dtype())
    PJ_THROW(Value) << "write_back: a " << dtype_name(v.dtype()) << shape_str(v.shape()) << " value for a "
                    << dtype_name(t.dtype()) << shape_str(t.shape()) << " tensor";
  if (tape_active()) tape_before_write(t);
  // The graph computed the value in the target itself (graph/plan.h, alias): nothing to copy.
  const bool in_place = v.same_storage(t) && v.offset() == t.offset() && v.strides() == t.strides();
  if (!in_place) copy_into(t, v);
  t.storage()->note_write();
  if (tape_active()) tape_rebind(t, v);  // as eager assign's t[...] = v: t now holds v's value
  Py_INCREF(target);
  return target;
  PJ_PY_END(nullptr)
}

PyObject* py_register(PyObject*, PyObject* args) {
  PyObject *cls, *dtypes;
  if (!PyArg_ParseTuple(args, "OO:_register", &cls, &dtypes)) return nullptr;
  if (!PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &TensorBaseType))
    return fail(PyExc_TypeError, "_register: the tensor class must subclass TensorBase");
  if (!PySequence_Check(dtypes) || PySequence_Size(dtypes) != kNumDTypes)
    return fail(PyExc_TypeError, "_register: expected one dtype object per DType");
  if (!watch_rebinds(reinterpret_cast<PyTypeObject*>(cls), false)) return nullptr;
  set_tensor_class(reinterpret_cast<PyTypeObject*>(cls));
  register_dtype_objects(dtypes);
  Py_RETURN_NONE;
}

// _watch_rebinds(cls): assignments of __class__ and __dict__ to cls's instances are counted, so
// the guards' fast pass trusts a Cell it saw unchanged without reading its class and dict pointer.
PyObject* py_watch_rebinds(PyObject*, PyObject* cls) {
  if (!PyType_Check(cls) || !PyType_HasFeature(reinterpret_cast<PyTypeObject*>(cls), Py_TPFLAGS_HEAPTYPE))
    return fail(PyExc_TypeError, "_watch_rebinds: expected a class defined in Python");
  if (!watch_rebinds(reinterpret_cast<PyTypeObject*>(cls), true)) return nullptr;
  Py_RETURN_NONE;
}

PyObject* py_set_num_threads(PyObject*, PyObject* arg) {
  long n = PyLong_AsLong(arg);
  if (n == -1 && PyErr_Occurred()) return nullptr;
  if (n < 1) return fail(PyExc_ValueError, "set_num_threads: the number of threads must be >= 1");
  set_num_threads(static_cast<int>(n));
  Py_RETURN_NONE;
}

PyObject* py_get_num_threads(PyObject*, PyObject*) { return PyLong_FromLong(get_num_threads()); }

// The allocator keeps large freed blocks for reuse (kernels/tensor.cc): how many bytes, and
// giving them back to the system.
PyObject* py_cached_storage_bytes(PyObject*, PyObject*) { return PyLong_FromSize_t(cached_storage_bytes()); }
PyObject* py_release_cached_storage(PyObject*, PyObject*) {
  release_cached_storage();
  Py_RETURN_NONE;
}

// Fused elementwise kernels: machine code on/off (returns the old setting), the backend's name, and
// a compiled kernel's bytes for a disassembler.
PyObject* py_set_fused_jit(PyObject*, PyObject* on) {
  int v = PyObject_IsTrue(on);
  if (v < 0) return nullptr;
  return PyBool_FromLong(set_fused_jit(v != 0));
}
PyObject* py_fused_backend(PyObject*, PyObject*) { return PyUnicode_FromString(fused_compiler_name()); }
PyObject* py_fused_code_stats(PyObject*, PyObject*) {
  const FusedCodeStats s = fused_code_stats();
  return Py_BuildValue("{s:L,s:L}", "compiled", static_cast<long long>(s.compiled), "loaded",
                       static_cast<long long>(s.loaded));
}
PyObject* py_fused_kernel_bytes(PyObject*, PyObject* args) {
  const char* program;
  unsigned int mask = 0;
  if (!PyArg_ParseTuple(args, "s|I", &program, &mask)) return nullptr;
  PJ_PY_BEGIN
  std::string b = fused_kernel_bytes(program, mask);
  return PyBytes_FromStringAndSize(b.data(), static_cast<Py_ssize_t>(b.size()));
  PJ_PY_END(nullptr)
}

PyObject* py_registered_ops(PyObject*, PyObject*) {
  auto names = registered_ops();
  PyObject* l = PyList_New(names.size());
  for (size_t i = 0; i < names.size(); ++i) PyList_SET_ITEM(l, i, PyUnicode_FromString(names[i].c_str()));
  return l;
}

PyObject* py_primitive_cache_info(PyObject*, PyObject*) {
  auto& c = PrimitiveCache::instance();
  return Py_BuildValue("{s:L,s:L,s:n}", "hits", (long long)c.hits(), "misses", (long long)c.misses(),
                       "size", (Py_ssize_t)c.size());
}

// Every bounded cache (kernels/bounded_cache.h): name -> {size, capacity, hits, misses, evictions, env}.
PyObject* py_kernel_cache_stats(PyObject*, PyObject*) {
  Ref d(PyDict_New());
  if (!d) return nullptr;
  for (const CacheInfo& c : cache_infos()) {
    Ref v(Py_BuildValue("{s:n,s:n,s:L,s:L,s:L,s:s}", "size", (Py_ssize_t)c.size, "capacity", (Py_ssize_t)c.capacity,
                        "hits", (long long)c.hits, "misses", (long long)c.misses, "evictions", (long long)c.evictions,
                        "env", c.env.c_str()));
    if (!v || PyDict_SetItemString(d.get(), c.name.c_str(), v.get()) < 0) return nullptr;
  }
  return d.release();
}

PyObject* py_weight_cache_info(PyObject*, PyObject*) {
  WeightCacheStats s = weight_cache_stats();
  return Py_BuildValue("{s:L,s:L,s:L,s:L}", "hits", (long long)s.hits, "reorders", (long long)s.reorders, "entries",
                       (long long)s.entries, "bytes", (long long)s.bytes);
}

PyObject* py_dtype_code(PyObject*, PyObject* arg) {
  PJ_PY_BEGIN
  return PyLong_FromLong(static_cast<int>(parse_dtype(arg)));
  PJ_PY_END(nullptr)
}

// A tensor's elements as little-endian bytes in row-major order, whatever its dtype (bfloat16
// has no buffer format): what checkpoints store.
PyObject* py_tensor_to_bytes(PyObject*, PyObject* arg) {
  PJ_PY_BEGIN
  if (!is_tensor(arg)) PJ_THROW(Type) << "tensor_to_bytes: expected a Tensor";
  const Tensor& t = unwrap(arg);
  if (refuse_symbolic(t, "tensor_to_bytes()")) return nullptr;
  Tensor c = t.contiguous();
  return PyBytes_FromStringAndSize(static_cast<const char*>(c.raw_data()), c.nbytes());
  PJ_PY_END(nullptr)
}

// tensor_from_bytes(buffer, dtype, shape): a new tensor holding a copy of the buffer's bytes.
PyObject* py_tensor_from_bytes(PyObject*, PyObject* args) {
  PJ_PY_BEGIN
  PyObject *data, *dtype, *shape_obj;
  if (!PyArg_ParseTuple(args, "OOO:tensor_from_bytes", &data, &dtype, &shape_obj)) return nullptr;
  DType dt = parse_dtype(dtype);
  Shape shape;
  Ref seq(PySequence_Fast(shape_obj, "tensor_from_bytes: shape must be a sequence of ints"));
  if (!seq) return nullptr;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq.get()); ++i) {
    long long d = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq.get(), i));
    if (d == -1 && PyErr_Occurred()) return nullptr;
    shape.push_back(d);
  }
  Py_buffer view;
  if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) != 0) return nullptr;
  Tensor t;
  try {
    t = Tensor::empty(shape, dt);
    if (view.len != t.nbytes()) {
      PyBuffer_Release(&view);
      PJ_THROW(Value) << "tensor_from_bytes: " << view.len << " bytes given, shape " << shape_str(shape)
                      << " of " << dtype_numpy_name(dt) << " needs " << t.nbytes();
    }
    if (t.nbytes()) std::memcpy(t.raw_data(), view.buf, t.nbytes());
  } catch (...) {
    if (view.obj) PyBuffer_Release(&view);
    throw;
  }
  PyBuffer_Release(&view);
  return wrap(t);
  PJ_PY_END(nullptr)
}

PyObject* py_set_seed(PyObject*, PyObject* arg) {
  unsigned long long s = PyLong_AsUnsignedLongLong(arg);
  if (s == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
  set_seed(s);
  Py_RETURN_NONE;
}

PyObject* py_rng_state(PyObject*, PyObject*) {
  const auto st = rng_state();
  return Py_BuildValue("(KK)", static_cast<unsigned long long>(st.first), static_cast<unsigned long long>(st.second));
}

PyObject* py_set_rng_state(PyObject*, PyObject* arg) {
  unsigned long long seed = 0, offset = 0;
  if (!PyArg_ParseTuple(arg, "KK:set_rng_state", &seed, &offset)) return nullptr;
  set_rng_state(seed, offset);
  Py_RETURN_NONE;
}

PyObject* py_format_str(PyObject*, PyObject* arg) {
  PJ_PY_BEGIN
  if (!is_tensor(arg)) return fail(PyExc_TypeError, "format_str expects a Tensor");
  if (refuse_symbolic(unwrap(arg), "str()")) return nullptr;
  return PyUnicode_FromString(format_str(unwrap(arg)).c_str());
  PJ_PY_END(nullptr)
}

PyObject* py_format_repr(PyObject*, PyObject* arg) {
  PJ_PY_BEGIN
  if (!is_tensor(arg)) return fail(PyExc_TypeError, "format_repr expects a Tensor");
  if (refuse_symbolic(unwrap(arg), "repr()")) return nullptr;
  return PyUnicode_FromString(format_repr(unwrap(arg)).c_str());
  PJ_PY_END(nullptr)
}

PyObject* py_set_printoptions(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* kwlist[] = {"precision", "threshold", "edgeitems", "linewidth", "suppress", nullptr};
  PrintOptions o = get_print_options();
  int suppress = o.suppress;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|iiiip:set_printoptions", const_cast<char**>(kwlist),
                                   &o.precision, &o.threshold, &o.edgeitems, &o.linewidth, &suppress))
    return nullptr;
  if (o.precision < 0 || o.threshold < 0 || o.edgeitems < 1 || o.linewidth < 1)
    return fail(PyExc_ValueError, "set_printoptions: values must be non-negative (edgeitems and linewidth >= 1)");
  o.suppress = suppress;
  set_print_options(o);
  Py_RETURN_NONE;
}

// build_info(): what pijit was built with and finds at run time (python -m pijit sysinfo).
PyObject* py_build_info(PyObject*, PyObject*) {
  const dnnl_version_t* v = dnnl_version();
  char onednn[64], asmjit[32];
  std::snprintf(onednn, sizeof onednn, "%d.%d.%d", v->major, v->minor, v->patch);
  std::snprintf(asmjit, sizeof asmjit, "%d.%d.%d", ASMJIT_LIBRARY_VERSION >> 16, (ASMJIT_LIBRARY_VERSION >> 8) & 0xff,
                ASMJIT_LIBRARY_VERSION & 0xff);
  const cuda::BackendInfo& gpu = cuda::backend();
  return Py_BuildValue("{s:s,s:s,s:s,s:s,s:s}", "onednn", onednn, "onednn_built_with",
                       std::to_string(DNNL_VERSION_MAJOR).append(".").append(std::to_string(DNNL_VERSION_MINOR)).c_str(),
                       "asmjit", asmjit, "compiler", __VERSION__, "cuda",
                       gpu.built ? gpu.built_with.c_str() : "not built");
}

// gpu_info(): the GPU backend's probe (kernels/cuda/backend.h) as a dict, for pijit.hal and sysinfo.
PyObject* py_gpu_info(PyObject*, PyObject*) {
  const cuda::BackendInfo& b = cuda::backend();
  Ref devices(PyList_New(0));
  if (!devices) return nullptr;
  for (const cuda::DeviceInfo& d : b.devices) {
    Ref item(Py_BuildValue("{s:i,s:s,s:(ii),s:K,s:i}", "index", d.index, "name", d.name.c_str(), "capability",
                               d.major, d.minor, "total_memory", static_cast<unsigned long long>(d.total_memory),
                               "multiprocessors", d.multiprocessors));
    if (!item || PyList_Append(devices.get(), item.get()) < 0) return nullptr;
  }
  auto version = [](int v) { return cuda::cuda_version_text(v); };
  return Py_BuildValue("{s:O,s:s,s:O,s:s,s:s,s:s,s:s,s:s,s:s,s:O}", "built", b.built ? Py_True : Py_False,
                       "built_with", b.built_with.c_str(), "usable", b.usable ? Py_True : Py_False, "why",
                       b.why.c_str(), "runtime", version(b.runtime_version).c_str(), "driver",
                       version(b.driver_version).c_str(), "cudnn", b.cudnn.c_str(), "cublas", b.cublas.c_str(),
                       "nvrtc", b.nvrtc.c_str(), "devices", devices.get());
}

PyObject* py_probe_machine(PyObject*, PyObject* arg) {
  long t = PyLong_AsLong(arg);
  if (t == -1 && PyErr_Occurred()) return nullptr;
  if (t < 1) return fail(PyExc_ValueError, "probe_machine: threads must be >= 1");
  double peak, bw;
  Py_BEGIN_ALLOW_THREADS
  peak = probe_peak_gflops(static_cast<int>(t));
  bw = probe_copy_bandwidth_gbs(static_cast<int>(t));
  Py_END_ALLOW_THREADS
  return Py_BuildValue("{s:d,s:d}", "peak_gflops", peak, "copy_gbs", bw);
}

PyObject* py_mutable_number(PyObject*, PyObject* o) {
  if (!PyFloat_CheckExact(o) && !(PyLong_CheckExact(o)))
    return fail(PyExc_TypeError, std::string("_mutable_number: an int or a float, got ") + Py_TYPE(o)->tp_name);
  return mark_mutable_number(o);
}

PyMethodDef module_methods[] = {
    {"op", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_op)), METH_FASTCALL, "op(name, inputs, attrs=None): run a registered op eagerly"},
    {"as_operand", py_as_operand, METH_VARARGS, "as_operand(x, like): x as a tensor operand next to `like`"},
    {"_mutable_number", py_mutable_number, METH_O, "a fresh copy of an int or float that capture lifts to a graph input"},
    {"write_back", py_write_back, METH_VARARGS, "write_back(target, value): a captured assign, replayed"},
    {"_register", py_register, METH_VARARGS, "register the Python Tensor class and dtype objects"},
    {"_watch_rebinds", py_watch_rebinds, METH_O, "_watch_rebinds(cls): count __class__ and __dict__ assignments to cls's instances"},
    {"set_num_threads", py_set_num_threads, METH_O, "threads used by pijit's kernels and oneDNN"},
    {"cached_storage_bytes", py_cached_storage_bytes, METH_NOARGS, "bytes of freed tensor storage kept for reuse"},
    {"set_fused_jit", py_set_fused_jit, METH_O, "set_fused_jit(on): fused kernels as machine code (True) or interpreted; returns the old setting"},
    {"fused_backend", py_fused_backend, METH_NOARGS, "what runs fused elementwise kernels: 'asmjit-avx512', 'asmjit-avx2' or 'interpreter'"},
    {"fused_code_stats", py_fused_code_stats, METH_NOARGS, "fused row functions this process compiled, and loaded from the compile cache: {'compiled': n, 'loaded': n}"},
    {"fused_kernel_bytes", py_fused_kernel_bytes, METH_VARARGS, "fused_kernel_bytes(program, scalar_mask=0): the machine code of a fused kernel"},
    {"release_cached_storage", py_release_cached_storage, METH_NOARGS, "gives the kept storage back to the system"},
    {"get_num_threads", py_get_num_threads, METH_NOARGS, "threads used by pijit's kernels"},
    {"registered_ops", py_registered_ops, METH_NOARGS, "names of every op in the registry"},
    {"primitive_cache_info", py_primitive_cache_info, METH_NOARGS, "oneDNN primitive cache counters"},
    {"kernel_cache_stats", py_kernel_cache_stats, METH_NOARGS, "every bounded kernel cache: size, capacity, counters"},
    {"weight_cache_info", py_weight_cache_info, METH_NOARGS,
     "counters of the reordered-weights cache: hits, reorders, entries, bytes"},
    {"set_seed", py_set_seed, METH_O, "seed of the random generator (rand, randn, randint, ...)"},
    {"rng_state", py_rng_state, METH_NOARGS, "the random generator's (seed, offset)"},
    {"set_rng_state", py_set_rng_state, METH_O, "set_rng_state((seed, offset)): as rng_state() gave it"},
    {"format_str", py_format_str, METH_O, "numpy-style str() of a tensor"},
    {"format_repr", py_format_repr, METH_O, "MindSpore-style repr() of a tensor"},
    {"set_printoptions", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(py_set_printoptions)), METH_VARARGS | METH_KEYWORDS,
     "set_printoptions(precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False)"},
    {"build_info", py_build_info, METH_NOARGS, "versions pijit was built with and runs on (oneDNN, AsmJit, compiler)"},
    {"gpu_info", py_gpu_info, METH_NOARGS, "the GPU backend: built with, libraries and driver found, devices, why not usable"},
    {"probe_machine", py_probe_machine, METH_O,
     "probe_machine(threads): measured float32 FMA peak (GFLOP/s) and copy bandwidth (GB/s)"},
    {"dtype_code", py_dtype_code, METH_O, "the DType code of a dtype-like object (TypeError if none)"},
    {"tensor_to_bytes", py_tensor_to_bytes, METH_O, "a tensor's elements as row-major little-endian bytes"},
    {"tensor_from_bytes", py_tensor_from_bytes, METH_VARARGS, "tensor_from_bytes(buffer, dtype, shape): a copy"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "pijit._C", "pijit native core", -1, module_methods};

}  // namespace
}  // namespace pj::py

// Explicitly exported: 3.7's PyMODINIT_FUNC does not set visibility, and we build with hidden.
extern "C" __attribute__((visibility("default"))) PyObject* PyInit__C() {
  PyObject* m = PyModule_Create(&pj::py::module_def);
  if (!m) return nullptr;
  if (!pj::py::init_tensor_type(m) || !pj::py::init_tape_type(m) || !pj::py::init_vmap_functions(m) ||
      !pj::py::init_op_entries(m)) {
    Py_DECREF(m);
    return nullptr;
  }
  pj::py::register_py_functions(m);
  pj::py::register_capture_functions(m);
  pj::py::register_codegen_functions(m);
  if (PyErr_Occurred() || !pj::runtime::register_jit(m)) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
