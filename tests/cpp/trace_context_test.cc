// The capture context (graph/trace_context.h): op calls reach this thread's tracer only, scopes
// nest and restore, and a tape's gradient() reports its sweep to the tracer.
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "graph/tape.h"
#include "graph/trace_context.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

// Counts what reaches it and runs each op for real (as if nobody traced).
struct CountingTracer : TraceContext {
  std::vector<std::string> ops;
  int sweeps_begun = 0, sweeps_ended = 0;
  size_t last_sweep_results = 0;

  Tensors record(const OpDef& op, const Tensors& in, const Attrs& attrs) override {
    ops.push_back(op.name);
    TraceScope for_real(nullptr);
    return call_op(op, in, attrs);
  }
  void sweep_observed(const SweepTrace* t) override {
    if (!t) {
      ++sweeps_begun;
      return;
    }
    ++sweeps_ended;
    last_sweep_results = t->results.size();
  }
};

TEST(TraceContext, OpsReachThisThreadsTracerOnly) {
  Tensor a = testing::iota({3}, DType::Float32), b = testing::iota({3}, DType::Float32);
  EXPECT_EQ(trace_context(), nullptr);
  CountingTracer tr;
  {
    TraceScope scope(&tr);
    EXPECT_EQ(trace_context(), &tr);
    EXPECT_EQ(call_op1("add", {a, b}).item_double(2), 4.0);
    EXPECT_EQ(tr.ops, std::vector<std::string>({"add"}));
    // Another thread, while this one traces: it runs its ops, and this tracer never sees them.
    TraceContext* seen_there = &tr;
    double product = 0;
    std::thread other([&] {
      seen_there = trace_context();
      product = call_op1("mul", {a, b}).item_double(2);
    });
    other.join();
    EXPECT_EQ(seen_there, nullptr);
    EXPECT_EQ(product, 4.0);
    EXPECT_EQ(tr.ops, std::vector<std::string>({"add"}));
  }
  EXPECT_EQ(trace_context(), nullptr);
  call_op1("neg", {a});
  EXPECT_EQ(tr.ops.size(), 1u);
}

TEST(TraceContext, ScopesNestAndRestoreTheOuterTracer) {
  Tensor x = testing::iota({2}, DType::Float32);
  CountingTracer outer, inner;
  TraceScope a(&outer);
  {
    TraceScope b(&inner);
    call_op1("neg", {x});
  }
  EXPECT_EQ(trace_context(), &outer);
  call_op1("abs", {x});
  EXPECT_EQ(inner.ops, std::vector<std::string>({"neg"}));
  EXPECT_EQ(outer.ops, std::vector<std::string>({"abs"}));
}

TEST(TraceContext, TapeReportsItsSweepToTheTracer) {
  Tensor x = testing::from_doubles({1.0, -2.0, 3.0}, DType::Float32);
  Tape tape;
  const int leaf = tape.watch(x);
  tape.start();
  Tensor y = call_op1("mul", {x, x});
  Tensor s = call_op1("sum", {y}, Attrs{{"axis", std::monostate{}}, {"keepdims", false}});
  tape.stop();
  CountingTracer tr;
  Tensors g;
  {
    TraceScope scope(&tr);
    g = tape.gradient({s}, {Tensor::scalar(1.0, DType::Float32)}, {leaf}, {Tensor::zeros(x.shape(), x.dtype())});
  }
  EXPECT_EQ(tr.sweeps_begun, 1);
  EXPECT_EQ(tr.sweeps_ended, 1);
  EXPECT_EQ(tr.last_sweep_results, 1u);
  EXPECT_FALSE(tr.ops.empty());  // the backward's ops went through the tracer too
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(testing::values(g[0]), std::vector<double>({2.0, -4.0, 6.0}));
  // Without a tracer the sweep reports to nobody (and still runs).
  Tape again;
  const int leaf2 = again.watch(x);
  again.start();
  Tensor s2 = call_op1("sum", {call_op1("mul", {x, x})}, Attrs{{"axis", std::monostate{}}, {"keepdims", false}});
  again.stop();
  Tensors g2 = again.gradient({s2}, {Tensor::scalar(1.0, DType::Float32)}, {leaf2}, {Tensor::zeros(x.shape(), x.dtype())});
  EXPECT_EQ(testing::values(g2[0]), testing::values(g[0]));
  EXPECT_EQ(tr.sweeps_ended, 1);
}

// A tracer that overrides only record() answers the other questions as "nothing known".
TEST(TraceContext, DefaultsKnowNothing) {
  CountingTracer tr;
  EXPECT_EQ(tr.contiguity(nullptr), -1);
  EXPECT_FALSE(tr.lift_scalar(nullptr, DType::Float32).has_value());
}

}  // namespace
}  // namespace pj
