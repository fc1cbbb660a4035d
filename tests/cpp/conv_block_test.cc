// kernels/conv_block.h: the blocked-layout run of conv2d -> affine -> relu -> max pool gives the
// bits of the ops run one by one (NaN, infinities and -0.0 among the inputs), for each subset of
// steps; and it is taken wherever conv2d writes nChw16c. Two blocks that hand each other the
// activation in nChw16c (blocked_out / blocked_in, the layout pass) give the same bits as well, by
// the fused kernels and by the op-by-op path.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "graph/ops/nn_params.h"
#include "kernels/conv_block.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

TensorMeta meta(const Tensor& t) { return TensorMeta{t.shape(), t.dtype()}; }

std::vector<uint32_t> bit_patterns(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<uint32_t> r(c.numel());
  std::memcpy(r.data(), c.raw_data(), r.size() * 4);
  return r;
}

// The spec of a block over a padding-1 conv with bias of x and w, writing conv_out.
ConvBlockSpec padded_conv_spec(const Tensor& x, const Tensor& w, const Shape& conv_out) {
  ConvBlockSpec s;
  s.x = x.shape();
  s.w = w.shape();
  s.conv_out = conv_out;
  s.conv.pad[0] = s.conv.pad[1] = s.conv.pad[2] = s.conv.pad[3] = 1;
  s.bias = true;
  return s;
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
    ConvBlockSpec s = padded_conv_spec(x, w, want.shape());
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

// Pools whose windows tile the plane run max_pool2d's own kernel in nChw16c inside the block: other
// tiles than 2x2 (a row and a column uncovered), into NCHW and into nChw16c (blocked_out), give
// max_pool2d's bits, NaN included.
TEST(ConvBlock, TiledPoolsOfAnyShapeEqualMaxPool2dBitForBit) {
  const int64_t N = 2, C = 16, OC = 32, H = 10;
  Tensor x = testing::random({N, C, H, H}, DType::Float32, 21);
  for (int i = 0; i < 6; ++i) testing::set_item(x, 131 * i + 17, NAN);
  Tensor w = testing::random({OC, C, 3, 3}, DType::Float32, 22), b = testing::random({OC}, DType::Float32, 23);
  const Attrs conv_attrs{{"stride", int64_t{1}}, {"padding", int64_t{1}}};
  const Tensor conv = call_op1("conv2d", {x, w, b}, conv_attrs);
  for (const std::pair<int64_t, int64_t>& k : {std::make_pair<int64_t, int64_t>(3, 3), {2, 3}, {1, 2}})
    for (bool blocked_out : {false, true}) {
      Tensor want = call_op1("max_pool2d", {call_op1("relu", {conv})},
                             {{"kernel_size", IntList{k.first, k.second}}, {"stride", IntList{k.first, k.second}}});
      ConvBlockSpec s = padded_conv_spec(x, w, conv.shape());
      s.relu = true;
      Pool2dParams p;
      p.kernel[0] = p.stride[0] = k.first;
      p.kernel[1] = p.stride[1] = k.second;
      s.pool = p;
      s.out = want.shape();
      s.blocked_out = blocked_out;
      if (!conv2d_dst_is_nchw16c(s.conv_out, s.x, s.w, s.conv, true))
        GTEST_SKIP() << "oneDNN writes no nChw16c for this conv on this CPU: conv2d_block runs op by op here";
      std::shared_ptr<const ConvBlockPlan> plan = conv_block_plan(s);
      ASSERT_NE(plan, nullptr);
      Tensor got = Tensor::empty(s.out, DType::Float32);
      conv_block_run(*plan, got, x, w, b, Tensor(), Tensor(), Tensor());
      if (blocked_out) want = nchw_to_nchw16c(want);
      EXPECT_EQ(bit_patterns(got), bit_patterns(want)) << k.first << "x" << k.second << " blocked_out " << blocked_out;
      bool nan = false;
      for (int64_t i = 0; i < want.numel(); ++i) nan = nan || std::isnan(want.item_double(i));
      EXPECT_TRUE(nan) << "NaN reaches the pooled result";
    }
}

// Pools whose windows overlap or pad run oneDNN's pooling in the block, whose maximum drops NaN and
// gives -FLT_MAX for a window of -inf: a block whose pooled values hold NaN or an infinity is pooled
// by max_pool2d instead, so it still gives the ops' bits, found by the affine/relu pass or, without
// those, by a scan; into NCHW and nChw16c.
TEST(ConvBlock, OneDnnPoolsGiveMaxPool2dsBitsWithNaNAndInfinities) {
  const int64_t N = 2, C = 16, OC = 32, H = 10;
  Tensor x = testing::random({N, C, H, H}, DType::Float32, 41);
  Tensor w = testing::random({OC, C, 3, 3}, DType::Float32, 42), b = testing::random({OC}, DType::Float32, 43);
  testing::set_item(b, 5, -INFINITY);  // channel 5: every value -inf, every window of it -inf
  Tensor m = testing::random({OC, 1, 1}, DType::Float32, 44), a = testing::random({OC, 1, 1}, DType::Float32, 45);
  Tensor sh = testing::random({OC, 1, 1}, DType::Float32, 46);
  const Attrs conv_attrs{{"stride", int64_t{1}}, {"padding", int64_t{1}}};
  const Attrs pool_attrs{{"kernel_size", int64_t{3}}, {"stride", int64_t{2}}, {"padding", int64_t{1}}};
  Pool2dParams p;
  p.kernel[0] = p.kernel[1] = 3;
  p.stride[0] = p.stride[1] = 2;
  p.pad[0] = p.pad[1] = 1;
  for (bool with_nan : {false, true}) {
    Tensor xs = x.contiguous();
    if (with_nan) {
      xs = Tensor::empty(x.shape(), DType::Float32);
      copy_into(xs, x);
      testing::set_item(xs, 3 * H * H + 4 * H + 4, NAN);
      testing::set_item(xs, 9 * H * H + 1, INFINITY);
    }
    for (int steps = 0; steps < 4; ++steps) {
      const bool affine = steps & 1, relu = steps & 2;
      for (bool blocked_out : {false, true}) {
        Tensor want = call_op1("conv2d", {xs, w, b}, conv_attrs);
        ConvBlockSpec s = padded_conv_spec(xs, w, want.shape());
        s.affine = affine;
        s.relu = relu;
        s.pool = p;
        s.blocked_out = blocked_out;
        if (affine) want = call_op1("add", {call_op1("mul", {call_op1("sub", {want, m}), a}), sh});
        if (relu) want = call_op1("relu", {want});
        want = call_op1("max_pool2d", {want}, pool_attrs);
        s.out = want.shape();
        if (!conv2d_dst_is_nchw16c(s.conv_out, s.x, s.w, s.conv, true))
          GTEST_SKIP() << "oneDNN writes no nChw16c for this conv on this CPU: conv2d_block runs op by op here";
        std::shared_ptr<const ConvBlockPlan> plan = conv_block_plan(s);
        ASSERT_NE(plan, nullptr);
        Tensor got = Tensor::empty(s.out, DType::Float32);
        conv_block_run(*plan, got, xs, w, b, affine ? m : Tensor(), affine ? a : Tensor(), affine ? sh : Tensor());
        const std::string ctx = std::string(with_nan ? "NaN input" : "finite input") + " affine " +
                                std::to_string(affine) + " relu " + std::to_string(relu) + " blocked_out " +
                                std::to_string(blocked_out);
        int64_t nans = 0, neg_inf = 0;
        for (int64_t i = 0; i < want.numel(); ++i) {
          nans += std::isnan(want.item_double(i));
          neg_inf += want.item_double(i) == -INFINITY;
        }
        if (with_nan) {
          EXPECT_GT(nans, 0) << ctx << ": NaN reaches the pooled result";
        }
        if (!affine && !relu) {
          EXPECT_GT(neg_inf, 0) << ctx << ": the -inf channel pools to -inf";
        }
        EXPECT_EQ(bit_patterns(got), bit_patterns(blocked_out ? nchw_to_nchw16c(want) : want)) << ctx;
      }
    }
  }
}

// The blocked pool kernel on its own (no conv: every CPU runs it, where the tests above skip when
// oneDNN keeps no nChw16c): from an nChw16c input, into nChw16c or NCHW, the bits of max_pool2d on
// the NCHW input, for 2x2 and other tiles, NaN, ties and -0.0 included.
TEST(ConvBlock, BlockedTiledPoolEqualsMaxPool2dOnEveryCpu) {
  Tensor x = testing::random({2, 32, 9, 11}, DType::Float32, 31);
  for (int64_t i = 0; i < x.numel(); ++i) {
    testing::set_item(x, i, std::floor(x.item_double(i) * 2));
    if (i % 23 == 4) testing::set_item(x, i, NAN);
    if (i % 17 == 9) testing::set_item(x, i, -0.0);
  }
  const Tensor xb = nchw_to_nchw16c(x);
  for (const std::pair<int64_t, int64_t>& k : {std::make_pair<int64_t, int64_t>(2, 2), {3, 3}, {2, 3}, {1, 2}}) {
    Pool2dParams p;
    p.kernel[0] = p.stride[0] = k.first;
    p.kernel[1] = p.stride[1] = k.second;
    const Tensor want = call_op1("max_pool2d", {x}, {{"kernel_size", IntList{k.first, k.second}},
                                                     {"stride", IntList{k.first, k.second}}});
    for (bool blocked_out : {false, true}) {
      Tensor got = Tensor::empty(want.shape(), DType::Float32);
      max_pool2d_tiles_nchw16c(xb.data<float>(), got.data<float>(), x.shape(), want.shape(), p, blocked_out);
      EXPECT_EQ(bit_patterns(got), bit_patterns(blocked_out ? nchw_to_nchw16c(want) : want))
          << k.first << "x" << k.second << " blocked_out " << blocked_out;
    }
  }
}

TEST(ConvBlock, Nchw16cConversionsAreInversesAndPlaceChannelsInBlocksOf16) {
  Tensor x = testing::random({2, 32, 3, 5}, DType::Float32, 7);
  Tensor b = nchw_to_nchw16c(x);
  EXPECT_EQ(b.shape(), x.shape());
  // element (n=1, c=21, h=2, w=3) sits at ((n * 2 + c / 16) * 15 + h * 5 + w) * 16 + c % 16
  const float* bp = b.data<float>();
  EXPECT_EQ(bp[((1 * 2 + 1) * 15 + 2 * 5 + 3) * 16 + 5], testing::at(x, {1, 21, 2, 3}));
  EXPECT_EQ(bit_patterns(nchw16c_to_nchw(b)), bit_patterns(x));
}

// Block A (16 -> 32, pooled) feeding block B (32 -> 32): A leaves nChw16c, B reads it as it is.
struct TwoBlocks {
  Tensor x = testing::random({2, 16, 10, 10}, DType::Float32, 11);
  Tensor wa = testing::random({32, 16, 3, 3}, DType::Float32, 12), ba = testing::random({32}, DType::Float32, 13);
  Tensor wb = testing::random({32, 32, 3, 3}, DType::Float32, 14), bb = testing::random({32}, DType::Float32, 15);
  Attrs a{{"stride", int64_t{1}}, {"padding", int64_t{1}}, {"bias", true}, {"affine", false}, {"relu", true},
          {"pool_kernel_size", int64_t{2}}, {"pool_stride", int64_t{2}}};
  Attrs b{{"stride", int64_t{1}}, {"padding", int64_t{1}}, {"bias", true}, {"affine", false}, {"relu", true}};
  TwoBlocks() {
    const float specials[] = {NAN, INFINITY, -INFINITY, -0.f, 1e-40f};
    for (int i = 0; i < 5; ++i) testing::set_item(x, 53 * i + 7, specials[i]);
  }
  Tensor plain() const { return call_op1("conv2d_block", {call_op1("conv2d_block", {x, wa, ba}, a), wb, bb}, b); }
};

TEST(ConvBlock, OpByOpPathHonoursBlockedLayouts) {
  // The eager kernel of conv2d_block is the op-by-op path: what a block runs where its fused
  // kernel cannot (any CPU), converting the layouts the flags name.
  TwoBlocks t;
  Attrs a = t.a, b = t.b;
  a.set("blocked_out", true);
  b.set("blocked_in", true);
  Tensor mid = call_op1("conv2d_block", {t.x, t.wa, t.ba}, a);
  Tensor plain_mid = call_op1("conv2d_block", {t.x, t.wa, t.ba}, t.a);
  EXPECT_EQ(bit_patterns(mid), bit_patterns(nchw_to_nchw16c(plain_mid)));
  EXPECT_EQ(bit_patterns(call_op1("conv2d_block", {mid, t.wb, t.bb}, b)), bit_patterns(t.plain()));
  Attrs bad = t.b;
  bad.set("blocked_in", true);
  try {
    call_op1("conv2d_block", {testing::random({1, 8, 6, 6}, DType::Float32, 1), testing::random({32, 8, 3, 3}, DType::Float32, 2),
                              testing::random({32}, DType::Float32, 3)}, bad);
    FAIL() << "blocked_in with 8 channels was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blocked_in needs input channels in multiples of 16, got 8"), std::string::npos)
        << e.what();
  }
}

TEST(ConvBlock, FusedKernelsHandTheActivationOverInNchw16c) {
  TwoBlocks t;
  Metas ma{meta(t.x), meta(t.wa), meta(t.ba)};
  Tensor mid_plain = call_op1("conv2d_block", {t.x, t.wa, t.ba}, t.a);
  Attrs a = t.a, b = t.b;
  a.set("blocked_out", true);
  b.set("blocked_in", true);
  ConvBlockSpec sa = conv_block_spec(ma, a, {meta(mid_plain)});
  Metas mb{meta(mid_plain), meta(t.wb), meta(t.bb)};
  Tensor want = t.plain();
  ConvBlockSpec sb = conv_block_spec(mb, b, {meta(want)});
  if (!conv2d_dst_is_nchw16c(sa.conv_out, sa.x, sa.w, sa.conv, true) ||
      !conv2d_src_is_nchw16c(sb.conv_out, sb.x, sb.w, sb.conv, true))
    GTEST_SKIP() << "oneDNN keeps no nChw16c for these convs on this CPU: the blocks run op by op here";
  std::shared_ptr<const ConvBlockPlan> pa = conv_block_plan(sa), pb = conv_block_plan(sb);
  ASSERT_NE(pa, nullptr);
  ASSERT_NE(pb, nullptr);
  Tensor mid = Tensor::empty(sa.out, DType::Float32), got = Tensor::empty(sb.out, DType::Float32);
  conv_block_run(*pa, mid, t.x, t.wa, t.ba, Tensor(), Tensor(), Tensor());
  EXPECT_EQ(bit_patterns(mid), bit_patterns(nchw_to_nchw16c(mid_plain)));
  conv_block_run(*pb, got, mid, t.wb, t.bb, Tensor(), Tensor(), Tensor());
  EXPECT_EQ(bit_patterns(got), bit_patterns(want));
  // without pooling the conv writes the block's blocked result straight into `out`
  Attrs a2 = t.b;
  a2.set("blocked_out", true);
  ConvBlockSpec s2 = conv_block_spec(mb, a2, {meta(want)});
  std::shared_ptr<const ConvBlockPlan> p2 = conv_block_plan(s2);
  ASSERT_NE(p2, nullptr);
  Tensor got2 = Tensor::empty(s2.out, DType::Float32);
  conv_block_run(*p2, got2, mid_plain, t.wb, t.bb, Tensor(), Tensor(), Tensor());
  EXPECT_EQ(bit_patterns(got2), bit_patterns(nchw_to_nchw16c(want)));
}

}  // namespace
}  // namespace pj
