// Graph passes and the execution plan: golden IR text per pass (parse, run one pass, compare the
// printed result), the parser's errors, and plans run against the op-by-op executor.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "graph/ir.h"
#include "graph/passes.h"
#include "graph/plan.h"
#include "kernels/conv.h"
#include "kernels/elementwise.h"
#include "test_util.h"

namespace pj::graph {
namespace {

std::string run_pass(const std::string& pass, const std::string& text) {
  Graph g = parse_graph(text);
  run_passes(g, {pass});
  return g.to_string();
}

TEST(IrText, ParsesWhatItPrints) {
  const char* text =
      "graph(%0: Float32[2, 3] x, %1: Float32[4, 3] self.fc.weight) {\n"
      "  %2: Float32[] = constant (1.5)\n"
      "  %3: Float32[2, 4] = dense(%0, %1)  # line 12\n"
      "  %4: Float32[2, 4] = add(%3, %2)\n"
      "  %5: Float32[2, 4] = clamp(%4) min=0.0, max=None\n"
      "  return (%5,)\n"
      "}\n";
  EXPECT_EQ(parse_graph(text).to_string(), text);
}

TEST(IrText, ErrorsNameTheLine) {
  auto error_of = [](const std::string& text) {
    try {
      parse_graph(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("graph(%0: Float32[2] x) {\n  %1: Float32[2] = frob(%0)\n  return (%1,)\n}\n").find("line 2: unknown op frob"),
            std::string::npos);
  EXPECT_NE(error_of("graph(%0: Float32[2] x) {\n  %1: Float32[2] = neg(%7)\n}\n").find("%7 is not defined"), std::string::npos);
  EXPECT_NE(error_of("graph(%0: Float32[2] x) {\n  %1: Float32[3] = neg(%0)\n}\n").find("differ from neg's inference"),
            std::string::npos);
}

TEST(Passes, CseMergesSameOpSameInputsNotAcrossWrites) {
  // The two adds become one once the exps are: %4 is used inside, %3 returned.
  EXPECT_EQ(run_pass("cse",
                     "graph(%0: Float32[3] x) {\n"
                     "  %1: Float32[3] = exp(%0)\n"
                     "  %2: Float32[3] = exp(%0)\n"
                     "  %3: Float32[3] = add(%1, %2)\n"
                     "  %4: Float32[3] = add(%2, %1)\n"
                     "  %5: Float32[3] = mul(%4, %0)\n"
                     "  return (%3, %5)\n"
                     "}\n"),
            "graph(%0: Float32[3] x) {\n"
            "  %1: Float32[3] = exp(%0)\n"
            "  %2: Float32[3] = add(%1, %1)\n"
            "  %3: Float32[3] = mul(%2, %0)\n"
            "  return (%2, %3)\n"
            "}\n");
}

TEST(Passes, CseKeepsTwoReturnedValuesTwoValues) {
  // Returned, the two adds are two tensors to the caller: writing into one must not change the
  // other (fuzz 7200434), so they stay two nodes; the exps below them still merge.
  EXPECT_EQ(run_pass("cse",
                     "graph(%0: Float32[3] x) {\n"
                     "  %1: Float32[3] = exp(%0)\n"
                     "  %2: Float32[3] = exp(%0)\n"
                     "  %3: Float32[3] = add(%1, %2)\n"
                     "  %4: Float32[3] = add(%2, %1)\n"
                     "  return (%3, %4)\n"
                     "}\n"),
            "graph(%0: Float32[3] x) {\n"
            "  %1: Float32[3] = exp(%0)\n"
            "  %2: Float32[3] = add(%1, %1)\n"
            "  %3: Float32[3] = add(%1, %1)\n"
            "  return (%2, %3)\n"
            "}\n");
}

TEST(Passes, CseNeverMergesImpureOpsNorAcrossThem) {
  // Two draws are two values; and an impure node (it may write in place) fences what came before.
  const char* text =
      "graph(%0: Float32[2] x) {\n"
      "  %1: Float32[2] = exp(%0)\n"
      "  %2: Float32[2] = rand() shape=(2,), dtype=None, seed=None\n"
      "  %3: Float32[2] = rand() shape=(2,), dtype=None, seed=None\n"
      "  %4: Float32[2] = exp(%0)\n"
      "  %5: Float32[2] = add(%1, %4)\n"
      "  return (%5, %2, %3)\n"
      "}\n";
  EXPECT_EQ(run_pass("cse", text), parse_graph(text).to_string());
}

TEST(Passes, DceKeepsOpsThatCanRaise) {
  EXPECT_EQ(run_pass("dce",
                     "graph(%0: Float32[3] x, %1: Int64[2] i) {\n"
                     "  %2: Float32[3] = exp(%0)\n"
                     "  %3: Float32[2] = gather(%0, %1) axis=0\n"
                     "  %4: Float32[3] = neg(%0)\n"
                     "  return (%4,)\n"
                     "}\n"),
            "graph(%0: Float32[3] x, %1: Int64[2] i) {\n"
            "  %2: Float32[2] = gather(%0, %1) axis=0\n"
            "  %3: Float32[3] = neg(%0)\n"
            "  return (%3,)\n"
            "}\n");
}

TEST(Passes, FuseMakesOneLoopOfAnElementwiseChain) {
  EXPECT_EQ(run_pass("fuse",
                     "graph(%0: Float32[4, 8] x, %1: Float32[8] b) {\n"
                     "  %2: Float32[] = constant (2.0)\n"
                     "  %3: Float32[4, 8] = add(%0, %1)  # line 3\n"
                     "  %4: Float32[4, 8] = mul(%3, %2)  # line 4\n"
                     "  %5: Float32[4, 8] = tanh(%4)  # line 5\n"
                     "  %6: Float32[4, 8] = sub(%5, %3)  # line 6\n"
                     "  return (%6, %4)\n"
                     "}\n"),
            "graph(%0: Float32[4, 8] x, %1: Float32[8] b) {\n"
            "  %2: Float32[] = constant (2.0)\n"
            "  %3: Float32[4, 8], %4: Float32[4, 8] = fused_elementwise(%0, %1, %2) program='in=3; r3=add(r0,r1); r4=mul(r3,r2); "
            "r5=tanh(r4); r6=sub(r5,r3); out=(r4,r6)'  # line 3\n"
            "  return (%4, %3)\n"
            "}\n");
}

TEST(Passes, FuseStopsAtOtherShapesDtypesAndOutsideReaders) {
  // The sum reads %3 between the two groups: %3's group cannot move below it, so the chain after
  // it is a loop of its own (the sum joins the first loop, which stores %3 for the second); the
  // Int64 op is not fused.
  EXPECT_EQ(run_pass("fuse",
                     "graph(%0: Float32[4] x, %1: Int64[4] i) {\n"
                     "  %2: Float32[4] = exp(%0)\n"
                     "  %3: Float32[4] = neg(%2)\n"
                     "  %4: Float32[] = sum(%3) axis=None, keepdims=False\n"
                     "  %5: Float32[4] = mul(%3, %4)\n"
                     "  %6: Float32[4] = relu(%5)\n"
                     "  %7: Int64[4] = neg(%1)\n"
                     "  %8: Int64[4] = abs(%7)\n"
                     "  return (%6, %8)\n"
                     "}\n"),
            "graph(%0: Float32[4] x, %1: Int64[4] i) {\n"
            "  %2: Float32[4], %3: Float32[] = fused_reduce(%0) program='in=1; r1=exp(r0); r2=neg(r1); out=(r2,r2)', "
            "reduce='sum', dim=0, keepdims=False\n"
            "  %4: Float32[4] = fused_elementwise(%2, %3) program='in=2; r2=mul(r0,r1); r3=relu(r2); out=(r3)'\n"
            "  %5: Int64[4] = neg(%1)\n"
            "  %6: Int64[4] = abs(%5)\n"
            "  return (%4, %6)\n"
            "}\n");
}

TEST(Passes, FuseTakesATrailingReductionIntoTheLoop) {
  // mean(%3) joins the loop of %2 and %3: %3 is never stored; %2 is (max reads it). One reduction
  // per loop: max(%2) stays a node; sum(%0) reduces an input, not a loop's value.
  EXPECT_EQ(run_pass("fuse",
                     "graph(%0: Float32[8, 64] x, %1: Float32[8, 1] m) {\n"
                     "  %2: Float32[8, 64] = sub(%0, %1)  # line 3\n"
                     "  %3: Float32[8, 64] = square(%2)  # line 3\n"
                     "  %4: Float32[8] = mean(%3) axis=(-1,), keepdims=False  # line 4\n"
                     "  %5: Float32[8, 1] = max(%2) axis=1, keepdims=True  # line 5\n"
                     "  %6: Float32[] = sum(%0) axis=None, keepdims=False  # line 6\n"
                     "  return (%4, %5, %6)\n"
                     "}\n"),
            "graph(%0: Float32[8, 64] x, %1: Float32[8, 1] m) {\n"
            "  %2: Float32[8, 64], %3: Float32[8] = fused_reduce(%0, %1) program='in=2; r2=sub(r0,r1); r3=square(r2); "
            "out=(r2,r3)', reduce='mean', dim=1, keepdims=False  # line 3\n"
            "  %4: Float32[8, 1] = max(%2) axis=1, keepdims=True  # line 5\n"
            "  %5: Float32[] = sum(%0) axis=None, keepdims=False  # line 6\n"
            "  return (%3, %4, %5)\n"
            "}\n");
  // One op and its reduction over everything, keeping the dims.
  EXPECT_EQ(run_pass("fuse",
                     "graph(%0: Float32[3, 5] x) {\n"
                     "  %1: Float32[3, 5] = exp(%0)\n"
                     "  %2: Float32[1, 1] = max(%1) axis=None, keepdims=True\n"
                     "  return (%2,)\n"
                     "}\n"),
            "graph(%0: Float32[3, 5] x) {\n"
            "  %1: Float32[1, 1] = fused_reduce(%0) program='in=1; r1=exp(r0); out=(r1)', reduce='max', dim=0, "
            "keepdims=True\n"
            "  return (%1,)\n"
            "}\n");
}

TEST(Passes, FuseConvertsInt32AndFloat64InputsAsItLoadsThem) {
  // Casts to Float32 at the loop's edge become typed inputs; an Int64 cast (no vector conversion)
  // and a cast from Float32 to another dtype stay nodes.
  EXPECT_EQ(run_pass("fuse",
                     "graph(%0: Int32[4, 8] i, %1: Float64[8] d, %2: Int64[4, 8] l) {\n"
                     "  %3: Float32[4, 8] = cast(%0) dtype=Float32\n"
                     "  %4: Float32[8] = cast(%1) dtype=Float32\n"
                     "  %5: Float32[4, 8] = mul(%3, %4)\n"
                     "  %6: Float32[4, 8] = cast(%2) dtype=Float32\n"
                     "  %7: Float32[4, 8] = add(%5, %6)\n"
                     "  %8: Float64[4, 8] = cast(%7) dtype=Float64\n"
                     "  return (%8, %3)\n"
                     "}\n"),
            "graph(%0: Int32[4, 8] i, %1: Float64[8] d, %2: Int64[4, 8] l) {\n"
            "  %3: Float32[8] = cast(%1) dtype=Float32\n"
            "  %4: Float32[4, 8] = cast(%2) dtype=Float32\n"
            "  %5: Float32[4, 8], %6: Float32[4, 8] = fused_elementwise(%0, %3, %4) program='in=3; r0:Int32; "
            "r3=mul(r0,r1); r4=add(r3,r2); out=(r0,r4)'\n"
            "  %7: Float64[4, 8] = cast(%6) dtype=Float64\n"
            "  return (%7, %5)\n"
            "}\n");
}

TEST(Passes, FuseLeavesReductionsTheLoopCannotDoAsTheEagerKernel) {
  // A leading axis, rows shorter than 32 (the eager kernel reduces across rows there), another
  // dtype, and a reduction an impure node separates from its loop (it must not move above it).
  const char* text =
      "graph(%0: Float32[40, 31] x, %1: Float32[4, 64] y) {\n"
      "  %2: Float32[40, 31] = exp(%0)\n"
      "  %3: Float32[31] = sum(%2) axis=0, keepdims=False\n"
      "  %4: Float32[40] = sum(%2) axis=1, keepdims=False\n"
      "  %5: Float32[4, 64] = neg(%1)\n"
      "  %6: Float32[4, 64], %7: Bool[4, 64] = dropout(%1) p=0.5, training=True, seed=None\n"
      "  %8: Float32[4] = sum(%5) axis=1, keepdims=False\n"
      "  %9: Float64[4, 64] = cast(%5) dtype=Float64\n"
      "  %10: Float64[4] = sum(%9) axis=1, keepdims=False\n"
      "  return (%3, %4, %6, %8, %10)\n"
      "}\n";
  EXPECT_EQ(run_pass("fuse", text), parse_graph(text).to_string());
}

TEST(Passes, FoldComputesConstantNodesOnceAndDropsWhatTheyRead) {
  EXPECT_EQ(run_pass("fold",
                     "graph(%0: Float32[3] x) {\n"
                     "  %1: Float32[3] = constant (1, 2, 3)\n"
                     "  %2: Float32[] = constant (2)\n"
                     "  %3: Float32[3] = mul(%1, %2)\n"
                     "  %4: Float32[3] = exp(%3)\n"
                     "  %5: Float32[3] = add(%0, %3)\n"
                     "  return (%5, %4)\n"
                     "}\n"),
            "graph(%0: Float32[3] x) {\n"
            "  %1: Float32[3] = constant (2.0, 4.0, 6.0)\n"
            "  %2: Float32[3] = constant (7.389056205749512, 54.598148345947266, 403.4288024902344)\n"
            "  %3: Float32[3] = add(%0, %1)\n"
            "  return (%3, %2)\n"
            "}\n");
}

TEST(Passes, FoldLeavesRandomRaisingAndBlownUpNodes) {
  const char* text =
      "graph(%0: Float32[2] x) {\n"
      "  %1: Float32[3] = constant (1, 2, 3)\n"
      "  %2: Int64[3] = constant (0, 1, 7)\n"
      "  %3: Float32[1024, 1024] = constant\n"
      "  %4: Float32[] = constant (1)\n"
      "  %5: Float32[2, 2] = rand() shape=(2, 2), dtype=Float32, seed=None\n"
      "  %6: Float32[3] = index_select(%1, %2) axis=0\n"
      "  %7: Float32[1024, 1024] = mul(%3, %4)\n"
      "  %8: Float32[64, 1024, 1024] = broadcast_to(%4) shape=(64, 1024, 1024)\n"
      "  return (%5, %6, %7, %8)\n"
      "}\n";
  const std::string once = run_pass("fold", text);
  EXPECT_NE(once.find("= rand()"), std::string::npos);
  EXPECT_NE(once.find("= broadcast_to("), std::string::npos);
  EXPECT_NE(once.find("= index_select("), std::string::npos);  // index 7 is out of range: raises at launch
  EXPECT_EQ(once.find("= mul("), std::string::npos) << once;  // as big as its inputs: folded
}

TEST(Passes, FoldKeepsViewsAndWhatTheyRead) {
  // x = arange(6); r = x.reshape(2, 3): both outputs share storage, as eager's do.
  const char* text =
      "graph() {\n"
      "  %0: Int64[6] = arange() start=0, stop=6, step=1, dtype=Int64\n"
      "  %1: Int64[2, 3] = reshape(%0) shape=(2, 3)\n"
      "  return (%0, %1)\n"
      "}\n";
  EXPECT_EQ(run_pass("fold", text), parse_graph(text).to_string());
}

TEST(Passes, SimplifyKeepsOnlyIdentitiesThatHoldBitForBit) {
  EXPECT_EQ(run_pass("simplify",
                     "graph(%0: Float32[3] x, %1: Int32[3] i) {\n"
                     "  %2: Float32[] = constant (1)\n"
                     "  %3: Float32[] = constant (-0)\n"
                     "  %4: Float32[] = constant (0)\n"
                     "  %5: Int32[] = constant (0)\n"
                     "  %6: Float32[3] = mul(%2, %0)\n"
                     "  %7: Float32[3] = add(%6, %3)\n"
                     "  %8: Float32[3] = add(%7, %4)\n"
                     "  %9: Float32[3] = sub(%7, %4)\n"
                     "  %10: Int32[3] = add(%1, %5)\n"
                     "  %11: Float32[3] = cast(%9) dtype=Float32\n"
                     "  %12: Float32[3] = div(%11, %2)\n"
                     "  %13: Float32[3] = add(%12, %8)\n"
                     "  %14: Int32[3] = mul(%10, %10)\n"
                     "  return (%13, %14)\n"
                     "}\n"),
            "graph(%0: Float32[3] x, %1: Int32[3] i) {\n"
            "  %2: Float32[] = constant (0.0)\n"
            "  %3: Float32[3] = add(%0, %2)\n"
            "  %4: Float32[3] = add(%0, %3)\n"
            "  %5: Int32[3] = mul(%1, %1)\n"
            "  return (%4, %5)\n"
            "}\n");
}

TEST(Passes, SimplifyNeverAliasesOutputsOrValuesWrittenInPlace) {
  const char* text =
      "graph(%0: Float32[4] x, %1: Float32[2, 2] m, %2: Float32[2] g, %3: Float32[2] b, %4: Float32[2] rm, %5: Float32[2] rv) {\n"
      "  %6: Float32[] = constant (1)\n"
      "  %7: Float32[4] = mul(%0, %6)\n"
      "  %8: Float32[2] = copy(%4)\n"
      "  %9: Float32[2, 2], %10: Float32[2], %11: Float32[2] = batch_norm(%1, %2, %3, %4, %5) training=True, momentum=0.9, eps=1e-05\n"
      "  %12: Float32[2] = mul(%8, %6)\n"
      "  return (%7, %9, %12)\n"
      "}\n";
  const std::string out = run_pass("simplify", text);
  EXPECT_NE(out.find("= copy("), std::string::npos) << out;  // rm is written by batch_norm
  EXPECT_NE(out.find("= mul(%0,"), std::string::npos) << out;  // its result is an output
  // (x / 1)[..., 0] returned: the view must not become a view of the input x (fuzz 2109269).
  const char* view_text =
      "graph(%0: Float32[3, 1] x) {\n"
      "  %1: Float32[] = constant (1)\n"
      "  %2: Float32[3, 1] = div(%0, %1)\n"
      "  %3: Float32[3, 1] = reshape(%2) shape=(3, 1)\n"
      "  return (%3,)\n"
      "}\n";
  EXPECT_EQ(run_pass("simplify", view_text), parse_graph(view_text).to_string());
}

TEST(Passes, LayoutKeepsBlockedActivationsOnlyBetweenBlocksThatAloneReadThem) {
  // %4 -> %5 is kept in nChw16c; %5 has two readers and %6 is returned: they stay NCHW.
  const std::string conv = " stride=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), groups=1, bias=False, affine=False, relu=True";
  const std::string head =
      "graph(%0: Float32[2, 16, 8, 8] x, %1: Float32[32, 16, 3, 3] w1, %2: Float32[32, 32, 3, 3] w2) {\n";
  auto text = [&](const std::string& a4, const std::string& a5) {
    return head + "  %3: Float32[2, 32, 8, 8] = conv2d_block(%0, %1)" + conv + a4 + "\n" +
           "  %4: Float32[2, 32, 8, 8] = conv2d_block(%3, %2)" + conv + a5 + "\n" +
           "  %5: Float32[2, 32, 8, 8] = conv2d_block(%4, %2)" + conv + "\n" +
           "  %6: Float32[2, 32, 8, 8] = conv2d_block(%4, %2)" + conv + "\n" +
           "  %7: Float32[2, 32, 8, 8] = conv2d_block(%5, %2)" + conv + "\n" +
           "  return (%5, %6, %7)\n}\n";
  };
  Conv2dParams p;
  p.pad[0] = p.pad[1] = p.pad[2] = p.pad[3] = 1;
  const Shape act{2, 32, 8, 8};
  const bool blocked_here = conv2d_dst_is_nchw16c(act, {2, 16, 8, 8}, {32, 16, 3, 3}, p, false) &&
                            conv2d_src_is_nchw16c(act, act, {32, 32, 3, 3}, p, false);
  if (!blocked_here) {  // oneDNN has no nChw16c convs on this CPU: nothing to keep
    EXPECT_EQ(run_pass("layout", text("", "")), text("", ""));
    return;
  }
  EXPECT_EQ(run_pass("layout", text("", "")), text(", blocked_out=True", ", blocked_in=True"));
}

TEST(Passes, FuseDenseTakesAReluOnlyWhenItAloneReadsTheResult) {
  // %3 -> %4 fuses; %5 is also returned and %6 is read twice: their relus stay nodes.
  EXPECT_EQ(run_pass("fuse_dense",
                     "graph(%0: Float32[2, 4] x, %1: Float32[4, 4] w) {\n"
                     "  %2: Float32[2, 4] = dense(%0, %1)\n"
                     "  %3: Float32[2, 4] = relu(%2)  # line 3\n"
                     "  %4: Float32[2, 4] = dense(%3, %1)\n"
                     "  %5: Float32[2, 4] = relu(%4)\n"
                     "  %6: Float32[2, 4] = dense(%5, %1)\n"
                     "  %7: Float32[2, 4] = relu(%6)\n"
                     "  %8: Float32[2, 4] = add(%7, %6)\n"
                     "  return (%8, %4)\n"
                     "}\n"),
            "graph(%0: Float32[2, 4] x, %1: Float32[4, 4] w) {\n"
            "  %2: Float32[2, 4] = dense(%0, %1) relu=True\n"
            "  %3: Float32[2, 4] = dense(%2, %1)\n"
            "  %4: Float32[2, 4] = relu(%3)\n"
            "  %5: Float32[2, 4] = dense(%4, %1)\n"
            "  %6: Float32[2, 4] = relu(%5)\n"
            "  %7: Float32[2, 4] = add(%6, %5)\n"
            "  return (%7, %3)\n"
            "}\n");
}

TEST(Passes, DenseWithReluIsTheOpsBitForBit) {
  // NaN stays NaN, -0.0 and negatives become +0 (numpy's relu, not oneDNN's post-op)
  Tensor x = testing::random({3, 5}, DType::Float32, 21), w = testing::random({4, 5}, DType::Float32, 22);
  testing::set_item(x, 2, NAN);
  testing::set_item(w, 7, -INFINITY);
  Tensor want = call_op1("relu", {call_op1("dense", {x, w})});
  Tensor got = call_op1("dense", {x, w}, {{"relu", true}});
  ASSERT_EQ(got.numel(), want.numel());
  EXPECT_EQ(std::memcmp(got.contiguous().raw_data(), want.contiguous().raw_data(), 4 * want.numel()), 0);
  Graph g = parse_graph(
      "graph(%0: Float32[3, 5] x, %1: Float32[4, 5] w) {\n"
      "  %2: Float32[3, 4] = dense(%0, %1)\n"
      "  %3: Float32[3, 4] = relu(%2)\n"
      "  return (%3,)\n"
      "}\n");
  run_passes(g, default_pipeline());
  EXPECT_NE(g.to_string().find("relu=True"), std::string::npos) << g.to_string();
  Tensor planned = ExecPlan(std::make_shared<Graph>(g)).run({x, w})[0];
  EXPECT_EQ(std::memcmp(planned.contiguous().raw_data(), want.contiguous().raw_data(), 4 * want.numel()), 0);
}

TEST(Passes, PipelineNamesAreChecked) {
  EXPECT_EQ(parse_pipeline("dce,fuse"), (std::vector<std::string>{"dce", "fuse"}));
  EXPECT_TRUE(parse_pipeline("none").empty());
  EXPECT_EQ(parse_pipeline("default"), default_pipeline());
  try {
    parse_pipeline("dce,fusion");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown graph pass 'fusion' (known: lower, fold, simplify, dce, cse, fuse_conv, layout, fuse_dense, fuse)"), std::string::npos);
  }
}

// ---- execution plans --------------------------------------------------------------------------

Tensors inputs_for(const Graph& g, unsigned seed) {
  Tensors in;
  for (int v : g.inputs()) in.push_back(testing::random(g.value(v).meta.shape, g.value(v).meta.dtype, seed++));
  return in;
}

void expect_same(const Tensors& a, const Tensors& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].shape(), b[k].shape());
    for (int64_t i = 0; i < a[k].numel(); ++i) ASSERT_EQ(a[k].item_double(i), b[k].item_double(i)) << "output " << k << " element " << i;
  }
}

const char* kChain =
    "graph(%0: Float32[64, 32] x, %1: Float32[32] b) {\n"
    "  %2: Float32[64, 32] = add(%0, %1)\n"
    "  %3: Float32[64, 32] = relu(%2)\n"
    "  %4: Float32[32, 64] = transpose(%3) perm=(1, 0)\n"
    "  %5: Float32[32, 64] = exp(%4)\n"
    "  %6: Float32[32, 64] = mul(%5, %5)\n"
    "  %7: Float32[32, 64] = neg(%6)\n"
    "  %8: Float32[32] = sum(%7) axis=(1,), keepdims=False\n"
    "  %9: Float32[32] = add(%8, %1)\n"
    "  return (%9, %4)\n"
    "}\n";

TEST(Plan, MatchesTheOpByOpExecutorWithAndWithoutPasses) {
  for (const char* pipeline : {"none", "default"}) {
    auto g = std::make_shared<Graph>(parse_graph(kChain));
    run_passes(*g, parse_pipeline(pipeline));
    ExecPlan plan(g);
    Graph ref = parse_graph(kChain);
    Tensors in = inputs_for(ref, 3);
    expect_same(plan.run(in), execute(ref, in));
    expect_same(plan.run(in), execute(ref, in));  // the arena is reused: same results again
  }
}

TEST(Plan, IntermediatesShareTheArenaAndOutputsAreFresh) {
  auto g = std::make_shared<Graph>(parse_graph(kChain));
  ExecPlan plan(g);
  // %3 is viewed by a returned transpose: fresh storage; %5 -> %6 -> %7 reuse one buffer in place.
  EXPECT_EQ(plan.num_inplace(), 2);
  EXPECT_LE(plan.arena_bytes(), 2u * 64 * 32 * 4 + 64 * 4 + 256);
  Tensors in = inputs_for(*g, 5);
  Tensors a = plan.run(in), b = plan.run(in);
  EXPECT_NE(a[0].storage(), b[0].storage());  // each call's outputs are the caller's
  EXPECT_NE(a[1].storage(), b[1].storage());
  EXPECT_EQ(plan.describe().find("arena "), 0u);
}

TEST(IrText, ParsesWriteBacks) {
  const char* text =
      "graph(%0: Float32[3] w, %1: Float32[3] x) {\n"
      "  %2: Float32[3] = sub(%0, %1)\n"
      "  %3: Float32[] = sum(%1) axis=None, keepdims=False\n"
      "  return (%3, %2)  # writes back %2 -> %0\n"
      "}\n";
  Graph g = parse_graph(text);
  ASSERT_EQ(g.write_backs().size(), 1u);
  EXPECT_EQ(g.write_backs()[0], (Graph::WriteBack{1, 0}));
  EXPECT_EQ(g.to_string(), text);
  run_passes(g, default_pipeline());  // every pass keeps them
  EXPECT_EQ(g.write_backs().size(), 1u);
}

// w' = w - x written back into Parameter w; `tail` (an op name, or empty) reads the new value after.
std::shared_ptr<Graph> update_graph(const std::string& tail, bool read_w_after) {
  auto g = std::make_shared<Graph>();
  const TensorMeta m{{4}, DType::Float32};
  const int w = g->add_input(m, "w", /*parameter=*/true), x = g->add_input(m, "x");
  const int nw = g->add_node(get_op("sub"), {w, x}, Attrs(), {m}, 1)[0];
  std::vector<int> outs = {nw};
  if (!tail.empty()) outs.push_back(g->add_node(get_op(tail), {nw, x}, Attrs(), {m}, 2)[0]);
  if (read_w_after) outs.push_back(g->add_node(get_op("mul"), {w, x}, Attrs(), {m}, 3)[0]);
  g->set_outputs(outs);
  g->set_write_backs({{0, 0}});
  return g;
}

TEST(Plan, WritesAnAssignedParameterInItsOwnStorage) {
  ExecPlan plan(update_graph("add", false));
  EXPECT_EQ(plan.num_aliased(), 1);
  EXPECT_NE(plan.describe().find("1 written in their Parameter"), std::string::npos) << plan.describe();
  Tensor w = testing::random({4}, DType::Float32, 1), x = testing::random({4}, DType::Float32, 2);
  Tensor want = Tensor::empty({4}, DType::Float32);
  binary_into(BinaryOp::sub, want, w, x);
  const uint64_t version = w.storage()->version();
  Tensors out = plan.run({w, x});
  EXPECT_TRUE(out[0].same_storage(w));
  EXPECT_EQ(0, std::memcmp(w.raw_data(), want.raw_data(), w.nbytes()));
  EXPECT_GT(w.storage()->version(), version);  // reordered copies of the old bytes are stale
  // The same storage as another input: fresh output, w untouched.
  Tensor w2 = testing::random({4}, DType::Float32, 3), before = w2.clone();
  out = plan.run({w2, w2});
  EXPECT_FALSE(out[0].same_storage(w2));
  EXPECT_EQ(0, std::memcmp(w2.raw_data(), before.raw_data(), w2.nbytes()));
}

TEST(Plan, KeepsAnAssignedParameterWhereItIsReadAfterOrAnOpMayRaise) {
  EXPECT_EQ(ExecPlan(update_graph("", true)).num_aliased(), 0);  // w read after its update
  ASSERT_FALSE(get_op("pow").total);  // (an integer power raises on a negative exponent)
  EXPECT_EQ(ExecPlan(update_graph("pow", false)).num_aliased(), 0);
  EXPECT_EQ(ExecPlan(update_graph("add", false)).num_aliased(), 1);
}

// Launches share one arena block, one at a time: plans of two graphs launched from four threads
// at once (the others take arenas of their own) give each launch the results it gives alone.
TEST(Plan, ConcurrentLaunchesOfPlansSharingTheArenaBlock) {
  auto g1 = std::make_shared<Graph>(parse_graph(kChain));
  auto g2 = std::make_shared<Graph>(*g1);
  g2->set_outputs({g2->outputs()[0]});
  ExecPlan p1(g1), p2(g2);
  std::vector<Tensors> in;
  std::vector<Tensor> want1, want2;
  for (unsigned k = 0; k < 8; ++k) {
    in.push_back(inputs_for(*g1, 40 + k));
    want1.push_back(p1.run(in.back())[0]);
    want2.push_back(p2.run(in.back())[0]);
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 300; ++r) {
        const size_t k = static_cast<size_t>(r + t) % in.size();
        const Tensor a = (r % 2 ? p1 : p2).run(in[k])[0];
        const Tensor& w = r % 2 ? want1[k] : want2[k];
        if (std::memcmp(a.raw_data(), w.raw_data(), w.nbytes()) != 0) ++wrong;
      }
    });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Plan, RejectsInputsOfAnotherMeta) {
  auto g = std::make_shared<Graph>(parse_graph(kChain));
  ExecPlan plan(g);
  Tensors in = inputs_for(*g, 1);
  in[1] = testing::random({31}, DType::Float32, 1);
  try {
    plan.run(in);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph input b expected Float32[32], got Float32[31]"), std::string::npos);
  }
  in[1] = testing::random({32}, DType::Float32, 1);
  EXPECT_EQ(plan.run(in).size(), 2u);  // and still runs after the error (the arena came back)
}

}  // namespace
}  // namespace pj::graph
