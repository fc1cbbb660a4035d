// kernels/conv_block.h: the blocked-layout run of conv2d -> affine -> relu -> max pool gives the
// bits of the ops run one by one (NaN, infinities and -0.0 among the inputs), for each subset of
// steps; and it is taken wherever conv2d writes nChw16c.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/conv_block.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

std::vector<uint32_t> bit_patterns(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<uint32_t> r(c.numel());
  std::memcpy(r.data(), c.raw_data(), r.size() * 4);
  return r;
}

TEST(ConvBlock, BlockedRunEqualsTheOpsBitForBit) {
  const int64_t N = 2, C = 16, OC = 32, H = 10;
  Tensor x = testing::random({N, C, H, H}, DType::Float32, 1);
  const float specials[] = {NAN, INFINITY, -INFINITY, -0.f, 1e-40f};
  for (int i = 0; i < 5; ++i) testing::set_item(x, 37 * i + 3, specials[i]);
  Tensor w = testing::random({OC, C, 3, 3}, DType::Float32, 2), b = testing::random({OC}, DType::Float32, 3);
  Tensor m = testing::random({OC, 1, 1}, DType::Float32, 4), a = testing::random({OC, 1, 1}, DType::Float32, 5);
  Tensor sh = testing::random({OC, 1, 1}, DType::Float32, 6);
  const Attrs conv_attrs{{"stride", int64_t{1}}, {"padding", int64_t{1}}};
  const Attrs pool_attrs{{"kernel_size", int64_t{2}}, {"stride", int64_t{2}}};
  for (int steps = 0; steps < 8; ++steps) {
    const bool affine = steps & 1, relu = steps & 2, pool = steps & 4;
    Tensor want = call_op1("conv2d", {x, w, b}, conv_attrs);
    ConvBlockSpec s;
    s.x = x.shape();
    s.w = w.shape();
    s.conv_out = want.shape();
    s.conv.pad[0] = s.conv.pad[1] = s.conv.pad[2] = s.conv.pad[3] = 1;
    s.bias = true;
    s.affine = affine;
    s.relu = relu;
    if (affine) want = call_op1("add", {call_op1("mul", {call_op1("sub", {want, m}), a}), sh});
    if (relu) want = call_op1("relu", {want});
    if (pool) {
      want = call_op1("max_pool2d", {want}, pool_attrs);
      Pool2dParams p;
      p.kernel[0] = p.kernel[1] = p.stride[0] = p.stride[1] = 2;
      s.pool = p;
    }
    s.out = want.shape();
    if (!conv2d_dst_is_nchw16c(s.conv_out, s.x, s.w, s.conv, true))
      GTEST_SKIP() << "oneDNN writes no nChw16c for this conv on this CPU: conv2d_block runs op by op here";
    std::shared_ptr<const ConvBlockPlan> plan = conv_block_plan(s);
    ASSERT_NE(plan, nullptr) << "steps " << steps;
    Tensor got = Tensor::empty(s.out, DType::Float32);
    conv_block_run(*plan, got, x, w, b, affine ? m : Tensor(), affine ? a : Tensor(), affine ? sh : Tensor());
    EXPECT_EQ(bit_patterns(got), bit_patterns(want)) << "affine " << affine << " relu " << relu << " pool " << pool;
  }
}

}  // namespace
}  // namespace pj
