// Printing tensors against numpy 1.24: every expected string below is what numpy printed for the
// same values and dtype (str(a) under np.printoptions with the same options; for FormatRepr, the
// value part). The comment above each case is the numpy expression, written with
//   A(v, t)               = np.array(v, dtype=t)
//   iota(shape, t)        = np.arange(n).astype(t).reshape(shape)   (bool: np.arange(n) % 2 == 1)
//   aff(shape, t, s, b)   = (np.arange(n) * s + b).astype(t).reshape(shape)
//   f32 f64 i32 i64 b_    = np.float32 np.float64 np.int32 np.int64 np.bool_
// so that a case can be regenerated with /usr/bin/python3 -c "import numpy as np; ...".
#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/format.h"
#include "tests/cpp/test_util.h"

namespace pj {
namespace {

using testing::affine;
using testing::from_doubles;
using testing::from_ints;
using testing::iota;
using testing::permuted;

constexpr DType F32 = DType::Float32, F64 = DType::Float64, I32 = DType::Int32, I64 = DType::Int64,
                B = DType::Bool;

PrintOptions opts(int precision, int threshold = 1000, int edgeitems = 3, int linewidth = 75,
                  bool suppress = false) {
  PrintOptions o;
  o.precision = precision;
  o.threshold = threshold;
  o.edgeitems = edgeitems;
  o.linewidth = linewidth;
  o.suppress = suppress;
  return o;
}

// The examples the format was specified with.
TEST(Format, SeedExamples) {
  // numpy str: aff((3,3), f32, 0, 1024)
  EXPECT_EQ(format_str(affine({3, 3}, F32, 0, 1024)),
            "[[1024. 1024. 1024.]\n"
            " [1024. 1024. 1024.]\n"
            " [1024. 1024. 1024.]]");
  // numpy str: A([5, 7, 9], f32)
  EXPECT_EQ(format_str(from_doubles({5, 7, 9}, F32)), "[5. 7. 9.]");
  // numpy str: A([1.5, 2.25, 3], f32)
  EXPECT_EQ(format_str(from_doubles({1.5, 2.25, 3}, F32)), "[1.5  2.25 3.  ]");
}

// Fractions padded on the right, integer parts on the left, signs counted.
TEST(Format, PositionalAlignsDecimalPoints) {
  // numpy str: A([-1.5, 2, -3.25, 100], f64)
  EXPECT_EQ(format_str(from_doubles({-1.5, 2, -3.25, 100}, F64)), "[ -1.5    2.    -3.25 100.  ]");
  // numpy str: A([0.001, 0.0002, 0.1], f64)
  EXPECT_EQ(format_str(from_doubles({0.001, 0.0002, 0.1}, F64)), "[0.001  0.0002 0.1   ]");
  // numpy str: A([123456.7, 234567.8, -99999.5], f64)
  EXPECT_EQ(format_str(from_doubles({123456.7, 234567.8, -99999.5}, F64)),
            "[123456.7 234567.8 -99999.5]");
  // numpy str: A([0, 1, 2, -3], f32)
  EXPECT_EQ(format_str(from_doubles({0, 1, 2, -3}, F32)), "[ 0.  1.  2. -3.]");
  // ratio exactly 1000: still positional
  // numpy str: A([1, 1000], f64)
  EXPECT_EQ(format_str(from_doubles({1, 1000}, F64)), "[   1. 1000.]");
}

// At most `precision` digits after the point, rounded, trailing zeros trimmed.
TEST(Format, PrecisionCutsLongFractions) {
  // numpy str: A([1/3, 2/3, 0.1], f64)
  EXPECT_EQ(format_str(from_doubles({1.0 / 3, 2.0 / 3, 0.1}, F64)),
            "[0.33333333 0.66666667 0.1       ]");
  // numpy str: A([1/3, 2/3, 0.1], f32)
  EXPECT_EQ(format_str(from_doubles({1.0 / 3, 2.0 / 3, 0.1}, F32)),
            "[0.33333334 0.6666667  0.1       ]");
  // numpy str: A([0.100000001, 2], f64)
  EXPECT_EQ(format_str(from_doubles({0.100000001, 2}, F64)), "[0.1 2. ]");
  // numpy str: A([0.999999999, 0.5], f64)
  EXPECT_EQ(format_str(from_doubles({0.999999999, 0.5}, F64)), "[1.  0.5]");
}

// float32 values print with float32 round-trip digits, not those of the widened double.
TEST(Format, Float32PrintsItsOwnShortestDigits) {
  // numpy str: A([0.1, 1.1, 3.3], f32)
  EXPECT_EQ(format_str(from_doubles({0.1, 1.1, 3.3}, F32)), "[0.1 1.1 3.3]");
  // numpy str: A([0.1, 1.1, 3.3], f64)
  EXPECT_EQ(format_str(from_doubles({0.1, 1.1, 3.3}, F64)), "[0.1 1.1 3.3]");
  // numpy str: A([0.1, 1/3], f32)
  EXPECT_EQ(format_str(from_doubles({0.1, 1.0 / 3}, F32)), "[0.1        0.33333334]");
  // numpy str: A([0.1, 1/3], f64)
  EXPECT_EQ(format_str(from_doubles({0.1, 1.0 / 3}, F64)), "[0.1        0.33333333]");
  // numpy str: A([16777217, 3], f32)
  EXPECT_EQ(format_str(from_doubles({16777217, 3}, F32)), "[1.6777216e+07 3.0000000e+00]");
  // in arrays numpy prints every integer digit (its shortest digits are 6818775e+01)
  // numpy str: A([68187752, 50000000], f32)
  EXPECT_EQ(format_str(from_doubles({68187752, 50000000}, F32)), "[68187752. 50000000.]");
}

// numpy switches to e-notation when max >= 1e8, min nonzero < 1e-4 or max/min > 1e3.
TEST(Format, ScientificSwitch) {
  // numpy str: A([1e8, 1], f64)
  EXPECT_EQ(format_str(from_doubles({1e8, 1}, F64)), "[1.e+08 1.e+00]");
  // numpy str: A([99999999, 1], f64)
  EXPECT_EQ(format_str(from_doubles({99999999, 1}, F64)), "[9.9999999e+07 1.0000000e+00]");
  // numpy str: A([1e-5, 1], f64)
  EXPECT_EQ(format_str(from_doubles({1e-5, 1}, F64)), "[1.e-05 1.e+00]");
  // numpy str: A([1e-5, 1.5e-5, -2.25e-5], f64)
  EXPECT_EQ(format_str(from_doubles({1e-5, 1.5e-5, -2.25e-5}, F64)),
            "[ 1.00e-05  1.50e-05 -2.25e-05]");
  // numpy str: A([1, 1001], f32)
  EXPECT_EQ(format_str(from_doubles({1, 1001}, F32)), "[1.000e+00 1.001e+03]");
  // zeros take part in the widths, not in the switch
  // numpy str: A([0, 1e-5, 0], f64)
  EXPECT_EQ(format_str(from_doubles({0, 1e-5, 0}, F64)), "[0.e+00 1.e-05 0.e+00]");
  // three-digit exponents widen all exponents
  // numpy str: A([1e-100, 1, 1e100], f64)
  EXPECT_EQ(format_str(from_doubles({1e-100, 1, 1e100}, F64)), "[1.e-100 1.e+000 1.e+100]");
  // numpy str: A([1e38, -1e-38], f32)
  EXPECT_EQ(format_str(from_doubles({1e38, -1e-38}, F32)), "[ 1.e+38 -1.e-38]");
}

// Shorter mantissas get the exact value's further digits, so float32 and float64 part.
TEST(Format, ScientificMantissasShareDigitCount) {
  // numpy str: A([3e-5, 1.23456789e-5], f32)
  EXPECT_EQ(format_str(from_doubles({3e-5, 1.23456789e-5}, F32)), "[2.9999999e-05 1.2345679e-05]");
  // numpy str: A([3e-5, 1.23456789e-5], f64)
  EXPECT_EQ(format_str(from_doubles({3e-5, 1.23456789e-5}, F64)),
            "[3.00000000e-05 1.23456789e-05]");
  // a power of two: Dragon4 ends on the digit inside its rounding interval (...260, not ...259)
  // numpy str: np.ldexp(A([1.0, 1.2345678901234567], f64), -645) with np.printoptions(precision=16)
  const Tensor pow2 =
      from_doubles({std::ldexp(1.0, -645), std::ldexp(1.2345678901234567, -645)}, F64);
  EXPECT_EQ(format_str(pow2, opts(16)), "[6.849404215651260e-195 8.456054511119285e-195]");
}

// nan and inf are right-aligned to the width of the finite values.
TEST(Format, NonFinite) {
  // numpy str: A([nan, 1.5, -inf], f64)
  EXPECT_EQ(format_str(from_doubles({NAN, 1.5, -INFINITY}, F64)), "[ nan  1.5 -inf]");
  // numpy str: A([nan, inf], f32)
  EXPECT_EQ(format_str(from_doubles({NAN, INFINITY}, F32)), "[nan inf]");
  // numpy str: A([nan, -inf], f64)
  EXPECT_EQ(format_str(from_doubles({NAN, -INFINITY}, F64)), "[ nan -inf]");
  // numpy str: A([1e-10, nan, -inf, 2], f64)
  EXPECT_EQ(format_str(from_doubles({1e-10, NAN, -INFINITY, 2}, F64)),
            "[1.e-10    nan   -inf 2.e+00]");
  // numpy str: A([inf, 0.25, 100], f32)
  EXPECT_EQ(format_str(from_doubles({INFINITY, 0.25, 100}, F32)), "[   inf   0.25 100.  ]");
}

// The sign bit of zero prints, as in numpy.
TEST(Format, NegativeZero) {
  // numpy str: A([-0.0, 1], f32)
  EXPECT_EQ(format_str(from_doubles({-0.0, 1}, F32)), "[-0.  1.]");
  // numpy str: A([-0.0, 0.0], f64)
  EXPECT_EQ(format_str(from_doubles({-0.0, 0.0}, F64)), "[-0.  0.]");
}

// Right-aligned to the widest of min and max.
TEST(Format, Integers) {
  // numpy str: A([1, -20, 300], i32)
  EXPECT_EQ(format_str(from_ints({1, -20, 300}, I32)), "[  1 -20 300]");
  // numpy str: A([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max], i64)
  EXPECT_EQ(format_str(from_ints({INT64_MIN, 0, INT64_MAX}, I64)),
            "[-9223372036854775808                    0  9223372036854775807]");
  // numpy str: iota((3, 4), i64)
  EXPECT_EQ(format_str(iota({3, 4}, I64)),
            "[[ 0  1  2  3]\n"
            " [ 4  5  6  7]\n"
            " [ 8  9 10 11]]");
  // numpy str: aff((2, 3), i32, -7, 10)
  EXPECT_EQ(format_str(affine({2, 3}, I32, -7, 10)),
            "[[ 10   3  -4]\n"
            " [-11 -18 -25]]");
}

// " True" pads to the width of "False".
TEST(Format, Bools) {
  // numpy str: A([True, False, True], b_)
  EXPECT_EQ(format_str(from_doubles({1, 0, 1}, B)), "[ True False  True]");
  // numpy str: A([False, False], b_)
  EXPECT_EQ(format_str(from_doubles({0, 0}, B)), "[False False]");
  // numpy str: A([True, True], b_)
  EXPECT_EQ(format_str(from_doubles({1, 1}, B)), "[ True  True]");
  // numpy str: iota((2, 3), b_)
  EXPECT_EQ(format_str(iota({2, 3}, B)),
            "[[False  True False]\n"
            " [ True False  True]]");
}

// str() of a 0-d array is str() of its scalar: no padding, "1.0", e-notation outside [1e-4, 1e16).
TEST(Format, ZeroDimPrintsLikeNumpyScalars) {
  // numpy str: A(1.5, f32)
  EXPECT_EQ(format_str(Tensor::scalar(1.5, F32)), "1.5");
  // numpy str: A(3, f64)
  EXPECT_EQ(format_str(Tensor::scalar(3, F64)), "3.0");
  // numpy str: A(0.1, f32)
  EXPECT_EQ(format_str(Tensor::scalar(0.1, F32)), "0.1");
  // numpy str: A(1e16, f64)
  EXPECT_EQ(format_str(Tensor::scalar(1e16, F64)), "1e+16");
  // numpy str: A(1e-5, f32)
  EXPECT_EQ(format_str(Tensor::scalar(1e-5, F32)), "1e-05");
  // numpy str: A(-0.0, f64)
  EXPECT_EQ(format_str(Tensor::scalar(-0.0, F64)), "-0.0");
  // numpy str: A(nan, f32)
  EXPECT_EQ(format_str(Tensor::scalar(NAN, F32)), "nan");
  // numpy str: A(-inf, f64)
  EXPECT_EQ(format_str(Tensor::scalar(-INFINITY, F64)), "-inf");
  // shortest digits here, unlike in arrays
  // numpy str: A(68187752, f32)
  EXPECT_EQ(format_str(Tensor::scalar(68187752, F32)), "68187750.0");
  // numpy str: A(3, i32)
  EXPECT_EQ(format_str(Tensor::scalar_int(3, I32)), "3");
  // numpy str: A(-9000000000, i64)
  EXPECT_EQ(format_str(Tensor::scalar_int(-9000000000, I64)), "-9000000000");
  // numpy str: A(True, b_)
  EXPECT_EQ(format_str(Tensor::scalar(1, B)), "True");
}

// Any shape with a zero prints "[]".
TEST(Format, Empty) {
  // numpy str: np.zeros((0,), f32)
  EXPECT_EQ(format_str(Tensor::empty({0}, F32)), "[]");
  // numpy str: np.zeros((2, 0), f64)
  EXPECT_EQ(format_str(Tensor::empty({2, 0}, F64)), "[]");
  // numpy str: np.zeros((0, 3), i64)
  EXPECT_EQ(format_str(Tensor::empty({0, 3}, I64)), "[]");
}

// Blank lines between 2-D blocks; one more per further axis.
TEST(Format, NestedDimensions) {
  // numpy str: iota((2, 3, 4), i64)
  EXPECT_EQ(format_str(iota({2, 3, 4}, I64)),
            "[[[ 0  1  2  3]\n"
            "  [ 4  5  6  7]\n"
            "  [ 8  9 10 11]]\n"
            "\n"
            " [[12 13 14 15]\n"
            "  [16 17 18 19]\n"
            "  [20 21 22 23]]]");
  // numpy str: aff((2, 2, 2, 2), f32, 0.5, -4)
  EXPECT_EQ(format_str(affine({2, 2, 2, 2}, F32, 0.5, -4)),
            "[[[[-4.  -3.5]\n"
            "   [-3.  -2.5]]\n"
            "\n"
            "  [[-2.  -1.5]\n"
            "   [-1.  -0.5]]]\n"
            "\n"
            "\n"
            " [[[ 0.   0.5]\n"
            "   [ 1.   1.5]]\n"
            "\n"
            "  [[ 2.   2.5]\n"
            "   [ 3.   3.5]]]]");
  // numpy str: aff((1, 1, 3), f64, 1, 1)
  EXPECT_EQ(format_str(affine({1, 1, 3}, F64, 1, 1)), "[[[1. 2. 3.]]]");
}

// Rows wrap before column 75 (less one per bracket level) under the first element.
TEST(Format, LongRowsWrap) {
  // numpy str: aff((30,), f64, 1.5, -20)
  EXPECT_EQ(format_str(affine({30}, F64, 1.5, -20)),
            "[-20.  -18.5 -17.  -15.5 -14.  -12.5 -11.   -9.5  -8.   -6.5  -5.   -3.5\n"
            "  -2.   -0.5   1.    2.5   4.    5.5   7.    8.5  10.   11.5  13.   14.5\n"
            "  16.   17.5  19.   20.5  22.   23.5]");
  // numpy str: iota((40,), i64)
  EXPECT_EQ(format_str(iota({40}, I64)),
            "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
            " 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39]");
  // numpy str: aff((3, 20), f32, 0.25, -7.5)
  EXPECT_EQ(format_str(affine({3, 20}, F32, 0.25, -7.5)),
            "[[-7.5  -7.25 -7.   -6.75 -6.5  -6.25 -6.   -5.75 -5.5  -5.25 -5.   -4.75\n"
            "  -4.5  -4.25 -4.   -3.75 -3.5  -3.25 -3.   -2.75]\n"
            " [-2.5  -2.25 -2.   -1.75 -1.5  -1.25 -1.   -0.75 -0.5  -0.25  0.    0.25\n"
            "   0.5   0.75  1.    1.25  1.5   1.75  2.    2.25]\n"
            " [ 2.5   2.75  3.    3.25  3.5   3.75  4.    4.25  4.5   4.75  5.    5.25\n"
            "   5.5   5.75  6.    6.25  6.5   6.75  7.    7.25]]");
  // numpy str: aff((2, 2, 12), f64, 1e-6, 1e-5)
  EXPECT_EQ(format_str(affine({2, 2, 12}, F64, 1e-6, 1e-5)),
            "[[[1.0e-05 1.1e-05 1.2e-05 1.3e-05 1.4e-05 1.5e-05 1.6e-05 1.7e-05\n"
            "   1.8e-05 1.9e-05 2.0e-05 2.1e-05]\n"
            "  [2.2e-05 2.3e-05 2.4e-05 2.5e-05 2.6e-05 2.7e-05 2.8e-05 2.9e-05\n"
            "   3.0e-05 3.1e-05 3.2e-05 3.3e-05]]\n"
            "\n"
            " [[3.4e-05 3.5e-05 3.6e-05 3.7e-05 3.8e-05 3.9e-05 4.0e-05 4.1e-05\n"
            "   4.2e-05 4.3e-05 4.4e-05 4.5e-05]\n"
            "  [4.6e-05 4.7e-05 4.8e-05 4.9e-05 5.0e-05 5.1e-05 5.2e-05 5.3e-05\n"
            "   5.4e-05 5.5e-05 5.6e-05 5.7e-05]]]");
}

// More than `threshold` elements: `edgeitems` at each end of every long axis, "..." between.
TEST(Format, Summarised) {
  // numpy str: iota((2000,), f32)
  EXPECT_EQ(format_str(iota({2000}, F32)),
            "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]");
  // numpy str: iota((50, 50), f64)
  EXPECT_EQ(format_str(iota({50, 50}, F64)),
            "[[0.000e+00 1.000e+00 2.000e+00 ... 4.700e+01 4.800e+01 4.900e+01]\n"
            " [5.000e+01 5.100e+01 5.200e+01 ... 9.700e+01 9.800e+01 9.900e+01]\n"
            " [1.000e+02 1.010e+02 1.020e+02 ... 1.470e+02 1.480e+02 1.490e+02]\n"
            " ...\n"
            " [2.350e+03 2.351e+03 2.352e+03 ... 2.397e+03 2.398e+03 2.399e+03]\n"
            " [2.400e+03 2.401e+03 2.402e+03 ... 2.447e+03 2.448e+03 2.449e+03]\n"
            " [2.450e+03 2.451e+03 2.452e+03 ... 2.497e+03 2.498e+03 2.499e+03]]");
  // numpy str: iota((11, 11, 11), i32)
  EXPECT_EQ(format_str(iota({11, 11, 11}, I32)),
            "[[[   0    1    2 ...    8    9   10]\n"
            "  [  11   12   13 ...   19   20   21]\n"
            "  [  22   23   24 ...   30   31   32]\n"
            "  ...\n"
            "  [  88   89   90 ...   96   97   98]\n"
            "  [  99  100  101 ...  107  108  109]\n"
            "  [ 110  111  112 ...  118  119  120]]\n"
            "\n"
            " [[ 121  122  123 ...  129  130  131]\n"
            "  [ 132  133  134 ...  140  141  142]\n"
            "  [ 143  144  145 ...  151  152  153]\n"
            "  ...\n"
            "  [ 209  210  211 ...  217  218  219]\n"
            "  [ 220  221  222 ...  228  229  230]\n"
            "  [ 231  232  233 ...  239  240  241]]\n"
            "\n"
            " [[ 242  243  244 ...  250  251  252]\n"
            "  [ 253  254  255 ...  261  262  263]\n"
            "  [ 264  265  266 ...  272  273  274]\n"
            "  ...\n"
            "  [ 330  331  332 ...  338  339  340]\n"
            "  [ 341  342  343 ...  349  350  351]\n"
            "  [ 352  353  354 ...  360  361  362]]\n"
            "\n"
            " ...\n"
            "\n"
            " [[ 968  969  970 ...  976  977  978]\n"
            "  [ 979  980  981 ...  987  988  989]\n"
            "  [ 990  991  992 ...  998  999 1000]\n"
            "  ...\n"
            "  [1056 1057 1058 ... 1064 1065 1066]\n"
            "  [1067 1068 1069 ... 1075 1076 1077]\n"
            "  [1078 1079 1080 ... 1086 1087 1088]]\n"
            "\n"
            " [[1089 1090 1091 ... 1097 1098 1099]\n"
            "  [1100 1101 1102 ... 1108 1109 1110]\n"
            "  [1111 1112 1113 ... 1119 1120 1121]\n"
            "  ...\n"
            "  [1177 1178 1179 ... 1185 1186 1187]\n"
            "  [1188 1189 1190 ... 1196 1197 1198]\n"
            "  [1199 1200 1201 ... 1207 1208 1209]]\n"
            "\n"
            " [[1210 1211 1212 ... 1218 1219 1220]\n"
            "  [1221 1222 1223 ... 1229 1230 1231]\n"
            "  [1232 1233 1234 ... 1240 1241 1242]\n"
            "  ...\n"
            "  [1298 1299 1300 ... 1306 1307 1308]\n"
            "  [1309 1310 1311 ... 1317 1318 1319]\n"
            "  [1320 1321 1322 ... 1328 1329 1330]]]");
  // only the long axis is cut
  // numpy str: iota((1001, 2), i64)
  EXPECT_EQ(format_str(iota({1001, 2}, I64)),
            "[[   0    1]\n"
            " [   2    3]\n"
            " [   4    5]\n"
            " ...\n"
            " [1996 1997]\n"
            " [1998 1999]\n"
            " [2000 2001]]");
  // widths come from the printed corners only
  // numpy str: aff((2000,), f64, 1, -1000)
  EXPECT_EQ(format_str(affine({2000}, F64, 1, -1000)),
            "[-1000.  -999.  -998. ...   997.   998.   999.]");
  // numpy str: iota((10,), i32) with np.printoptions(threshold=5, edgeitems=2)
  EXPECT_EQ(format_str(iota({10}, I32), opts(8, 5, 2)), "[0 1 ... 8 9]");
  // numel == threshold: not cut
  // numpy str: iota((10,), i32) with np.printoptions(threshold=10, edgeitems=2)
  EXPECT_EQ(format_str(iota({10}, I32), opts(8, 10, 2)), "[0 1 2 3 4 5 6 7 8 9]");
  // "..." wraps like an element
  // numpy str: iota((3000,), f64) with np.printoptions(linewidth=30)
  EXPECT_EQ(format_str(iota({3000}, F64), opts(8, 1000, 3, 30)),
            "[0.000e+00 1.000e+00\n"
            " 2.000e+00 ... 2.997e+03\n"
            " 2.998e+03 2.999e+03]");
}

// Non-contiguous views print through their strides.
TEST(Format, Views) {
  // numpy str: iota((2, 3), f32).T
  EXPECT_EQ(format_str(permuted(iota({2, 3}, F32), {1, 0})),
            "[[0. 3.]\n"
            " [1. 4.]\n"
            " [2. 5.]]");
  // numpy str: iota((50, 50), f64).T
  EXPECT_EQ(format_str(permuted(iota({50, 50}, F64), {1, 0})),
            "[[0.000e+00 5.000e+01 1.000e+02 ... 2.350e+03 2.400e+03 2.450e+03]\n"
            " [1.000e+00 5.100e+01 1.010e+02 ... 2.351e+03 2.401e+03 2.451e+03]\n"
            " [2.000e+00 5.200e+01 1.020e+02 ... 2.352e+03 2.402e+03 2.452e+03]\n"
            " ...\n"
            " [4.700e+01 9.700e+01 1.470e+02 ... 2.397e+03 2.447e+03 2.497e+03]\n"
            " [4.800e+01 9.800e+01 1.480e+02 ... 2.398e+03 2.448e+03 2.498e+03]\n"
            " [4.900e+01 9.900e+01 1.490e+02 ... 2.399e+03 2.449e+03 2.499e+03]]");
  // numpy str: iota((2, 3, 4), i32).transpose(2, 0, 1)
  EXPECT_EQ(format_str(permuted(iota({2, 3, 4}, I32), {2, 0, 1})),
            "[[[ 0  4  8]\n"
            "  [12 16 20]]\n"
            "\n"
            " [[ 1  5  9]\n"
            "  [13 17 21]]\n"
            "\n"
            " [[ 2  6 10]\n"
            "  [14 18 22]]\n"
            "\n"
            " [[ 3  7 11]\n"
            "  [15 19 23]]]");
  // numpy str: iota((10,), f64)[1::2]
  EXPECT_EQ(format_str(iota({10}, F64).as_strided({5}, {2}, 1)), "[1. 3. 5. 7. 9.]");
  // numpy str: A([1.5, 2, 3, 4], f32)[::-1]
  EXPECT_EQ(format_str(from_doubles({1.5, 2, 3, 4}, F32).as_strided({4}, {-1}, 3)),
            "[4.  3.  2.  1.5]");
  // numpy str: np.broadcast_to(A([1, 2, 3, 4], i64), (3, 4))
  EXPECT_EQ(format_str(from_ints({1, 2, 3, 4}, I64).as_strided({3, 4}, {0, 1}, 0)),
            "[[1 2 3 4]\n"
            " [1 2 3 4]\n"
            " [1 2 3 4]]");
}

// precision, suppress and linewidth as numpy.set_printoptions sets them.
TEST(Format, Options) {
  // numpy str: A([1/3, 2/3], f64) with np.printoptions(precision=3)
  EXPECT_EQ(format_str(from_doubles({1.0 / 3, 2.0 / 3}, F64), opts(3)), "[0.333 0.667]");
  // numpy str: A([1/3, 2e-5], f64) with np.printoptions(precision=3)
  EXPECT_EQ(format_str(from_doubles({1.0 / 3, 2e-5}, F64), opts(3)), "[3.333e-01 2.000e-05]");
  // numpy str: A([1.5, 2.25], f64) with np.printoptions(precision=0)
  EXPECT_EQ(format_str(from_doubles({1.5, 2.25}, F64), opts(0)), "[2. 2.]");
  // numpy str: A([1e-10, 1, 1234.5], f64) with np.printoptions(suppress=True)
  EXPECT_EQ(format_str(from_doubles({1e-10, 1, 1234.5}, F64), opts(8, 1000, 3, 75, true)),
            "[   0.     1.  1234.5]");
  // suppress keeps the >= 1e8 switch
  // numpy str: A([1e9, 1], f64) with np.printoptions(suppress=True)
  EXPECT_EQ(format_str(from_doubles({1e9, 1}, F64), opts(8, 1000, 3, 75, true)), "[1.e+09 1.e+00]");
  // numpy str: iota((12,), i32) with np.printoptions(linewidth=20)
  EXPECT_EQ(format_str(iota({12}, I32), opts(8, 1000, 3, 20)),
            "[ 0  1  2  3  4  5\n"
            "  6  7  8  9 10 11]");
}

// Tensor(shape=..., dtype=..., value=...) around numpy's str.
TEST(FormatRepr, MindSporeStyle) {
  // numpy value part: aff((2, 3), f32, 1, 1)
  EXPECT_EQ(format_repr(affine({2, 3}, F32, 1, 1)),
            "Tensor(shape=[2, 3], dtype=Float32, value=\n"
            "[[1. 2. 3.]\n"
            " [4. 5. 6.]])");
  // numpy value part: aff((3,), f32, 1, 1)
  EXPECT_EQ(format_repr(affine({3}, F32, 1, 1)),
            "Tensor(shape=[3], dtype=Float32, value= [1. 2. 3.])");
  // numpy value part: A(1.5, f32)
  EXPECT_EQ(format_repr(Tensor::scalar(1.5, F32)), "Tensor(shape=[], dtype=Float32, value= 1.5)");
  // numpy value part: A([1, -2], i64)
  EXPECT_EQ(format_repr(from_ints({1, -2}, I64)), "Tensor(shape=[2], dtype=Int64, value= [ 1 -2])");
  // numpy value part: iota((2, 2), b_)
  EXPECT_EQ(format_repr(iota({2, 2}, B)),
            "Tensor(shape=[2, 2], dtype=Bool, value=\n"
            "[[False  True]\n"
            " [False  True]])");
  // numpy value part: np.zeros((0,), f64)
  EXPECT_EQ(format_repr(Tensor::empty({0}, F64)), "Tensor(shape=[0], dtype=Float64, value= [])");
  // numpy value part: iota((2, 1, 2), i32)
  EXPECT_EQ(format_repr(iota({2, 1, 2}, I32)),
            "Tensor(shape=[2, 1, 2], dtype=Int32, value=\n"
            "[[[0 1]]\n"
            "\n"
            " [[2 3]]])");
}

// The one-argument overloads read the process-wide options.
TEST(FormatOptions, ProcessWideDefaults) {
  const PrintOptions saved = get_print_options();
  EXPECT_EQ(saved.precision, 8);
  EXPECT_EQ(saved.threshold, 1000);
  EXPECT_EQ(saved.edgeitems, 3);
  EXPECT_EQ(saved.linewidth, 75);
  EXPECT_FALSE(saved.suppress);
  Tensor x = from_doubles({1.0 / 3, 2.0 / 3}, F64);
  set_print_options(opts(3));
  // numpy str: A([1/3, 2/3], f64) with np.printoptions(precision=3)
  EXPECT_EQ(format_str(x), "[0.333 0.667]");
  EXPECT_EQ(format_repr(x), "Tensor(shape=[2], dtype=Float64, value= [0.333 0.667])");
  set_print_options(saved);
  EXPECT_EQ(format_str(x), "[0.33333333 0.66666667]");
}

TEST(FormatOptions, RejectsNegativePrecisionAndEdgeitems) {
  const PrintOptions saved = get_print_options();
  for (PrintOptions bad : {opts(-1), opts(8, 1000, -1)}) {
    try {
      set_print_options(bad);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Value);
    }
    EXPECT_THROW(format_str(iota({3}, F32), bad), Error);
  }
  EXPECT_EQ(get_print_options().precision, saved.precision);
}

// A view prints the same as its contiguous copy, for every dtype and a few geometries.
TEST(FormatOptions, ViewsPrintLikeTheirCopies) {
  for (DType t : {B, I32, I64, F32, F64}) {
    Tensor x = testing::random({4, 5, 6}, t, 7);
    std::vector<Tensor> views = {permuted(x, {2, 0, 1}), x.as_strided({2, 5, 3}, {60, 6, 2}, 1),
                                 x.as_strided({6, 4}, {-1, 30}, 5)};
    for (const Tensor& v : views) {
      EXPECT_EQ(format_str(v), format_str(v.contiguous())) << dtype_name(t);
      EXPECT_EQ(format_str(v, opts(8, 10, 1)), format_str(v.contiguous(), opts(8, 10, 1)));
    }
  }
}

}  // namespace
}  // namespace pj
