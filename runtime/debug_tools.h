// The runtime's debugging switches and dumps (issue 15; docs/debugging.md is the user's guide):
//
//   PIJIT_DUMP_DIR=dir         per captured code object a folder dir/NNN_name_file_line/ with its
//                              bytecode (original, rewritten, resume functions), guards, the IR
//                              after each pass, the graph as Graphviz, the fused kernels' assembly
//                              (pijit/dump.py writes the Python half and dir/run.json at exit)
//   PIJIT_TRACE=out.json       the trace-event timeline (common/trace.h)
//   PIJIT_DEBUG_NO_CACHE=1     guards are never trusted: every call captures again
//   PIJIT_DEBUG_NO_DIRECT=1    graph entries run their rewritten bytecode, never a direct call
//   PIJIT_DEBUG_NO_FAST_GUARDS=1  every guard check walks the whole tree (no fast pass under the
//                              dicts' version tags: guards/guard_tree.h)
//   PIJIT_DEBUG_EAGER_GRAPH=1  graphs run node by node as eager ops (graph/plan.h)
//   PIJIT_TEST_ONLY_WRONG_RESULTS=mod:name
//                              test only: the graph of a matching code object adds 1 to its first
//                              floating output (how bisect's tests plant a wrong capture); named so
//                              nobody sets it by accident, and warns on stderr once when read
#pragma once

#include "py/pyport.h"  // first (Python.h)

#include <string>

#include "graph/ir.h"

namespace pj::runtime {

struct CodeState;

struct DebugSwitches {
  std::string dump_dir;  // empty: no dumps
  bool no_cache = false;
  bool no_direct = false;
  bool no_fast_guards = false;
  std::string fault;     // PIJIT_TEST_ONLY_WRONG_RESULTS's pattern, "module:name"
};
// The fault-injection switch's name (its value: "module:name", fnmatch patterns).
inline constexpr const char* kWrongResultsVar = "PIJIT_TEST_ONLY_WRONG_RESULTS";
const DebugSwitches& debug_switches();

// Whether PIJIT_TEST_ONLY_WRONG_RESULTS names this code object (module from its frame's globals).
bool test_fault(const std::string& module, PyCodeObject* co);

// The dump folder of `st`'s code object, created on first use; empty when dumps are off or the
// folder cannot be made (said once on stderr).
const std::string& dump_folder(CodeState* st);
// Writes `text` to folder/name (nothing when folder is empty).
void dump_file(const std::string& folder, const std::string& name, const std::string& text);
// The assembly of the fused kernels of a compiled graph, one block per fused node.
std::string graph_asm(const graph::Graph& g);
// The CUDA C++ the GPU backend generates for the graph's fused kernels (kernels/cuda/fused_cuda.h);
// empty without the backend or fused kernels. Dumped as entryK.kernels.cu.
std::string graph_cuda(const graph::Graph& g);

// Hands a new cache entry to pijit.dump (the Python half, registered with _C.set_dump_hook):
// hook(folder, entry_index, original_code, rewritten_code or None, [resume codes], guards, reason).
void dump_entry_hook(const std::string& folder, int entry, PyCodeObject* co, PyObject* rewritten,
                     const std::vector<PyCodeObject*>& resumes, const std::vector<std::string>& guards,
                     const std::string& reason);
PyObject* py_set_dump_hook(PyObject*, PyObject* hook);

}  // namespace pj::runtime
