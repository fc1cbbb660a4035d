// Printing tensors: numpy's str() of the same values, and MindSpore's Tensor repr around it.
//
// format_str is a port of numpy 1.24's arrayprint for pijit's dtypes, so that printing a pijit
// tensor and printing np.asarray of it give the same text: floats in the 'maxprec' mode (shortest
// round-trip digits for the dtype, at most `precision` after the point, decimal points aligned,
// scientific notation under numpy's rule), right-aligned ints, " True"/"False", the line
// wrapping at `linewidth`, blank lines between the blocks of 3-D+ tensors, and the "..."
// summary of tensors with more than `threshold` elements. 0-d tensors print as numpy scalars
// ("1.5", "1e-05", "3", "True"); empty tensors print "[]". Digits come from std::to_chars
// (shortest and correctly rounded), shaped to what numpy's Dragon4 makes of them.
// Reads through strides, so views print without a copy. Nothing here knows about Python.
#pragma once

#include <string>

#include "kernels/tensor.h"

namespace pj {

// numpy.set_printoptions, for the options pijit supports (floatmode is always 'maxprec').
struct PrintOptions {
  int precision = 8;     // most digits after the decimal point (or the mantissa's point)
  int threshold = 1000;  // tensors with more elements than this are summarised with "..."
  int edgeitems = 3;     // items kept at each end of a summarised axis
  int linewidth = 75;    // characters per line before a row wraps
  bool suppress = false; // true: no scientific notation for small values (they round to 0.)
};

// The process-wide defaults used by the one-argument overloads. set_print_options raises
// ValueError for a negative precision or edgeitems.
PrintOptions get_print_options();
void set_print_options(const PrintOptions& options);

// numpy's str(np.asarray(t)).
std::string format_str(const Tensor& t);
std::string format_str(const Tensor& t, const PrintOptions& options);

// MindSpore's repr: "Tensor(shape=[2, 3], dtype=Float32, value=\n[[1. 2. 3.]\n [4. 5. 6.]])";
// for ndim <= 1 the value follows "value= " on the same line.
std::string format_repr(const Tensor& t);
std::string format_repr(const Tensor& t, const PrintOptions& options);

}  // namespace pj
