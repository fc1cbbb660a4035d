// Batching (ops.vmap): a graph written for one example, turned into the graph that computes B
// examples at once. Each op has a batching rule in batching.cc that says how the op applies to
// values carrying a leading batch dimension: elementwise ops broadcast it, reductions, softmax and
// shape ops shift their axes by one, matmul aligns its batch dims, indexing keeps the batch axis;
// an op without a rule (a convolution, a random op) runs once per example on slices, and the
// results are stacked. The batched graph is fused and planned like any other.
#pragma once

#include <vector>

#include "graph/ir.h"

namespace pj::graph {

// `g` with inputs k where batched[k] carrying a leading dimension of size B (their metas in `g`
// are one example's). Every output carries the batch dimension first (an output no batched input
// reaches is broadcast to B copies). Raises pj::Error (ValueError) when B < 1.
Graph batch_graph(const Graph& g, const std::vector<bool>& batched, int64_t B);

// Of the last batch_graph call on this thread: how many nodes ran once per example (tests,
// explanations), and which outputs depend on a batched input.
int unrolled_nodes();
const std::vector<bool>& batched_outputs();

}  // namespace pj::graph
