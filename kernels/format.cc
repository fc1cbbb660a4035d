// numpy 1.24 arrayprint, ported for pijit's dtypes. The structure follows numpy's so that the two
// can be read side by side: FloatFormat is FloatingFormat (fillFormat + __call__),
// ArrayPrinter::recurse is _formatArray's recurser, extend_line is _extendLine, gather_edges is
// _leading_trailing, scalar_float_str is the float scalar's str.
//
// Float digits: numpy's Dragon4 in 'unique' mode makes the shortest digits that round-trip in the
// dtype, but stops at a cutoff (precision) and may be asked for more (min_digits). std::to_chars
// gives the shortest digits and the exact value correctly rounded at any position (half to even,
// as Dragon4); the one place they part is handled in fix_extended.
#include "kernels/format.h"

#include "kernels/copy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <type_traits>
#include <vector>

namespace pj {
namespace {

std::mutex g_options_mu;
PrintOptions g_options;

// ---- Digits of one float ---------------------------------------------------------------------

// A positive decimal d0.d1d2... * 10^exp10 (digits has no '.').
struct SciDigits {
  std::string digits;
  int exp10 = 0;
};

SciDigits parse_sci(const char* p, const char* end) {
  SciDigits r;
  for (; p < end && *p != 'e'; ++p)
    if (*p != '.') r.digits += *p;
  // "e+05" / "e-05"; from_chars takes no '+'. The buffer is not NUL-terminated.
  if (p + 1 < end && p[1] == '+') ++p;
  if (p < end) std::from_chars(p + 1, end, r.exp10);
  return r;
}

// float16/bfloat16 print from their (exact) float32 values, but "shortest" must round-trip in
// the 16-bit type: numpy prints float16(0.1) as 0.1, not as float32's 0.09998.
thread_local DType t_shortest_in = DType::Float32;

float round_to(DType t, float v) {
  return t == DType::Float16 ? half_bits_to_float(float_to_half_bits(v))
                             : bfloat16_bits_to_float(float_to_bfloat16_bits(v));
}

// Shortest digits that read back as `a` in T (float32 values use float32's neighbours).
template <typename T>
SciDigits shortest_digits(T a) {
  char buf[64];
  if constexpr (std::is_same_v<T, float>) {
    if (t_shortest_in != DType::Float32) {
      for (int frac = 0;; ++frac) {  // terminates by frac 8: float32's digits always round-trip
        auto r = std::to_chars(buf, buf + sizeof buf, a, std::chars_format::scientific, frac);
        float back = 0;
        std::from_chars(buf, r.ptr, back, std::chars_format::scientific);
        if (round_to(t_shortest_in, back) == a || frac >= 8) {
          SciDigits d = parse_sci(buf, r.ptr);
          while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
          return d;
        }
      }
    }
  }
  auto r = std::to_chars(buf, buf + sizeof buf, a, std::chars_format::scientific);
  return parse_sci(buf, r.ptr);
}

// The exact value of `a` rounded (half to even) to `frac` digits after the mantissa's point.
template <typename T>
SciDigits rounded_digits(T a, int frac) {
  std::vector<char> buf(frac + 64);
  char* end = buf.data() + buf.size();
  auto r = std::to_chars(buf.data(), end, a, std::chars_format::scientific, frac);
  return parse_sci(buf.data(), r.ptr);
}

template <typename T>
bool reads_back_as(const std::string& s, T a) {
  T back{};
  std::from_chars(s.data(), s.data() + s.size(), back);
  if constexpr (std::is_same_v<T, float>)
    if (t_shortest_in != DType::Float32) return round_to(t_shortest_in, back) == a;
  return back == a;
}

// Adds one unit in the last place of a digit string, '.' skipped ("1.99" -> "2.00",
// "99" -> "100"); returns whether a digit was prepended.
bool increment_last(std::string* s) {
  for (int i = static_cast<int>(s->size()) - 1; i >= 0; --i) {
    char& c = (*s)[i];
    if (c == '.') continue;
    if (c != '9') {
      ++c;
      return false;
    }
    c = '0';
  }
  s->insert(s->begin(), '1');
  return true;
}

// Dragon4 in 'unique' mode with a minimum number of digits goes on past the shortest digits with
// the exact value and rounds the last digit to nearest, except that it never ends on a digit that
// leaves the value's rounding interval. Nearest can do that only when `a` is a power of two (the
// interval below it is half the one above); Dragon4 then takes the digit above. (Seen with float64
// at 15+ significant digits.)
template <typename T>
void fix_extended(T a, std::string* s, const std::string& exponent, SciDigits* sci) {
  if (reads_back_as(*s + exponent, a)) return;
  if (increment_last(s) && sci) {  // 9.99e+1 -> 10.00e+1 -> 1.000e+2
    s->pop_back();
    std::swap((*s)[1], (*s)[2]);
    ++sci->exp10;
  }
}

// Dragon4 'unique' digits of a >= 0 in scientific notation with at most `max_frac` (if >= 0) and
// at least `min_frac` digits after the point.
template <typename T>
SciDigits sci_digits(T a, int max_frac, int min_frac) {
  SciDigits d = shortest_digits(a);
  int frac = static_cast<int>(d.digits.size()) - 1;
  if (max_frac >= 0 && frac > max_frac) return rounded_digits(a, max_frac);
  if (min_frac > frac) {
    SciDigits r = rounded_digits(a, min_frac);
    std::string s = r.digits.substr(0, 1) + "." + r.digits.substr(1);
    fix_extended(a, &s, "e" + std::to_string(r.exp10), &r);
    s.erase(1, 1);
    r.digits = s;
    return r;
  }
  return d;
}

// Dragon4 'unique' digits of a >= 0 in positional notation with at most `max_frac` (if >= 0) and
// at least `min_frac` (if >= 0) digits after the point: integer part and fraction part. numpy's
// arrays ask for min_frac 0, which makes Dragon4 print every integer digit exactly: float32
// 68187752 prints "68187752." in an array although its shortest digits are 6818775e+01.
template <typename T>
void pos_digits(T a, int max_frac, int min_frac, std::string* ip, std::string* fp) {
  SciDigits d = shortest_digits(a);
  int n = static_cast<int>(d.digits.size());
  int frac = n - 1 - d.exp10;  // negative when the shortest digits stop left of the units
  bool cut = max_frac >= 0 && frac > max_frac;
  bool extend = !cut && min_frac >= 0 && frac < min_frac;
  if (cut || extend) {
    int want = cut ? max_frac : min_frac;
    std::vector<char> buf(want + 400);  // room for any double's integer digits
    auto r = std::to_chars(buf.data(), buf.data() + buf.size(), a, std::chars_format::fixed, want);
    std::string s(buf.data(), r.ptr);
    if (extend) fix_extended<T>(a, &s, "", nullptr);
    size_t dot = s.find('.');
    *ip = s.substr(0, dot);
    *fp = dot == std::string::npos ? "" : s.substr(dot + 1);
    return;
  }
  if (d.exp10 >= 0) {
    if (n <= d.exp10 + 1) {
      *ip = d.digits + std::string(d.exp10 + 1 - n, '0');
      fp->clear();
    } else {
      *ip = d.digits.substr(0, d.exp10 + 1);
      *fp = d.digits.substr(d.exp10 + 1);
    }
  } else {
    *ip = "0";
    *fp = std::string(-d.exp10 - 1, '0') + d.digits;
  }
}

// numpy's trim modes: 'k' keep zeros, '.' trim zeros keep the point, '0' trim but leave one zero
// after the point, '-' trim zeros and the point.
enum class Trim { Keep, Dot, OneZero, DotZeros };

void trim_fraction(Trim trim, std::string* fp) {
  if (trim == Trim::Keep) return;
  while (!fp->empty() && fp->back() == '0') fp->pop_back();
  if (trim == Trim::OneZero && fp->empty()) *fp = "0";
}

void pad_left_to(std::string* s, size_t width) {
  if (s->size() < width) s->insert(0, width - s->size(), ' ');
}

// numpy.format_float_positional(x, precision, unique=True, fractional=True, trim, pad_left,
// pad_right) for finite x.
template <typename T>
std::string format_positional(T x, int precision, int min_digits, Trim trim, int pad_left = -1,
                              int pad_right = -1) {
  std::string ip, fp;
  pos_digits(std::fabs(x), precision, min_digits, &ip, &fp);
  trim_fraction(trim, &fp);
  std::string s = std::signbit(x) ? "-" : "";
  s += ip;
  pad_left_to(&s, pad_left < 0 ? 0 : pad_left);
  if (!(trim == Trim::DotZeros && fp.empty())) s += "." + fp;
  if (pad_right >= static_cast<int>(fp.size())) s.append(pad_right - fp.size(), ' ');
  return s;
}

std::string exponent_str(int exp10, int exp_digits) {
  std::string e = std::to_string(std::abs(exp10));
  size_t width = exp_digits < 0 ? 2 : std::min(exp_digits, 5);
  if (e.size() < width) e.insert(0, width - e.size(), '0');
  return std::string("e") + (exp10 < 0 ? "-" : "+") + e;
}

// numpy.format_float_scientific(x, precision, unique=True, trim, pad_left, exp_digits,
// min_digits) for finite x.
template <typename T>
std::string format_scientific(T x, int precision, int min_digits, Trim trim, int pad_left = -1,
                              int exp_digits = -1) {
  SciDigits d = sci_digits(std::fabs(x), precision, min_digits);
  std::string fp = d.digits.substr(1);
  trim_fraction(trim, &fp);
  std::string s = std::signbit(x) ? "-" : "";
  s += d.digits[0];
  pad_left_to(&s, pad_left < 0 ? 0 : pad_left);
  if (!(trim == Trim::DotZeros && fp.empty())) s += "." + fp;
  return s + exponent_str(d.exp10, exp_digits);
}

// str() of a numpy float scalar: positional for 1e-4 <= |x| < 1e16 (and 0), else scientific.
template <typename T>
std::string scalar_float_str(T x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  long double a = std::fabs(static_cast<long double>(x));
  if (a == 0 || (1e-4L <= a && a < 1e16L)) return format_positional(x, -1, -1, Trim::OneZero);
  return format_scientific(x, -1, -1, Trim::DotZeros);
}

// ---- Element formatters (numpy's FloatingFormat, IntegerFormat, BoolFormat) ------------------

template <typename T>
class FloatFormat {
 public:
  FloatFormat(const std::vector<T>& data, const PrintOptions& o) : precision_(o.precision) {
    std::vector<T> finite;
    for (T v : data)
      if (std::isfinite(v)) finite.push_back(v);
    bool any_nonzero = false;
    T max_val = 0, min_val = 0;
    for (T v : finite) {
      if (v == 0) continue;
      T a = std::fabs(v);
      if (!any_nonzero || a > max_val) max_val = a;
      if (!any_nonzero || a < min_val) min_val = a;
      any_nonzero = true;
    }
    if (any_nonzero) {
      // numpy divides in the dtype (float32 / float32 -> float32) and compares in float64.
      T ratio = max_val / min_val;
      exp_format_ = static_cast<double>(max_val) >= 1e8 ||
                    (!o.suppress && (static_cast<double>(min_val) < 0.0001 ||
                                     static_cast<double>(ratio) > 1000.));
    }

    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
    } else if (exp_format_) {
      // First pass: at most `precision` digits, zeros trimmed; then every mantissa gets the
      // longest fraction seen (min_digits), zero-filled, and every exponent the most digits seen.
      int max_frac = 0, max_exp = 0, max_int = 0;
      for (T v : finite) {
        SciDigits d = sci_digits(std::fabs(v), precision_, -1);
        std::string fp = d.digits.substr(1);
        trim_fraction(Trim::Dot, &fp);
        max_frac = std::max(max_frac, static_cast<int>(fp.size()));
        max_exp = std::max(max_exp, static_cast<int>(exponent_str(d.exp10, -1).size()) - 2);
        max_int = std::max(max_int, 1 + (std::signbit(v) ? 1 : 0));
      }
      precision_ = min_digits_ = max_frac;
      exp_size_ = max_exp;
      pad_left_ = max_int;
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      int max_frac = 0, max_int = 0;
      for (T v : finite) {
        std::string ip, fp;
        pos_digits(std::fabs(v), precision_, 0, &ip, &fp);
        trim_fraction(Trim::Dot, &fp);
        max_frac = std::max(max_frac, static_cast<int>(fp.size()));
        max_int = std::max(max_int, static_cast<int>(ip.size()) + (std::signbit(v) ? 1 : 0));
      }
      pad_left_ = max_int;
      pad_right_ = max_frac;
    }

    if (finite.size() != data.size()) {
      bool neginf = false;
      for (T v : data)
        if (std::isinf(v) && v < 0) neginf = true;
      int offset = pad_right_ + 1;  // +1 for the decimal point
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (neginf ? 1 : 0) - offset});
    }
  }

  std::string operator()(T x) const {
    if (!std::isfinite(x)) {
      std::string s = std::isnan(x) ? "nan" : (x < 0 ? "-inf" : "inf");
      pad_left_to(&s, pad_left_ + pad_right_ + 1);
      return s;
    }
    if (exp_format_)
      return format_scientific(x, precision_, min_digits_, Trim::Keep, pad_left_, exp_size_);
    return format_positional(x, precision_, 0, Trim::Dot, pad_left_, pad_right_);
  }

 private:
  bool exp_format_ = false;
  int precision_;
  int min_digits_ = -1;
  int pad_left_ = 0;
  int pad_right_ = 0;
  int exp_size_ = -1;
};

template <typename T>
class IntFormat {
 public:
  explicit IntFormat(const std::vector<T>& data) {
    auto [lo, hi] = std::minmax_element(data.begin(), data.end());
    width_ = std::max(std::to_string(*lo).size(), std::to_string(*hi).size());
  }
  std::string operator()(T x) const {
    std::string s = std::to_string(x);
    pad_left_to(&s, width_);
    return s;
  }

 private:
  size_t width_;
};

class BoolFormat {
 public:
  // " True" so that True and False line up (numpy drops the space for 0-d, printed elsewhere).
  std::string operator()(bool x) const { return x ? " True" : "False"; }
};

// ---- Reading elements through strides --------------------------------------------------------

template <typename T>
struct Element {
  static T read(const void* base, int64_t off) { return static_cast<const T*>(base)[off]; }
};
// A bool byte other than 0/1 (from a borrowed buffer) must not be loaded as bool.
template <>
struct Element<bool> {
  static bool read(const void* base, int64_t off) {
    return static_cast<const uint8_t*>(base)[off] != 0;
  }
};

// ---- Layout (numpy's _formatArray) -----------------------------------------------------------

void rstrip(std::string* s) {
  while (!s->empty() && s->back() == ' ') s->pop_back();
}

// numpy's _extendLine: put `word` on `line`, first flushing the line to `s` if it would pass
// `width` (unless the line holds only the indent, where wrapping would not help).
void extend_line(std::string* s, std::string* line, const std::string& word, int64_t width,
                 const std::string& indent) {
  const int64_t len = static_cast<int64_t>(line->size() + word.size());
  if (len > width && line->size() > indent.size()) {
    rstrip(line);
    *s += *line + "\n";
    *line = indent;
  }
  *line += word;
}

template <typename T, typename Fmt>
class ArrayPrinter {
 public:
  ArrayPrinter(const Tensor& t, const Fmt& fmt, const PrintOptions& o, bool summarise)
      : t_(t), base_(t.raw_data()), fmt_(fmt), edge_(o.edgeitems), summarise_(summarise) {}

  std::string print(int linewidth) { return recurse(0, 0, " ", linewidth); }

 private:
  // `hang` is the indent of continuation lines at this depth; `width` the usable line length.
  std::string recurse(int axis, int64_t off, const std::string& hang, int width) {
    const int nd = t_.ndim();
    if (axis == nd) return fmt_(Element<T>::read(base_, off));
    const std::string next_hang = hang + " ";
    const int next_width = width - 1;  // room for this level's "]"
    const int64_t n = t_.dim(axis), stride = t_.stride(axis);
    const bool show_summary = summarise_ && 2 * edge_ < n;
    const int64_t leading = show_summary ? edge_ : 0;
    const int64_t trailing = show_summary ? edge_ : n;
    auto child = [&](int64_t i) {
      return recurse(axis + 1, off + i * stride, next_hang, next_width);
    };

    std::string s;
    if (axis == nd - 1) {
      // A row: elements wrap when the line would pass width - len("]").
      const int64_t elem_width = static_cast<int64_t>(width) - 1;
      std::string line = hang;
      for (int64_t i = 0; i < leading; ++i) {
        extend_line(&s, &line, child(i), elem_width, hang);
        line += ' ';
      }
      if (show_summary) {
        extend_line(&s, &line, "...", elem_width, hang);
        line += ' ';
      }
      for (int64_t i = trailing; i > 1; --i) {
        extend_line(&s, &line, child(n - i), elem_width, hang);
        line += ' ';
      }
      extend_line(&s, &line, child(n - 1), elem_width, hang);
      s += line;
    } else {
      // Outer axes: one line break between rows, one more per axis below (blank lines).
      const std::string sep(nd - axis - 1, '\n');
      for (int64_t i = 0; i < leading; ++i) s += hang + child(i) + sep;
      if (show_summary) s += hang + "..." + sep;
      for (int64_t i = trailing; i > 1; --i) s += hang + child(n - i) + sep;
      s += hang + child(n - 1);
    }
    return "[" + s.substr(hang.size()) + "]";
  }

  const Tensor& t_;
  const void* base_;
  const Fmt& fmt_;
  int64_t edge_;
  bool summarise_;
};

// numpy's _leading_trailing: the elements the formatter is fitted to (all of them, or the
// corners kept by a summary). Mirrors numpy also for edgeitems == 0 (a[-0:] is everything).
template <typename T>
void gather_edges(const Tensor& t, int axis, int64_t off, bool summarise, int64_t edge,
                  std::vector<T>* out) {
  if (axis == t.ndim()) {
    out->push_back(Element<T>::read(t.raw_data(), off));
    return;
  }
  const int64_t n = t.dim(axis), stride = t.stride(axis);
  auto visit = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      gather_edges(t, axis + 1, off + i * stride, summarise, edge, out);
  };
  if (summarise && n > 2 * edge) {
    visit(0, edge);
    visit(edge > 0 ? n - edge : 0, n);
  } else {
    visit(0, n);
  }
}

template <typename T>
std::string print_typed(const Tensor& t, const PrintOptions& o) {
  const bool summarise = t.numel() > o.threshold;
  std::vector<T> data;
  gather_edges(t, 0, 0, summarise, o.edgeitems, &data);
  if constexpr (std::is_same_v<T, bool>) {
    BoolFormat fmt;
    return ArrayPrinter<T, BoolFormat>(t, fmt, o, summarise).print(o.linewidth);
  } else if constexpr (std::is_integral_v<T>) {
    IntFormat<T> fmt(data);
    return ArrayPrinter<T, IntFormat<T>>(t, fmt, o, summarise).print(o.linewidth);
  } else {
    FloatFormat<T> fmt(data, o);
    return ArrayPrinter<T, FloatFormat<T>>(t, fmt, o, summarise).print(o.linewidth);
  }
}

// numpy's ComplexFloatingFormat: real and imaginary parts formatted as two float columns, the
// imaginary one always signed, then "j".
template <typename R>
class ComplexFormat {
 public:
  ComplexFormat(const std::vector<std::complex<R>>& data, const PrintOptions& o)
      : re_(parts(data, false), o), im_(parts(data, true), o) {}
  std::string operator()(std::complex<R> x) const {
    // |imag| formatted, its sign put before the digits (numpy's sign='+' column, one wider),
    // and "j" before any padding on the right.
    std::string i = im_(std::fabs(x.imag()));
    size_t lead = i.find_first_not_of(' ');
    i.insert(lead == std::string::npos ? 0 : lead, std::signbit(x.imag()) ? "-" : "+");
    i.insert(i.find_last_not_of(' ') + 1, "j");
    return re_(x.real()) + i;
  }

 private:
  static std::vector<R> parts(const std::vector<std::complex<R>>& d, bool imag) {
    std::vector<R> r;
    for (auto& v : d) r.push_back(imag ? std::fabs(v.imag()) : v.real());
    return r;
  }
  FloatFormat<R> re_, im_;
};

// float16/bfloat16 print as float32 values with 16-bit shortest digits (t_shortest_in).
struct ShortestIn {
  explicit ShortestIn(DType t) : saved(t_shortest_in) { t_shortest_in = t; }
  ~ShortestIn() { t_shortest_in = saved; }
  DType saved;
};

std::string print_scalar(const Tensor& t);

template <typename T>
std::string print_complex(const Tensor& t, const PrintOptions& o) {
  using R = typename T::value_type;
  if (t.ndim() == 0) {  // numpy's complex scalar str: "(1+2j)", "2j", "(nan+infj)"
    T v = Element<T>::read(t.raw_data(), 0);
    auto part = [](R x) {
      std::string s = scalar_float_str(x);
      if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
      return s;
    };
    if (v.real() == 0 && !std::signbit(v.real())) return part(v.imag()) + "j";
    return "(" + part(v.real()) + (std::signbit(v.imag()) || std::isnan(v.imag()) ? "" : "+") +
           part(v.imag()) + "j)";
  }
  const bool summarise = t.numel() > o.threshold;
  std::vector<T> data;
  gather_edges(t, 0, 0, summarise, o.edgeitems, &data);
  ComplexFormat<R> fmt(data, o);
  return ArrayPrinter<T, ComplexFormat<R>>(t, fmt, o, summarise).print(o.linewidth);
}

std::string print_storage(const Tensor& t, const PrintOptions& o) {
  switch (t.dtype()) {
    case DType::Float16:
    case DType::BFloat16: {
      Tensor f = Tensor::empty(t.shape(), DType::Float32);
      copy_into(f, t);
      ShortestIn scope(t.dtype());
      return t.ndim() == 0 ? print_scalar(f) : print_typed<float>(f, o);
    }
    case DType::Complex64: return print_complex<complex64>(t, o);
    case DType::Complex128: return print_complex<complex128>(t, o);
    case DType::Int8: return t.ndim() == 0 ? std::to_string(t.item_int()) : print_typed<int8_t>(t, o);
    case DType::Int16: return t.ndim() == 0 ? std::to_string(t.item_int()) : print_typed<int16_t>(t, o);
    case DType::UInt8: return t.ndim() == 0 ? std::to_string(t.item_int()) : print_typed<uint8_t>(t, o);
    case DType::UInt16: return t.ndim() == 0 ? std::to_string(t.item_int()) : print_typed<uint16_t>(t, o);
    case DType::UInt32: return t.ndim() == 0 ? std::to_string(t.item_int()) : print_typed<uint32_t>(t, o);
    case DType::UInt64:
      return t.ndim() == 0 ? std::to_string(*static_cast<const uint64_t*>(t.raw_data()))
                           : print_typed<uint64_t>(t, o);
    default: PJ_CHECK(false) << "print_storage: " << dtype_name(t.dtype()) << " is a compute dtype";
  }
  return "";
}

// str() of a 0-d array is str() of its scalar.
std::string print_scalar(const Tensor& t) {
  return PJ_DISPATCH_ALL(t.dtype(), [&]() -> std::string {
    scalar_t v = Element<scalar_t>::read(t.raw_data(), 0);
    if constexpr (std::is_same_v<scalar_t, bool>) return v ? "True" : "False";
    else if constexpr (std::is_integral_v<scalar_t>) return std::to_string(v);
    else return scalar_float_str(v);
  });
}

void check_options(const PrintOptions& o) {
  if (o.precision < 0) PJ_THROW(Value) << "precision must be >= 0, got " << o.precision;
  if (o.edgeitems < 0) PJ_THROW(Value) << "edgeitems must be >= 0, got " << o.edgeitems;
}

}  // namespace

PrintOptions get_print_options() {
  std::lock_guard<std::mutex> lock(g_options_mu);
  return g_options;
}

void set_print_options(const PrintOptions& options) {
  check_options(options);
  std::lock_guard<std::mutex> lock(g_options_mu);
  g_options = options;
}

std::string format_str(const Tensor& t) { return format_str(t, get_print_options()); }

std::string format_str(const Tensor& t, const PrintOptions& options) {
  check_options(options);
  if (t.numel() == 0) return "[]";
  if (t.device() != Device::CPU)
    PJ_THROW(Value) << "cannot print a GPU tensor; copy it to the CPU first";
  if (!is_compute_dtype(t.dtype()) || is_complex(t.dtype())) return print_storage(t, options);
  if (t.ndim() == 0) return print_scalar(t);
  return PJ_DISPATCH_ALL(t.dtype(), [&] { return print_typed<scalar_t>(t, options); });
}

std::string format_repr(const Tensor& t) { return format_repr(t, get_print_options()); }

std::string format_repr(const Tensor& t, const PrintOptions& options) {
  return "Tensor(shape=" + shape_list_str(t.shape()) + ", dtype=" + dtype_name(t.dtype()) +
         ", value=" + (t.ndim() > 1 ? "\n" : " ") + format_str(t, options) + ")";
}

}  // namespace pj
