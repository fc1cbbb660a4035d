"""numpy 1.24's str() and repr() of arrays and scalars, for pijit's numpy stand-in.

A Python port of the same code as kernels/format.cc (numpy's arrayprint: FloatingFormat in
'maxprec' mode, IntegerFormat, BoolFormat, _formatArray with its line wrapping and summaries),
with what the C++ printer has no need for: the ', ' separator and "array(" prefix of repr, and
float16 digits. str() of pijit's own dtypes goes to pijit._C.format_str, so an array prints as the
tensor it came from; this port serves repr, the emulated dtypes and scalars. Digits: Python's
repr is the shortest round-trip string for float64; float32 and float16 look for the shortest
one that reads back in their own precision; '%.*f' and '%.*e' round the exact value half to even,
as Dragon4 does.
"""
import math
from decimal import Decimal

from pijit import _C
from pijit.numpy_lite import _dtypes as _d

_options = {"precision": 8, "threshold": 1000, "edgeitems": 3, "linewidth": 75,
            "suppress": False, "nanstr": "nan", "infstr": "inf", "sign": "-",
            "floatmode": "maxprec", "formatter": None, "legacy": False}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     suppress=None, nanstr=None, infstr=None, formatter=None, sign=None,
                     floatmode=None, legacy=None):
    """numpy.set_printoptions for precision, threshold, edgeitems, linewidth and suppress (shared
    with pijit's tensor printing, as MindSpore's tensors print through numpy)."""
    for name, value, default in (("nanstr", nanstr, "nan"), ("infstr", infstr, "inf"),
                                 ("sign", sign, "-"), ("floatmode", floatmode, "maxprec"),
                                 ("formatter", formatter, None), ("legacy", legacy, False)):
        if value is not None and value != default:
            raise _d.unsupported("set_printoptions(%s=%r)" % (name, value))
    new = dict(_options)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            if isinstance(value, float) and name == "threshold" and math.isinf(value):
                value = 2 ** 31 - 1
            new[name] = int(value)
    if suppress is not None:
        new["suppress"] = bool(suppress)
    _C.set_printoptions(precision=new["precision"], threshold=min(new["threshold"], 2 ** 31 - 1),
                        edgeitems=new["edgeitems"], linewidth=new["linewidth"],
                        suppress=new["suppress"])
    _options.update(new)


def get_printoptions():
    return dict(_options)


# ---- digits of one float -------------------------------------------------------------------

def _reads_back(s, x, bits):
    v = float(s)
    if bits == 64:
        return v == x
    try:
        return (_d.round_f32(v) if bits == 32 else _d.round_f16(v)) == x
    except OverflowError:
        return False


def _sci_parts(s):
    """'1.2345e-05' -> ('12345', -5)."""
    mant, _, exp = s.partition("e")
    return mant.replace(".", ""), int(exp)


def shortest_digits(a, bits):
    """(digits, exp10) of the shortest decimal that reads back as a >= 0 in its dtype; among
    equally short ones, the nearest (Dragon4's 'unique' mode)."""
    if a == 0:
        return "0", 0
    if bits == 64:
        t = Decimal(repr(a)).normalize().as_tuple()
        digits = "".join(str(x) for x in t.digits)
        return digits, t.exponent + len(digits) - 1
    exact = Decimal(a)
    for p in range(1, 18):
        digits, e = _sci_parts("%.*e" % (p - 1, a))
        best = None
        # The nearest p-digit decimal may miss a's (asymmetric) rounding interval while its
        # neighbour hits it, just above a power of two.
        for cand in (int(digits), int(digits) + 1, int(digits) - 1):
            if cand <= 0:
                continue
            s = "%de%d" % (cand, e - p + 1)
            if _reads_back(s, a, bits):
                dist = abs(Decimal(s) - exact)
                if best is None or dist < best[0]:
                    best = (dist, cand)
        if best is not None:
            cand = str(best[1])
            exp10 = e + len(cand) - p
            return cand.rstrip("0") or "0", exp10
    raise AssertionError("no round-trip digits for %r" % a)


def _rounded_sci(a, frac):
    return _sci_parts("%.*e" % (frac, a))


def _increment_last(s):
    """'1.99' -> '2.00', '99' -> '100'; returns (new string, whether a digit was prepended)."""
    chars = list(s)
    for i in range(len(chars) - 1, -1, -1):
        if chars[i] == ".":
            continue
        if chars[i] != "9":
            chars[i] = chr(ord(chars[i]) + 1)
            return "".join(chars), False
        chars[i] = "0"
    return "1" + "".join(chars), True


def _fix_extended(a, s, exponent, bits):
    """Dragon4 going past the shortest digits never ends on a digit that leaves the value's
    rounding interval (see kernels/format.cc). Returns the string and the exponent's change."""
    if _reads_back(s + exponent, a, bits):
        return s, 0
    s, grew = _increment_last(s)
    if grew and exponent:  # 9.99e+1 -> 10.00e+1 -> 1.000e+2
        s = s[:-1]
        return s[0] + s[2] + s[1] + s[3:], 1
    return s, 0


def sci_digits(a, max_frac, min_frac, bits):
    """(digits, exp10) of a >= 0 with at most max_frac (if >= 0) and at least min_frac digits
    after the mantissa's point."""
    digits, exp10 = shortest_digits(a, bits)
    frac = len(digits) - 1
    if max_frac >= 0 and frac > max_frac:
        return _rounded_sci(a, max_frac)
    if min_frac > frac:
        digits, exp10 = _rounded_sci(a, min_frac)
        s, bump = _fix_extended(a, digits[0] + "." + digits[1:], "e%d" % exp10, bits)
        return s.replace(".", ""), exp10 + bump
    return digits, exp10


def pos_digits(a, max_frac, min_frac, bits):
    """(integer part, fraction part) of a >= 0 in positional notation."""
    digits, exp10 = shortest_digits(a, bits)
    n = len(digits)
    frac = n - 1 - exp10
    cut = max_frac >= 0 and frac > max_frac
    extend = not cut and min_frac >= 0 and frac < min_frac
    if cut or extend:
        want = max_frac if cut else min_frac
        s = "%.*f" % (want, a)
        if extend:
            s, _ = _fix_extended(a, s, "", bits)
        ip, _, fp = s.partition(".")
        return ip, fp
    if exp10 >= 0:
        if n <= exp10 + 1:
            return digits + "0" * (exp10 + 1 - n), ""
        return digits[:exp10 + 1], digits[exp10 + 1:]
    return "0", "0" * (-exp10 - 1) + digits


# Trim modes: 'k' keep zeros, '.' trim zeros keep the point, '0' leave one zero, '-' drop both.
def _trim(trim, fp):
    if trim == "k":
        return fp
    fp = fp.rstrip("0")
    if trim == "0" and not fp:
        fp = "0"
    return fp


def format_positional(x, bits, precision=-1, min_digits=-1, trim=".", pad_left=-1,
                      pad_right=-1):
    ip, fp = pos_digits(abs(x), precision, min_digits, bits)
    fp = _trim(trim, fp)
    s = ("-" if math.copysign(1.0, x) < 0 else "") + ip
    if pad_left > len(s):
        s = " " * (pad_left - len(s)) + s
    if not (trim == "-" and not fp):
        s += "." + fp
    if pad_right >= len(fp):
        s += " " * (pad_right - len(fp))
    return s


def _exponent_str(exp10, exp_digits):
    e = str(abs(exp10))
    width = 2 if exp_digits < 0 else min(exp_digits, 5)
    return "e" + ("-" if exp10 < 0 else "+") + e.rjust(width, "0")


def format_scientific(x, bits, precision=-1, min_digits=-1, trim=".", pad_left=-1,
                      exp_digits=-1):
    digits, exp10 = sci_digits(abs(x), precision, min_digits, bits)
    fp = _trim(trim, digits[1:])
    s = ("-" if math.copysign(1.0, x) < 0 else "") + digits[0]
    if pad_left > len(s):
        s = " " * (pad_left - len(s)) + s
    if not (trim == "-" and not fp):
        s += "." + fp
    return s + _exponent_str(exp10, exp_digits)


def scalar_float_str(x, bits):
    """str() of a numpy float scalar: positional for 1e-4 <= |x| < 1e16 (and 0), else
    scientific."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    a = abs(x)
    if a == 0 or (1e-4 <= a < 1e16):
        return format_positional(x, bits, -1, -1, "0")
    return format_scientific(x, bits, -1, -1, "-")


def scalar_str(value, d):
    if d is _d.BOOL:
        return "True" if value else "False"
    if d.kind in "iu":
        return str(value)
    if d.kind == "c":
        return scalar_complex_str(complex(value), d._bits // 2)
    return scalar_float_str(value, d._bits)


def _float_either(x, bits, sign):
    """numpy's scalar float formatting with trailing zeros and point trimmed ('1', '1.5',
    '1e+20'), as its complex scalars print their parts."""
    if math.isnan(x):
        return ("+" if sign else "") + "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else ("+inf" if sign else "inf")
    a = abs(x)
    if a == 0 or (1e-4 <= a < 1e16):
        s = format_positional(x, bits, -1, -1, "-")
    else:
        s = format_scientific(x, bits, -1, -1, "-")
    if sign and math.copysign(1.0, x) > 0:
        s = "+" + s
    return s


def scalar_complex_str(z, bits):
    """str() of a numpy complex scalar: '2j' for a +0 real part, else '(1+2j)'."""
    if z.real == 0 and math.copysign(1.0, z.real) > 0:
        return _float_either(z.imag, bits, False) + "j"
    return "(%s%sj)" % (_float_either(z.real, bits, False), _float_either(z.imag, bits, True))


# ---- element formatters ------------------------------------------------------------------------

class FloatFormat(object):
    """numpy's FloatingFormat (floatmode 'maxprec', sign '-')."""

    def __init__(self, data, bits, is_0d=False, sign="-"):
        self.bits = bits
        self.sign = sign
        self.precision = _options["precision"]
        self.exp_format = False
        self.min_digits = -1
        self.exp_size = -1
        finite = [v for v in data if math.isfinite(v)]
        nonzero = [abs(v) for v in finite if v != 0]
        if nonzero:
            max_val, min_val = max(nonzero), min(nonzero)
            ratio = max_val / min_val
            if bits == 32:
                ratio = _d.round_f32(ratio)
            elif bits == 16:
                ratio = _d.round_f16(ratio)
            self.exp_format = max_val >= 1e8 or (not _options["suppress"] and
                                                 (min_val < 0.0001 or ratio > 1000.0))
        if not finite:
            self.pad_left = self.pad_right = 0
        elif self.exp_format:
            max_frac = max_exp = max_int = 0
            for v in finite:
                digits, exp10 = sci_digits(abs(v), self.precision, -1, bits)
                fp = digits[1:].rstrip("0")
                max_frac = max(max_frac, len(fp))
                max_exp = max(max_exp, len(_exponent_str(exp10, -1)) - 2)
                max_int = max(max_int, 1 + (1 if math.copysign(1.0, v) < 0 or sign == "+"
                                            else 0))
            self.precision = self.min_digits = max_frac
            self.exp_size = max_exp
            self.pad_left = max_int
            self.pad_right = self.exp_size + 2 + self.precision
        else:
            max_frac = max_int = 0
            for v in finite:
                ip, fp = pos_digits(abs(v), self.precision, 0, bits)
                fp = fp.rstrip("0")
                max_frac = max(max_frac, len(fp))
                max_int = max(max_int, len(ip) + (1 if math.copysign(1.0, v) < 0 or sign == "+"
                                                  else 0))
            self.pad_left = max_int
            self.pad_right = max_frac
        if len(finite) != len(data):
            neginf = sign != "-" or any(math.isinf(v) and v < 0 for v in data)
            offset = self.pad_right + 1
            self.pad_left = max(self.pad_left, len(_options["nanstr"]) - offset,
                                len(_options["infstr"]) + neginf - offset)

    def __call__(self, x):
        plus = self.sign == "+"
        if not math.isfinite(x):
            s = ("+" if plus else "") + _options["nanstr"] if math.isnan(x) else \
                ("-" if x < 0 else "+" if plus else "") + _options["infstr"]
            return " " * (self.pad_left + self.pad_right + 1 - len(s)) + s
        if plus:
            s = self._plain(x)
            if math.copysign(1.0, x) > 0:
                s = "+" + s
            dot = s.find(".")
            int_len = dot if dot >= 0 else len(s.split("e")[0])
            return " " * (self.pad_left - int_len) + s
        if self.exp_format:
            return format_scientific(x, self.bits, self.precision, self.min_digits, "k",
                                     self.pad_left, self.exp_size)
        return format_positional(x, self.bits, self.precision, 0, ".", self.pad_left,
                                 self.pad_right)

    def _plain(self, x):
        """x formatted with no left padding (the sign is added by the caller)."""
        if self.exp_format:
            return format_scientific(x, self.bits, self.precision, self.min_digits, "k", -1,
                                     self.exp_size)
        return format_positional(x, self.bits, self.precision, 0, ".", -1, self.pad_right)


class ComplexFormat(object):
    """numpy's ComplexFloatingFormat: the real parts and the imaginary parts (signed) are each
    formatted as a float column; 'j' goes before the imaginary part's padding."""

    def __init__(self, data, bits, is_0d=False):
        self.real_format = FloatFormat([z.real for z in data], bits // 2, is_0d)
        self.imag_format = FloatFormat([z.imag for z in data], bits // 2, is_0d, sign="+")

    def __call__(self, z):
        r = self.real_format(z.real)
        i = self.imag_format(z.imag)
        sp = len(i.rstrip())
        return r + i[:sp] + "j" + i[sp:]


class IntFormat(object):
    def __init__(self, data):
        self.width = max(len(str(max(data))), len(str(min(data)))) if data else 0

    def __call__(self, x):
        return str(x).rjust(self.width)


class BoolFormat(object):
    def __init__(self, is_0d):
        self.truestr = "True" if is_0d else " True"

    def __call__(self, x):
        return self.truestr if x else "False"


def _formatter(data, d, is_0d):
    if d is _d.BOOL:
        return BoolFormat(is_0d)
    if d.kind in "iu":
        return IntFormat(data)
    if d.kind == "c":
        return ComplexFormat(data, d._bits, is_0d)
    return FloatFormat(data, d._bits, is_0d)


# ---- layout (numpy's _formatArray) -------------------------------------------------------------

def _leading_trailing(values, shape, edge, summarize):
    """The elements the formatter is fitted to, flattened (numpy's _leading_trailing)."""
    out = []

    def visit(v, axis):
        if axis == len(shape):
            out.append(v)
            return
        n = shape[axis]
        if summarize and n > 2 * edge:
            idx = list(range(edge)) + list(range(n - edge if edge else 0, n))
        else:
            idx = range(n)
        for i in idx:
            visit(v[i], axis + 1)
    visit(values, 0)
    return out


def _extend_line(s, line, word, width, indent):
    if len(line) + len(word) > width and len(line) > len(indent):
        s += line.rstrip() + "\n"
        line = indent
    return s, line + word


def _format_array(values, shape, fmt, width, next_line_prefix, separator, edge, summarize):
    nd = len(shape)

    def recurse(v, axis, hang, curr_width):
        if axis == nd:
            return fmt(v)
        next_hang = hang + " "
        next_width = curr_width - 1
        n = shape[axis]
        show = summarize and 2 * edge < n
        leading, trailing = (edge, edge) if show else (0, n)
        s = ""
        if axis == nd - 1:
            elem_width = curr_width - max(len(separator.rstrip()), 1)
            line = hang
            for i in range(leading):
                s, line = _extend_line(s, line, recurse(v[i], axis + 1, next_hang, next_width),
                                       elem_width, hang)
                line += separator
            if show:
                s, line = _extend_line(s, line, "...", elem_width, hang)
                line += separator
            for i in range(trailing, 1, -1):
                s, line = _extend_line(s, line, recurse(v[n - i], axis + 1, next_hang,
                                                        next_width), elem_width, hang)
                line += separator
            s, line = _extend_line(s, line, recurse(v[n - 1], axis + 1, next_hang, next_width),
                                   elem_width, hang)
            s += line
        else:
            line_sep = separator.rstrip() + "\n" * (nd - axis - 1)
            for i in range(leading):
                s += hang + recurse(v[i], axis + 1, next_hang, next_width) + line_sep
            if show:
                s += hang + "..." + line_sep
            for i in range(trailing, 1, -1):
                s += hang + recurse(v[n - i], axis + 1, next_hang, next_width) + line_sep
            s += hang + recurse(v[n - 1], axis + 1, next_hang, next_width)
        return "[" + s[len(hang):] + "]"

    return recurse(values, 0, next_line_prefix, width)


def array2string(values, shape, d, separator=" ", prefix="", suffix=""):
    """numpy.array2string of nested lists `values` of the given shape and dtype."""
    size = 1
    for s in shape:
        size *= s
    if size == 0:
        return "[]"
    summarize = size > _options["threshold"]
    edge = _options["edgeitems"]
    data = _leading_trailing(values, shape, edge, summarize)
    fmt = _formatter(data, d, not shape)
    width = _options["linewidth"] - len(suffix)
    return _format_array(values, shape, fmt, width, " " + " " * len(prefix), separator, edge,
                         summarize)


def array_str(values, shape, d):
    if not shape:
        return scalar_str(values, d)
    return array2string(values, shape, d)


def array_repr(values, shape, d):
    size = 1
    for s in shape:
        size *= s
    skip_dtype = d in (_d.FLOAT64, _d.INT64, _d.BOOL, _d.COMPLEX128) and size > 0
    prefix = "array("
    suffix = ")" if skip_dtype else ","
    if size > 0 or shape == (0,):
        lst = array2string(values, shape, d, ", ", prefix, suffix)
    else:
        lst = "[], shape=%r" % (tuple(shape),)
    s = prefix + lst + suffix
    if skip_dtype:
        return s
    dtype_str = "dtype=%s)" % d.name
    last_line = len(s) - (s.rfind("\n") + 1)
    spacer = " "
    if last_line + len(dtype_str) + 1 > _options["linewidth"]:
        spacer = "\n" + " " * len(prefix)
    return s + spacer + dtype_str
