#include "runtime/disk_cache.h"

#include <link.h>
#include <marshal.h>
#include <sys/stat.h>

#include <algorithm>

#include "codegen/assembler.h"
#include "common/byte_io.h"
#include "common/files.h"
#include "common/sha256.h"
#include "common/trace.h"
#include "kernels/fused.h"
#include "oneapi/dnnl/dnnl.h"
#include "py/portable.h"
#include "py/py_common.h"

namespace pj::runtime {
namespace {

constexpr uint8_t kEntryFormat = 3;  // (3: the fused kernels' machine code last)

// The file of the loaded object that holds `addr` (dl_iterate_phdr: dladdr would also search the
// symbol table for the nearest name, a scan of a large library).
std::string object_file_of(const void* addr) {
  struct Find {
    uintptr_t addr;
    std::string path;
  } find{reinterpret_cast<uintptr_t>(addr), ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* f = static_cast<Find*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && f->addr >= start && f->addr < start + ph.p_memsz) {
            f->path = info->dlpi_name ? info->dlpi_name : "";
            return 1;
          }
        }
        return 0;
      },
      &find);
  return find.path;
}

// pijit's build: the extension module's file (a rebuild changes its size or mtime).
const std::string& build_stamp() {
  static const std::string stamp = [] {
    const std::string path = object_file_of(reinterpret_cast<const void*>(&disk_stats));
    struct stat st;
    if (path.empty() || ::stat(path.c_str(), &st) != 0) return std::string("unknown");
    return path + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec);
  }();
  return stamp;
}


bool write_artifact(const DiskState& st) {
  ByteWriter w;
  w.var(st.blobs.size());
  for (const std::string& b : st.blobs) w.str(b);
  return write_cache_entry(st.path, st.key, w.bytes(), /*durable=*/false);
}

void refuse(const std::string& why) { ++disk_stats().refusals[why]; }

}  // namespace

DiskStats& disk_stats() {
  static DiskStats s;
  return s;
}

std::string disk_cache_folder() {
  const std::string root = cache_root();
  if (root.empty()) return "";
  static std::map<std::string, bool> checked;  // (one check, and one warning, per root)
  auto it = checked.find(root);
  if (it == checked.end()) it = checked.emplace(root, private_dir(root, "graphs", "the compile cache")).first;
  return it->second ? root + "/graphs" : "";
}

void disk_read(PyCodeObject* co, DiskState* st, const std::string& module, const std::string& options) {
  if (st->read) return;
  st->read = true;
  trace::Span span("cache", "read artifact");
  const std::string folder = disk_cache_folder();
  const std::string code = folder.empty() ? "" : py::code_print(reinterpret_cast<PyObject*>(co));
  if (code.empty()) return;
  st->key = "pijit compile cache 1\nbuild " + build_stamp() + "\npython " + Py_GetVersion() + "\nisa " +
            fused_compiler_name() + "\ndnnl " + std::to_string(dnnl_version()->major) + "." +
            std::to_string(dnnl_version()->minor) + "." + std::to_string(dnnl_version()->patch) + " " +
            dnnl_version()->hash + "\noptions " + options + "\nmodule " + module + "\ncode " + code + "\n";
  st->path = folder + "/" + sha256_hex(st->key) + ".pjc";
  std::string body;
  if (!read_cache_entry(st->path, st->key, &body)) {
    struct stat s;
    if (::stat(st->path.c_str(), &s) == 0) ++disk_stats().rejected;  // there, but not valid for this key
    return;
  }
  ByteReader r(body);
  std::vector<std::string> blobs(r.count());
  for (std::string& b : blobs) b = std::string(r.str());
  if (!r.ok() || !r.at_end()) {
    ++disk_stats().rejected;
    return;
  }
  ++disk_stats().artifacts_read;
  st->blobs = std::move(blobs);
  st->tried.assign(st->blobs.size(), 0);
}

std::string disk_blob(const capture::CaptureResult& r) {
  trace::Span span("cache", "write entry");
  if (!r.ok || r.broke) return refuse("a graph break"), "";
  if (!r.sweeps.empty()) return refuse("gradients with symbolic sizes"), "";
  if (r.hash_dependent) return refuse("a value that depends on the process's str hashes (hash(), a set of strs)"), "";
  ByteWriter w;
  std::string why;
  py::SaveMemo memo;
  w.u8(kEntryFormat);
  if (!r.guards->save(w, &why) || !graph::save_graph(*r.graph, w, &why) || !codegen::save_plan(r.plan, w, &why)) {
    if (PyErr_Occurred()) PyErr_Clear();
    return refuse(why), "";
  }
  w.var(r.symbolic_dims.size());
  for (const graph::SymbolicDim& d : r.symbolic_dims) {
    w.svar(d.input);
    w.svar(d.dim);
    w.svar(d.symbol);
    w.svar(d.hint);
  }
  w.var(r.symbolic_attrs.size());
  for (const graph::SymbolicAttr& a : r.symbolic_attrs) {
    w.var(a.node);
    w.str(a.attr);
    w.var(a.entry);
    w.svar(a.symbol);
  }
  auto strings = [&](const std::vector<std::string>& v) {
    w.var(v.size());
    for (const std::string& s : v) w.str(s);
  };
  w.var(r.scalar_inputs.size());
  for (int i : r.scalar_inputs) w.svar(i);
  strings(r.mutable_paths);
  strings(r.dynamic_notes);
  strings(r.effects);
  w.str(r.file);
  w.str(r.function);
  w.svar(r.line);
  w.svar(r.ops_seen);
  w.svar(r.instructions);
  return w.take();
}

namespace {

constexpr int kCodeMarshalVersion = 4;

// The rewritten code's section. Its constants are the original code's (a prefix, as emitting keeps
// them), then what emitting added: the graph runner (exactly once), and constants marshal writes
// by value (py::is_plain_constant: names, numbers, keys). Written: u8 1, marshal's bytes with the
// prefix and the runner as None, the prefix's length, the runner's index. u8 0 where the code is not
// so (a key held weakly, an object constant): the next process emits it again.
void put_code(ByteWriter& w, PyObject* code, PyObject* runner, PyCodeObject* original) {
  if (PyErr_Occurred() || !code || !PyCode_Check(code)) return w.u8(0);  // (an error not ours stays)
  PyObject* consts = reinterpret_cast<PyCodeObject*>(code)->co_consts;
  PyObject* own = original->co_consts;
  const Py_ssize_t n = PyTuple_GET_SIZE(consts), prefix = PyTuple_GET_SIZE(own);
  bool storable = n >= prefix;
  int at = -1;
  for (Py_ssize_t i = 0; storable && i < n; ++i) {
    PyObject* c = PyTuple_GET_ITEM(consts, i);
    if (i < prefix) storable = c == PyTuple_GET_ITEM(own, i);
    else if (c == runner) storable = at < 0, at = static_cast<int>(i);
    else storable = py::is_plain_constant(c);
  }
  py::Ref placeholder(storable && at >= 0 ? PyTuple_New(n) : nullptr);
  for (Py_ssize_t i = 0; placeholder && i < n; ++i) {
    PyObject* c = i < prefix || i == at ? Py_None : PyTuple_GET_ITEM(consts, i);
    Py_INCREF(c);
    PyTuple_SET_ITEM(placeholder.get(), i, c);
  }
  py::Ref stored(placeholder ? py::code_with_consts(code, placeholder.get()) : nullptr);
  py::Ref bytes(stored ? PyMarshal_WriteObjectToString(stored.get(), kCodeMarshalVersion) : nullptr);
  if (PyErr_Occurred()) PyErr_Clear();  // (ours: none was set on entry)
  if (!bytes) return w.u8(0);
  w.u8(1);
  w.str(std::string_view(PyBytes_AS_STRING(bytes.get()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.get()))));
  w.var(static_cast<uint64_t>(prefix));
  w.var(static_cast<uint64_t>(at));
}

// code.<attr> of two code objects compared (the attributes every version has: 3.11 keeps its
// locals' names in another layout); `prefix`: a's is b's followed by more.
bool same_attr(PyObject* a, PyObject* b, const char* attr, bool prefix = false) {
  py::Ref x(PyObject_GetAttrString(a, attr)), y(PyObject_GetAttrString(b, attr));
  if (prefix && x && y && PyTuple_Check(x.get()) && PyTuple_Check(y.get()) &&
      PyTuple_GET_SIZE(x.get()) >= PyTuple_GET_SIZE(y.get()))
    x = py::Ref(PyTuple_GetSlice(x.get(), 0, PyTuple_GET_SIZE(y.get())));
  const int eq = x && y ? PyObject_RichCompareBool(x.get(), y.get(), Py_EQ) : 0;
  if (eq < 0) PyErr_Clear();
  return eq == 1;
}

// Whether code read back fits the frame's code as emitting would have made it: the signature
// codegen::in_place_spec gives, its names, the original's locals first and its cells, and
// placeholders where the frame's constants and the runner go. (The cache folder is the user's own
// and private, as __pycache__ is, and its files are hash-checked: this catches an artifact another
// build wrote alike, not malice.)
bool code_fits(PyCodeObject* co, PyCodeObject* original, const StoredCode& code) {
  const codegen::CodeSpec spec = codegen::in_place_spec(original);
  const int kinds = CO_VARARGS | CO_VARKEYWORDS | CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR;
  if (co->co_argcount != spec.argcount || co->co_kwonlyargcount != spec.kwonlyargcount ||
      py::code_posonlyargcount(co) != spec.posonlyargcount || (co->co_flags & kinds) != (spec.flags & kinds))
    return false;
  auto* a = reinterpret_cast<PyObject*>(co);
  auto* b = reinterpret_cast<PyObject*>(original);
  if (!same_attr(a, b, "co_name") || !same_attr(a, b, "co_filename") || !same_attr(a, b, "co_cellvars") ||
      !same_attr(a, b, "co_freevars") || !same_attr(a, b, "co_varnames", /*prefix=*/true))
    return false;
  PyObject* consts = co->co_consts;
  const Py_ssize_t n = PyTuple_GET_SIZE(consts);
  if (code.prefix != PyTuple_GET_SIZE(original->co_consts) || code.runner < code.prefix || code.runner >= n) return false;
  for (Py_ssize_t i = 0; i < code.prefix; ++i)
    if (PyTuple_GET_ITEM(consts, i) != Py_None) return false;
  return PyTuple_GET_ITEM(consts, code.runner) == Py_None;
}

}  // namespace

void disk_finish(std::string* blob, const graph::Graph& optimized, PyObject* code, PyObject* runner,
                 PyCodeObject* original) {
  if (blob->empty()) return;
  ByteWriter g, w;
  std::string why;
  if (graph::save_graph(optimized, g, &why)) {
    w.u8(1);
    w.str(g.bytes());  // (framed: one that does not read back is skipped, and the passes run)
  } else {
    w.u8(0);  // (none: the next process runs the passes again)
  }
  put_code(w, code, runner, original);
  w.u8(0);  // the fused kernels' code: none yet (disk_add_kernels, after the first launch)
  *blob += w.bytes();
}

namespace {

// An entry as disk_finish wrote it, and `stored` the same entry with or without its kernels.
bool same_entry(const std::string& stored, const std::string& finished) {
  const size_t n = finished.size() - 1;  // (all but the kernels' marker)
  return !finished.empty() && stored.size() >= finished.size() && stored.compare(0, n, finished, 0, n) == 0;
}

}  // namespace

void disk_add_kernels(DiskState* st, const std::string& blob, const std::vector<FusedCode>& codes) {
  if (st->path.empty() || codes.empty() || blob.empty() || blob.back() != 0) return;
  for (std::string& b : st->blobs) {
    if (b.size() != blob.size() || !same_entry(b, blob)) continue;  // (one with its kernels already)
    ByteWriter w;
    w.u8(1);
    w.str(fused_compiler_name());
    w.var(codes.size());
    for (const FusedCode& c : codes) {
      w.str(c.program);
      w.var(c.mask);
      w.str(c.bytes);
    }
    b.pop_back();
    b += w.bytes();
    if (write_artifact(*st)) ++disk_stats().kernels_written;
    return;
  }
}

PyObject* disk_code(const StoredCode& code, PyObject* runner, PyCodeObject* original) {
  if (code.bytes.empty() || PyErr_Occurred()) return nullptr;  // (an error not ours stays)
  py::Ref read(PyMarshal_ReadObjectFromString(code.bytes.data(), static_cast<Py_ssize_t>(code.bytes.size())));
  auto* co = read && PyCode_Check(read.get()) && PyTuple_Check(reinterpret_cast<PyCodeObject*>(read.get())->co_consts)
                 ? reinterpret_cast<PyCodeObject*>(read.get())
                 : nullptr;
  py::Ref consts(co && code_fits(co, original, code) ? PyTuple_New(PyTuple_GET_SIZE(co->co_consts)) : nullptr);
  for (Py_ssize_t i = 0; consts && i < PyTuple_GET_SIZE(co->co_consts); ++i) {
    // (the frame's own constants, the same objects emitting put there, and the runner)
    PyObject* c = i < code.prefix ? PyTuple_GET_ITEM(original->co_consts, i)
                  : i == code.runner ? runner : PyTuple_GET_ITEM(co->co_consts, i);
    Py_INCREF(c);
    PyTuple_SET_ITEM(consts.get(), i, c);
  }
  PyObject* out = consts ? py::code_with_consts(read.get(), consts.get()) : nullptr;
  if (PyErr_Occurred()) PyErr_Clear();  // (ours: none was set on entry)
  if (out) ++disk_stats().codes_loaded;
  return out;
}

bool disk_take(py::Frame* f, DiskState* st, const std::function<bool(const guards::GuardTree&)>& passes,
               capture::CaptureResult* out, std::shared_ptr<graph::Graph>* optimized, StoredCode* code) {
  std::vector<char> stale(st->blobs.size(), 0);
  auto drop = [&](size_t k, const std::string& why) {  // (never tried again, and rewritten without)
    st->tried[k] = stale[k] = 1;
    ++disk_stats().stale;
    ++disk_stats().stale_reasons[why];
  };
  bool found = false;
  py::NamedMemo memo;
  for (size_t k = 0; k < st->blobs.size() && !found; ++k) {
    if (st->tried[k]) continue;
    ByteReader r(st->blobs[k]);
    std::string why;
    std::shared_ptr<guards::GuardTree> tree;
    {
      trace::Span span("cache", "guards");
      if (r.u8() == kEntryFormat) tree = guards::GuardTree::load(r, &why);
      else why = "stale: another entry format";
    }
    if (!tree) {
      // Stale (a module's file changed) or malformed: dropped. Else it names what this process
      // holds otherwise now (a class patched, a module not imported yet): tried again later.
      if (why.rfind("stale", 0) == 0 || why.rfind("malformed", 0) == 0) drop(k, why);
      continue;
    }
    const bool adopts = tree->adoption_pending();
    {
      trace::Span span("cache", "adopt and check");
      if (!tree->adopt(f, &why) || !passes(*tree)) continue;  // (another frame may fit it)
    }
    trace::Span span("cache", "graph and plan");
    capture::CaptureResult res;
    res.ok = true;
    res.guards = tree;
    res.graph = std::make_shared<graph::Graph>();
    bool read = false;
    try {  // (a graph that reads but breaks an invariant raises: never a crash, never trusted)
      read = graph::load_graph(r, res.graph.get(), &why) && codegen::load_plan(r, &res.plan, &why);
    } catch (const std::exception& e) {
      why = std::string("malformed: ") + e.what();
    }
    if (!read) {
      if (PyErr_Occurred()) PyErr_Clear();
      drop(k, why);
      continue;
    }
    res.symbolic_dims.resize(r.count());
    for (graph::SymbolicDim& d : res.symbolic_dims) {
      d.input = static_cast<int>(r.svar());
      d.dim = static_cast<int>(r.svar());
      d.symbol = static_cast<int>(r.svar());
      d.hint = r.svar();
    }
    res.symbolic_attrs.resize(r.count());
    for (graph::SymbolicAttr& a : res.symbolic_attrs) {
      a.node = r.var();
      a.attr = std::string(r.str());
      a.entry = r.var();
      a.symbol = static_cast<int>(r.svar());
    }
    auto strings = [&](std::vector<std::string>* v) {
      v->resize(r.count());
      for (std::string& s : *v) s = std::string(r.str());
    };
    res.scalar_inputs.resize(r.count());
    for (int& i : res.scalar_inputs) i = static_cast<int>(r.svar());
    strings(&res.mutable_paths);
    strings(&res.dynamic_notes);
    strings(&res.effects);
    res.file = std::string(r.str());
    res.function = std::string(r.str());
    res.line = static_cast<int>(r.svar());
    res.ops_seen = static_cast<int>(r.svar());
    res.instructions = static_cast<int>(r.svar());
    std::shared_ptr<graph::Graph> opt;
    if (r.u8() == 1) {
      ByteReader gr(r.str());
      opt = std::make_shared<graph::Graph>();
      std::string opt_why;
      bool read = false;
      try {
        read = graph::load_graph(gr, opt.get(), &opt_why) && gr.at_end();
      } catch (const std::exception&) {
      }
      bool same_inputs = read && opt->inputs().size() == res.graph->inputs().size();
      for (size_t i = 0; same_inputs && i < opt->inputs().size(); ++i)
        same_inputs = opt->value(opt->inputs()[i]).meta == res.graph->value(res.graph->inputs()[i]).meta;
      if (!same_inputs || opt->outputs().size() != res.graph->outputs().size()) opt = nullptr;  // (the passes run)
    }
    StoredCode stored;
    if (r.u8() == 1) {
      stored.bytes = std::string(r.str());
      const uint64_t prefix = r.var(), at = r.var();
      if (prefix >= (uint64_t{1} << 30) || at >= (uint64_t{1} << 30)) stored.bytes.clear();  // (never fits)
      stored.prefix = static_cast<int>(prefix & 0x3fffffff);
      stored.runner = static_cast<int>(at & 0x3fffffff);
    }
    std::string backend;
    std::vector<FusedCode> kernels;
    const bool has_kernels = r.u8() == 1;
    if (has_kernels) {
      backend = std::string(r.str());
      kernels.resize(r.count());
      for (FusedCode& c : kernels) {
        c.program = std::string(r.str());
        c.mask = static_cast<uint32_t>(r.var());
        c.bytes = std::string(r.str());
      }
    }
    const size_t ninputs = res.graph->inputs().size();
    std::vector<char> loadable(res.guards->size());  // (a Context node has no object to load)
    for (int n = 0; n < res.guards->size(); ++n) loadable[n] = res.guards->node(n).access != guards::Access::Context;
    bool sane = r.ok() && r.at_end() && res.plan.input_nodes.size() == ninputs &&
                res.guards->roots_fit(py::frame_code(f)) &&
                codegen::plan_fits(res.plan, loadable, static_cast<int>(res.graph->outputs().size()),
                                   py::code_ncells(py::frame_code(f)) + py::code_nfrees(py::frame_code(f)));
    for (const graph::SymbolicDim& d : res.symbolic_dims)
      sane = sane && d.input >= 0 && static_cast<size_t>(d.input) < ninputs &&
             d.dim < static_cast<int>(res.graph->value(res.graph->inputs()[d.input]).meta.shape.size());
    for (const graph::SymbolicAttr& a : res.symbolic_attrs) sane = sane && a.node < res.graph->nodes().size();
    for (int i : res.scalar_inputs) sane = sane && i >= 0 && static_cast<size_t>(i) < ninputs;
    if (!sane) {
      drop(k, "malformed");
      continue;
    }
    // (the machine code of its fused kernels: loaded, not compiled, when the first launch asks)
    disk_stats().kernels_loaded += preload_fused_codes(backend, std::move(kernels));
    if (!has_kernels) stored.entry_without_kernels = st->blobs[k];
    st->tried[k] = !adopts;  // (one that binds identities may serve another instance of the model)
    *out = std::move(res);
    *optimized = std::move(opt);
    *code = std::move(stored);
    found = true;
    ++disk_stats().entries_loaded;
  }
  if (std::find(stale.begin(), stale.end(), 1) != stale.end()) {  // rewritten without them
    std::vector<std::string> keep;
    std::vector<char> tried;
    for (size_t k = 0; k < st->blobs.size(); ++k) {
      if (stale[k]) continue;
      keep.push_back(std::move(st->blobs[k]));
      tried.push_back(st->tried[k]);
    }
    st->blobs = std::move(keep);
    st->tried = std::move(tried);
    if (!st->path.empty() && write_artifact(*st)) ++disk_stats().entries_written;
  }
  return found;
}

void disk_add(DiskState* st, std::string blob, int limit) {
  if (st->path.empty() || blob.empty()) return;
  // (the same entry again: another instance of a model whose entry binds identities on load)
  for (const std::string& b : st->blobs)
    if (same_entry(b, blob)) return;
  st->blobs.push_back(std::move(blob));
  st->tried.push_back(1);
  while (static_cast<int>(st->blobs.size()) > std::max(limit, 1)) {
    st->blobs.erase(st->blobs.begin());
    st->tried.erase(st->tried.begin());
  }
  if (write_artifact(*st)) ++disk_stats().entries_written;
}

}  // namespace pj::runtime
