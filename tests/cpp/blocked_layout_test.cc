// kernels/blocked_layout.h against oneDNN's own reorders, bit for bit: both directions, channel
// counts with a partial last block (its padding zeroed), planes whose size is no multiple of the
// 8-wide transpose, batch 1 and 5; and the layouts it leaves to oneDNN.
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/blocked_layout.h"
#include "kernels/dnnl_context.h"

namespace pj {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

dnnl::memory filled(const dnnl::memory::desc& md, float first) {
  dnnl::memory m(md, dnnl_engine());
  float* p = static_cast<float*>(m.get_data_handle());
  for (size_t i = 0; i < md.get_size() / sizeof(float); ++i) p[i] = first + 0.25f * static_cast<float>(i);
  return m;
}

TEST(BlockedLayout, ReordersAsOneDnnDoesBitForBit) {
  const std::vector<dnnl::memory::dims> shapes = {{1, 16, 4, 4}, {5, 3, 7, 9}, {2, 17, 5, 3}, {1, 40, 8, 8},
                                                  {2, 64, 1, 1}, {3, 33, 11, 13}, {1, 8, 3, 8}};
  for (const auto& dims : shapes)
    for (bool to_blocked : {true, false}) {
      const dnnl::memory::desc nchw(dims, dt::f32, tag::nchw), blocked(dims, dt::f32, tag::nChw16c);
      const dnnl::memory::desc& from_md = to_blocked ? nchw : blocked;
      const dnnl::memory::desc& to_md = to_blocked ? blocked : nchw;
      dnnl::memory from = filled(from_md, -3.f);
      if (!to_blocked) {  // oneDNN's padding of a blocked source is zeros
        dnnl::memory plain = filled(nchw, -3.f);
        dnnl::reorder(plain, from).execute(dnnl_stream(), plain, from);
        dnnl_stream().wait();
      }
      dnnl::memory want = filled(to_md, 99.f), got = filled(to_md, 77.f);  // different garbage
      dnnl::reorder(from, want).execute(dnnl_stream(), from, want);
      dnnl_stream().wait();
      ASSERT_TRUE(blocked_layout_reorder(from, got));
      EXPECT_EQ(std::memcmp(want.get_data_handle(), got.get_data_handle(), to_md.get_size()), 0)
          << dims[0] << "x" << dims[1] << "x" << dims[2] << "x" << dims[3] << (to_blocked ? " to" : " from")
          << " nChw16c";
    }
}

TEST(BlockedLayout, LeavesOtherLayoutsToOneDnn) {
  const dnnl::memory::dims dims{2, 16, 4, 4};
  const dnnl::memory nchw(dnnl::memory::desc(dims, dt::f32, tag::nchw), dnnl_engine());
  const dnnl::memory nhwc(dnnl::memory::desc(dims, dt::f32, tag::nhwc), dnnl_engine());
  const dnnl::memory c8(dnnl::memory::desc(dims, dt::f32, tag::nChw8c), dnnl_engine());
  const dnnl::memory other(dnnl::memory::desc({2, 16, 4, 5}, dt::f32, tag::nChw16c), dnnl_engine());
  const dnnl::memory ints(dnnl::memory::desc(dims, dt::s32, tag::nChw16c), dnnl_engine());
  EXPECT_FALSE(blocked_layout_reorder(nchw, nhwc));
  EXPECT_FALSE(blocked_layout_reorder(nchw, c8));
  EXPECT_FALSE(blocked_layout_reorder(nchw, other));  // other dims
  EXPECT_FALSE(blocked_layout_reorder(nchw, ints));
  EXPECT_FALSE(blocked_layout_reorder(nchw, nchw));
}

}  // namespace
}  // namespace pj
