// Eager op spans (common/trace.h's profile_ops, recorded by graph/op.cc's call_op): an op call
// while they are on is one "op" event with its inputs, outputs and new bytes; off records nothing.
#include <string>

#include "common/trace.h"
#include "gtest/gtest.h"
#include "graph/op.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ProfileOps, OneSpanPerEagerCallOnlyWhileOn) {
  Tensor a = testing::iota({2, 3}, DType::Float32);
  Tensor b = testing::iota({3}, DType::Float32);
  const std::string span = "\"cat\": \"op\", \"name\": \"add\"";
  const size_t before = count(trace::json(), span);
  call_op1("add", {a, b});  // off: nothing
  EXPECT_EQ(count(trace::json(), span), before);
  const int64_t t0 = trace::profile_ops(true);
  EXPECT_TRUE(trace::ops_on());
  EXPECT_TRUE(trace::on());
  call_op1("add", {a, b});
  call_op1("add", {a, b});
  const int64_t t1 = trace::profile_ops(false);
  EXPECT_GE(t1, t0);
  EXPECT_FALSE(trace::ops_on());
  call_op1("add", {a, b});  // off again
  const std::string text = trace::json();
  EXPECT_EQ(count(text, span), before + 2);
  EXPECT_NE(text.find("\"inputs\": \"Float32[2,3];Float32[3]\", \"outputs\": \"Float32[2,3]\", \"bytes\": 24, "
                      "\"depth\": 0"),
            std::string::npos);
}

}  // namespace
}  // namespace pj
