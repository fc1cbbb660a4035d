#include "runtime/disk_cache.h"

#include <link.h>
#include <marshal.h>
#include <sys/stat.h>

#include <algorithm>

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

constexpr uint8_t kEntryFormat = 2;  // (2: the rewritten bytecode after the optimized graph)

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


void write_artifact(const DiskState& st) {
  ByteWriter w;
  w.var(st.blobs.size());
  for (const std::string& b : st.blobs) w.str(b);
  if (write_cache_entry(st.path, st.key, w.bytes(), /*durable=*/false)) ++disk_stats().entries_written;
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

// A new tuple with t's items, `item` at `at` (PyTuple_GetSlice of a whole tuple gives t itself).
PyObject* tuple_with(PyObject* t, Py_ssize_t at, PyObject* item) {
  const Py_ssize_t n = PyTuple_GET_SIZE(t);
  PyObject* out = PyTuple_New(n);
  for (Py_ssize_t i = 0; out && i < n; ++i) {
    PyObject* v = i == at ? item : PyTuple_GET_ITEM(t, i);
    Py_INCREF(v);
    PyTuple_SET_ITEM(out, i, v);
  }
  return out;
}

// The rewritten code's section: u8 1, marshal's bytes with `runner` written as None, its index; u8 0
// where there is none (a constant marshal cannot write, or the runner not exactly once).
void put_code(ByteWriter& w, PyObject* code, PyObject* runner) {
  PyObject* consts = code && PyCode_Check(code) ? reinterpret_cast<PyCodeObject*>(code)->co_consts : nullptr;
  int at = -1, seen = 0;
  for (Py_ssize_t i = 0; consts && PyTuple_Check(consts) && i < PyTuple_GET_SIZE(consts); ++i)
    if (PyTuple_GET_ITEM(consts, i) == runner) at = static_cast<int>(i), ++seen;
  py::Ref placeholder(seen == 1 ? tuple_with(consts, at, Py_None) : nullptr);
  py::Ref bytes;
  if (placeholder) {
    py::Ref stored(py::code_with_consts(code, placeholder.get()));
    bytes = py::Ref(stored ? PyMarshal_WriteObjectToString(stored.get(), kCodeMarshalVersion) : nullptr);
  }
  if (PyErr_Occurred()) PyErr_Clear();
  if (!bytes) {
    w.u8(0);
    return;
  }
  w.u8(1);
  w.str(std::string_view(PyBytes_AS_STRING(bytes.get()), static_cast<size_t>(PyBytes_GET_SIZE(bytes.get()))));
  w.var(static_cast<uint64_t>(at));
}

}  // namespace

void disk_finish(std::string* blob, const graph::Graph& optimized, PyObject* code, PyObject* runner) {
  if (blob->empty()) return;
  ByteWriter g, w;
  std::string why;
  if (graph::save_graph(optimized, g, &why)) {
    w.u8(1);
    w.str(g.bytes());  // (framed: one that does not read back is skipped, and the passes run)
  } else {
    w.u8(0);  // (none: the next process runs the passes again)
  }
  put_code(w, code, runner);
  *blob += w.bytes();
}

PyObject* disk_code(const StoredCode& code, PyObject* runner, PyCodeObject* original) {
  if (code.bytes.empty() || code.runner < 0) return nullptr;
  py::Ref read(PyMarshal_ReadObjectFromString(code.bytes.data(), static_cast<Py_ssize_t>(code.bytes.size())));
  auto* co = read && PyCode_Check(read.get()) ? reinterpret_cast<PyCodeObject*>(read.get()) : nullptr;
  // (the frame's signature, as emitting it keeps; and the placeholder where the runner goes)
  const int kinds = CO_VARARGS | CO_VARKEYWORDS | CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR;
  bool fits = co && co->co_argcount == original->co_argcount && co->co_kwonlyargcount == original->co_kwonlyargcount &&
              (co->co_flags & kinds) == (original->co_flags & kinds) && PyTuple_Check(co->co_consts) &&
              code.runner < PyTuple_GET_SIZE(co->co_consts) && PyTuple_GET_ITEM(co->co_consts, code.runner) == Py_None;
  py::Ref consts(fits ? tuple_with(co->co_consts, code.runner, runner) : nullptr);
  PyObject* out = consts ? py::code_with_consts(read.get(), consts.get()) : nullptr;
  if (PyErr_Occurred()) PyErr_Clear();
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
      const uint64_t at = r.var();
      stored.runner = at < (uint64_t{1} << 30) ? static_cast<int>(at) : -1;
    }
    const size_t ninputs = res.graph->inputs().size();
    bool sane = r.ok() && r.at_end() && res.plan.input_nodes.size() == ninputs &&
                res.guards->roots_fit(py::frame_code(f)) &&
                codegen::plan_fits(res.plan, res.guards->size(), static_cast<int>(res.graph->outputs().size()),
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
    if (!st->path.empty()) write_artifact(*st);
  }
  return found;
}

void disk_add(DiskState* st, std::string blob, int limit) {
  if (st->path.empty() || blob.empty()) return;
  // (the same entry again: another instance of a model whose entry binds identities on load)
  if (std::find(st->blobs.begin(), st->blobs.end(), blob) != st->blobs.end()) return;
  st->blobs.push_back(std::move(blob));
  st->tried.push_back(1);
  while (static_cast<int>(st->blobs.size()) > std::max(limit, 1)) {
    st->blobs.erase(st->blobs.begin());
    st->tried.erase(st->tried.begin());
  }
  write_artifact(*st);
}

}  // namespace pj::runtime
