// Graph passes: each is a small registered transformation selectable by name. The compiler runs a
// pipeline of them (default_pipeline()) between capture and the execution plan; after each, the
// caller may print the IR (PIJIT_LOGS=passes) or dump it (PIJIT_DUMP_DIR), and the golden tests in
// tests/cpp/passes_test.cc parse an IR text, run one pass and compare the text that comes out.
//
//   lower  rewrites ops into others that later passes see through: an inference batch_norm
//          (its statistics outputs unused) becomes batch_norm_coeffs + sub, mul, add with
//          per-channel operands, batch_norm's own arithmetic, which then fuses with a ReLU
//   fold   runs each node whose inputs are all constants once, at compile time, with the eager
//          kernel (so the value is the bits eager computes), and makes its outputs constants;
//          never impure or data-dependent nodes, nor one that raises (the launch raises then), nor
//          one whose result is much bigger than its inputs (a broadcast would only cost memory),
//          nor a view or what a view reads (constant outputs are copied: aliasing would be lost)
//   simplify  replaces a node by its operand where IEEE arithmetic guarantees the same bits:
//          x * 1, 1 * x, x / 1, x + (-0.0), (-0.0) + x, x - (+0.0) (0 for integers), cast to x's
//          own dtype, copy, reshape to x's own shape; never when x or the result is a graph
//          output, is read by a view (which would then alias x) or by an impure node (which may
//          write into it)
//   dce    drops nodes whose results are unused, never one that can raise or is impure
//   cse    merges nodes computing the same op on the same values with the same attributes
//          (never impure ones, and nothing is merged across an impure node, which may have
//          written in place into a value an earlier node read)
//   fuse_conv  turns a float32 conv2d and what follows it alone (a per-channel affine sub, mul,
//          add, a relu, a max_pool2d; each optional, at least one) into one conv2d_block node,
//          which keeps the activation in oneDNN's blocked layout (kernels/conv_block.h)
//   layout where a conv2d_block's result is read by one other conv2d_block alone (as its x) and
//          both fused kernels run in oneDNN's nChw16c, the value stays in that layout between
//          them (blocked_out / blocked_in): its bytes are not NCHW, which no other node sees
//   fuse_dense  turns a dense and a relu that alone reads its result into one dense node with
//          relu=True: the eager relu runs in place on the result right after the matmul
//   fuse   turns each connected group of float32 elementwise nodes of one shape into a
//          fused_elementwise node (kernels/fused.h): one loop, intermediates in registers
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace pj::graph {

struct Pass {
  std::string name;
  std::string doc;
  std::function<int(Graph&)> run;  // returns how many nodes it changed (0: nothing to do)
};

void register_pass(Pass p);
const Pass* find_pass(const std::string& name);  // nullptr when unknown
std::vector<std::string> pass_names();           // every registered pass, in registration order
std::vector<std::string> default_pipeline();     // what compiled graphs get

// Runs `passes` in order on `g`. `after` (may be empty) sees each pass's name, its change count and
// the graph it left. Raises ValueError naming an unknown pass.
void run_passes(Graph& g, const std::vector<std::string>& passes,
                const std::function<void(const std::string&, int, const Graph&)>& after = {});

// A pipeline from text: "dce,cse,fuse"; "none" or "" for no passes; "default".
std::vector<std::string> parse_pipeline(const std::string& text);

}  // namespace pj::graph
