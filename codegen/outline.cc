#include "py/pyport.h"  // first (Python.h)

#include "codegen/outline.h"

#if PJ_PY_CAPTURE_BUILT

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <map>
#include <utility>
#include <vector>

#include "codegen/code_builder.h"
#include "py/bytecode.h"
#include "py/opcodes.h"

namespace pj::codegen {
namespace {

using py::Opcode;
using py::Ref;
using py::has_flag;

// What one iteration may have done to a local by some point: a set of these.
enum : uint8_t { kUnwritten = 1, kWritten = 2, kDeleted = 4 };

struct Exit {
  enum Kind { Next, Goto, Break, Return } kind = Next;
  int from = -1;      // the instruction it leaves by (original index)
  bool taken = true;  // ... by its jump (false: falling through)
  int target = -1;    // Goto: original index
  int depth = 0;      // stack depth as it leaves
  std::vector<uint8_t> state;
  std::vector<std::pair<int, bool>> values;  // (local, maybe unwritten) the body returns, in order
  std::vector<int> unbinds;                  // locals the driver unbinds
};

std::string local_name(PyCodeObject* co, int i) { return py::text(py::code_varname(co, i)); }

bool is_cellvar(PyCodeObject* co, int i) {
  for (Py_ssize_t c = 0; c < py::code_ncells(co); ++c)
    if (PyUnicode_Compare(py::code_cellname(co, c), py::code_varname(co, i)) == 0) return true;
  return false;
}

// A name whose use in the body would see the body's frame instead of the function's.
bool frame_introspection(Opcode op, PyObject* name) {
  static const char* builtins[] = {"locals", "vars", "dir", "exec", "eval"};
  static const char* attrs[] = {"_getframe", "currentframe"};
  const std::string text = py::text(name);  // an odd name (a lone surrogate) is none of these
  const char* s = text.c_str();
  if (op == Opcode::LOAD_GLOBAL || op == Opcode::LOAD_NAME) {
    for (const char* b : builtins)
      if (std::strcmp(s, b) == 0) return true;
  } else if (op == Opcode::LOAD_ATTR || op == Opcode::LOAD_METHOD) {
    for (const char* a : attrs)
      if (std::strcmp(s, a) == 0) return true;
  }
  return false;
}

// Per instruction: the fast locals bound on every path to it (definite assignment; with `any`, on
// some path); reached[i] false where no path leads. A handler is entered from anywhere in its
// block: it gets what was bound at the SETUP (3.11: at each instruction its exception-table entry
// covers) less whatever the code deletes anywhere (with `any`: more whatever it stores anywhere).
void definitely_bound(const std::vector<AsmInstr>& a, const std::vector<AsmHandler>& handlers, PyCodeObject* co,
                      std::vector<std::vector<char>>* in, std::vector<char>* reached, bool any = false) {
  const int nl = co->co_nlocals, n = static_cast<int>(a.size());
  std::vector<char> deleted(nl, 0), stored(nl, 0), entry(nl, 0);
  for (const AsmInstr& x : a) {
    if (x.op == Opcode::DELETE_FAST) deleted[x.arg] = 1;
    if (x.op == Opcode::STORE_FAST) stored[x.arg] = 1;
  }
  int nargs = co->co_argcount + co->co_kwonlyargcount + ((co->co_flags & CO_VARARGS) ? 1 : 0) +
              ((co->co_flags & CO_VARKEYWORDS) ? 1 : 0);
  // An argument that is also a cell variable starts in its cell: CPython leaves its fast slot empty.
  for (int i = 0; i < nargs && i < nl; ++i) entry[i] = !is_cellvar(co, i);
  in->assign(n, {});
  reached->assign(n, 0);
  std::vector<int> work;
  auto meet = [&](int i, const std::vector<char>& s) {
    if (!(*reached)[i]) {
      (*reached)[i] = 1;
      (*in)[i] = s;
      work.push_back(i);
      return;
    }
    bool changed = false;
    for (int k = 0; k < nl; ++k) {
      if (!any && (*in)[i][k] && !s[k]) (*in)[i][k] = 0, changed = true;
      if (any && !(*in)[i][k] && s[k]) (*in)[i][k] = 1, changed = true;
    }
    if (changed) work.push_back(i);
  };
  auto into_handler = [&](std::vector<char> h) {
    for (int k = 0; k < nl; ++k) h[k] = any ? (h[k] || stored[k]) : (h[k] && !deleted[k]);
    return h;
  };
  meet(0, entry);
  while (!work.empty()) {
    int i = work.back();
    work.pop_back();
    std::vector<char> s = (*in)[i];
    const AsmInstr& x = a[i];
    for (const AsmHandler& e : handlers) {
      if (i < e.start || i >= e.end) continue;
      meet(e.target, into_handler((*in)[i]));
    }
    if (x.op == Opcode::STORE_FAST) s[x.arg] = 1;
    if (x.op == Opcode::DELETE_FAST) s[x.arg] = 0;
    if (has_flag(x.op, py::kSetup)) {
      meet(x.target, into_handler((*in)[i]));
    } else if (py::is_jump(x.op)) {
      meet(x.target, s);
    }
    if (!has_flag(x.op, py::kEndsBlock) && i + 1 < n) meet(i + 1, s);
  }
}

// Instructions a body may not hold: its try/with blocks (a break or return through them), the
// unwinding of blocks outside it (3.8+'s compiler pops them statically on `return`), generators'
// and comprehensions' (they reach below the loop's iterator).
bool block_instruction(Opcode op) {
  if (op != Opcode::SETUP_LOOP && py::handles_blocks(op)) return true;  // (3.7: the loop's own block)
  switch (op) {
    case Opcode::CONTINUE_LOOP:
    case Opcode::JUMP_IF_NOT_EXC_MATCH:
    case Opcode::END_ASYNC_FOR:
    case Opcode::YIELD_VALUE:
    case Opcode::YIELD_FROM:
    case Opcode::GET_AWAITABLE:
    // A comprehension's loop appends to the container below its iterator: in the body that value
    // is a placeholder.
    case Opcode::LIST_APPEND:
    case Opcode::SET_ADD:
    case Opcode::MAP_ADD:
    // 3.11's handlers, with blocks and generators (its try blocks are exception-table entries)
    case Opcode::PUSH_EXC_INFO:
    case Opcode::CHECK_EXC_MATCH:
    case Opcode::CHECK_EG_MATCH:
    case Opcode::PREP_RERAISE_STAR:
    case Opcode::BEFORE_WITH:
    case Opcode::BEFORE_ASYNC_WITH:
    case Opcode::SEND:
    case Opcode::ASYNC_GEN_WRAP:
    case Opcode::RETURN_GENERATOR:
      return true;
    default:
      return false;
  }
}

class Outliner {
 public:
  Outliner(PyCodeObject* co, std::string* why, const ResumeMaker& make_resume)
      : co_(co), why_(why), nl_(co->co_nlocals), make_resume_(make_resume) {}

  bool run(int offset, OutlinedLoop* out) {
    if (!(co_->co_flags & CO_OPTIMIZED) || (co_->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)))
      return fail("not a plain function");
    py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(co_));
    if (!d.ok()) return fail("malformed bytecode: " + d.error);
    ins_ = std::move(d.instructions);
    a_ = from_decoded(ins_);
    handlers_ = from_decoded(ins_, d.handlers);
    if (!find_loop(offset) || !check_shape()) return false;
    std::string err;
    if (stack_depths(a_, &depth_, &err, handlers_) < 0) return fail("stack analysis: " + err);
    if (depth_[h_] < 0) return fail("the loop is never reached");
    dh_ = depth_[h_];
    std::vector<char> reached;
    std::vector<std::vector<char>> bound;
    definitely_bound(a_, handlers_, co_, &bound, &reached);
    if (!reached[h_]) return fail("the loop is never reached");
    bound_ = bound[h_];
    bound_at_ = std::move(bound);
    definitely_bound(a_, handlers_, co_, &maybe_at_, &reached, /*any=*/true);
    if (!flow() || !classify()) return false;
    Ref body(emit_body());
    if (!body) return python_error();
    Ref outer(emit_outer(body.get()));
    if (!outer) return python_error();
    out->body = std::move(body);
    out->outer = std::move(outer);
    out->head = ins_[h_].offset;
    out->line = ins_[h_].line;
    return true;
  }

 private:
  bool fail(const std::string& s) {
    *why_ = s;
    return false;
  }
  bool python_error() {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    Ref s(v ? PyObject_Str(v) : nullptr);
    *why_ = std::string("emitting bytecode: ") + (s && PyUnicode_Check(s.get()) ? py::text(s.get()) : "?");
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    return false;
  }

  // The outermost loop around `offset`: the earliest head a backward jump around it goes to, and
  // the last backward jump there.
  bool find_loop(int offset) {
    int at = -1;
    for (size_t i = 0; i < ins_.size(); ++i)
      if (ins_[i].offset == offset || ins_[i].start == offset) at = static_cast<int>(i);
    if (at < 0) return fail("no instruction at offset " + std::to_string(offset));
    h_ = -1;
    for (int j = 0; j < static_cast<int>(a_.size()); ++j) {
      const AsmInstr& x = a_[j];
      if (!py::is_jump(x.op) || has_flag(x.op, py::kSetup) || x.target > j) continue;
      if (x.target <= at && at <= j && (h_ < 0 || x.target < h_)) h_ = x.target;
    }
    if (h_ < 0) return fail("not inside a loop");
    for (int j = 0; j < static_cast<int>(a_.size()); ++j)
      if (py::is_jump(a_[j].op) && !has_flag(a_[j].op, py::kSetup) && a_[j].target == h_ && j >= h_) j_ = j;
    is_for_ = a_[h_].op == Opcode::FOR_ITER;
    s_ = is_for_ ? h_ + 1 : h_;
    return true;
  }

  bool check_shape() {
    for (const AsmHandler& e : handlers_)  // (3.11: a try or with block around or inside the loop)
      if (e.start <= j_ && e.end > h_) return fail("the loop is inside a try, finally or with block, or holds one");
    for (int k = 0; k < static_cast<int>(a_.size()); ++k) {
      const AsmInstr& x = a_[k];
      // A loop inside a try, finally or with block: an exception an iteration raises after it
      // stored a local would leave the body's frame without handing the store back, and the
      // handler (or __exit__ swallowing it) would see the local's old value.
      if (k < h_ && has_flag(x.op, py::kSetup) && x.op != Opcode::SETUP_LOOP && x.target > h_)
        return fail("the loop is inside a try, finally or with block");
      bool inside = k >= h_ && k <= j_;
      if (!inside && py::is_jump(x.op) && x.target > h_ && x.target <= j_)
        return fail("code outside the loop jumps into it");
      if (!inside) continue;
      if (block_instruction(x.op)) return fail(std::string("the loop body holds ") + py::op_name(x.op));
      if ((has_flag(x.op, py::kName) && frame_introspection(x.op, PyTuple_GET_ITEM(co_->co_names, py::name_index(x.op, x.arg)))))
        return fail("the loop body inspects its frame");
    }
    return true;
  }

  // Follows one iteration from the body's start: what it does to each local on the way to each
  // exit, and which 3.7 loop blocks of the body are open. Reads of a local that may be unbound when
  // the loop starts, and that the iteration may not have written, are refused: the body would
  // have to tell the two apart.
  bool flow() {
    const int n = static_cast<int>(a_.size());
    std::vector<std::vector<uint8_t>> in(n);
    std::vector<std::vector<int>> blocks(n);
    std::vector<char> reached(n, 0);
    std::vector<int> work;
    std::map<std::pair<int, bool>, Exit> exits;
    auto leave = [&](Exit::Kind kind, int from, bool taken, int target, int depth, const std::vector<uint8_t>& s) {
      Exit& e = exits[{from, taken}];
      if (e.state.empty()) e.state.assign(nl_, 0);
      e.kind = kind, e.from = from, e.taken = taken, e.target = target, e.depth = depth;
      for (int v = 0; v < nl_; ++v) e.state[v] |= s[v];
    };
    bool ok = true;
    auto reach = [&](int t, const std::vector<uint8_t>& s, const std::vector<int>& b) {
      if (!reached[t]) {
        reached[t] = 1, in[t] = s, blocks[t] = b;
        work.push_back(t);
        return;
      }
      if (blocks[t] != b) ok = fail("loop blocks disagree where paths join");
      bool changed = false;
      for (int v = 0; v < nl_; ++v)
        if ((in[t][v] | s[v]) != in[t][v]) in[t][v] |= s[v], changed = true;
      if (changed) work.push_back(t);
    };
    reach(s_, std::vector<uint8_t>(nl_, kUnwritten), {});
    while (!work.empty() && ok) {
      int k = work.back();
      work.pop_back();
      std::vector<uint8_t> s = in[k];
      std::vector<int> b = blocks[k];
      const AsmInstr& x = a_[k];
      if (x.op == Opcode::LOAD_FAST || x.op == Opcode::DELETE_FAST) {
        if (!bound_[x.arg] && (s[x.arg] & kUnwritten))
          return fail(std::string("it reads '") + local_name(co_, x.arg) + "', which may be unbound when the loop starts");
        if (x.op == Opcode::DELETE_FAST) s[x.arg] = kDeleted;
      }
      if (x.op == Opcode::STORE_FAST) s[x.arg] = kWritten;
      if (x.op == Opcode::RETURN_VALUE) {
        leave(Exit::Return, k, true, -1, depth_[k] - 1, s);
        continue;
      }
      if (x.op == Opcode::SETUP_LOOP) {  // 3.7: an inner loop; its BREAK_LOOP goes to the handler
        std::vector<int> inner = b;
        inner.push_back(x.target);
        reach(k + 1, s, inner);
        continue;
      }
      if (x.op == Opcode::POP_BLOCK) {
        if (b.empty()) return fail("the loop body leaves a block it did not enter");
        b.pop_back();
      }
      if (x.op == Opcode::BREAK_LOOP) {
        if (b.empty()) {
          leave(Exit::Break, k, true, -1, depth_[k], s);
        } else {
          int handler = b.back();
          b.pop_back();
          reach(handler, s, b);
        }
        continue;
      }
      if (py::is_jump(x.op)) {
        int t = x.target, d = depth_[k] + py::stack_effect(x.op, 0, 1);
        if (t == h_) {
          if (!b.empty()) return fail("continues the loop from inside an inner loop's block");
          leave(Exit::Next, k, true, t, d, s);
        } else if (t < h_ || t > j_) {
          if (!b.empty()) return fail("leaves the loop from inside an inner loop's block");
          leave(Exit::Goto, k, true, t, d, s);
        } else {
          reach(t, s, b);
        }
      }
      if (has_flag(x.op, py::kEndsBlock)) continue;
      int d = depth_[k] + py::stack_effect(x.op, py::is_jump(x.op) ? 0 : x.arg, 0);
      if (k + 1 > j_) {
        if (!b.empty()) return fail("leaves the loop from inside an inner loop's block");
        leave(Exit::Goto, k, false, k + 1, d, s);
      } else {
        reach(k + 1, s, b);
      }
    }
    if (!ok) return false;
    reached_ = std::move(reached);
    // The most frequent way out, the next iteration, is tested first.
    for (auto& kv : exits)
      if (kv.second.kind == Exit::Next) exits_.push_back(std::move(kv.second));
    for (auto& kv : exits)
      if (kv.second.kind != Exit::Next) exits_.push_back(std::move(kv.second));
    if (exits_.empty()) return fail("the loop body never ends");
    return true;
  }

  // What the driver does with each local at each way out. A local bound at the head is passed in
  // (and returned where the iteration wrote it); one that is not, is deleted in the body (or holds
  // a private marker where an exit may leave it unwritten: the driver then keeps what it had).
  bool classify() {
    maybe_.assign(nl_, 0);
    for (Exit& e : exits_) {
      if (e.kind == Exit::Return) {  // (3.7 leaves inner loops' iterators to the unwinding)
        e.depth = std::min(e.depth, dh_);
        continue;
      }
      if (e.depth > dh_) return fail("leaves the loop with values on the stack");
      for (int v = 0; v < nl_; ++v) {
        uint8_t s = e.state[v];
        std::string name = local_name(co_, v);
        if (bound_[v]) {
          if (s == kDeleted) e.unbinds.push_back(v);
          else if (s & kDeleted) return fail("an iteration may or may not delete '" + name + "'");
          else if (s & kWritten) e.values.emplace_back(v, false);
        } else if (s == kWritten) {
          e.values.emplace_back(v, false);
        } else if (s == kDeleted) {
          e.unbinds.push_back(v);
        } else if (s == (kUnwritten | kWritten)) {
          e.values.emplace_back(v, true);
          maybe_[v] = 1;
        } else if (s != kUnwritten) {
          return fail("an iteration may or may not bind '" + name + "'");
        }
      }
    }
    return true;
  }

  // "Not written by this iteration" (never visible: see classify). An instance of a class of
  // pijit's own, not a bare object(): a body that hands a local it did not write back unread
  // passes the marker through under an identity guard, which needs a weak reference to it.
  static PyObject* marker() {
    static PyObject* m = [] {
      PyObject* cls = PyObject_CallFunction(reinterpret_cast<PyObject*>(&PyType_Type), "s(O){s:s}", "Unwritten",
                                            reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__module__", "pijit.outline");
      PyObject* obj = cls ? PyObject_CallObject(cls, nullptr) : nullptr;
      Py_XDECREF(cls);  // (the instance holds its class)
      return obj;
    }();
    return m;
  }

  int exit_id(const Exit& e) const { return static_cast<int>(&e - exits_.data()); }
  const Exit* exit_at(int from, bool taken) const {
    for (const Exit& e : exits_)
      if (e.from == from && e.taken == taken) return &e;
    return nullptr;
  }

  PyObject* emit_body() {
    CodeBuilder b(co_, ins_[h_].line);
    b.closure_prologue(py::code_ncells(co_) + py::code_nfrees(co_));
    int item = is_for_ ? b.new_local(("__pijit_item" + std::to_string(nl_)).c_str()) : -1;
    for (int v = 0; v < nl_; ++v)
      if (!bound_[v] && !maybe_[v]) b.op(Opcode::DELETE_FAST, v);
    for (int k = 0; k < dh_; ++k) b.op(Opcode::LOAD_CONST, b.const_index(Py_None));  // the loop's stack
    if (is_for_) {
      b.op(Opcode::LOAD_FAST, item);
      b.op(Opcode::DELETE_FAST, item);
    }
    size_t enter = b.op(Opcode::JUMP_ABSOLUTE, 0, 0);
    // One iteration: the loop's instructions, each way out a jump to its stub.
    std::vector<int> at(a_.size(), -1);
    std::vector<std::pair<size_t, const Exit*>> to_stub;
    std::vector<std::pair<size_t, int>> to_copy;
    for (int k = s_; k <= j_; ++k) {
      AsmInstr x = a_[k];
      b.line(x.line);
      at[k] = static_cast<int>(b.size());
      if (!reached_[k]) {  // dead code (after a return): kept as a line, never run
        b.op(Opcode::NOP);
        continue;
      }
      if (const Exit* e = x.op == Opcode::RETURN_VALUE ? exit_at(k, true) : nullptr) {
        b.op(Opcode::LOAD_CONST, b.int_const(exit_id(*e)));
        b.op(Opcode::ROT_TWO);
        b.op(Opcode::BUILD_TUPLE, 2);
        b.op(Opcode::RETURN_VALUE);
        continue;
      }
      if (const Exit* e = x.op == Opcode::BREAK_LOOP ? exit_at(k, true) : nullptr) {
        to_stub.emplace_back(b.op(Opcode::JUMP_ABSOLUTE, 0, 0), e);
        continue;
      }
      CodeBuilder::localize_cells(co_, x, false);
      size_t i = b.push(x);
      if (py::is_jump(x.op) && !has_flag(x.op, py::kSetup)) {
        if (const Exit* e = exit_at(k, true)) to_stub.emplace_back(i, e);
        else to_copy.emplace_back(i, x.target);
      } else if (has_flag(x.op, py::kSetup)) {
        to_copy.emplace_back(i, x.target);
      }
    }
    if (const Exit* e = exit_at(j_, false)) to_stub.emplace_back(b.op(Opcode::JUMP_ABSOLUTE, 0, 0), e);
    b.set_target(enter, at[s_]);
    for (auto& c : to_copy) b.set_target(c.first, at[c.second]);
    // The stubs: drop the loop's stack (placeholders), return (exit id, the locals written).
    std::vector<int> stub(exits_.size(), -1);
    for (const Exit& e : exits_) {
      if (e.kind == Exit::Return) continue;
      b.line(ins_[e.from].line);
      stub[exit_id(e)] = static_cast<int>(b.size());
      for (int k = 0; k < e.depth; ++k) b.op(Opcode::POP_TOP);
      b.op(Opcode::LOAD_CONST, b.int_const(exit_id(e)));
      for (const auto& v : e.values) b.op(Opcode::LOAD_FAST, v.first);
      b.op(Opcode::BUILD_TUPLE, static_cast<int>(e.values.size()) + 1);
      b.op(Opcode::RETURN_VALUE);
    }
    for (auto& t : to_stub) b.set_target(t.first, stub[exit_id(*t.second)]);
    return b.finish_closure(co_, nl_ + (is_for_ ? 1 : 0));  // every fast local, then the item
  }

  // Pushes whether TOS is the marker (consuming it): `is`, whichever opcode this Python has.
  static void is_marker(CodeBuilder& b) {
    b.op(Opcode::LOAD_CONST, b.const_index(marker()));
    if (py::to_py_opcode(Opcode::IS_OP) >= 0) b.op(Opcode::IS_OP, 0);
    else b.op(Opcode::COMPARE_OP, 8);  // 3.7/3.8: PyCmp_IS
  }

  // Where the loop ends, the code after it can be a resume function's (see outline.h): an exit
  // to instruction t with nothing on the stack. Each local bound on every path there is handed
  // over, one bound on none is not; one bound on some paths only (a for loop's variable, bound if
  // an iteration ran) holds a marker from before the loop until an iteration writes it, and the
  // exit picks, by which of those hold the marker, one of up to 2^3 resume functions, each told
  // statically what is bound. Any exit that cannot hand over keeps every exit a jump (a marker
  // must never reach code the original runs).
  struct ExitResume {
    int t = -1;                  // where the code after the loop starts
    std::vector<int> maybe;      // locals bound on some paths only
    std::vector<Ref> codes;      // per variant (bit k: maybe[k] holds the marker, unbound)
  };

  bool plan_resume(int target, ExitResume* r) {
    int t = target;
    if (t < 0 || t >= static_cast<int>(a_.size())) return false;
    if (a_[t].op == Opcode::POP_BLOCK && t + 1 < static_cast<int>(a_.size())) ++t;  // 3.7: the loop's block ends
    if (depth_[t] != 0 || t <= j_) return false;
    r->t = t;
    for (int v = 0; v < nl_; ++v)
      if (maybe_at_[t][v] && !bound_at_[t][v]) r->maybe.push_back(v);
    if (r->maybe.size() > 3) return false;
    for (int v : r->maybe) {  // unbound when the loop starts, never deleted by it
      if (maybe_on_entry(v)) return false;
      for (int k = h_; k <= j_; ++k)
        if (a_[k].op == Opcode::DELETE_FAST && a_[k].arg == v) return false;
    }
    for (int bits = 0; bits < (1 << r->maybe.size()); ++bits) {
      std::vector<char> bound = bound_at_[t];
      for (size_t k = 0; k < r->maybe.size(); ++k) bound[r->maybe[k]] = !(bits & (1 << k));
      Ref rc(make_resume_(ins_[t].offset, 0, bound, ins_[t].line, {}, {}, false));
      if (!rc) return PyErr_Clear(), false;
      r->codes.push_back(std::move(rc));
    }
    return true;
  }

  // Whether v may be bound where control enters the loop from outside it (the head's state
  // without its back edges): after each instruction before or after the loop that leads there.
  bool maybe_on_entry(int v) const {
    for (int k = 0; k < static_cast<int>(a_.size()); ++k) {
      if (k >= h_ && k <= j_) continue;
      const AsmInstr& x = a_[k];
      const bool falls = k + 1 == h_ && !has_flag(x.op, py::kEndsBlock);
      const bool jumps = py::is_jump(x.op) && x.target == h_;
      if (!(falls || jumps) || maybe_at_[k].empty()) continue;
      const bool after = x.op == Opcode::STORE_FAST && x.arg == v ? true
                         : x.op == Opcode::DELETE_FAST && x.arg == v ? false
                                                                     : maybe_at_[k][v] != 0;
      if (after) return true;
    }
    return false;
  }

  // Every way out but a return or the next iteration hands over (plan_resume), or none does.
  bool plan_resumes() {
    if (!make_resume_) return false;
    resumes_.clear();
    resumes_.resize(exits_.size());
    for (size_t x = 0; x < exits_.size(); ++x) {
      const Exit& e = exits_[x];
      if (e.kind == Exit::Return || e.kind == Exit::Next) continue;
      if (e.kind == Exit::Break || !plan_resume(e.target, &resumes_[x])) return false;
    }
    if (is_for_ && !plan_resume(a_[h_].target, &exhausted_)) return false;
    std::vector<char> pre(nl_, 0);
    for (const ExitResume& r : resumes_)
      for (int v : r.maybe) pre[v] = 1;
    for (int v : exhausted_.maybe) pre[v] = 1;
    for (const Exit& e : exits_)
      for (int v : e.unbinds)
        if (pre[v]) return false;
    for (int v = 0; v < nl_; ++v)
      if (pre[v]) pre_marked_.push_back(v);
    return true;
  }

  // The exit's hand-over: which variant, by the maybe-bound locals that hold the marker.
  void emit_hand_over(CodeBuilder& b, const ExitResume& r, size_t k = 0, int bits = 0) {
    if (k == r.maybe.size()) {
      std::vector<char> bound = bound_at_[r.t];
      for (size_t m = 0; m < r.maybe.size(); ++m) bound[r.maybe[m]] = !(bits & (1 << m));
      emit_resume_call(b, co_, r.codes[bits].get(), 0, bound);
      return;
    }
    b.op(Opcode::LOAD_FAST, r.maybe[k]);
    is_marker(b);
    size_t unbound = b.op(Opcode::POP_JUMP_IF_TRUE, 0, 0);
    emit_hand_over(b, r, k + 1, bits);
    b.set_target(unbound, static_cast<int>(b.size()));
    emit_hand_over(b, r, k + 1, bits | (1 << k));
  }

  PyObject* emit_outer(PyObject* body) {
    CodeBuilder b(co_, ins_[h_].line);
    std::vector<AsmInstr> copy = a_;
    for (AsmInstr& x : copy) CodeBuilder::localize_cells(co_, x, true);
    b.copy(copy);
    for (const AsmHandler& e : handlers_) b.add_handler(e);  // (none covers the loop: check_shape)
    int item = is_for_ ? b.new_local(("__pijit_item" + std::to_string(nl_)).c_str()) : -1;
    int result = b.new_local(("__pijit_iteration" + std::to_string(nl_)).c_str());
    const bool hand_over = plan_resumes();
    int pre = static_cast<int>(b.size());
    if (hand_over)
      for (int v : pre_marked_) {  // (unbound here: an iteration that writes it replaces the marker)
        b.op(Opcode::LOAD_CONST, b.const_index(marker()));
        b.op(Opcode::STORE_FAST, v);
      }
    int head = static_cast<int>(b.size());
    // (3.11 has relative jumps only: the assembler turns this one forward)
    b.replace(h_, {py::kExceptionTables ? Opcode::JUMP_FORWARD : Opcode::JUMP_ABSOLUTE, 0, pre, ins_[h_].line});
    size_t for_iter = 0;
    if (is_for_) {
      for_iter = b.op(Opcode::FOR_ITER, 0, 0);
      b.op(Opcode::STORE_FAST, item);
    }
    int ncells = py::code_ncells(co_) + py::code_nfrees(co_);
    b.call_begin();
    for (int i = 0; i < ncells; ++i) b.op(Opcode::LOAD_CLOSURE, i);
    if (ncells) b.op(Opcode::BUILD_TUPLE, ncells);
    b.op(Opcode::LOAD_CONST, b.const_index(body));
    if (py::kMakeFunctionPopsQualname) b.op(Opcode::LOAD_CONST, b.const_index(co_->co_name));
    b.op(Opcode::MAKE_FUNCTION, ncells ? 0x08 : 0);
    for (int v = 0; v < nl_; ++v) {
      if (bound_[v]) b.op(Opcode::LOAD_FAST, v);
      else b.op(Opcode::LOAD_CONST, b.const_index(maybe_[v] ? marker() : Py_None));
    }
    if (is_for_) b.op(Opcode::LOAD_FAST, item);
    b.op(Opcode::CALL_FUNCTION, nl_ + (is_for_ ? 1 : 0));
    if (is_for_) b.op(Opcode::DELETE_FAST, item);
    b.op(Opcode::STORE_FAST, result);
    for (size_t x = 0; x < exits_.size(); ++x) {
      const Exit& e = exits_[x];
      size_t skip = 0;
      if (x + 1 < exits_.size()) {
        b.op(Opcode::LOAD_FAST, result);
        b.op(Opcode::LOAD_CONST, b.int_const(0));
        b.op(Opcode::BINARY_SUBSCR);
        b.op(Opcode::LOAD_CONST, b.int_const(static_cast<long>(x)));
        b.op(Opcode::COMPARE_OP, 2);  // ==
        skip = b.op(Opcode::POP_JUMP_IF_FALSE, 0, 0);
      }
      b.op(Opcode::LOAD_FAST, result);
      if (e.kind == Exit::Return) {
        b.op(Opcode::LOAD_CONST, b.int_const(1));
        b.op(Opcode::BINARY_SUBSCR);
        // What the original popped before its return (3.8+ pops the loops' iterators; 3.7 leaves
        // them, and its blocks, to RETURN_VALUE's unwinding): the body popped placeholders.
        for (int k = e.depth; k < dh_; ++k) {
          b.op(Opcode::ROT_TWO);
          b.op(Opcode::POP_TOP);
        }
        b.op(Opcode::RETURN_VALUE);
      } else {
        b.op(Opcode::UNPACK_SEQUENCE, static_cast<int>(e.values.size()) + 1);
        b.op(Opcode::POP_TOP);
        for (const auto& v : e.values) {
          if (!v.second) {
            b.op(Opcode::STORE_FAST, v.first);
            continue;
          }
          b.op(Opcode::DUP_TOP);
          is_marker(b);
          size_t keep = b.op(Opcode::POP_JUMP_IF_TRUE, 0, 0);
          b.op(Opcode::STORE_FAST, v.first);
          size_t done = b.op(Opcode::JUMP_FORWARD, 0, 0);
          b.set_target(keep, static_cast<int>(b.size()));
          b.op(Opcode::POP_TOP);
          b.set_target(done, static_cast<int>(b.size()));
          b.op(Opcode::NOP);
        }
        for (int v : e.unbinds) {  // store, then delete: it may be unbound already
          b.op(Opcode::LOAD_CONST, b.const_index(Py_None));
          b.op(Opcode::STORE_FAST, v);
          b.op(Opcode::DELETE_FAST, v);
        }
        b.op(Opcode::DELETE_FAST, result);
        if (e.kind == Exit::Next) {
          b.op(Opcode::JUMP_ABSOLUTE, 0, head);
        } else if (e.kind == Exit::Break) {
          b.op(Opcode::BREAK_LOOP);  // 3.7: the loop's block is open here, as in the original
        } else {
          for (int k = e.depth; k < dh_; ++k) b.op(Opcode::POP_TOP);
          if (hand_over) emit_hand_over(b, resumes_[x]);
          else b.op(Opcode::JUMP_ABSOLUTE, 0, e.target);
        }
      }
      if (skip) b.set_target(skip, static_cast<int>(b.size()));
    }
    if (is_for_) {  // exhausted: where the original FOR_ITER went (a relative jump cannot go back)
      b.set_target(for_iter, static_cast<int>(b.size()));
      if (hand_over) emit_hand_over(b, exhausted_);
      else b.op(Opcode::JUMP_ABSOLUTE, 0, a_[h_].target);
    }
    return b.finish(in_place_spec(co_));  // (it runs in place of the frame: py::run_in_place)
  }

  PyCodeObject* co_;
  std::string* why_;
  int nl_;
  std::vector<py::Instruction> ins_;
  std::vector<AsmInstr> a_;
  std::vector<AsmHandler> handlers_;  // 3.11's exception table
  std::vector<int> depth_;
  int h_ = -1, j_ = -1, s_ = -1, dh_ = 0;
  bool is_for_ = false;
  std::vector<char> bound_, maybe_, reached_;
  std::vector<std::vector<char>> bound_at_, maybe_at_;  // locals bound on every / some path, per instruction
  std::vector<ExitResume> resumes_;  // per exit (plan_resumes)
  ExitResume exhausted_;             // a for loop's iterator exhausted
  std::vector<int> pre_marked_;      // locals that hold the marker until an iteration writes them
  const ResumeMaker& make_resume_;
  std::vector<Exit> exits_;
};

}  // namespace

bool outline_loop(PyCodeObject* co, int offset, OutlinedLoop* out, std::string* why, const ResumeMaker& make_resume) {
  return Outliner(co, why, make_resume).run(offset, out);
}

bool inspects_frame(PyCodeObject* co) {
  py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(co));
  if (!d.ok()) return true;
  for (const py::Instruction& in : d.instructions)
    if (has_flag(in.op, py::kName) && frame_introspection(in.op, PyTuple_GET_ITEM(co->co_names, py::name_index(in.op, in.arg))))
      return true;
  return false;
}

}  // namespace pj::codegen

#else

namespace pj::codegen {
bool outline_loop(PyCodeObject*, int, OutlinedLoop*, std::string* why, const ResumeMaker&) {
  *why = py::kUnsupportedPythonMessage;
  return false;
}
bool inspects_frame(PyCodeObject*) { return true; }
}  // namespace pj::codegen

#endif  // PJ_PY_CAPTURE_BUILT
