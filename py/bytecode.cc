#include "py/pyport.h"  // first (Python.h): code bytes and line tables of this version

#include "py/bytecode.h"

#include <string>

namespace pj::py {
namespace {

std::string at(const char* what, size_t offset) { return std::string(what) + " at offset " + std::to_string(offset); }

// CPython's compiler never emits more than 3 prefixes: the argument is at most 32 bits.
constexpr int kMaxPrefixes = 3;

}  // namespace

DecodeResult decode(const uint8_t* code, size_t size, const int* unit_lines) {
  DecodeResult r;
  if (size % py::kCodeUnit != 0) {
    r.error = "bytecode length " + std::to_string(size) + " is not a multiple of 2";
    return r;
  }
  uint32_t ext = 0;  // argument bits carried by the pending EXTENDED_ARG prefixes
  int prefixes = 0;
  size_t start = 0;
  for (size_t off = 0; off < size; off += py::kCodeUnit) {
    int number = code[off];
    Opcode op = from_py_opcode(number);
    if (op == Opcode::kInvalid) {
      r.error = at(("unknown opcode " + std::to_string(number)).c_str(), off);
      return r;
    }
    if (prefixes == 0) start = off;
    uint32_t arg = ext | code[off + 1];
    if (op == Opcode::EXTENDED_ARG) {
      if (++prefixes > kMaxPrefixes) {
        r.error = at("more than 3 EXTENDED_ARG prefixes", start);
        return r;
      }
      ext = arg << 8;
      continue;
    }
    Instruction ins;
    ins.offset = static_cast<int>(off);
    ins.start = static_cast<int>(start);
    ins.op = op;
    ins.arg = has_flag(op, kArg) ? static_cast<int>(arg) : 0;  // CPython ignores a no-arg op's byte
    ins.line = unit_lines ? unit_lines[off / py::kCodeUnit] : 0;
    if (ins.line < 0) ins.line = ~ins.line, ins.no_line = true;
    const size_t caches = static_cast<size_t>(cache_units(op)) * py::kCodeUnit;
    if (off + py::kCodeUnit + caches > size) {
      r.error = at("truncated inline caches", off);
      return r;
    }
    if (is_jump(op)) {
      // Relative jumps count from the next instruction, after the caches; 3.11's backward ones
      // count back from there.
      const size_t next = off + py::kCodeUnit + caches;
      const size_t distance = static_cast<size_t>(arg) * py::kJumpUnit;
      long long target = static_cast<long long>(distance);
      if (has_flag(op, kJumpBack)) target = static_cast<long long>(next) - target;
      else if (has_flag(op, kJumpRel)) target += static_cast<long long>(next);
      if (target < 0 || target >= static_cast<long long>(size) || target % py::kCodeUnit != 0) {
        r.error = at(("jump target " + std::to_string(target) + " outside the code").c_str(), off);
        return r;
      }
      ins.jump_target = static_cast<int>(target);
    }
    r.instructions.push_back(ins);
    ext = 0;
    prefixes = 0;
    off += caches;  // the cache units hold no instruction
  }
  if (prefixes) {
    r.error = at("truncated EXTENDED_ARG (no instruction follows)", start);
    return r;
  }
  // Mark targets: a jump may land on an instruction's first prefix or on the opcode itself.
  std::vector<int> owner(size / py::kCodeUnit, -1);  // code unit -> index of its instruction
  for (size_t i = 0; i < r.instructions.size(); ++i)
    for (int u = r.instructions[i].start; u <= r.instructions[i].offset; u += py::kCodeUnit)
      owner[u / py::kCodeUnit] = static_cast<int>(i);
  for (const Instruction& ins : r.instructions) {
    if (ins.jump_target < 0) continue;
    const int target_owner = owner[ins.jump_target / py::kCodeUnit];
    if (target_owner < 0) {
      r.error = at(("jump target " + std::to_string(ins.jump_target) + " inside an instruction's caches").c_str(), ins.offset);
      r.instructions.clear();
      return r;
    }
    r.instructions[target_owner].is_jump_target = true;
  }
  return r;
}

void decode_exception_table(const uint8_t* table, size_t size, size_t code_size, DecodeResult& r) {
  size_t i = 0;
  auto varint = [&](bool first, long long* out) {
    if (i >= size || ((table[i] & 0x80) != 0) != first) return false;
    long long v = table[i] & 0x3F;
    while (table[i++] & 0x40) {
      if (i >= size || (table[i] & 0x80) || v > (1LL << 40)) return false;
      v = (v << 6) | (table[i] & 0x3F);
    }
    *out = v;
    return true;
  };
  std::vector<char> starts(code_size / py::kCodeUnit + 1, 0);
  for (const Instruction& ins : r.instructions) starts[ins.start / py::kCodeUnit] = 1;
  starts[code_size / py::kCodeUnit] = 1;  // (a range may end at the code's end)
  while (i < size) {
    long long start, length, target, depth_lasti;
    if (!varint(true, &start) || !varint(false, &length) || !varint(false, &target) || !varint(false, &depth_lasti)) {
      r.error = "malformed exception table at byte " + std::to_string(i);
      return;
    }
    ExceptionEntry e;
    const long long unit = py::kCodeUnit, end = (start + length) * unit;
    if (length <= 0 || end > static_cast<long long>(code_size) || target * unit >= static_cast<long long>(code_size) ||
        !starts[start] || !starts[end / unit] || !starts[target]) {
      r.error = "exception table entry " + std::to_string(r.handlers.size()) + " does not fit the code";
      return;
    }
    e.start = static_cast<int>(start * unit);
    e.end = static_cast<int>(end);
    e.target = static_cast<int>(target * unit);
    e.depth = static_cast<int>(depth_lasti >> 1);
    e.lasti = depth_lasti & 1;
    r.handlers.push_back(e);
  }
}

std::string encode_exception_table(const std::vector<ExceptionEntry>& entries) {
  std::string out;
  auto item = [&out](int value, int first) {  // first: 0x80 on an entry's first byte
    int shift = 24;
    while (shift > 0 && value < (1 << shift)) shift -= 6;
    for (; shift > 0; shift -= 6, first = 0) out.push_back(static_cast<char>(((value >> shift) & 0x3F) | 0x40 | first));
    out.push_back(static_cast<char>((value & 0x3F) | first));
  };
  for (const ExceptionEntry& e : entries) {
    item(e.start / py::kCodeUnit, 0x80);
    item((e.end - e.start) / py::kCodeUnit, 0);
    item(e.target / py::kCodeUnit, 0);
    item(e.depth << 1 | (e.lasti ? 1 : 0), 0);
  }
  return out;
}

DecodeResult decode_code(_object* code) {
  DecodeResult r;
  if (!py::kDecodeSupported) {
    r.error = py::kUnsupportedPythonMessage;
    return r;
  }
  if (!PyCode_Check(code)) {
    r.error = std::string("expected a code object, got '") + Py_TYPE(code)->tp_name + "'";
    return r;
  }
  auto* co = reinterpret_cast<PyCodeObject*>(code);
  std::vector<int> lines;
  if (!py::code_unit_lines(co, lines)) {
    r.error = py::kUnsupportedPythonMessage;
    return r;
  }
  PyObject* bytes = py::code_bytes(co);
  if (!bytes) {
    PyErr_Clear();
    r.error = "cannot read the code object's bytecode";
    return r;
  }
  r = decode(reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(bytes)), PyBytes_GET_SIZE(bytes), lines.data());
  const size_t code_size = static_cast<size_t>(PyBytes_GET_SIZE(bytes));
  Py_DECREF(bytes);
  std::vector<std::array<int, 3>> spans;
  if (r.ok() && py::code_unit_spans(co, spans))
    for (Instruction& ins : r.instructions)
      if (static_cast<size_t>(ins.offset / py::kCodeUnit) < spans.size()) ins.span = spans[ins.offset / py::kCodeUnit];
  if (PyObject* table = r.ok() ? py::exception_table_bytes(co) : nullptr)
    decode_exception_table(reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(table)), PyBytes_GET_SIZE(table), code_size, r);
  return r;
}

}  // namespace pj::py
