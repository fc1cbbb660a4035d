#include "runtime/debug_tools.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "common/files.h"
#include "guards/guard_tree.h"
#include "kernels/cuda/backend.h"
#include "kernels/cuda/fused_cuda.h"
#include "kernels/fused.h"
#include "py/py_common.h"
#include "runtime/code_state.h"
#include "runtime/eval_frame.h"

namespace pj::runtime {
namespace {

PyObject* g_dump_hook = nullptr;  // pijit.dump's writer (owned)
int g_dump_folders = 0;

bool env_on(const char* name) {
  const char* e = std::getenv(name);
  return e && *e && std::string(e) != "0";
}

std::string sanitized(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  return out;
}

}  // namespace

const DebugSwitches& debug_switches() {
  static const DebugSwitches* s = [] {
    auto* d = new DebugSwitches;
    if (const char* e = std::getenv("PIJIT_DUMP_DIR")) d->dump_dir = e;
    d->no_cache = env_on("PIJIT_DEBUG_NO_CACHE");
    d->no_direct = env_on("PIJIT_DEBUG_NO_DIRECT");
    d->no_fast_guards = env_on("PIJIT_DEBUG_NO_FAST_GUARDS");
    guards::set_fast_pass(!d->no_fast_guards);
    if (const char* e = std::getenv(kWrongResultsVar)) d->fault = e;
    if (!d->fault.empty()) {
      // Loud on purpose: this switch makes results wrong. Said once, when pijit first reads it.
      std::fprintf(stderr,
                   "pijit: WARNING: %s=%s is set: the graphs of the functions it names return "
                   "DELIBERATELY WRONG results (test-only fault injection for pijit's own bisect tests). "
                   "Unset it unless you are testing pijit.\n",
                   kWrongResultsVar, d->fault.c_str());
      std::fflush(stderr);
    }
    return d;
  }();
  return *s;
}

bool test_fault(const std::string& module, PyCodeObject* co) {
  const std::string& f = debug_switches().fault;
  const size_t colon = f.rfind(':');
  if (f.empty() || colon == std::string::npos) return false;
  std::string name = f.substr(colon + 1);
  if (name.rfind('.') != std::string::npos) name = name.substr(name.rfind('.') + 1);  // a 3.7/3.9 code knows its last part
  return fnmatch(f.substr(0, colon).c_str(), module.c_str(), 0) == 0 &&
         fnmatch(name.c_str(), py::text(co->co_name).c_str(), 0) == 0;
}

const std::string& dump_folder(CodeState* st) {
  static const std::string none;
  const std::string& dir = debug_switches().dump_dir;
  if (dir.empty()) return none;
  if (st->dump_key.empty()) {
    PyCodeObject* co = st->code;
    std::string file = py::text(co->co_filename);
    file = file.substr(file.rfind('/') == std::string::npos ? 0 : file.rfind('/') + 1);
    if (file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0) file.resize(file.size() - 3);
    char num[16];
    std::snprintf(num, sizeof num, "%03d", ++g_dump_folders);
    st->dump_key = std::string(num) + "_" + sanitized(py::text(co->co_name)) + "_" + sanitized(file) + "_" +
                   std::to_string(co->co_firstlineno);
    st->dump_path = dir + "/" + st->dump_key;
    if (!make_dirs(st->dump_path)) {
      static bool said = false;
      if (!said) std::fprintf(stderr, "pijit: PIJIT_DUMP_DIR: cannot create %s\n", st->dump_path.c_str());
      said = true;
      st->dump_path.clear();
    }
  }
  return st->dump_path;
}

void dump_file(const std::string& folder, const std::string& name, const std::string& text) {
  if (folder.empty()) return;
  const std::string path = folder + "/" + name;
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
}

std::string graph_asm(const graph::Graph& g) {
  std::string out;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const graph::Node& n = g.nodes()[i];
    if (n.op->name != "fused_elementwise" && n.op->name != "fused_reduce") continue;
    // The launch compiles one row function per set of one-element inputs (read once, outside the loop).
    uint32_t mask = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (shape_numel(g.value(n.inputs[k]).meta.shape) == 1) mask |= 1u << k;
    const std::string text = n.attrs.s("program");
    const std::string code = fused_kernel_asm(text, mask);
    out += "; node " + std::to_string(i) + ": " + n.op->name + " (one-element inputs mask " + std::to_string(mask) +
           ")\n; program:\n";
    for (size_t a = 0, b; a < text.size(); a = b + 1) {
      b = text.find('\n', a);
      if (b == std::string::npos) b = text.size();
      out += ";   " + text.substr(a, b - a) + "\n";
    }
    out += code.empty() ? "; (no machine code: the fused interpreter runs it)\n" : code;
    out += "\n";
  }
  return out;
}

std::string graph_cuda(const graph::Graph& g) {
  if (!cuda::backend().built) return "";
  std::string out;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const graph::Node& n = g.nodes()[i];
    if (n.op->name != "fused_elementwise") continue;
    uint32_t mask = 0;  // (as graph_asm: one kernel per set of one-element inputs)
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (shape_numel(g.value(n.inputs[k]).meta.shape) == 1) mask |= 1u << k;
    out += "// ---- node " + std::to_string(i) + ": fused_elementwise\n" +
           cuda::fused_cuda_source(FusedProgram::parse(n.attrs.s("program")), mask) + "\n";
  }
  return out;
}

void dump_entry_hook(const std::string& folder, int entry, PyCodeObject* co, PyObject* rewritten,
                     const std::vector<PyCodeObject*>& resumes, const std::vector<std::string>& guards,
                     const std::string& reason) {
  if (!g_dump_hook || folder.empty()) return;
  PyObject *t, *v, *tb;
  PyErr_Fetch(&t, &v, &tb);
  const bool busy = set_capture_busy(true);  // the hook's own frames are never captured (stress mode)
  py::Ref rs(PyList_New(0)), gs(PyList_New(0));
  for (PyCodeObject* rc : resumes) PyList_Append(rs.get(), reinterpret_cast<PyObject*>(rc));
  for (const std::string& g : guards) PyList_Append(gs.get(), py::Ref(PyUnicode_FromString(g.c_str())).get());
  // (the folder is a file system path, from PIJIT_DUMP_DIR's bytes: they need not be UTF-8)
  py::Ref path(PyUnicode_DecodeFSDefaultAndSize(folder.data(), static_cast<Py_ssize_t>(folder.size())));
  py::Ref r(path ? PyObject_CallFunction(g_dump_hook, "OiOOOOs", path.get(), entry, reinterpret_cast<PyObject*>(co),
                                         rewritten ? rewritten : Py_None, rs.get(), gs.get(), reason.c_str())
                 : nullptr);
  if (!r) {
    PyErr_Print();  // a dump failing is said, and never changes the program
    PyErr_Clear();
  }
  set_capture_busy(busy);
  PyErr_Restore(t, v, tb);
}

PyObject* py_set_dump_hook(PyObject*, PyObject* hook) {
  if (hook != Py_None && !PyCallable_Check(hook)) return py::fail(PyExc_TypeError, "set_dump_hook expects a callable or None");
  Py_XDECREF(g_dump_hook);
  g_dump_hook = hook == Py_None ? nullptr : (Py_INCREF(hook), hook);
  Py_RETURN_NONE;
}

}  // namespace pj::runtime
