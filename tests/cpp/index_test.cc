// Indexing against references: numpy's own results for a table of subscripts (golden values
// produced by numpy 1.24 on x = arange(size).reshape(shape), and for x[...] = arange + 100 on
// zeros), Python's list slicing for every kind of slice bound, and plain loops for gather,
// index_select, one_hot, sort and topk, on every dtype and on non-contiguous inputs.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "gtest/gtest.h"
#include "graph/op.h"
#include "kernels/copy.h"
#include "kernels/index_ops.h"
#include "kernels/shape_ops.h"
#include "kernels/sort_ops.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::at;
using testing::unravel;
using testing::values;

IndexItem I(int64_t i) { return IndexItem::integer(i); }
IndexItem S(std::optional<int64_t> a, std::optional<int64_t> b, int64_t step) { return IndexItem::slice(a, b, step); }
IndexItem N() { return IndexItem::new_axis(); }
IndexItem E() { return IndexItem::ellipsis(); }
Tensor ints(std::vector<int64_t> v, Shape s, DType t = DType::Int64) {
  Tensor x = testing::from_ints(v, t);
  return x.as_strided(s, contiguous_strides(s), 0);
}
IndexItem A(std::vector<int64_t> v, Shape s) { return IndexItem::tensor(ints(v, s)); }
IndexItem M(std::vector<int64_t> v, Shape s) { return IndexItem::tensor(ints(v, s, DType::Bool)); }

struct Case {
  Shape shape;
  IndexItems items;
  Shape want_shape;
  std::vector<int64_t> want;  // x[items] for x = arange
  std::vector<int64_t> put;   // zeros with x[items] = arange(result) + 100
};

// clang-format off
const std::vector<Case>& golden() {
  static const std::vector<Case> cases = {
    {{5}, {I(1)}, {}, {1}, {0, 100, 0, 0, 0}},
    {{5}, {I(-1)}, {}, {4}, {0, 0, 0, 0, 100}},
    {{5}, {S(1, 4, 1)}, {3}, {1, 2, 3}, {0, 100, 101, 102, 0}},
    {{5}, {S(std::nullopt, std::nullopt, -1)}, {5}, {4, 3, 2, 1, 0}, {104, 103, 102, 101, 100}},
    {{5}, {S(4, 0, -2)}, {2}, {4, 2}, {0, 0, 101, 0, 100}},
    {{5}, {S(-100, 100, 1)}, {5}, {0, 1, 2, 3, 4}, {100, 101, 102, 103, 104}},
    {{5}, {S(100, -100, -1)}, {5}, {4, 3, 2, 1, 0}, {104, 103, 102, 101, 100}},
    {{5}, {S(3, 1, 1)}, {0}, {}, {0, 0, 0, 0, 0}},
    {{5}, {N()}, {1, 5}, {0, 1, 2, 3, 4}, {100, 101, 102, 103, 104}},
    {{5}, {E(), N()}, {5, 1}, {0, 1, 2, 3, 4}, {100, 101, 102, 103, 104}},
    {{3, 4}, {I(1)}, {4}, {4, 5, 6, 7}, {0, 0, 0, 0, 100, 101, 102, 103, 0, 0, 0, 0}},
    {{3, 4}, {S(std::nullopt, std::nullopt, 1), I(2)}, {3}, {2, 6, 10}, {0, 0, 100, 0, 0, 0, 101, 0, 0, 0, 102, 0}},
    {{3, 4}, {E(), I(-1)}, {3}, {3, 7, 11}, {0, 0, 0, 100, 0, 0, 0, 101, 0, 0, 0, 102}},
    {{3, 4}, {N(), I(1), N(), S(std::nullopt, std::nullopt, 2)}, {1, 1, 2}, {4, 6}, {0, 0, 0, 0, 100, 0, 101, 0, 0, 0, 0, 0}},
    {{3, 4}, {S(std::nullopt, std::nullopt, -1), S(1, std::nullopt, 2)}, {3, 2}, {9, 11, 5, 7, 1, 3}, {0, 104, 0, 105, 0, 102, 0, 103, 0, 100, 0, 101}},
    {{2, 3, 4}, {E()}, {2, 3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, {100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123}},
    {{2, 3, 4}, {I(1), E(), I(2)}, {3}, {14, 18, 22}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 101, 0, 0, 0, 102, 0}},
    {{2, 3, 4}, {E(), I(1), S(std::nullopt, std::nullopt, 1)}, {2, 4}, {4, 5, 6, 7, 16, 17, 18, 19}, {0, 0, 0, 0, 100, 101, 102, 103, 0, 0, 0, 0, 0, 0, 0, 0, 104, 105, 106, 107, 0, 0, 0, 0}},
    {{}, {E()}, {}, {0}, {100}},
    {{}, {N()}, {1}, {0}, {100}},
    {{}, {}, {}, {0}, {100}},
    {{0, 3}, {S(std::nullopt, std::nullopt, 1), I(1)}, {0}, {}, {}},
    {{2, 3, 4}, {S(1, 2, 1), N(), E(), S(3, 0, -2)}, {1, 1, 3, 2}, {15, 13, 19, 17, 23, 21}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 101, 0, 100, 0, 103, 0, 102, 0, 105, 0, 104}},
    {{5}, {A({0, 4, -1, 2, 2}, {5})}, {5}, {0, 4, 4, 2, 2}, {100, 0, 104, 0, 102}},
    {{5}, {A({0, 1, 2, 3}, {2, 2})}, {2, 2}, {0, 1, 2, 3}, {100, 101, 102, 103, 0}},
    {{3, 4}, {A({2, 0}, {2})}, {2, 4}, {8, 9, 10, 11, 0, 1, 2, 3}, {104, 105, 106, 107, 0, 0, 0, 0, 100, 101, 102, 103}},
    {{3, 4}, {S(std::nullopt, std::nullopt, 1), A({3, 0, 3}, {3})}, {3, 3}, {3, 0, 3, 7, 4, 7, 11, 8, 11}, {101, 0, 0, 102, 104, 0, 0, 105, 107, 0, 0, 108}},
    {{3, 4}, {A({0, 2}, {2}), A({1, 3}, {2})}, {2}, {1, 11}, {0, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 101}},
    {{3, 4}, {A({0, 2}, {2, 1}), A({0, 1, 3}, {3})}, {2, 3}, {0, 1, 3, 8, 9, 11}, {100, 101, 0, 102, 0, 0, 0, 0, 103, 104, 0, 105}},
    {{2, 3, 4}, {I(0), S(std::nullopt, std::nullopt, 1), A({0, 1}, {2})}, {2, 3}, {0, 4, 8, 1, 5, 9}, {100, 103, 0, 0, 101, 104, 0, 0, 102, 105, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {{2, 3, 4}, {S(std::nullopt, std::nullopt, 1), I(0), A({0, 1}, {2})}, {2, 2}, {0, 1, 12, 13}, {100, 101, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 102, 103, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {{2, 3, 4}, {A({0, 1}, {2}), N(), A({0, 1}, {2})}, {2, 1, 4}, {0, 1, 2, 3, 16, 17, 18, 19}, {100, 101, 102, 103, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 104, 105, 106, 107, 0, 0, 0, 0}},
    {{2, 3, 4}, {N(), S(std::nullopt, std::nullopt, 1), A({0, 2}, {2})}, {1, 2, 2, 4}, {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23}, {100, 101, 102, 103, 0, 0, 0, 0, 104, 105, 106, 107, 108, 109, 110, 111, 0, 0, 0, 0, 112, 113, 114, 115}},
    {{2, 3, 4}, {S(std::nullopt, std::nullopt, 1), N(), A({0, 2}, {2}), N()}, {2, 1, 2, 1, 4}, {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 20, 21, 22, 23}, {100, 101, 102, 103, 0, 0, 0, 0, 104, 105, 106, 107, 108, 109, 110, 111, 0, 0, 0, 0, 112, 113, 114, 115}},
    {{2, 3, 4}, {A({1}, {1}), E(), A({3}, {1})}, {1, 3}, {15, 19, 23}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 101, 0, 0, 0, 102}},
    {{2, 3, 4}, {E(), A({1, 3}, {2})}, {2, 3, 2}, {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}, {0, 100, 0, 101, 0, 102, 0, 103, 0, 104, 0, 105, 0, 106, 0, 107, 0, 108, 0, 109, 0, 110, 0, 111}},
    {{2, 3, 4}, {A({1, 0}, {2}), E()}, {2, 3, 4}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111}},
    {{2, 3, 4}, {S(std::nullopt, std::nullopt, -1), A({2, 1, 0, 0}, {2, 2}), S(1, 3, 1)}, {2, 2, 2, 2}, {21, 22, 17, 18, 13, 14, 13, 14, 9, 10, 5, 6, 1, 2, 1, 2}, {0, 114, 115, 0, 0, 110, 111, 0, 0, 108, 109, 0, 0, 106, 107, 0, 0, 102, 103, 0, 0, 100, 101, 0}},
    {{2, 3, 4}, {S(std::nullopt, std::nullopt, 1), A({0, 1}, {2, 1}), A({0, 1, 2}, {3})}, {2, 2, 3}, {0, 1, 2, 4, 5, 6, 12, 13, 14, 16, 17, 18}, {100, 101, 102, 0, 103, 104, 105, 0, 0, 0, 0, 0, 106, 107, 108, 0, 109, 110, 111, 0, 0, 0, 0, 0}},
    {{2, 3, 4}, {A({1}, {1}), S(std::nullopt, std::nullopt, 1), A({2}, {1})}, {1, 3}, {14, 18, 22}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 101, 0, 0, 0, 102, 0}},
    {{3}, {M({1, 0, 1}, {3})}, {2}, {0, 2}, {100, 0, 101}},
    {{2, 3}, {M({1, 0, 1, 0, 1, 1}, {2, 3})}, {4}, {0, 2, 4, 5}, {100, 0, 101, 0, 102, 103}},
    {{2, 3}, {S(std::nullopt, std::nullopt, 1), M({0, 1, 1}, {3})}, {2, 2}, {1, 2, 4, 5}, {0, 100, 101, 0, 102, 103}},
    {{2, 3}, {M({1, 1}, {2}), A({2, 0}, {2})}, {2}, {2, 3}, {0, 0, 100, 101, 0, 0}},
    {{2, 3, 4}, {M({1, 0, 1, 0, 0, 1}, {2, 3}), A({1, 2, 3}, {3})}, {3}, {1, 10, 23}, {0, 100, 0, 0, 0, 0, 0, 0, 0, 0, 101, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 102}},
    {{2, 3, 4}, {S(1, std::nullopt, 1), M({1, 0, 1}, {3}), S(std::nullopt, std::nullopt, 3)}, {1, 2, 2}, {12, 15, 20, 23}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 101, 0, 0, 0, 0, 102, 0, 0, 103}},
    {{2, 3}, {M({1}, {})}, {1, 2, 3}, {0, 1, 2, 3, 4, 5}, {100, 101, 102, 103, 104, 105}},
    {{2, 3}, {S(std::nullopt, std::nullopt, 1), M({1}, {})}, {2, 1, 3}, {0, 1, 2, 3, 4, 5}, {100, 101, 102, 103, 104, 105}},
    {{2, 3}, {A({0, 1}, {2}), M({1}, {})}, {2, 3}, {0, 1, 2, 3, 4, 5}, {100, 101, 102, 103, 104, 105}},
    {{2, 3}, {M({0}, {})}, {0, 2, 3}, {}, {0, 0, 0, 0, 0, 0}},
    {{}, {M({1}, {})}, {1}, {0}, {100}},
    {{2, 3, 4}, {A({1, 0, 1}, {1, 3}), S(std::nullopt, std::nullopt, 1), A({0, 3}, {2, 1})}, {2, 3, 3}, {12, 16, 20, 0, 4, 8, 12, 16, 20, 15, 19, 23, 3, 7, 11, 15, 19, 23}, {103, 0, 0, 112, 104, 0, 0, 113, 105, 0, 0, 114, 106, 0, 0, 115, 107, 0, 0, 116, 108, 0, 0, 117}},
    {{0, 3}, {A({}, {0})}, {0, 3}, {}, {}},
    {{4, 0}, {A({1, 3}, {2})}, {2, 0}, {}, {}},
    {{3, 4}, {A({}, {0})}, {0, 4}, {}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {{2, 3, 4}, {I(1), A({0, 2}, {2}), E()}, {2, 4}, {12, 13, 14, 15, 20, 21, 22, 23}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 101, 102, 103, 0, 0, 0, 0, 104, 105, 106, 107}},
    {{2, 3, 4}, {N(), I(1), A({0, 2}, {2}), S(std::nullopt, std::nullopt, 1)}, {1, 2, 4}, {12, 13, 14, 15, 20, 21, 22, 23}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 101, 102, 103, 0, 0, 0, 0, 104, 105, 106, 107}},

  };
  return cases;
}
// clang-format on

bool has_array(const IndexItems& items) {
  for (auto& it : items)
    if (it.kind == IndexItem::Kind::Array) return true;
  return false;
}

std::string describe(const Case& c) {
  std::ostringstream os;
  os << "x" << shape_str(c.shape) << "[";
  for (auto& it : c.items) os << static_cast<int>(it.kind) << ",";
  return os.str() + "]";
}

TEST(Index, GoldenNumpyResultsOnEveryLayoutAndDtype) {
  for (const Case& c : golden()) {
    for (DType t : {DType::Int64, DType::Int32, DType::Float32, DType::Float64}) {
      Tensor base = cast(testing::iota(c.shape, DType::Int64), t);
      for (const Tensor& x : testing::layouts(base)) {
        Tensor y = advanced_index(x, c.items);
        ASSERT_EQ(y.shape(), c.want_shape) << describe(c);
        ASSERT_EQ(y.dtype(), t);
        for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(y.item_int(i), c.want[i]) << describe(c);
        if (!has_array(c.items)) {
          EXPECT_TRUE(y.same_storage(x)) << describe(c);
          Tensor v = basic_index_view(x, c.items);
          EXPECT_EQ(values(v), values(y));
        } else {
          EXPECT_FALSE(y.same_storage(x));
        }
      }
    }
  }
}

TEST(Index, BoolTensorsAreIndexedToo) {
  for (const Case& c : golden()) {
    Tensor x = cast(testing::iota(c.shape, DType::Int64), DType::Bool);
    Tensor y = advanced_index(testing::gapped(x), c.items);
    ASSERT_EQ(y.shape(), c.want_shape);
    for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(y.item_int(i), c.want[i] != 0) << describe(c);
  }
}

TEST(IndexPut, GoldenNumpyResults) {
  for (const Case& c : golden()) {
    for (DType t : {DType::Int64, DType::Float32}) {
      for (int layout = 0; layout < 3; ++layout) {
        Tensor z = testing::layouts(Tensor::zeros(c.shape, t))[layout];
        Tensor value = testing::iota(c.want_shape, DType::Int64);
        value = call_op1("add", {value, Tensor::scalar_int(100, DType::Int64)});
        index_put(z, c.items, value);
        for (int64_t i = 0; i < z.numel(); ++i) ASSERT_EQ(z.item_int(i), c.put[i]) << describe(c);
      }
    }
  }
}

TEST(IndexPut, ValueBroadcastsAndCasts) {
  Tensor x = Tensor::zeros({3, 4}, DType::Int32);
  index_put(x, {S(std::nullopt, std::nullopt, 1), A({0, 2}, {2})}, testing::from_doubles({1.7, -2.5}, DType::Float64));
  for (int64_t r = 0; r < 3; ++r) {
    EXPECT_EQ(at(x, {r, 0}), 1);
    EXPECT_EQ(at(x, {r, 2}), -2);
    EXPECT_EQ(at(x, {r, 1}), 0);
  }
  index_put(x, {I(1)}, Tensor::scalar(9, DType::Float32));
  for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(at(x, {1, c}), 9);
  // numpy drops leading size-1 dims of the value.
  index_put(x, {I(0)}, testing::iota({1, 1, 4}, DType::Int64));
  for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(at(x, {0, c}), c);
  // A value that overlaps the target is read before anything is written.
  Tensor y = testing::iota({5}, DType::Float32);
  index_put(y, {S(std::nullopt, std::nullopt, 1)}, y.as_strided({5}, {-1}, 4));
  EXPECT_EQ(values(y), (std::vector<double>{4, 3, 2, 1, 0}));
  Tensor w = testing::iota({5}, DType::Float32);
  index_put(w, {A({0, 1, 2, 3, 4}, {5})}, w.as_strided({5}, {-1}, 4));
  EXPECT_EQ(values(w), (std::vector<double>{4, 3, 2, 1, 0}));
  PJ_EXPECT_ERROR(index_put(x, {A({0, 1}, {2})}, testing::iota({3}, DType::Int32)), Value,
                  "could not broadcast input tensor from shape (3,) into shape (2, 4)");
  PJ_EXPECT_ERROR(index_put(x, {I(0)}, testing::iota({2, 4}, DType::Int32)), Value,
                  "could not broadcast input tensor from shape (2, 4) into shape (4,)");
}

// Python's list(range(n))[start:stop:step] for many bounds (golden, from CPython).
const char* kSlices = R"(
0 _ _ -2 : 
0 _ _ -1 : 
0 _ _ 1 : 
0 _ _ 3 : 
0 _ -7 -2 : 
0 _ -7 -1 : 
0 _ -7 1 : 
0 _ -7 3 : 
0 _ -2 -2 : 
0 _ -2 -1 : 
0 _ -2 1 : 
0 _ -2 3 : 
0 _ 0 -2 : 
0 _ 0 -1 : 
0 _ 0 1 : 
0 _ 0 3 : 
0 _ 3 -2 : 
0 _ 3 -1 : 
0 _ 3 1 : 
0 _ 3 3 : 
0 _ 7 -2 : 
0 _ 7 -1 : 
0 _ 7 1 : 
0 _ 7 3 : 
0 -7 _ -2 : 
0 -7 _ -1 : 
0 -7 _ 1 : 
0 -7 _ 3 : 
0 -7 -7 -2 : 
0 -7 -7 -1 : 
0 -7 -7 1 : 
0 -7 -7 3 : 
0 -7 -2 -2 : 
0 -7 -2 -1 : 
0 -7 -2 1 : 
0 -7 -2 3 : 
0 -7 0 -2 : 
0 -7 0 -1 : 
0 -7 0 1 : 
0 -7 0 3 : 
0 -7 3 -2 : 
0 -7 3 -1 : 
0 -7 3 1 : 
0 -7 3 3 : 
0 -7 7 -2 : 
0 -7 7 -1 : 
0 -7 7 1 : 
0 -7 7 3 : 
0 -2 _ -2 : 
0 -2 _ -1 : 
0 -2 _ 1 : 
0 -2 _ 3 : 
0 -2 -7 -2 : 
0 -2 -7 -1 : 
0 -2 -7 1 : 
0 -2 -7 3 : 
0 -2 -2 -2 : 
0 -2 -2 -1 : 
0 -2 -2 1 : 
0 -2 -2 3 : 
0 -2 0 -2 : 
0 -2 0 -1 : 
0 -2 0 1 : 
0 -2 0 3 : 
0 -2 3 -2 : 
0 -2 3 -1 : 
0 -2 3 1 : 
0 -2 3 3 : 
0 -2 7 -2 : 
0 -2 7 -1 : 
0 -2 7 1 : 
0 -2 7 3 : 
0 0 _ -2 : 
0 0 _ -1 : 
0 0 _ 1 : 
0 0 _ 3 : 
0 0 -7 -2 : 
0 0 -7 -1 : 
0 0 -7 1 : 
0 0 -7 3 : 
0 0 -2 -2 : 
0 0 -2 -1 : 
0 0 -2 1 : 
0 0 -2 3 : 
0 0 0 -2 : 
0 0 0 -1 : 
0 0 0 1 : 
0 0 0 3 : 
0 0 3 -2 : 
0 0 3 -1 : 
0 0 3 1 : 
0 0 3 3 : 
0 0 7 -2 : 
0 0 7 -1 : 
0 0 7 1 : 
0 0 7 3 : 
0 3 _ -2 : 
0 3 _ -1 : 
0 3 _ 1 : 
0 3 _ 3 : 
0 3 -7 -2 : 
0 3 -7 -1 : 
0 3 -7 1 : 
0 3 -7 3 : 
0 3 -2 -2 : 
0 3 -2 -1 : 
0 3 -2 1 : 
0 3 -2 3 : 
0 3 0 -2 : 
0 3 0 -1 : 
0 3 0 1 : 
0 3 0 3 : 
0 3 3 -2 : 
0 3 3 -1 : 
0 3 3 1 : 
0 3 3 3 : 
0 3 7 -2 : 
0 3 7 -1 : 
0 3 7 1 : 
0 3 7 3 : 
0 7 _ -2 : 
0 7 _ -1 : 
0 7 _ 1 : 
0 7 _ 3 : 
0 7 -7 -2 : 
0 7 -7 -1 : 
0 7 -7 1 : 
0 7 -7 3 : 
0 7 -2 -2 : 
0 7 -2 -1 : 
0 7 -2 1 : 
0 7 -2 3 : 
0 7 0 -2 : 
0 7 0 -1 : 
0 7 0 1 : 
0 7 0 3 : 
0 7 3 -2 : 
0 7 3 -1 : 
0 7 3 1 : 
0 7 3 3 : 
0 7 7 -2 : 
0 7 7 -1 : 
0 7 7 1 : 
0 7 7 3 : 
5 _ _ -2 : 4 2 0
5 _ _ -1 : 4 3 2 1 0
5 _ _ 1 : 0 1 2 3 4
5 _ _ 3 : 0 3
5 _ -7 -2 : 4 2 0
5 _ -7 -1 : 4 3 2 1 0
5 _ -7 1 : 
5 _ -7 3 : 
5 _ -2 -2 : 4
5 _ -2 -1 : 4
5 _ -2 1 : 0 1 2
5 _ -2 3 : 0
5 _ 0 -2 : 4 2
5 _ 0 -1 : 4 3 2 1
5 _ 0 1 : 
5 _ 0 3 : 
5 _ 3 -2 : 4
5 _ 3 -1 : 4
5 _ 3 1 : 0 1 2
5 _ 3 3 : 0
5 _ 7 -2 : 
5 _ 7 -1 : 
5 _ 7 1 : 0 1 2 3 4
5 _ 7 3 : 0 3
5 -7 _ -2 : 
5 -7 _ -1 : 
5 -7 _ 1 : 0 1 2 3 4
5 -7 _ 3 : 0 3
5 -7 -7 -2 : 
5 -7 -7 -1 : 
5 -7 -7 1 : 
5 -7 -7 3 : 
5 -7 -2 -2 : 
5 -7 -2 -1 : 
5 -7 -2 1 : 0 1 2
5 -7 -2 3 : 0
5 -7 0 -2 : 
5 -7 0 -1 : 
5 -7 0 1 : 
5 -7 0 3 : 
5 -7 3 -2 : 
5 -7 3 -1 : 
5 -7 3 1 : 0 1 2
5 -7 3 3 : 0
5 -7 7 -2 : 
5 -7 7 -1 : 
5 -7 7 1 : 0 1 2 3 4
5 -7 7 3 : 0 3
5 -2 _ -2 : 3 1
5 -2 _ -1 : 3 2 1 0
5 -2 _ 1 : 3 4
5 -2 _ 3 : 3
5 -2 -7 -2 : 3 1
5 -2 -7 -1 : 3 2 1 0
5 -2 -7 1 : 
5 -2 -7 3 : 
5 -2 -2 -2 : 
5 -2 -2 -1 : 
5 -2 -2 1 : 
5 -2 -2 3 : 
5 -2 0 -2 : 3 1
5 -2 0 -1 : 3 2 1
5 -2 0 1 : 
5 -2 0 3 : 
5 -2 3 -2 : 
5 -2 3 -1 : 
5 -2 3 1 : 
5 -2 3 3 : 
5 -2 7 -2 : 
5 -2 7 -1 : 
5 -2 7 1 : 3 4
5 -2 7 3 : 3
5 0 _ -2 : 0
5 0 _ -1 : 0
5 0 _ 1 : 0 1 2 3 4
5 0 _ 3 : 0 3
5 0 -7 -2 : 0
5 0 -7 -1 : 0
5 0 -7 1 : 
5 0 -7 3 : 
5 0 -2 -2 : 
5 0 -2 -1 : 
5 0 -2 1 : 0 1 2
5 0 -2 3 : 0
5 0 0 -2 : 
5 0 0 -1 : 
5 0 0 1 : 
5 0 0 3 : 
5 0 3 -2 : 
5 0 3 -1 : 
5 0 3 1 : 0 1 2
5 0 3 3 : 0
5 0 7 -2 : 
5 0 7 -1 : 
5 0 7 1 : 0 1 2 3 4
5 0 7 3 : 0 3
5 3 _ -2 : 3 1
5 3 _ -1 : 3 2 1 0
5 3 _ 1 : 3 4
5 3 _ 3 : 3
5 3 -7 -2 : 3 1
5 3 -7 -1 : 3 2 1 0
5 3 -7 1 : 
5 3 -7 3 : 
5 3 -2 -2 : 
5 3 -2 -1 : 
5 3 -2 1 : 
5 3 -2 3 : 
5 3 0 -2 : 3 1
5 3 0 -1 : 3 2 1
5 3 0 1 : 
5 3 0 3 : 
5 3 3 -2 : 
5 3 3 -1 : 
5 3 3 1 : 
5 3 3 3 : 
5 3 7 -2 : 
5 3 7 -1 : 
5 3 7 1 : 3 4
5 3 7 3 : 3
5 7 _ -2 : 4 2 0
5 7 _ -1 : 4 3 2 1 0
5 7 _ 1 : 
5 7 _ 3 : 
5 7 -7 -2 : 4 2 0
5 7 -7 -1 : 4 3 2 1 0
5 7 -7 1 : 
5 7 -7 3 : 
5 7 -2 -2 : 4
5 7 -2 -1 : 4
5 7 -2 1 : 
5 7 -2 3 : 
5 7 0 -2 : 4 2
5 7 0 -1 : 4 3 2 1
5 7 0 1 : 
5 7 0 3 : 
5 7 3 -2 : 4
5 7 3 -1 : 4
5 7 3 1 : 
5 7 3 3 : 
5 7 7 -2 : 
5 7 7 -1 : 
5 7 7 1 : 
5 7 7 3 : 
)";

TEST(Index, SlicesMatchPythonLists) {
  std::istringstream in(kSlices);
  std::string line;
  int n_cases = 0;
  auto bound = [](const std::string& s) { return s == "_" ? std::nullopt : std::optional<int64_t>(std::stoll(s)); };
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream ls(line);
    int64_t n, step;
    std::string a, b, colon;
    ls >> n >> a >> b >> step >> colon;
    std::vector<double> want;
    int64_t v;
    while (ls >> v) want.push_back(static_cast<double>(v));
    Tensor x = testing::iota({n}, DType::Int64);
    Tensor y = basic_index_view(x, {S(bound(a), bound(b), step)});
    ASSERT_EQ(values(y), want) << line;
    EXPECT_TRUE(y.same_storage(x));
    ++n_cases;
  }
  EXPECT_EQ(n_cases, 288);
}

TEST(Index, Errors) {
  Tensor x = testing::iota({3}, DType::Float32);
  Tensor m = testing::iota({2, 3}, DType::Float32);
  PJ_EXPECT_ERROR(basic_index_view(x, {I(5)}), Index, "index 5 is out of bounds for axis 0 with size 3");
  PJ_EXPECT_ERROR(basic_index_view(x, {I(-4)}), Index, "index -4 is out of bounds for axis 0 with size 3");
  PJ_EXPECT_ERROR(basic_index_view(m, {S(std::nullopt, std::nullopt, 1), I(3)}), Index,
                  "index 3 is out of bounds for axis 1 with size 3");
  PJ_EXPECT_ERROR(basic_index_view(m, {I(0), I(0), I(0)}), Index,
                  "too many indices for tensor: tensor is 2-dimensional, but 3 were indexed");
  PJ_EXPECT_ERROR(basic_index_view(testing::iota({}, DType::Float32), {I(0)}), Index,
                  "too many indices for tensor: tensor is 0-dimensional, but 1 were indexed");
  PJ_EXPECT_ERROR(advanced_index(m, {M({1, 0, 1, 0, 1, 0}, {2, 3}), I(0)}), Index,
                  "too many indices for tensor: tensor is 2-dimensional, but 3 were indexed");
  PJ_EXPECT_ERROR(basic_index_view(m, {E(), E()}), Index, "an index can only have a single ellipsis ('...')");
  PJ_EXPECT_ERROR(basic_index_view(x, {S(0, 2, 0)}), Value, "slice step cannot be zero");
  PJ_EXPECT_ERROR(advanced_index(x, {M({1, 0}, {2})}), Index,
                  "boolean index did not match indexed tensor along axis 0; size of axis is 3 but size of "
                  "corresponding boolean axis is 2");
  PJ_EXPECT_ERROR(advanced_index(m, {S(std::nullopt, std::nullopt, 1), M({1, 0}, {2})}), Index,
                  "boolean index did not match indexed tensor along axis 1; size of axis is 3 but size of "
                  "corresponding boolean axis is 2");
  PJ_EXPECT_ERROR(advanced_index(x, {A({0, 5}, {2})}), Index, "index 5 is out of bounds for axis 0 with size 3");
  PJ_EXPECT_ERROR(advanced_index(m, {S(std::nullopt, std::nullopt, 1), A({-4}, {1})}), Index,
                  "index -4 is out of bounds for axis 1 with size 3");
  PJ_EXPECT_ERROR(advanced_index(m, {A({1}, {1}), I(7)}), Index, "index 7 is out of bounds for axis 1 with size 3");
  PJ_EXPECT_ERROR(advanced_index(m, {A({0, 1}, {2}), A({0, 1, 2}, {3})}), Index,
                  "shape mismatch: indexing arrays could not be broadcast together with shapes (2,) (3,)");
  PJ_EXPECT_ERROR(advanced_index(m, {M({0}, {}), A({0, 1}, {2})}), Index,
                  "shape mismatch: indexing arrays could not be broadcast together with shapes (0,) (2,)");
  PJ_EXPECT_ERROR(advanced_index(x, {IndexItem::tensor(testing::iota({2}, DType::Float32))}), Index,
                  "arrays used as indices must be of integer (or boolean) type");
  PJ_EXPECT_ERROR(index_put(x, {I(3)}, Tensor::scalar(1, DType::Float32)), Index,
                  "index 3 is out of bounds for axis 0 with size 3");
}

TEST(Index, BigGatherAndScatterGoParallel) {
  Tensor x = testing::random({300, 257}, DType::Float32, 1);
  std::vector<int64_t> rows, cols;
  for (int i = 0; i < 500; ++i) rows.push_back((i * 37) % 300 - 150);
  Tensor r = ints(rows, {500});
  for (const Tensor& src : {x, testing::fortran(x)}) {
    Tensor y = advanced_index(src, {IndexItem::tensor(r)});  // rows: memcpy runs
    ASSERT_EQ(y.shape(), Shape({500, 257}));
    for (int64_t i = 0; i < y.numel(); i += 13) {
      auto yi = unravel(i, y.shape());
      int64_t row = rows[yi[0]] < 0 ? rows[yi[0]] + 300 : rows[yi[0]];
      ASSERT_EQ(y.item_double(i), at(x, {row, yi[1]}));
    }
    Tensor z = advanced_index(src, {S(std::nullopt, std::nullopt, 1), IndexItem::tensor(ints({3, 1, 256}, {3}))});
    for (int64_t i = 0; i < z.numel(); ++i) {
      auto zi = unravel(i, z.shape());
      int64_t c[] = {3, 1, 256};
      ASSERT_EQ(z.item_double(i), at(x, {zi[0], c[zi[1]]}));
    }
  }
  Tensor t = Tensor::zeros({300, 257}, DType::Float64);
  index_put(t, {IndexItem::tensor(r)}, testing::iota({500, 257}, DType::Float64));
  // Last write wins: row k of t holds the last i with rows[i] == k.
  for (int64_t k = 0; k < 300; ++k) {
    int64_t last = -1;
    for (int64_t i = 0; i < 500; ++i)
      if ((rows[i] + 300) % 300 == k) last = i;
    ASSERT_EQ(at(t, {k, 5}), last < 0 ? 0 : last * 257 + 5);
  }
}

TEST(Index, BigMaskReadsAndWritesInParallel) {
  Tensor x = testing::random({400, 301}, DType::Float32, 8);
  Tensor mask = call_op1("gt", {x, Tensor::scalar(0, DType::Float32)});
  Tensor picked = advanced_index(x, {IndexItem::tensor(mask)});
  std::vector<double> want;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.item_double(i) > 0) want.push_back(x.item_double(i));
  EXPECT_EQ(values(picked), want);
  Tensor y = x.clone();
  index_put(y, {IndexItem::tensor(mask)}, testing::iota({static_cast<int64_t>(want.size())}, DType::Float32));
  int64_t k = 0;
  for (int64_t i = 0; i < x.numel(); ++i)
    ASSERT_EQ(y.item_double(i), x.item_double(i) > 0 ? static_cast<double>(k++) : x.item_double(i));
  // A mask over the rows, then a column slice.
  Tensor rows = ints(std::vector<int64_t>(400, 1), {400}, DType::Bool);
  Tensor z = Tensor::zeros({400, 301}, DType::Float32);
  index_put(z, {IndexItem::tensor(rows), S(1, std::nullopt, 2)}, Tensor::scalar(2, DType::Float32));
  for (int64_t i = 0; i < z.numel(); i += 11) ASSERT_EQ(z.item_double(i), (i % 301) % 2 == 1 ? 2 : 0);
}

TEST(Index, OpsCarryItemsAsAnAttribute) {
  Tensor x = testing::iota({4, 5}, DType::Float32);
  IndexItems items = {S(1, std::nullopt, 2), A({4, 0, 4}, {3})};
  Tensor idx = items[1].array;
  Attrs attrs{{"items", AttrValue(encode_index_items(items))}};
  Tensor y = call_op1("index", {x, idx}, attrs);
  EXPECT_EQ(y.shape(), Shape({2, 3}));
  EXPECT_EQ(values(y), values(advanced_index(x, items)));
  EXPECT_EQ(get_op("index").infer({meta_of(x), meta_of(idx)}, attrs)[0].shape, Shape({2, 3}));
  // basic_index is a view.
  IndexItems basic = {N(), E(), S(std::nullopt, std::nullopt, -1)};
  Attrs battrs{{"items", AttrValue(encode_index_items(basic))}};
  Tensor v = call_op1("basic_index", {x}, battrs);
  EXPECT_TRUE(v.same_storage(x));
  EXPECT_EQ(v.shape(), Shape({1, 4, 5}));
  EXPECT_EQ(at(v, {0, 0, 0}), 4);
  EXPECT_TRUE(get_op("basic_index").is_view);
  EXPECT_EQ(get_op("basic_index").infer({meta_of(x)}, battrs)[0].shape, Shape({1, 4, 5}));
  // index_put is functional: x is untouched.
  Tensor p = call_op1("index_put", {x, Tensor::scalar(-1, DType::Float32), idx}, attrs);
  EXPECT_FALSE(p.same_storage(x));
  EXPECT_EQ(at(p, {1, 4}), -1);
  EXPECT_EQ(at(p, {0, 4}), 4);
  EXPECT_EQ(at(x, {1, 4}), 9);
  // Round trip of every item kind, None bounds included.
  IndexItems all = {I(-3), S(std::nullopt, -1, -2), N(), E(), A({1}, {1})};
  IndexItems back = decode_index_items(encode_index_items(all), {all[4].array});
  ASSERT_EQ(back.size(), all.size());
  EXPECT_EQ(back[0].index, -3);
  EXPECT_FALSE(back[1].start.has_value());
  EXPECT_EQ(*back[1].stop, -1);
  EXPECT_EQ(back[1].step, -2);
  EXPECT_EQ(back[2].kind, IndexItem::Kind::NewAxis);
  EXPECT_EQ(back[3].kind, IndexItem::Kind::Ellipsis);
  EXPECT_TRUE(back[4].array.same_storage(all[4].array));
  // A mask's result size depends on its data: infer cannot know it.
  Tensor mask = ints({1, 0, 1, 1}, {4}, DType::Bool);
  Attrs mattrs{{"items", AttrValue(encode_index_items({IndexItem::tensor(mask)}))}};
  EXPECT_EQ(call_op1("index", {x, mask}, mattrs).shape(), Shape({3, 5}));
  PJ_EXPECT_ERROR(get_op("index").infer({meta_of(x), meta_of(mask)}, mattrs), NotImplemented,
                  "the shape of an index by a boolean mask depends on its values");
  EXPECT_EQ(index_shape({2, 3, 4}, {I(0), S(std::nullopt, std::nullopt, 1), A({0, 1}, {2})}), Shape({2, 3}));
}

// ---- gather / index_select ----------------------------------------------------------------------

TEST(Gather, MatchesReference) {
  for (DType t : testing::all_dtypes()) {
    for (Shape ps : {Shape{5}, Shape{3, 4}, Shape{2, 3, 4}, Shape{4, 1, 3}}) {
      int nd = static_cast<int>(ps.size());
      for (Shape is : {Shape{}, Shape{3}, Shape{2, 2}, Shape{0}}) {
        for (int ax = -nd; ax < nd; ++ax) {
          int a = ax < 0 ? ax + nd : ax;
          for (const Tensor& p : testing::layouts(testing::random(ps, t, 4))) {
            for (DType it : {DType::Int32, DType::Int64}) {
              std::vector<int64_t> iv;
              for (int64_t k = 0; k < shape_numel(is); ++k) iv.push_back((k * 5 + 1) % (2 * ps[a]) - ps[a]);
              Tensor idx = testing::fortran(ints(iv, is, it));
              Tensor y = call_op1("gather", {p, idx}, Attrs{{"axis", int64_t(ax)}});
              Shape want(ps.begin(), ps.begin() + a);
              want.insert(want.end(), is.begin(), is.end());
              want.insert(want.end(), ps.begin() + a + 1, ps.end());
              ASSERT_EQ(y.shape(), want);
              for (int64_t i = 0; i < y.numel(); ++i) {
                auto yi = unravel(i, want);
                std::vector<int64_t> ii(yi.begin() + a, yi.begin() + a + is.size());
                int64_t k = iv[testing::ravel(ii, is)];
                std::vector<int64_t> pi(yi.begin(), yi.begin() + a);
                pi.push_back(k < 0 ? k + ps[a] : k);
                pi.insert(pi.end(), yi.begin() + a + is.size(), yi.end());
                ASSERT_EQ(y.item_double(i), at(p, pi));
              }
            }
          }
        }
      }
    }
  }
}

TEST(Gather, Errors) {
  Tensor p = testing::iota({3, 4}, DType::Float32);
  PJ_EXPECT_ERROR(gather(p, ints({0, 3}, {2}), 0), Index, "index 3 is out of bounds for axis 0 with size 3");
  PJ_EXPECT_ERROR(gather(p, ints({-5}, {1}), 1), Index, "index -5 is out of bounds for axis 1 with size 4");
  PJ_EXPECT_ERROR(call_op1("gather", {p, testing::iota({2}, DType::Float32)}, Attrs{{"axis", int64_t(0)}}), Type,
                  "gather(): input_indices must be an integer tensor, but got Float32");
  PJ_EXPECT_ERROR(gather(p, ints({0}, {1}), 2), Index, "axis 2 is out of bounds for tensor of dimension 2");
  PJ_EXPECT_ERROR(gather(testing::iota({}, DType::Float32), ints({0}, {1}), 0), Value,
                  "gather(): input_params must be at least 1-D");
}

TEST(IndexSelect, MatchesGatherAndErrors) {
  Tensor x = testing::random({4, 5, 3}, DType::Float64, 9);
  Tensor idx = ints({4, 0, -1, 2}, {4}, DType::Int32);
  Tensor y = call_op1("index_select", {testing::gapped(x), idx}, Attrs{{"axis", int64_t(1)}});
  EXPECT_EQ(y.shape(), Shape({4, 4, 3}));
  EXPECT_EQ(values(y), values(gather(x, idx, 1)));
  EXPECT_EQ(index_select(x, -1, ints({2}, {1})).shape(), Shape({4, 5, 1}));
  PJ_EXPECT_ERROR(index_select(x, 0, ints({0, 1}, {1, 2})), Value,
                  "index_select(): index must be a 1-D tensor, but got a 2-D tensor");
  PJ_EXPECT_ERROR(index_select(x, 0, testing::iota({2}, DType::Bool)), Type,
                  "index_select(): index must be an integer tensor, but got Bool");
  PJ_EXPECT_ERROR(index_select(x, 0, ints({4}, {1})), Index, "index 4 is out of bounds for axis 0 with size 4");
}

// ---- one_hot ------------------------------------------------------------------------------------

TEST(OneHot, MatchesReference) {
  for (Shape s : {Shape{}, Shape{5}, Shape{2, 3}, Shape{0, 2}}) {
    int nd = static_cast<int>(s.size());
    std::vector<int64_t> iv;
    for (int64_t k = 0; k < shape_numel(s); ++k) iv.push_back(k % 6 - 1);  // -1 and 4 are out of range
    for (DType it : {DType::Int32, DType::Int64}) {
      Tensor idx = testing::gapped(ints(iv, s, it));
      for (int64_t ax = -1; ax <= nd; ++ax) {
        for (DType ot : {DType::Float32, DType::Int64, DType::Bool}) {
          Attrs a{{"depth", int64_t(4)}, {"on_value", 5.0}, {"off_value", int64_t(-2)}, {"axis", ax}, {"dtype", ot}};
          if (ot == DType::Bool) {
            a.set("on_value", true);
            a.set("off_value", false);
          }
          Tensor y = call_op1("one_hot", {idx}, a);
          int pos = ax == -1 ? nd : static_cast<int>(ax);
          Shape want = s;
          want.insert(want.begin() + pos, 4);
          ASSERT_EQ(y.shape(), want);
          ASSERT_EQ(y.dtype(), ot);
          for (int64_t i = 0; i < y.numel(); ++i) {
            auto yi = unravel(i, want);
            int64_t d = yi[pos];
            yi.erase(yi.begin() + pos);
            bool hot = iv[testing::ravel(yi, s)] == d;
            double on = ot == DType::Bool ? 1 : 5, off = ot == DType::Bool ? 0 : -2;
            ASSERT_EQ(y.item_double(i), hot ? on : off);
          }
        }
      }
    }
  }
  Tensor d = call_op1("one_hot", {ints({1}, {1})}, Attrs{{"depth", int64_t(3)}});
  EXPECT_EQ(d.dtype(), DType::Float32);
  EXPECT_EQ(values(d), (std::vector<double>{0, 1, 0}));
  PJ_EXPECT_ERROR(call_op1("one_hot", {ints({1}, {1})}, Attrs{{"depth", int64_t(-1)}}), Value,
                  "one_hot(): depth must be non-negative, but got -1");
  PJ_EXPECT_ERROR(call_op1("one_hot", {testing::iota({2}, DType::Float32)}, Attrs{{"depth", int64_t(2)}}), Type,
                  "one_hot(): indices must be an integer tensor, but got Float32");
  PJ_EXPECT_ERROR(call_op1("one_hot", {ints({1}, {1})}, Attrs{{"depth", int64_t(2)}, {"axis", int64_t(2)}}), Index,
                  "axis 2 is out of bounds for tensor of dimension 2");
}

// ---- sort / topk --------------------------------------------------------------------------------

// (value, index) of one row, in the order a stable sort gives; NaN above everything.
std::vector<std::pair<double, int64_t>> ref_sorted_row(const std::vector<double>& row, bool descending) {
  std::vector<std::pair<double, int64_t>> v;
  for (size_t i = 0; i < row.size(); ++i) v.push_back({row[i], static_cast<int64_t>(i)});
  auto key = [](double x) { return std::isnan(x) ? INFINITY : x; };
  auto rank = [](double x) { return std::isnan(x) ? 1 : 0; };
  std::stable_sort(v.begin(), v.end(), [&](auto& a, auto& b) {
    double ka = key(a.first), kb = key(b.first);
    if (ka != kb) return descending ? ka > kb : ka < kb;
    return descending ? rank(a.first) > rank(b.first) : rank(a.first) < rank(b.first);
  });
  return v;
}

// Calls f(row values, output multi-index of element j) for each row of `shape` along `axis`.
template <typename F>
void for_rows(const Tensor& x, int axis, F f) {
  Shape s = x.shape();
  if (s.empty()) {
    f(std::vector<double>{x.item_double()}, [](int64_t) { return std::vector<int64_t>{}; });
    return;
  }
  Shape outer = s;
  outer.erase(outer.begin() + axis);
  for (int64_t r = 0; r < shape_numel(outer); ++r) {
    auto oi = unravel(r, outer);
    auto idx_of = [&](int64_t j) {
      auto v = oi;
      v.insert(v.begin() + axis, j);
      return v;
    };
    std::vector<double> row;
    for (int64_t j = 0; j < s[axis]; ++j) row.push_back(at(x, idx_of(j)));
    f(row, idx_of);
  }
}

Tensor with_ties_and_nans(Shape s, DType t, unsigned seed) {
  Tensor x = testing::random(s, t, seed);
  if (t == DType::Float32 || t == DType::Float64)
    for (int64_t i = 0; i < x.numel(); i += 5) testing::set_item(x, i, NAN);
  for (int64_t i = 2; i < x.numel(); i += 4) testing::set_item(x, i, 1);  // ties
  return x;
}

TEST(Sort, StableBothWaysOnEveryDtype) {
  for (DType t : testing::all_dtypes()) {
    for (Shape s : {Shape{}, Shape{0}, Shape{9}, Shape{3, 7}, Shape{2, 5, 3}, Shape{4, 1}}) {
      int nd = static_cast<int>(s.size());
      for (const Tensor& x : testing::layouts(with_ties_and_nans(s, t, 11))) {
        for (int ax = -std::max(nd, 1); ax < std::max(nd, 1); ++ax) {
          for (bool desc : {false, true}) {
            Tensors out = call_op(get_op("sort"), {x}, Attrs{{"axis", int64_t(ax)}, {"descending", desc}});
            ASSERT_EQ(out[0].shape(), s);
            ASSERT_EQ(out[1].dtype(), DType::Int64);
            int a = nd == 0 ? 0 : (ax < 0 ? ax + nd : ax);
            for_rows(x, a, [&](const std::vector<double>& row, auto idx_of) {
              auto want = ref_sorted_row(row, desc);
              for (size_t j = 0; j < want.size(); ++j) {
                double got = at(out[0], idx_of(j));
                if (std::isnan(want[j].first)) ASSERT_TRUE(std::isnan(got));
                else ASSERT_EQ(got, want[j].first);
                ASSERT_EQ(at(out[1], idx_of(j)), want[j].second);
              }
            });
          }
        }
      }
    }
  }
  PJ_EXPECT_ERROR(call_op(get_op("sort"), {testing::iota({2, 3}, DType::Float32)}, Attrs{{"axis", int64_t(2)}}),
                  Index, "axis 2 is out of bounds for tensor of dimension 2");
}

TEST(TopK, MatchesReference) {
  for (DType t : testing::all_dtypes()) {
    for (Shape s : {Shape{9}, Shape{3, 7}, Shape{2, 5, 3}}) {
      int nd = static_cast<int>(s.size());
      for (const Tensor& x : testing::layouts(with_ties_and_nans(s, t, 12))) {
        for (int ax = -nd; ax < nd; ++ax) {
          int a = ax < 0 ? ax + nd : ax;
          for (int64_t k : {int64_t(0), int64_t(1), int64_t(2), s[a]}) {
            for (bool largest : {true, false}) {
              for (bool sorted : {true, false}) {
                Tensors out = call_op(get_op("topk"), {x}, Attrs{{"k", k}, {"axis", int64_t(ax)},
                                                               {"largest", largest}, {"sorted", sorted}});
                Shape want_shape = s;
                want_shape[a] = k;
                ASSERT_EQ(out[0].shape(), want_shape);
                for_rows(x, a, [&](const std::vector<double>& row, auto idx_of) {
                  auto ref = ref_sorted_row(row, largest);  // stable: ties by lower index
                  ref.resize(k);
                  if (!sorted)
                    std::sort(ref.begin(), ref.end(), [](auto& p, auto& q) { return p.second < q.second; });
                  for (int64_t j = 0; j < k; ++j) {
                    double got = at(out[0], idx_of(j));
                    if (std::isnan(ref[j].first)) ASSERT_TRUE(std::isnan(got));
                    else ASSERT_EQ(got, ref[j].first);
                    ASSERT_EQ(at(out[1], idx_of(j)), ref[j].second);
                  }
                });
              }
            }
          }
        }
      }
    }
  }
  Tensor x = testing::iota({2, 3}, DType::Float32);
  PJ_EXPECT_ERROR(call_op(get_op("topk"), {x}, Attrs{{"k", int64_t(4)}}), Value,
                  "topk(): k=4 is out of range for axis 1 with size 3");
  PJ_EXPECT_ERROR(call_op(get_op("topk"), {x}, Attrs{{"k", int64_t(-1)}, {"axis", int64_t(0)}}), Value,
                  "topk(): k=-1 is out of range for axis 0 with size 2");
  Tensor s = Tensor::scalar(3, DType::Int32);
  Tensors one = call_op(get_op("topk"), {s}, Attrs{{"k", int64_t(1)}});
  EXPECT_EQ(one[0].shape(), Shape{});
  EXPECT_EQ(one[0].item_int(), 3);
  EXPECT_EQ(one[1].item_int(), 0);
  PJ_EXPECT_ERROR(call_op(get_op("topk"), {s}, Attrs{{"k", int64_t(0)}}), Value,
                  "topk(): k must be 1 for a 0-d tensor, but got 0");
}

TEST(Sort, LargeRowsInParallel) {
  Tensor x = testing::random({64, 1000}, DType::Float32, 3);
  Tensors out = call_op(get_op("sort"), {x}, Attrs{{"axis", int64_t(1)}});
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t j = 1; j < 1000; ++j) ASSERT_LE(at(out[0], {r, j - 1}), at(out[0], {r, j}));
  Tensors col = call_op(get_op("sort"), {x}, Attrs{{"axis", int64_t(0)}, {"descending", true}});
  for (int64_t c = 0; c < 1000; c += 37)
    for (int64_t j = 1; j < 64; ++j) ASSERT_GE(at(col[0], {j - 1, c}), at(col[0], {j, c}));
}

}  // namespace
}  // namespace pj
