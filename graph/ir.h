// The graph IR: a typed dataflow graph of ops from the single registry (graph/op.h).
//
// Values are numbered in creation order: graph inputs (fed by the caller, each named after the
// Python source it was loaded from, e.g. "self.fc.weight"), constants (tensors captured by
// reference) and node outputs. Nodes are kept in program order, which is also a valid execution
// order; impure ops (random numbers, in-place updates) rely on it. The text form (to_string) is
// stable and golden-tested: it is what dumps, `jit_stats` and explanations show.
//
//   graph(%0: Float32[2, 3] x, %1: Float32[4, 3] self._params['weight']) {
//     %2: Float32[2, 4] = matmul(%0, %1) transpose_b=True  # line 12
//     return (%2)
//   }
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/byte_io.h"
#include "graph/op.h"

namespace pj::graph {

enum class ValueKind { Input, Const, Node };

struct Value {
  ValueKind kind;
  TensorMeta meta;
  int index = 0;     // Input: position among inputs; Const: position among consts; Node: node id
  int output = 0;    // Node: which output of the node
  std::string name;  // Input: the source it is loaded from
  bool parameter = false;  // Input: a Parameter (weights): plans memoize what depends only on these
};

struct Node {
  const OpDef* op = nullptr;
  Attrs attrs;
  std::vector<int> inputs;   // value ids
  std::vector<int> outputs;  // value ids
  int line = 0;              // user source line that produced the node (0: unknown)
};

// A graph input's dim that capture left symbolic (dynamic shapes): the graph means the same for any
// size >= 2 there, and is planned anew per concrete size (runtime's DynamicPlans).
struct SymbolicDim {
  int input = 0;   // position among the graph's inputs
  int dim = 0;     // -1: the input is a Python int (a 0-d Int64 input) whose value is the symbol
  int symbol = 0;  // s<symbol> in guard text and logs
  int64_t hint = 0;  // dim -1: the value the graph was traced with
};

// An int attribute entry that is a symbol's value (dim -1 above): `x.reshape((n, -1))` with n a
// Python int that changes. Each plan writes the symbol's value there.
struct SymbolicAttr {
  size_t node = 0;
  std::string attr;
  size_t entry = 0;
  int symbol = 0;  // index into the SymbolicDim list's symbols (SymbolicDim::symbol)
};

class Graph {
 public:
  int add_input(const TensorMeta& meta, std::string name, bool parameter = false);
  int add_const(const Tensor& t);
  // Appends a node with outputs of the given metas; returns their value ids.
  std::vector<int> add_node(const OpDef& op, std::vector<int> inputs, Attrs attrs, const Metas& outs,
                            int line);
  void set_outputs(std::vector<int> outputs) { outputs_ = std::move(outputs); }
  // Outputs the rewritten code writes back into a Parameter input and uses nowhere else (capture
  // finds them: an ops.assign replayed by _C.write_back before any other effect). The plan may
  // compute such an output in the Parameter's own storage. Positions in outputs() and inputs(),
  // which every pass keeps.
  struct WriteBack {
    int output, input;
    bool operator==(const WriteBack& o) const { return output == o.output && input == o.input; }
  };
  void set_write_backs(std::vector<WriteBack> w) { write_backs_ = std::move(w); }
  const std::vector<WriteBack>& write_backs() const { return write_backs_; }

  // A point in the graph's growth (values are appended in order): how much a graph break keeps.
  struct Mark {
    size_t values = 0, nodes = 0, inputs = 0, consts = 0;
  };
  Mark mark() const { return {values_.size(), nodes_.size(), inputs_.size(), consts_.size()}; }

  // Room for that many values and nodes (a graph read back knows its size: no regrowth).
  void reserve(size_t values, size_t nodes) {
    values_.reserve(values);
    nodes_.reserve(nodes);
  }

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  const Tensors& consts() const { return consts_; }
  const Value& value(int id) const { return values_.at(id); }

  // Drops nodes whose outputs are never used and whose op is total (cannot raise). Returns how
  // many it dropped.
  int eliminate_dead_code();
  // Values are numbered canonically (inputs, constants, node outputs, in order), so the text of a
  // parsed graph prints back the same. Constants of up to 8 elements show their values.
  std::string to_string() const;
  // Whether some op draws random numbers or updates an input in place: running the graph twice
  // is not running it once (no eager rerun after a failure, no replay under a gradient tape).
  bool has_impure_op() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
  std::vector<WriteBack> write_backs_;
  Tensors consts_;
};

// The graph for Graphviz: inputs, constants, one box per node (op, attributes, output metas, source
// line), edges along values; for dumps (PIJIT_DUMP_DIR) and the HTML run report.
std::string to_dot(const Graph& g, const std::string& title);

// Reads Graph::to_string's text back (golden tests of passes). Constants without printed values
// are zeros. Raises pj::Error (ValueError) naming the line on malformed text or an unknown op;
// output metas are checked against each op's inference.
Graph parse_graph(const std::string& text);

// The graph's persistent form (graph/ir_io.cc; the compile cache): values with their metas and
// names, constants with their data, nodes by op name with their attributes and lines, outputs and
// write-backs (save_graph is false, with *why, for a constant in GPU memory).
// Values dead-code elimination left behind are not written (the ids are renumbered as
// with_input_metas renumbers them). load_graph rebuilds that numbering (an op name no op has, or malformed input, is a
// miss: false, with *why); the artifact's key fixes pijit's build, so metas are read, not inferred.
bool save_graph(const Graph& g, ByteWriter& w, std::string* why);
// One tensor meta in that form (shape, dtype, device, requires_grad); a bad dtype, device or rank
// fails the reader. Also the guard trees' (guards/guard_io.cc).
void put_meta(ByteWriter& w, const TensorMeta& m);
TensorMeta get_meta(ByteReader& r);
bool load_graph(ByteReader& r, Graph* g, std::string* why);

// The graph for other input metas (dynamic shapes: new sizes of its symbolic dims): every node's
// outputs inferred again; inputs keep their positions and outputs their order (values are
// renumbered: the values dead-code elimination left behind are dropped). Raises pj::Error where an
// op rejects them, as the eager op would.
Graph with_input_metas(const Graph& g, const Metas& inputs);
// The same, where `at(n, out, map)` may emit node n's part itself: it returns the node to go on
// with (n when it left node n to be copied); and `fill(n, attrs)` may change a copied node's
// attributes (a copy of them): true when it did.
Graph with_input_metas(const Graph& g, const Metas& inputs,
                       const std::function<size_t(size_t, Graph&, std::vector<int>&)>& at,
                       const std::function<bool(size_t, Attrs&)>& fill = nullptr);

// Per value: the index of the last node that reads it (nodes().size() for a graph output, -1 for
// none). execute drops a value there, so its storage serves the next nodes.
std::vector<int> last_uses(const Graph& g);

// Runs the graph on concrete inputs (in input order) with the eager kernels, one op at a time.
// A graph output that is a constant is returned as a fresh copy, as re-running the eager code
// would create a fresh tensor. Raises pj::Error when an input does not match its declared meta.
// `last_use`: last_uses(g), computed once by whoever runs the graph on every call.
Tensors execute(const Graph& g, const Tensors& inputs, const std::vector<int>& last_use);
inline Tensors execute(const Graph& g, const Tensors& inputs) { return execute(g, inputs, last_uses(g)); }

}  // namespace pj::graph
