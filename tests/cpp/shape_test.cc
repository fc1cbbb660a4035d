// Shape ops against plain reference loops: every dtype, 0-d / empty / size-1 / odd shapes,
// negative axes, non-contiguous inputs; views must share storage, reshape must copy when no
// strides fit, and every user error has numpy's message and pj::Error kind.
#include <numeric>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/copy.h"
#include "kernels/shape_ops.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::at;
using testing::ravel;
using testing::unravel;
using testing::values;

Attrs shape_attr(const char* k, IntList v) { return Attrs{{k, AttrValue(std::move(v))}}; }

// ---- reshape ------------------------------------------------------------------------------------

TEST(Reshape, ContiguousIsAViewWithLogicalOrder) {
  for (DType t : testing::all_dtypes()) {
    Tensor x = testing::random({2, 3, 4}, t, 7);
    for (IntList spec : {IntList{24}, IntList{4, 6}, IntList{-1, 2}, IntList{2, 1, 3, 1, 4, 1},
                         IntList{1, 24, 1}, IntList{3, -1, 4}}) {
      Tensor y = call_op1("reshape", {x}, shape_attr("shape", spec));
      EXPECT_TRUE(y.same_storage(x));
      EXPECT_EQ(values(y), values(x));
      EXPECT_EQ(y.numel(), 24);
    }
  }
  Tensor s = testing::iota({}, DType::Float32);
  Tensor y = reshape(s, {1, 1});
  EXPECT_EQ(y.shape(), Shape({1, 1}));
  EXPECT_TRUE(y.same_storage(s));
  EXPECT_EQ(reshape(y, {}).shape(), Shape({}));
  Tensor e = testing::iota({2, 0, 3}, DType::Int32);
  EXPECT_EQ(reshape(e, {0, 5}).shape(), Shape({0, 5}));
  EXPECT_EQ(reshape(e, {3, 0}).shape(), Shape({3, 0}));
}

TEST(Reshape, NonContiguousViewsWhenStridesAllowAndCopiesOtherwise) {
  Tensor base = testing::iota({4, 6}, DType::Int64);
  Tensor cols = base.as_strided({4, 3}, {6, 1}, 0);  // base[:, :3]
  // Splitting a dim, or adding size-1 dims, never needs a copy.
  for (IntList spec : {IntList{2, 2, 3}, IntList{4, 3, 1}, IntList{1, 4, 1, 3}, IntList{4, 3}}) {
    Tensor y = reshape(cols, spec);
    EXPECT_TRUE(y.same_storage(base)) << shape_str(y.shape());
    EXPECT_EQ(values(y), values(cols));
  }
  // Merging rows that are not adjacent in memory does.
  for (IntList spec : {IntList{12}, IntList{3, 4}, IntList{6, 2}}) {
    Tensor y = reshape(cols, spec);
    EXPECT_FALSE(y.same_storage(base));
    EXPECT_TRUE(y.is_contiguous());
    EXPECT_EQ(values(y), values(cols));
  }
  // A transpose can be reshaped as a view only by splitting its dims.
  Tensor tr = base.as_strided({6, 4}, {1, 6}, 0);
  EXPECT_TRUE(reshape(tr, {2, 3, 4}).same_storage(base));
  EXPECT_TRUE(reshape(tr, {6, 2, 2}).same_storage(base));
  EXPECT_FALSE(reshape(tr, {24}).same_storage(base));
  EXPECT_EQ(values(reshape(tr, {24})), values(tr));
  EXPECT_EQ(values(reshape(tr, {6, 2, 2})), values(tr));
  // Broadcast (stride 0) dims: merging with them copies, keeping them is a view.
  Tensor bc = testing::iota({3}, DType::Float32).as_strided({4, 3}, {0, 1}, 0);
  EXPECT_FALSE(reshape(bc, {12}).same_storage(bc));
  EXPECT_TRUE(reshape(bc, {2, 2, 3}).same_storage(bc));
  EXPECT_EQ(values(reshape(bc, {12})), values(bc));
  // Size-1 dims with odd strides are ignored.
  Tensor odd = base.as_strided({4, 1, 6}, {6, 999, 1}, 0);
  EXPECT_TRUE(reshape(odd, {24}).same_storage(base));
}

TEST(Reshape, ViewStridesAddressTheSameElements) {
  // Whatever reshape_view_strides returns must address, for every logical index, the element the
  // original geometry addresses at that logical position.
  std::vector<std::pair<std::pair<Shape, Shape>, Shape>> cases = {
      {{{4, 3}, {6, 1}}, {2, 2, 3}}, {{{6, 4}, {1, 6}}, {2, 3, 2, 2}}, {{{2, 3, 4}, {12, 4, 1}}, {6, 4}},
      {{{2, 3, 4}, {1, 2, 6}}, {2, 3, 2, 2}}, {{{5, 1}, {3, 100}}, {5}}, {{{3}, {-2}}, {3, 1}}};
  for (auto& [old, ns] : cases) {
    Shape st;
    ASSERT_TRUE(reshape_view_strides(old.first, old.second, ns, &st));
    for (int64_t i = 0; i < shape_numel(ns); ++i) {
      auto a = unravel(i, old.first), b = unravel(i, ns);
      int64_t oa = 0, ob = 0;
      for (size_t d = 0; d < a.size(); ++d) oa += a[d] * old.second[d];
      for (size_t d = 0; d < b.size(); ++d) ob += b[d] * st[d];
      EXPECT_EQ(oa, ob);
    }
  }
}

TEST(Reshape, Errors) {
  Tensor x = testing::iota({2, 3}, DType::Float32);
  PJ_EXPECT_ERROR(reshape(x, {4}), Value, "cannot reshape tensor of size 6 into shape (4,)");
  PJ_EXPECT_ERROR(call_op1("reshape", {x}, shape_attr("shape", {4, -1})), Value,
                  "cannot reshape tensor of size 6 into shape (4, -1)");
  PJ_EXPECT_ERROR(reshape(x, {-1, -1}), Value, "can only specify one unknown dimension");
  PJ_EXPECT_ERROR(reshape(x, {-2, -3}), Value, "negative dimensions are not allowed");
  PJ_EXPECT_ERROR(reshape(testing::iota({0}, DType::Float32), {0, -1}), Value,
                  "cannot reshape tensor of size 0 into shape (0, -1)");
  // infer says the same as run.
  const OpDef& op = get_op("reshape");
  EXPECT_TRUE(op.is_view);
  EXPECT_EQ(op.infer({meta_of(x)}, shape_attr("shape", {3, -1}))[0].shape, Shape({3, 2}));
  PJ_EXPECT_ERROR(op.infer({meta_of(x)}, shape_attr("shape", {5})), Value,
                  "cannot reshape tensor of size 6 into shape (5,)");
}

// ---- transpose / permute --------------------------------------------------------------------------

TEST(Transpose, PermutesLikeTheReference) {
  for (DType t : testing::all_dtypes()) {
    for (Shape s : {Shape{2, 3, 4}, Shape{3, 1, 5, 2}, Shape{0, 3, 2}}) {
      for (const Tensor& x : testing::layouts(testing::random(s, t, 3))) {
        IntList perm(s.size());
        std::iota(perm.begin(), perm.end(), 0);
        do {
          IntList neg = perm;
          neg[0] -= static_cast<int64_t>(s.size());  // a negative axis too
          Tensor y = call_op1("permute", {x}, shape_attr("perm", neg));
          ASSERT_TRUE(y.same_storage(x));
          for (size_t d = 0; d < s.size(); ++d) ASSERT_EQ(y.dim(d), s[perm[d]]);
          for (int64_t i = 0; i < y.numel(); ++i) {
            auto yi = unravel(i, y.shape());
            std::vector<int64_t> xi(s.size());
            for (size_t d = 0; d < s.size(); ++d) xi[perm[d]] = yi[d];
            ASSERT_EQ(at(y, yi), at(x, xi));
          }
        } while (std::next_permutation(perm.begin(), perm.end()));
      }
    }
  }
}

TEST(Transpose, NoneReversesAndErrors) {
  Tensor x = testing::iota({2, 3, 4}, DType::Int32);
  Tensor y = call_op1("transpose", {x}, Attrs{{"perm", AttrValue{}}});
  EXPECT_EQ(y.shape(), Shape({4, 3, 2}));
  EXPECT_EQ(at(y, {3, 1, 1}), at(x, {1, 1, 3}));
  Tensor s = testing::iota({}, DType::Int32);
  EXPECT_EQ(call_op1("transpose", {s}).shape(), Shape{});
  PJ_EXPECT_ERROR(permute(x, {0, 0, 1}), Value, "repeated axis in transpose");
  PJ_EXPECT_ERROR(permute(x, {0, 1}), Value, "axes don't match tensor");
  PJ_EXPECT_ERROR(permute(x, {0, 1, 3}), Index, "axis 3 is out of bounds for tensor of dimension 3");
  PJ_EXPECT_ERROR(get_op("transpose").infer({meta_of(x)}, shape_attr("perm", {2, 2, 0})), Value,
                  "repeated axis in transpose");
}

// ---- squeeze / expand_dims / flatten / broadcast_to --------------------------------------------

TEST(Squeeze, AllOrNamedAxes) {
  for (DType t : testing::all_dtypes()) {
    for (const Tensor& x : testing::layouts(testing::random({1, 3, 1, 2, 1}, t, 5))) {
      Tensor a = call_op1("squeeze", {x}, Attrs{{"axis", AttrValue{}}});
      EXPECT_EQ(a.shape(), Shape({3, 2}));
      EXPECT_TRUE(a.same_storage(x));
      EXPECT_EQ(values(a), values(x));
      Tensor b = call_op1("squeeze", {x}, shape_attr("axis", {0, -1}));
      EXPECT_EQ(b.shape(), Shape({3, 1, 2}));
      EXPECT_EQ(values(b), values(x));
      Tensor c = call_op1("squeeze", {x}, Attrs{{"axis", int64_t(2)}});
      EXPECT_EQ(c.shape(), Shape({1, 3, 2, 1}));
    }
  }
  EXPECT_EQ(squeeze(testing::iota({}, DType::Float32), std::nullopt).shape(), Shape{});
  EXPECT_EQ(squeeze(testing::iota({0, 1}, DType::Float32), std::nullopt).shape(), Shape{0});
  Tensor x = testing::iota({1, 3}, DType::Float32);
  PJ_EXPECT_ERROR(squeeze(x, Ints{1}), Value,
                  "cannot select an axis to squeeze out which has size not equal to one");
  PJ_EXPECT_ERROR(squeeze(x, Ints{2}), Index, "axis 2 is out of bounds for tensor of dimension 2");
  PJ_EXPECT_ERROR(squeeze(x, Ints{0, -2}), Value, "duplicate value in 'axis'");
  PJ_EXPECT_ERROR(squeeze(testing::iota({}, DType::Float32), Ints{0}), Index,
                  "axis 0 is out of bounds for tensor of dimension 0");
}

TEST(ExpandDims, EveryPositionAndErrors) {
  for (const char* name : {"expand_dims", "unsqueeze"}) {
    for (Shape s : {Shape{}, Shape{3}, Shape{2, 0}, Shape{2, 3}}) {
      Tensor x = testing::gapped(testing::iota(s, DType::Float64));
      int nd = static_cast<int>(s.size());
      for (int64_t ax = -nd - 1; ax <= nd; ++ax) {
        Tensor y = call_op1(name, {x}, Attrs{{"axis", ax}});
        int pos = ax < 0 ? static_cast<int>(ax) + nd + 1 : static_cast<int>(ax);
        Shape want = s;
        want.insert(want.begin() + pos, 1);
        EXPECT_EQ(y.shape(), want);
        EXPECT_TRUE(y.same_storage(x));
        EXPECT_EQ(values(y), values(x));
      }
    }
  }
  Tensor x = testing::iota({2, 3}, DType::Float32);
  PJ_EXPECT_ERROR(expand_dims(x, 3), Index, "axis 3 is out of bounds for tensor of dimension 3");
  PJ_EXPECT_ERROR(expand_dims(x, -4), Index, "axis -4 is out of bounds for tensor of dimension 3");
  Tensor c = testing::iota({2, 3}, DType::Float32);
  EXPECT_TRUE(expand_dims(c, 1).is_contiguous());
}

TEST(Flatten, DefaultsAndRanges) {
  Tensor x = testing::iota({2, 3, 4, 5}, DType::Int32);
  Tensor a = call_op1("flatten", {x});
  EXPECT_EQ(a.shape(), Shape({120}));
  EXPECT_TRUE(a.same_storage(x));
  Tensor b = call_op1("flatten", {x}, Attrs{{"start_dim", int64_t(1)}, {"end_dim", int64_t(-2)}});
  EXPECT_EQ(b.shape(), Shape({2, 12, 5}));
  EXPECT_EQ(flatten(x, 2, 2).shape(), Shape({2, 3, 4, 5}));
  EXPECT_EQ(flatten(testing::iota({}, DType::Int32)).shape(), Shape({1}));
  // Non-contiguous input: a copy, same values.
  Tensor f = testing::fortran(x);
  Tensor c = flatten(f);
  EXPECT_FALSE(c.same_storage(f));
  EXPECT_EQ(values(c), values(x));
  PJ_EXPECT_ERROR(flatten(x, 2, 1), Value,
                  "flatten() has invalid args: start_dim cannot come after end_dim");
}

TEST(BroadcastTo, ZeroStridesAndErrors) {
  for (DType t : testing::all_dtypes()) {
    for (const Tensor& x : testing::layouts(testing::random({3, 1}, t, 2))) {
      Tensor y = call_op1("broadcast_to", {x}, shape_attr("shape", {2, 3, 4}));
      EXPECT_EQ(y.shape(), Shape({2, 3, 4}));
      EXPECT_TRUE(y.same_storage(x));
      for (int64_t i = 0; i < y.numel(); ++i) {
        auto yi = unravel(i, y.shape());
        ASSERT_EQ(at(y, yi), at(x, {yi[1], 0}));
      }
      EXPECT_EQ(broadcast_to(x, {-1, 5}).shape(), Shape({3, 5}));
    }
  }
  Tensor x = testing::iota({2, 3}, DType::Float32);
  EXPECT_EQ(broadcast_to(x, {0, 2, 3}).shape(), Shape({0, 2, 3}));
  EXPECT_EQ(broadcast_to(testing::iota({}, DType::Float32), {}).shape(), Shape{});
  PJ_EXPECT_ERROR(broadcast_to(x, {3}), Value, "cannot broadcast a tensor of shape (2, 3) to shape (3,)");
  PJ_EXPECT_ERROR(broadcast_to(x, {4, 3}), Value, "cannot broadcast a tensor of shape (2, 3) to shape (4, 3)");
  PJ_EXPECT_ERROR(broadcast_to(x, {-1, 2, 3}), Value, "all elements of broadcast shape must be non-negative");
}

// ---- split ------------------------------------------------------------------------------------

TEST(Split, SectionsAndIndicesAreViews) {
  Tensor x = testing::gapped(testing::iota({6, 4}, DType::Float32));
  Tensors parts = call_op(get_op("split"), {x}, Attrs{{"sections", int64_t(3)}, {"axis", int64_t(0)}});
  ASSERT_EQ(parts.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(parts[k].shape(), Shape({2, 4}));
    EXPECT_TRUE(parts[k].same_storage(x));
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(parts[k].item_double(i), x.item_double(k * 8 + i));
  }
  // numpy.split(x, [1, -1, 10, 2], axis=-1) on 4 columns: [0:1], [1:3], [3:4], [4:4], [4:]
  // ... with indices clamped like slices and a decreasing point giving an empty part.
  Tensors q = call_op(get_op("split"), {x}, Attrs{{"indices", IntList{1, -1, 10, 2}}, {"axis", int64_t(-1)}});
  ASSERT_EQ(q.size(), 5u);
  int64_t widths[] = {1, 2, 1, 0, 2};
  int64_t starts[] = {0, 1, 3, 4, 2};
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(q[k].shape(), Shape({6, widths[k]})) << k;
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t c = 0; c < widths[k]; ++c) EXPECT_EQ(at(q[k], {r, c}), at(x, {r, starts[k] + c}));
  }
  // A list given as "sections" is split points, as numpy.split's one argument.
  EXPECT_EQ(call_op(get_op("split"), {x}, Attrs{{"sections", IntList{2}}}).size(), 2u);
  auto metas = get_op("split").infer({meta_of(x)}, Attrs{{"sections", int64_t(2)}, {"axis", int64_t(1)}});
  ASSERT_EQ(metas.size(), 2u);
  EXPECT_EQ(metas[1].shape, Shape({6, 2}));
  EXPECT_EQ(call_op(get_op("split"), {testing::iota({0, 2}, DType::Int32)}, Attrs{{"sections", int64_t(2)}}).size(), 2u);
  PJ_EXPECT_ERROR(call_op(get_op("split"), {x}, Attrs{{"sections", int64_t(4)}}), Value,
                  "array split does not result in an equal division");
  PJ_EXPECT_ERROR(call_op(get_op("split"), {x}, Attrs{{"sections", int64_t(0)}}), Value,
                  "number sections must be larger than 0.");
  PJ_EXPECT_ERROR(call_op(get_op("split"), {x}, Attrs{{"sections", int64_t(2)}, {"axis", int64_t(2)}}), Index,
                  "axis 2 is out of bounds for tensor of dimension 2");
}

// ---- concat / stack ---------------------------------------------------------------------------

// Reference: out[idx] comes from the input whose range along `axis` holds idx[axis].
void check_concat(const Tensor& out, const std::vector<Tensor>& in, int axis) {
  for (int64_t i = 0; i < out.numel(); ++i) {
    auto oi = unravel(i, out.shape());
    int64_t pos = oi[axis];
    size_t k = 0;
    while (pos >= in[k].dim(axis)) pos -= in[k++].dim(axis);
    auto ii = oi;
    ii[axis] = pos;
    double want = at(in[k], ii);
    if (out.dtype() == DType::Bool) want = want != 0;
    if (!is_floating(out.dtype()) && is_floating(in[k].dtype())) want = std::trunc(want);
    ASSERT_EQ(out.item_double(i), want) << i;
  }
}

TEST(Concat, MatchesReferenceOnEveryAxisDtypeAndLayout) {
  for (DType t : testing::all_dtypes()) {
    for (Shape s : {Shape{3}, Shape{2, 3}, Shape{2, 3, 4}, Shape{3, 1, 5}, Shape{0, 2}}) {
      int nd = static_cast<int>(s.size());
      for (int ax = -nd; ax < nd; ++ax) {
        int a = ax < 0 ? ax + nd : ax;
        std::vector<Tensor> in;
        int64_t extra[] = {2, 0, 1};
        for (int k = 0; k < 3; ++k) {
          Shape sk = s;
          sk[a] = s[a] + extra[k];
          in.push_back(testing::layouts(testing::random(sk, t, 10 + k))[k]);
        }
        Tensor y = call_op1("concat", in, Attrs{{"axis", int64_t(ax)}});
        Shape want = s;
        want[a] = 3 * s[a] + 3;
        ASSERT_EQ(y.shape(), want);
        ASSERT_EQ(y.dtype(), t);
        check_concat(y, in, a);
      }
    }
  }
}

TEST(Concat, PromotesDtypesAndLargeRowsUseContiguousRuns) {
  Tensor a = testing::random({4, 3}, DType::Int32, 1);
  Tensor b = testing::random({4, 2}, DType::Float64, 2);
  Tensor c = testing::random({4, 1}, DType::Bool, 3);
  Tensor y = call_op1("concat", {a, b, c}, Attrs{{"axis", int64_t(1)}});
  EXPECT_EQ(y.dtype(), DType::Float64);
  check_concat(y, {a, b, c}, 1);
  // Big enough to go parallel.
  Tensor p = testing::random({300, 257}, DType::Float32, 4), q = testing::random({300, 131}, DType::Float32, 5);
  Tensor r = concat({p, q}, -1);
  check_concat(r, {p, q}, 1);
  Tensor r0 = concat({p, testing::gapped(p)}, 0);
  check_concat(r0, {p, p}, 0);
}

TEST(Concat, Errors) {
  Tensor a = testing::iota({2, 3}, DType::Float32), b = testing::iota({2, 4}, DType::Float32);
  PJ_EXPECT_ERROR(concat({a, b}, 0), Value,
                  "all the input tensor dimensions except for the concatenation axis must match exactly, "
                  "but along dimension 1, the tensor at index 0 has size 3 and the tensor at index 1 has size 4");
  PJ_EXPECT_ERROR(concat({a, testing::iota({2}, DType::Float32)}, 0), Value,
                  "all the input tensors must have same number of dimensions, but the tensor at index 0 has 2 "
                  "dimension(s) and the tensor at index 1 has 1 dimension(s)");
  PJ_EXPECT_ERROR(concat({testing::iota({}, DType::Float32)}, 0), Value,
                  "zero-dimensional tensors cannot be concatenated");
  PJ_EXPECT_ERROR(call_op1("concat", {}), Value, "need at least one tensor to concatenate");
  PJ_EXPECT_ERROR(concat({a, a}, 2), Index, "axis 2 is out of bounds for tensor of dimension 2");
  EXPECT_EQ(concat({a, b}, 1).shape(), Shape({2, 7}));
}

TEST(Stack, EveryAxisAndErrors) {
  for (DType t : testing::all_dtypes()) {
    for (Shape s : {Shape{}, Shape{3}, Shape{2, 3}, Shape{0, 2}}) {
      int nd = static_cast<int>(s.size());
      for (int ax = -nd - 1; ax <= nd; ++ax) {
        std::vector<Tensor> in;
        for (int k = 0; k < 3; ++k) in.push_back(testing::layouts(testing::random(s, t, 20 + k))[k]);
        Tensor y = call_op1("stack", in, Attrs{{"axis", int64_t(ax)}});
        int a = ax < 0 ? ax + nd + 1 : ax;
        Shape want = s;
        want.insert(want.begin() + a, 3);
        ASSERT_EQ(y.shape(), want);
        for (int64_t i = 0; i < y.numel(); ++i) {
          auto yi = unravel(i, y.shape());
          int64_t k = yi[a];
          yi.erase(yi.begin() + a);
          ASSERT_EQ(y.item_double(i), at(in[k], yi));
        }
      }
    }
  }
  Tensor a = testing::iota({2, 3}, DType::Float32), b = testing::iota({3, 2}, DType::Float32);
  PJ_EXPECT_ERROR(stack({a, b}, 0), Value, "all input tensors must have the same shape");
  PJ_EXPECT_ERROR(call_op1("stack", {}), Value, "need at least one tensor to stack");
  PJ_EXPECT_ERROR(stack({a, a}, 3), Index, "axis 3 is out of bounds for tensor of dimension 3");
  EXPECT_EQ(stack({a, testing::iota({2, 3}, DType::Int64)}, 0).dtype(), DType::Float32);
}

// ---- tile ---------------------------------------------------------------------------------------

TEST(Tile, MatchesReference) {
  std::vector<IntList> reps_list = {{}, {2}, {1, 3}, {2, 1, 2}, {0, 2}, {3, 1, 1, 2}};
  for (DType t : testing::all_dtypes()) {
    for (Shape s : {Shape{}, Shape{3}, Shape{2, 3}, Shape{1, 4, 1}, Shape{2, 0}}) {
      for (const Tensor& x : testing::layouts(testing::random(s, t, 30))) {
        for (const IntList& reps : reps_list) {
          Tensor y = call_op1("tile", {x}, shape_attr("reps", reps));
          size_t n = std::max(s.size(), reps.size());
          Shape xs(n, 1);
          for (size_t i = 0; i < s.size(); ++i) xs[n - s.size() + i] = s[i];
          ASSERT_EQ(y.ndim(), static_cast<int>(n));
          for (size_t j = 0; j < n; ++j) {
            int64_t r = j < n - reps.size() ? 1 : reps[j - (n - reps.size())];
            ASSERT_EQ(y.dim(j), xs[j] * r);
          }
          for (int64_t i = 0; i < y.numel(); ++i) {
            auto yi = unravel(i, y.shape());
            std::vector<int64_t> xi;
            for (size_t j = n - s.size(); j < n; ++j) xi.push_back(yi[j] % xs[j]);
            ASSERT_EQ(y.item_double(i), at(x, xi));
          }
        }
      }
    }
  }
  Tensor big = testing::random({100, 70}, DType::Float32, 1);
  Tensor y = tile(big, {3, 5});
  for (int64_t i = 0; i < y.numel(); i += 7) {
    auto yi = unravel(i, y.shape());
    ASSERT_EQ(y.item_double(i), at(big, {yi[0] % 100, yi[1] % 70}));
  }
  PJ_EXPECT_ERROR(tile(big, {-1, 2}), Value, "negative dimensions are not allowed");
}

}  // namespace
}  // namespace pj
