// The persistent compile cache: what capture found for a code object, kept on disk so that a later
// process running the same program skips capture.
//
// One artifact per code object, <cache_root()>/graphs/<SHA-256 of its key>.pjc (common/files.h: a
// private folder, a header naming the key's hash, the body's hash checked on every read, atomic
// writes). The key is the code object's marshal bytes and module, pijit's build (its extension's
// size and mtime), the Python version, the fused kernels' ISA, oneDNN's version and the jit options.
// The body holds the code's graph entries (up to recompile_limit), each its guard tree, graph,
// frame plan and dynamic-shape facts, every object written portably (py/portable.h), then the graph
// after the passes and the rewritten bytecode where they have a persistent form.
//
// A load never trusts an entry: each object it names must resolve again (a module file with another
// stamp, a class attribute or a pijit namespace that differs: the entry is stale, dropped, and the
// artifact rewritten without it), and its guards must pass on the frame, as any entry's do. The
// entry is then compiled as a fresh capture's would be (its kernels prepared; the passes and the
// bytecode taken from the entry where it holds them, made again otherwise).
// Entries with a graph break, constants captured by reference, or an object with no portable form
// are not written (disk_stats().refusals says why). Off under stress modes, for the code pijit
// makes (resume functions, loop bodies), with PIJIT_CACHE_DIR="" or MS_COMPILER_CACHE_ENABLE=0.
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "capture/simulator.h"
#include "kernels/fused.h"

namespace pj::runtime {

// A code object's artifact, as this process knows it (CodeState::disk).
struct DiskState {
  bool read = false;  // disk_read ran
  std::string key, path;  // path "": no disk cache for this code
  std::vector<std::string> blobs;  // the entries, oldest first
  std::vector<char> tried;         // per blob: taken already (it is an entry now, or it was stale);
                                   // one that binds identities on load may be taken again
};

struct DiskStats {
  int64_t artifacts_read = 0;  // files found valid for their key
  int64_t entries_loaded = 0;  // entries built from disk
  int64_t codes_loaded = 0;    // ... whose rewritten bytecode came from disk too
  int64_t kernels_loaded = 0;  // fused kernels' machine code read with them
  int64_t kernels_written = 0; // entries given their kernels' code after a first launch
  int64_t entries_written = 0;  // artifact writes for entries added or dropped
  int64_t stale = 0;           // entries dropped: an object they name differs here
  int64_t rejected = 0;        // files ignored: unreadable, corrupt, truncated, another key
  std::map<std::string, int64_t> refusals;  // entries not written, by reason
  std::map<std::string, int64_t> stale_reasons;  // entries dropped, by what differed
};
DiskStats& disk_stats();

// The folder artifacts live in ("" when the cache is off: no root, or a folder that is not private).
std::string disk_cache_folder();

// Reads co's artifact once (its key then names it). Does nothing when st->disk.read.
void disk_read(PyCodeObject* co, DiskState* st, const std::string& module, const std::string& options);
// The first entry not tried yet whose guards `passes` on the frame (after binding its adopted
// identities to the frame's objects), as a capture result; false when none. Stale entries are
// dropped from the artifact (rewritten at once).
// *optimized: the graph after the passes, as the capturing process's compile left it; *code: its
// rewritten bytecode (StoredCode::bytes "" when the entry holds none).
struct StoredCode {
  std::string bytes;  // marshal's: the frame's own constants (a prefix) and the graph runner as None
  int prefix = 0;     // how many of the constants are the frame's code's
  int runner = -1;    // the runner's index
  std::string entry_without_kernels;  // the entry as stored, when it holds no kernels' code yet
};
bool disk_take(py::Frame* f, DiskState* st, const std::function<bool(const guards::GuardTree&)>& passes,
               capture::CaptureResult* r, std::shared_ptr<graph::Graph>* optimized, StoredCode* code);
// The stored bytecode with `runner` in its place, for the frame's code `original`: a new code object,
// or nullptr (no Python error left) when it does not read back as one that fits.
PyObject* disk_code(const StoredCode& code, PyObject* runner, PyCodeObject* original);
// A captured entry's persistent form, or "" with the reason counted in disk_stats().refusals.
// Written before compiling (the passes work on a copy, but capture's graph is what is kept);
// disk_finish then appends the graph the passes made and the bytecode `code` emitted for
// `original`, each where it has a persistent form (the code's: its constants the original's, the
// graph `runner` and constants marshal writes by value).
std::string disk_blob(const capture::CaptureResult& r);
void disk_finish(std::string* blob, const graph::Graph& optimized, PyObject* code, PyObject* runner,
                 PyCodeObject* original);
// Adds the blob to the artifact (the oldest beyond `limit` dropped) and writes it; a blob the
// artifact holds already changes nothing.
void disk_add(DiskState* st, std::string blob, int limit);
// After the first launch of the entry disk_finish made `blob` of: the machine code of the fused
// kernels it ran (kernels/fused.h FusedCode), added to that entry and written. Nothing when the
// artifact no longer holds it.
void disk_add_kernels(DiskState* st, const std::string& blob, const std::vector<FusedCode>& codes);

}  // namespace pj::runtime
