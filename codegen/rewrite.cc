#include "py/pyport.h"  // first (Python.h)


#include "codegen/rewrite.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "py/bytecode.h"
#include "codegen/assembler.h"
#include "codegen/code_builder.h"
#include "py/py_common.h"

namespace pj::codegen {

ReturnPlan& ReturnPlan::operator=(ReturnPlan&& o) noexcept {
  Py_XDECREF(obj);
  kind = o.kind;
  obj = o.obj;
  index = o.index;
  slot = o.slot;
  items = std::move(o.items);
  o.obj = nullptr;
  return *this;
}
ReturnPlan::~ReturnPlan() { Py_XDECREF(obj); }

}  // namespace pj::codegen

#if PJ_PY_CAPTURE_BUILT

namespace pj::codegen {
namespace {

using py::Opcode;

using guards::Access;
using py::Ref;

// resume(fn, args): the call of a resume function, fn(*args) with the frame taking over the list's
// references (py::call_moving_args): the rewritten frame keeps nothing its continuation may drop.
PyObject* resume_call(PyObject*, PyObject* const* a, Py_ssize_t n) {
  if (n != 2 || !PyFunction_Check(a[0]) || !PyList_CheckExact(a[1])) {
    PyErr_SetString(PyExc_SystemError, "pijit: resume(function, list) is called by pijit's rewritten code only");
    return nullptr;
  }
  // A resume function's code takes exactly the list's values, positionally, and has no cells of
  // its own (py::call_moving_args fills its frame as such).
  auto* co = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(a[0]));
  PyObject* closure = PyFunction_GET_CLOSURE(a[0]);
  const int kinds = CO_VARARGS | CO_VARKEYWORDS | CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE;
  if (co->co_argcount != PyList_GET_SIZE(a[1]) || co->co_kwonlyargcount || (co->co_flags & kinds) ||
      py::code_ncells(co) || py::code_nfrees(co) != (closure ? PyTuple_GET_SIZE(closure) : 0)) {
    PyErr_Format(PyExc_SystemError, "pijit: %U is not a resume function", co->co_name);
    return nullptr;
  }
  // One level with its function where the C stack has room for it (py::stack_room_for_levels).
  return py::call_moving_args(a[0], a[1], py::stack_room_for_levels(PyThreadState_GET(), py::kRunStackExtra));
}

PyObject* resume_caller() {
  static PyMethodDef def = {"resume", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(resume_call)),
                            METH_FASTCALL, "pijit's call of a resume function (rewritten code only)"};
  static PyObject* fn = PyCFunction_New(&def, nullptr);  // immortal: rewritten code holds it as a constant
  return fn;
}

// 3.11: where code that starts at the instruction at `offset` must start. A CALL's PRECALL (and
// the KW_NAMES before it) go with it: KW_NAMES leaves the names for the CALL in the eval loop's
// own state (no frame or stack slot a resume function could be given), and the
// stack depth CPython's compiler counts is PRECALL's -n, then CALL's -1 (capture's simulator runs
// them as one instruction, and may stop at the CALL).
int call_group_start(const py::DecodeResult& d, int offset) {
  if (!py::kCallsOverNull) return offset;
  for (size_t k = 0; k < d.instructions.size(); ++k) {
    if (d.instructions[k].offset != offset) continue;
    size_t i = k;
    if (i > 0 && d.instructions[i].op == Opcode::CALL && d.instructions[i - 1].op == Opcode::PRECALL) --i;
    if (i > 0 && d.instructions[i].op == Opcode::PRECALL && d.instructions[i - 1].op == Opcode::KW_NAMES) --i;
    return d.instructions[i].offset;
  }
  return offset;
}

}  // namespace

namespace {

// Pushes a new function of the resume code, closing over the frame's cells.
void make_resume_function(CodeBuilder& b, PyCodeObject* original, PyObject* code) {
  int ncells = py::code_ncells(original) + py::code_nfrees(original);
  for (int i = 0; i < ncells; ++i) b.op(Opcode::LOAD_CLOSURE, i);
  if (ncells) b.op(Opcode::BUILD_TUPLE, ncells);
  b.op(Opcode::LOAD_CONST, b.const_index(code));
  if (py::kMakeFunctionPopsQualname) b.op(Opcode::LOAD_CONST, b.const_index(original->co_name));
  b.op(Opcode::MAKE_FUNCTION, ncells ? 0x08 : 0);
}

// 3.11's emit_resume_call. A NULL (a callable's, at `nulls`) cannot go into a list: the stack is
// stored into locals top first, each NULL into one it leaves unbound (STORE_FAST takes a NULL:
// the slot becomes empty), and the resume function pushes the NULLs again.
void call_resume311(CodeBuilder& b, PyCodeObject* original, PyObject* code, int depth, const std::vector<char>& bound,
                    const std::vector<int>& nulls) {
  std::vector<int> slot(depth, -1);
  for (int k = depth - 1; k >= 0; --k) {
    const bool null = std::find(nulls.begin(), nulls.end(), k) != nulls.end();
    if (!null) slot[k] = b.local_named("__pijit_pass" + std::to_string(k));
    b.op(Opcode::STORE_FAST, null ? b.local_named("__pijit_null") : slot[k]);
  }
  b.call_begin();
  b.op(Opcode::LOAD_CONST, b.const_index(resume_caller()));
  make_resume_function(b, original, code);
  int n = 0;
  for (size_t i = 0; i < bound.size(); ++i, ++n) {
    if (bound[i]) b.op(Opcode::LOAD_FAST, static_cast<int>(i));
    else b.op(Opcode::LOAD_CONST, b.const_index(Py_None));
  }
  for (int k = 0; k < depth; ++k)
    if (slot[k] >= 0) b.op(Opcode::LOAD_FAST, slot[k]), ++n;
  b.op(Opcode::BUILD_LIST, n);
  for (size_t i = 0; i < bound.size(); ++i)
    if (bound[i]) b.op(Opcode::DELETE_FAST, static_cast<int>(i));
  for (int k = 0; k < depth; ++k)
    if (slot[k] >= 0) b.op(Opcode::DELETE_FAST, slot[k]);
  b.op(Opcode::CALL_FUNCTION, 2);
  b.op(Opcode::RETURN_VALUE);
}

}  // namespace

// return resume(fn, [*locals, *stack]): fn a new function of the resume code, closing over the
// frame's cells, called with every fast local (None for an unbound one, which it deletes) and
// the `depth` values on the stack. The locals are deleted here before the call and the list is
// emptied into fn's frame: the continuation holds the only references, as the one frame of
// plain Python does (a generator it drops finishes there, not when it returns).
void emit_resume_call(CodeBuilder& b, PyCodeObject* original, PyObject* code, int depth, const std::vector<char>& bound,
                      const std::vector<int>& nulls) {
  if (py::kCallsOverNull) return call_resume311(b, original, code, depth, bound, nulls);
  b.op(Opcode::BUILD_LIST, depth - static_cast<int>(nulls.size()));  // (no NULL is on the stack)
  b.op(Opcode::LOAD_CONST, b.const_index(resume_caller()));
  b.op(Opcode::ROT_TWO);
  make_resume_function(b, original, code);
  b.op(Opcode::ROT_TWO);
  for (size_t i = 0; i < bound.size(); ++i) {
    if (bound[i]) b.op(Opcode::LOAD_FAST, static_cast<int>(i));
    else b.op(Opcode::LOAD_CONST, b.const_index(Py_None));
  }
  b.op(Opcode::BUILD_LIST, static_cast<int>(bound.size()));
  b.op(Opcode::ROT_TWO);
  b.op(Opcode::BINARY_ADD);
  for (size_t i = 0; i < bound.size(); ++i)
    if (bound[i]) b.op(Opcode::DELETE_FAST, static_cast<int>(i));
  b.op(Opcode::CALL_FUNCTION, 2);
  b.op(Opcode::RETURN_VALUE);
}

namespace {

// 3.11: the exception-table entry covering instruction index `at` (one at most), or nullptr.
const AsmHandler* covering_entry(const std::vector<AsmHandler>& table, int at) {
  for (const AsmHandler& h : table)
    if (h.start <= at && at < h.end) return &h;
  return nullptr;
}

// Collects instructions plus the constants and names they need beyond the original's.
class Emitter : public CodeBuilder {
 public:
  Emitter(PyCodeObject* co, int line) : CodeBuilder(co, line) {}
  // Pushes a guard node's key. One the guards hold weakly stays weak in the code too (the code is
  // cached as long as the guards): the weak reference is called. The guards just found it alive,
  // reachable along the frame's paths.
  void load_held(PyObject* key) {
    bool weak = PyWeakref_CheckRef(key) && guards::held(key) != key;
    if (weak) call_begin();
    op(Opcode::LOAD_CONST, const_index(key));
    if (weak) op(Opcode::CALL_FUNCTION, 0);
  }
  // Pushes the object at a guard node, the way the guards reach it (from a local where
  // load_inputs stashed it).
  void load(const guards::GuardTree& tree, int node) {
    if (auto it = stash_.find(node); it != stash_.end()) {
      if (it->second.second) {  // loaded before: read the local
        op(Opcode::LOAD_FAST, it->second.first);
        return;
      }
      it->second.second = true;
      load_uncached(tree, node);
      op(Opcode::DUP_TOP);
      op(Opcode::STORE_FAST, it->second.first);
      return;
    }
    load_uncached(tree, node);
  }
  // Pushes the graph's inputs. A node on the paths of several inputs (self._cells['0']._params
  // for a Dense's weight and bias) is loaded once into a local, deleted after the call: every
  // access on these paths read a dict the guards just checked, so one read sees what several
  // would. A 3-layer SequentialCell's 6 parameters take 4 attribute loads instead of 12.
  void load_inputs(const guards::GuardTree& tree, const std::vector<int>& nodes) {
    // node -> where the input paths through it go next (the node itself when it is an input):
    // a node worth a local is where paths part, not a link of one chain
    std::map<int, std::set<int>> next;
    for (int n : nodes) {
      next[n].insert(n);
      for (int c = n, p = tree.node(n).parent; p >= 0; c = p, p = tree.node(p).parent) next[p].insert(c);
    }
    for (const auto& [node, ways] : next) {
      const Access a = tree.node(node).access;
      if (ways.size() >= 2 && (a == Access::Attr || a == Access::DictAttr || a == Access::Item))
        stash_[node] = {new_local(("__pijit_path" + std::to_string(stash_.size())).c_str()), false};
    }
    for (int n : nodes) load(tree, n);
  }
  void drop_input_stash() {
    for (const auto& [node, local] : stash_) op(Opcode::DELETE_FAST, local.first);
    stash_.clear();
  }
  void load_uncached(const guards::GuardTree& tree, int node) {
    const guards::GuardNode& n = tree.node(node);
    switch (n.access) {
      case Access::Local: op(Opcode::LOAD_FAST, n.index); return;
      case Access::Deref: op(Opcode::LOAD_DEREF, n.index); return;
      case Access::Global:
      case Access::Builtin: op(Opcode::LOAD_GLOBAL, name_index(n.key)); return;  // globals miss is guarded
      case Access::Const: load_held(n.key); return;
      case Access::Attr:
      case Access::DictAttr:
      case Access::FuncAttr:
        load(tree, n.parent);
        op(Opcode::LOAD_ATTR, name_index(n.key));
        return;
      case Access::Item:
        load(tree, n.parent);
        load_held(n.key);
        op(Opcode::BINARY_SUBSCR);
        return;
      case Access::Context: break;
    }
    PJ_CHECK(false) << "guard node " << tree.path(node) << " cannot be loaded";
  }
  void build(const guards::GuardTree& tree, const ReturnPlan& p, int outputs_local) {
    switch (p.kind) {
      case ReturnPlan::Const: op(Opcode::LOAD_CONST, const_index(p.obj)); return;
      case ReturnPlan::Source: load(tree, p.index); return;
      case ReturnPlan::Output: {
        Ref k(PyLong_FromLong(p.index));
        op(Opcode::LOAD_FAST, outputs_local);
        op(Opcode::LOAD_CONST, const_index(k.get()));
        op(Opcode::BINARY_SUBSCR);
        if (p.obj) {  // out.__class__ = the class library code gave the value
          op(Opcode::DUP_TOP);
          op(Opcode::LOAD_CONST, const_index(p.obj));
          op(Opcode::ROT_TWO);
          static PyObject* class_name = PyUnicode_InternFromString("__class__");
          op(Opcode::STORE_ATTR, name_index(class_name));
        }
        return;
      }
      case ReturnPlan::Tuple:
      case ReturnPlan::List:
        if (p.obj) {  // a namedtuple: tuple.__new__(P, (items...)), which runs no user code
          static PyObject* tuple_new = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyTuple_Type), "__new__");
          call_begin();
          op(Opcode::LOAD_CONST, const_index(tuple_new));
          op(Opcode::LOAD_CONST, const_index(p.obj));
        }
        for (const ReturnPlan& item : p.items) build(tree, item, outputs_local);
        op(p.kind == ReturnPlan::Tuple ? Opcode::BUILD_TUPLE : Opcode::BUILD_LIST, static_cast<int>(p.items.size()));
        if (p.obj) op(Opcode::CALL_FUNCTION, 2);
        keep_shared(p);
        return;
      case ReturnPlan::Dict:
        for (const ReturnPlan& item : p.items) build(tree, item, outputs_local);
        op(Opcode::LOAD_CONST, const_index(p.obj));
        op(Opcode::BUILD_CONST_KEY_MAP, static_cast<int>(p.items.size()));
        keep_shared(p);
        return;
      case ReturnPlan::Object:
        call_begin();
        op(Opcode::LOAD_CONST, const_index(py::object_rebuild_function()));
        op(Opcode::LOAD_CONST, const_index(PyTuple_GET_ITEM(p.obj, 0)));
        op(Opcode::LOAD_CONST, const_index(PyTuple_GET_ITEM(p.obj, 1)));
        for (const ReturnPlan& item : p.items) build(tree, item, outputs_local);
        op(Opcode::CALL_FUNCTION, static_cast<int>(p.items.size()) + 2);
        keep_shared(p);
        return;
      case ReturnPlan::Method:
        build(tree, p.items[0], outputs_local);
        op(Opcode::LOAD_ATTR, name_index(p.obj));
        return;
      case ReturnPlan::Shared:  // built earlier in this plan (depth first, left to right)
        op(Opcode::LOAD_FAST, slot_locals_.at(p.index));
        return;
      case ReturnPlan::Null:  // a callable's NULL. 3.7-3.10 have no PUSH_NULL: the slot is left out
        if (py::kCallsOverNull) op(Opcode::PUSH_NULL);  // (method_call_pairs)
        return;
    }
  }
  // Jumps to the instruction at `offset` of a copy of the original bytecode appended here: the
  // interpreter runs the rest of the frame (the block stack is empty there).
  // `handlers`: (index of an instruction emitted here, byte offset in the original) pairs whose
  // target becomes that offset's instruction in the copy (a SETUP entering an original handler).
  // `as_functions`: offsets of CALL_METHODs the copy runs as CALL_FUNCTION (method_call_pairs).
  // `raise_at` >= 0 (the offset of an instruction that raised; `offset` is then ignored): raises
  // the exception in local `raise_local` there instead, under that instruction's line (3.11: its
  // columns and its exception-table entry), so that it reaches the handlers it reached there. It
  // is raised as it is (py::raise_again_function): a raise statement would chain it anew to the
  // exception being handled, where plain Python chained it once, where it was raised.
  bool resume_original(PyCodeObject* original, int offset, const std::vector<std::pair<size_t, int>>& handlers = {},
                       const std::vector<int>& as_functions = {}, int raise_at = -1, int raise_local = -1) {
    py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(original));
    if (!d.ok()) {
      PyErr_SetString(PyExc_ValueError, ("malformed bytecode: " + d.error).c_str());
      return false;
    }
    std::vector<AsmInstr> orig = from_decoded(d.instructions);
    if (raise_at >= 0) offset = raise_at;
    else offset = call_group_start(d, offset);
    auto index_at = [&](int off) {  // a jump target names the first prefix
      int k = -1;
      for (size_t i = 0; i < d.instructions.size(); ++i)
        if (d.instructions[i].offset == off || d.instructions[i].start == off) k = static_cast<int>(i);
      return k;
    };
    int at = index_at(offset);
    if (at < 0) {
      PyErr_Format(PyExc_ValueError, "no instruction at offset %d to resume at", offset);
      return false;
    }
    std::vector<AsmHandler> table = from_decoded(d.instructions, d.handlers);
    const size_t lead = code_.size();
    size_t jump = 0;
    if (raise_at >= 0) {
      const AsmInstr failed = orig[at];
      const int line = line_;
      line_ = failed.line > 0 ? failed.line : line_;
      call_begin();
      op(Opcode::LOAD_CONST, const_index(py::raise_again_function()));
      op(Opcode::LOAD_FAST, raise_local);
      op(Opcode::DELETE_FAST, raise_local);
      op(Opcode::CALL_FUNCTION, 1);
      op(Opcode::RETURN_VALUE);  // (never reached: the call raises; its flow ends here)
      line_ = line;
      for (size_t i = lead; i < code_.size(); ++i) code_[i].span = failed.span;
    } else {
      jump = op(Opcode::JUMP_ABSOLUTE, 0, 0);
    }
    const int base = static_cast<int>(code_.size());
    if (raise_at < 0) code_[jump].target = base + at;
    if (const AsmHandler* h = raise_at >= 0 ? covering_entry(table, at) : nullptr)
      add_handler({static_cast<int>(lead), base, base + h->target, h->depth, h->lasti});
    for (const auto& h : handlers) {
      int k = index_at(h.second);
      if (k < 0) {
        PyErr_Format(PyExc_ValueError, "no handler at offset %d to enter again", h.second);
        return false;
      }
      code_[h.first].target = base + k;
    }
    for (int off : as_functions) orig[index_at(off)].op = Opcode::CALL_FUNCTION;
    for (AsmInstr& in : orig) {
      if (in.target >= 0) in.target += base;
      localize_cells(original, in, false);
      code_.push_back(in);
    }
    // 3.11: the original's exception table, moved with its code (it covers `offset` as it
    // covered it there, at the same stack depth: the try and with blocks open at the break)
    for (AsmHandler h : table) {
      h.start += base;
      h.end += base;
      h.target += base;
      add_handler(h);
    }
    return true;
  }
  // A container the plan references again is kept in a local of its own.
  void keep_shared(const ReturnPlan& p) {
    if (p.slot < 0 || !(*shared_)[p.slot]) return;
    int local = new_local(("__pijit_shared" + std::to_string(p.slot)).c_str());
    slot_locals_[p.slot] = local;
    op(Opcode::DUP_TOP);
    op(Opcode::STORE_FAST, local);
  }
  const std::vector<char>* shared_ = nullptr;
  std::map<int, int> slot_locals_;
  std::map<int, std::pair<int, bool>> stash_;  // guard node -> (its local, stored yet)

  // Builds every effect's operands into locals of their own (before any effect runs: they are
  // read as the frame began, and containers the return value shares are built in plan order).
  std::vector<std::vector<int>> stash_effects(const guards::GuardTree& tree, const FramePlan& plan, int outputs_local) {
    std::vector<std::vector<int>> locals;
    for (size_t i = 0; i < plan.effects.size(); ++i) {
      locals.emplace_back();
      for (size_t k = 0; k < plan.effects[i].operands.size(); ++k) {
        build(tree, plan.effects[i].operands[k], outputs_local);
        int local = new_local(("__pijit_effect" + std::to_string(i) + "_" + std::to_string(k)).c_str());
        op(Opcode::STORE_FAST, local);
        locals.back().push_back(local);
      }
    }
    return locals;
  }
  // Runs the effects in program order, each under its own line (a traceback points there).
  void replay_effects(const FramePlan& plan, const std::vector<std::vector<int>>& locals) {
    int line = line_;
    for (size_t i = 0; i < plan.effects.size(); ++i) {
      const EffectPlan& fx = plan.effects[i];
      const std::vector<int>& v = locals[i];
      if (fx.line > 0) line_ = fx.line;
      if (fx.kind == EffectPlan::Call || fx.kind == EffectPlan::CallMethod) {
        int nargs = static_cast<int>(v.size()) - 1;
        call_begin();
        op(Opcode::LOAD_FAST, v[0]);
        if (fx.kind == EffectPlan::CallMethod) op(Opcode::LOAD_ATTR, name_index(fx.name.get()));
        for (int k = 1; k <= nargs; ++k) op(Opcode::LOAD_FAST, v[k]);
        if (fx.kwnames) call_kw(nargs, fx.kwnames.get());
        else op(Opcode::CALL_FUNCTION, nargs);
        op(Opcode::POP_TOP);
      } else {
        for (int local : v) op(Opcode::LOAD_FAST, local);  // (operands are in stack order)
        int name = fx.name ? name_index(fx.name.get()) : 0;
        switch (fx.kind) {
          case EffectPlan::StoreAttr: op(Opcode::STORE_ATTR, name); break;
          case EffectPlan::StoreSubscr: op(Opcode::STORE_SUBSCR); break;
          case EffectPlan::StoreGlobal: op(Opcode::STORE_GLOBAL, name); break;
          case EffectPlan::DeleteAttr: op(Opcode::DELETE_ATTR, name); break;
          case EffectPlan::DeleteSubscr: op(Opcode::DELETE_SUBSCR); break;
          case EffectPlan::DeleteGlobal: op(Opcode::DELETE_GLOBAL, name); break;
          case EffectPlan::StoreDeref: op(Opcode::STORE_DEREF, fx.index); break;
          case EffectPlan::Call:
          case EffectPlan::CallMethod: break;  // above
        }
      }
      for (int local : v) op(Opcode::DELETE_FAST, local);  // its operands die as they would in eager code
    }
    line_ = line;
  }

  // (the code runs in place of the original's frame: py::run_in_place)
  PyObject* finish(PyCodeObject* original) { return CodeBuilder::finish(in_place_spec(original)); }
  // 3.7-3.10: the SETUP_FINALLY that catches what a run of instructions inside the original's try
  // or with blocks raises, at the depth the innermost of them unwinds to: the `above` values over
  // it wait in locals meanwhile (so the handler finds exactly that depth, whatever the failing
  // instruction took). Returns its index.
  size_t setup_catch_block(int above) {
    move_over_block(above, Opcode::SETUP_FINALLY);
    return code_.size() - 1 - 2 * static_cast<size_t>(above);
  }
  // Its POP_BLOCK on a way out of the run (3.7's also pops the values over the block's level).
  void pop_catch_block(int above) { move_over_block(py::kPopBlockUnwindsStack ? above : 0, Opcode::POP_BLOCK); }
  void move_over_block(int above, Opcode block_op) {
    for (int k = 0; k < above; ++k) op(Opcode::STORE_FAST, local_named("__pijit_above" + std::to_string(k)));
    op(block_op);  // (SETUP_FINALLY's target: set by caught_in_blocks)
    for (int k = above - 1; k >= 0; --k) {
      op(Opcode::LOAD_FAST, local_named("__pijit_above" + std::to_string(k)));
      op(Opcode::DELETE_FAST, local_named("__pijit_above" + std::to_string(k)));
    }
  }
  // The stack depth the innermost block around the run unwinds to (3.11: the exception-table
  // entry covering the failing instruction), at most `depth`, the run's starting depth.
  static bool catch_level(PyCodeObject* original, const ResumePlan& r, int depth, int* level) {
    *level = -1;
    if (py::kExceptionTables) {
      py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(original));
      int at = -1;
      for (size_t k = 0; k < d.instructions.size(); ++k)
        if (d.instructions[k].offset == r.break_offset) at = static_cast<int>(k);
      const std::vector<AsmHandler> table = from_decoded(d.instructions, d.handlers);
      if (const AsmHandler* h = covering_entry(table, at)) *level = h->depth;
    } else {
      *level = r.blocks.back().level;
    }
    if (*level < 0 || *level > depth) {
      PyErr_Format(PyExc_ValueError, "no try block covers the graph break at offset %d at the stack's depth",
                   r.break_offset);
      return false;
    }
    return true;
  }
  // The handler of the run (from run_start to run_end; 3.7-3.10: under the SETUP_FINALLY at
  // setup_at): it takes the exception and pushes it over the `level` values the unwinding left,
  // for a resume function that raises it again inside the blocks. The traceback loses this
  // frame's entry: the raise there makes the one plain Python has.
  void caught_in_blocks(size_t setup_at, size_t run_start, size_t run_end, int level) {
    const int exc = new_local("__pijit_raised");
    if (py::kExceptionTables) {
      add_handler({static_cast<int>(run_start), static_cast<int>(run_end), static_cast<int>(size()), level, false});
      op(Opcode::STORE_FAST, exc);
    } else {
      set_target(setup_at, static_cast<int>(size()));
      op(Opcode::POP_TOP);  // the exception's type, value and traceback, over the state before it
      op(Opcode::STORE_FAST, exc);
      op(Opcode::POP_TOP);
      op(Opcode::POP_EXCEPT);
    }
    Ref tb(PyUnicode_InternFromString("__traceback__")), next(PyUnicode_InternFromString("tb_next"));
    op(Opcode::LOAD_FAST, exc);
    op(Opcode::LOAD_ATTR, name_index(tb.get()));
    op(Opcode::LOAD_ATTR, name_index(next.get()));
    op(Opcode::LOAD_FAST, exc);
    op(Opcode::STORE_ATTR, name_index(tb.get()));
    op(Opcode::LOAD_FAST, exc);
    op(Opcode::DELETE_FAST, exc);
  }
  // The original instructions from `from` to `to` (offsets), as the interpreter is to run them: a
  // straight run (only the last may jump). *last: the last one; *next: the offset after it;
  // *depth: the stack depth before it, given the depth before the first.
  // Method pairs are as capture's simulator makes them: NULL under the bound attribute (LOAD_METHOD
  // may push the unbound function and its owner instead: the pair a resume function is given must
  // not depend on which). 3.7-3.10 leave the NULL out (method_call_pairs).
  bool copy_run(PyCodeObject* original, int from, int to, py::Instruction* last, int* next, int* depth) {
    py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(original));
    from = call_group_start(d, from);
    int first = -1, end = -1;
    for (size_t k = 0; k < d.instructions.size(); ++k) {
      if (d.instructions[k].offset == from) first = static_cast<int>(k);
      if (d.instructions[k].offset == to) end = static_cast<int>(k);
    }
    if (!d.ok() || first < 0 || end < first) {
      PyErr_Format(PyExc_ValueError, "no straight run of instructions from offset %d to %d", from, to);
      return false;
    }
    // A pair the run both makes and consumes stays as it is (a bound method made to be called
    // costs a recursion level more on 3.8); one the run leaves on the stack, or one it takes from
    // the stack it was given, is the simulator's NULL and bound attribute.
    std::vector<char> kept(end + 1, 0);
    {
      std::map<int, int> made;  // stack position of a LOAD_METHOD's slot -> that instruction
      int dp = *depth;
      for (int k = first; k <= end; ++k) {
        const py::Instruction& in = d.instructions[k];
        int slot = -1;
        if (in.op == Opcode::CALL_METHOD || in.op == Opcode::PRECALL) slot = dp - in.arg - 2;
        if (auto it = made.find(slot); slot >= 0 && it != made.end()) {
          kept[it->second] = kept[k] = 1;
          made.erase(it);
        }
        if (in.op == Opcode::LOAD_METHOD) made[dp - 1] = k;
        dp += py::stack_effect(in.op, in.arg, 0);
      }
    }
    for (int k = first; k <= end; ++k) {
      py::Instruction in = d.instructions[k];
      if (k < end && (py::is_jump(in.op) || py::has_flag(in.op, py::kEndsBlock) || in.op == Opcode::POP_BLOCK ||
                      in.op == Opcode::POP_EXCEPT)) {
        PyErr_Format(PyExc_ValueError, "%s inside the run of instructions a graph break hands back", py::op_name(in.op));
        return false;
      }
      const Opcode orig_op = in.op;
      if (in.op == Opcode::LOAD_METHOD && !kept[k]) in.op = Opcode::LOAD_ATTR;
      if (in.op == Opcode::CALL_METHOD && !kept[k]) in.op = Opcode::CALL_FUNCTION;
      AsmInstr a{in.op, in.arg, -1, in.line ? in.line : line_};
      a.span = in.span;  // (3.11: a traceback's columns)
      localize_cells(original, a, false);
      code_.push_back(a);
      if (orig_op == Opcode::LOAD_METHOD && !kept[k] && py::kCallsOverNull) {  // 3.11: NULL, attribute
        AsmInstr null{Opcode::PUSH_NULL, 0, -1, a.line}, swap{Opcode::SWAP, 2, -1, a.line};
        null.span = swap.span = a.span;
        code_.push_back(null);
        code_.push_back(swap);
      }
      if (k < end) *depth += py::stack_effect(orig_op, in.arg, 0);  // (counting the pair as the simulator does)
      *last = d.instructions[k];
    }
    *next = end + 1 < static_cast<int>(d.instructions.size()) ? d.instructions[end + 1].offset : -1;
    return true;
  }
};

}  // namespace

PyObject* emit_graph_code(PyCodeObject* original, const guards::GuardTree& guards, const FramePlan& plan,
                          PyObject* runner, const ResumeMaker& make_resume) {
  auto resume_code = [&](int offset, int depth, const std::vector<char>& bound, const std::vector<int>& nulls,
                         bool raise_top = false) {
    const std::vector<BlockPlan>& blocks = plan.resume.blocks;
    return make_resume ? make_resume(offset, depth, bound, plan.line, blocks, nulls, raise_top)
                       : emit_resume_code(original, offset, depth, bound, plan.line, blocks, nulls, raise_top);
  };
  Emitter e(original, plan.line);
  if (!e.prologue(original)) return nullptr;
  int outputs_local = e.new_local("__pijit_outputs");
  if (plan.calls_graph) {
    e.call_begin();
    e.op(Opcode::LOAD_CONST, e.const_index(runner));
    e.load_inputs(guards, plan.input_nodes);
    e.op(Opcode::CALL_FUNCTION, static_cast<int>(plan.input_nodes.size()));
    e.op(Opcode::STORE_FAST, outputs_local);
    e.drop_input_stash();
  }
  e.shared_ = &plan.ret_shared;
  std::vector<std::vector<int>> effect_locals = e.stash_effects(guards, plan, outputs_local);
  if (!plan.resumes) {
    e.build(guards, plan.ret, outputs_local);
    e.replay_effects(plan, effect_locals);
    e.op(Opcode::RETURN_VALUE);
    return e.finish(original);
  }
  // Every value is built before anything is stored: a value may be read from a local the
  // captured part reassigned (`a, b = b, a`), and loads along guard paths see the frame as it began.
  const ResumePlan& r = plan.resume;
  // The value stack stays below the locals and cells stored over it.
  for (const ReturnPlan& v : r.stack) e.build(guards, v, outputs_local);
  for (const auto& l : r.locals) e.build(guards, l.second, outputs_local);
  for (const auto& c : r.cells) e.build(guards, c.second, outputs_local);
  e.replay_effects(plan, effect_locals);
  for (auto it = r.cells.rbegin(); it != r.cells.rend(); ++it) e.op(Opcode::STORE_DEREF, it->first);
  for (auto it = r.locals.rbegin(); it != r.locals.rend(); ++it) e.op(Opcode::STORE_FAST, it->first);
  for (int i : r.deleted) e.op(Opcode::DELETE_FAST, i);
  // The run of instructions up to the one capture stopped at, then the code after it: one resume
  // function per way out.
  py::Instruction ins;
  int next = -1, depth = static_cast<int>(r.stack.size());
  if (r.break_offset < 0) {  // nothing to run here: resume at `offset` itself
    Ref code(resume_code(r.offset, depth, r.bound, r.nulls));
    if (!code) return nullptr;
    emit_resume_call(e, original, code.get(), depth, r.bound, r.nulls);
    return e.finish(original);
  }
  // Inside try or with blocks: an exception the run raises is caught here and raised again by a
  // resume function inside the same blocks, under the same line (caught_in_blocks).
  const bool in_blocks = !r.blocks.empty();
  int real_at_run = depth;  // (3.7-3.10 leave a method pair's NULL out of the stack)
  for (const ReturnPlan& v : r.stack) real_at_run -= !py::kCallsOverNull && v.kind == ReturnPlan::Null;
  int level = 0;  // the stack depth the innermost block unwinds to
  if (in_blocks && !Emitter::catch_level(original, r, real_at_run, &level)) return nullptr;
  size_t setup_at = 0;
  if (in_blocks && !py::kExceptionTables) setup_at = e.setup_catch_block(real_at_run - level);
  const size_t run_start = e.size();
  if (!e.copy_run(original, r.offset, r.break_offset, &ins, &next, &depth)) return nullptr;
  if (in_blocks && (ins.op == Opcode::POP_BLOCK || ins.op == Opcode::POP_EXCEPT)) {
    PyErr_Format(PyExc_ValueError, "%s ends the run of instructions inside try blocks", py::op_name(ins.op));
    return nullptr;
  }
  size_t jump_at = e.size() - 1;
  const size_t run_end = e.size();
  // r.bound is at the last instruction's start: what it stores or deletes itself (a local whose
  // old value has a finalizer) is not in it
  std::vector<char> bound = r.bound;
  if ((ins.op == Opcode::STORE_FAST || ins.op == Opcode::DELETE_FAST) && ins.arg < static_cast<int>(bound.size()))
    bound[ins.arg] = ins.op == Opcode::STORE_FAST;
  bool conditional = py::has_flag(ins.op, py::kCondJump);
  if (py::is_jump(ins.op) && !conditional) {
    PyErr_Format(PyExc_ValueError, "cannot break at %s", py::op_name(ins.op));
    return nullptr;
  }
  bool falls_through = !py::has_flag(ins.op, py::kEndsBlock);
  struct Way {
    int offset, depth;
  };
  std::vector<Way> ways;
  if (falls_through) ways.push_back({next, depth + py::stack_effect(ins.op, ins.arg, 0)});
  if (conditional) ways.push_back({ins.jump_target, depth + py::stack_effect(ins.op, ins.arg, 1)});
  for (size_t w = 0; w < ways.size(); ++w) {
    if (w == 1) e.set_target(jump_at, static_cast<int>(e.size()));
    std::vector<int> nulls;  // (a branch takes no NULL)
    for (int k : r.nulls)
      if (k < ways[w].depth) nulls.push_back(k);
    if (in_blocks && !py::kExceptionTables) e.pop_catch_block(ways[w].depth - static_cast<int>(nulls.size()) - level);
    Ref code(resume_code(ways[w].offset, ways[w].depth, bound, nulls));
    if (!code) return nullptr;
    emit_resume_call(e, original, code.get(), ways[w].depth, bound, nulls);
  }
  if (in_blocks) {
    e.caught_in_blocks(setup_at, run_start, run_end, level);
    std::vector<int> nulls;
    for (int k : r.nulls)
      if (k < level) nulls.push_back(k);
    Ref code(resume_code(r.break_offset, level + 1, r.bound, nulls, /*raise_top=*/true));
    if (!code) return nullptr;
    emit_resume_call(e, original, code.get(), level + 1, r.bound, nulls);
  }
  return e.finish(original);
}

namespace {

// 3.7-3.10: a method pair on a resume function's stack (NULL under the callable, as capture's
// simulator makes every pair) is passed as the callable alone: there is no PUSH_NULL to make the
// NULL again. The CALL_METHODs that take such a pair run as CALL_FUNCTION (*as_functions), the
// same call. 3.11 pushes the NULL again.
bool method_call_pairs(PyCodeObject* original, int offset, int depth, const std::vector<BlockPlan>& blocks,
                       const std::vector<int>& nulls, std::vector<int>* as_functions) {
  if (py::kCallsOverNull || nulls.empty()) return true;
  py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(original));
  for (int k : nulls) {
    for (const BlockPlan& b : blocks)
      if (b.level > k) {
        PyErr_Format(PyExc_ValueError, "a try block above the method pair at stack position %d", k);
        return false;
      }
    std::string why;
    std::vector<int> calls = d.ok() ? py::method_pair_consumers(d, offset, depth, k, &why) : std::vector<int>{};
    if (calls.empty()) {
      PyErr_Format(PyExc_ValueError, "the method pair at stack position %d cannot be handed over at offset %d: %s", k,
                   offset, (d.ok() ? why : d.error).c_str());
      return false;
    }
    as_functions->insert(as_functions->end(), calls.begin(), calls.end());
  }
  return true;
}

}  // namespace

PyObject* emit_resume_code(PyCodeObject* original, int offset, int depth, const std::vector<char>& bound, int line,
                           const std::vector<BlockPlan>& blocks, const std::vector<int>& nulls, bool raise_top) {
  Emitter e(original, line);
  e.closure_prologue(py::code_ncells(original) + py::code_nfrees(original));
  for (size_t i = 0; i < bound.size(); ++i)
    if (!bound[i]) e.op(Opcode::DELETE_FAST, static_cast<int>(i));
  auto is_null = [&nulls](int k) { return std::find(nulls.begin(), nulls.end(), k) != nulls.end(); };
  int first = -1, nargs = 0;
  for (int k = 0; k < depth; ++k) {
    if (is_null(k)) continue;
    int local = e.new_local(("__pijit_stack" + std::to_string(k)).c_str());
    if (first < 0) first = local;
    ++nargs;
  }
  // The stack values, with each try block entered again where its level says (its handler, in
  // the copy of the original, unwinds to that depth). 3.11: the copy's exception table covers
  // `offset` as the original's did, at the same depth: nothing to enter. (raise_top: the top one,
  // the exception, stays in its local for resume_original)
  std::vector<std::pair<size_t, int>> handlers;
  size_t b = py::kExceptionTables ? blocks.size() : 0;
  const int loaded = raise_top ? depth - 1 : depth;
  for (int k = 0, arg = 0; k <= loaded; ++k) {
    for (; b < blocks.size() && blocks[b].level == k; ++b) {
      handlers.emplace_back(e.size(), blocks[b].handler);
      e.op(static_cast<Opcode>(blocks[b].op));
    }
    if (k < loaded && is_null(k)) {
      if (py::kCallsOverNull) e.op(Opcode::PUSH_NULL);  // (3.7-3.10: left out, method_call_pairs)
    } else if (k < loaded) {
      // On the stack now, and no longer a local: as in the original, the value lives only as long
      // as the stack holds it (an exception raised with it, kept by a local of the frame its
      // traceback holds, would be a reference cycle: a generator's cleanup then waits for the GC).
      e.op(Opcode::LOAD_FAST, first + arg);
      e.op(Opcode::DELETE_FAST, first + arg);
      ++arg;
    }
  }
  if (b != blocks.size()) {
    PyErr_SetString(PyExc_ValueError, "a try block above the value stack it resumes with");
    return nullptr;
  }
  std::vector<int> as_functions;
  if (raise_top && !py::kCallsOverNull && !nulls.empty()) {
    PyErr_SetString(PyExc_ValueError, "a method pair under the exception a resume function raises");
    return nullptr;
  }
  if (!raise_top && !method_call_pairs(original, offset, depth, blocks, nulls, &as_functions)) return nullptr;
  if (!e.resume_original(original, offset, handlers, as_functions, raise_top ? offset : -1, first + nargs - 1))
    return nullptr;
  return e.finish_closure(original, static_cast<int>(bound.size()) + nargs);  // every local, then the stack
}

PyObject* reassemble(PyCodeObject* original) {
  py::DecodeResult d = py::decode_code(reinterpret_cast<PyObject*>(original));
  if (!d.ok()) {
    PyErr_SetString(PyExc_ValueError, ("malformed bytecode: " + d.error).c_str());
    return nullptr;
  }
  return assemble(from_decoded(d.instructions), in_place_spec(original), from_decoded(d.instructions, d.handlers));
}

}  // namespace pj::codegen

#else  // no rewritten code on Pythons whose capture is not built (never reached: no hook)

namespace pj::codegen {
PyObject* emit_graph_code(PyCodeObject*, const guards::GuardTree&, const FramePlan&, PyObject*, const ResumeMaker&) {
  PyErr_SetString(PyExc_NotImplementedError, py::kUnsupportedPythonMessage);
  return nullptr;
}
PyObject* reassemble(PyCodeObject*) {
  PyErr_SetString(PyExc_NotImplementedError, py::kUnsupportedPythonMessage);
  return nullptr;
}
PyObject* emit_resume_code(PyCodeObject*, int, int, const std::vector<char>&, int, const std::vector<BlockPlan>&,
                           const std::vector<int>&, bool) {
  PyErr_SetString(PyExc_NotImplementedError, py::kUnsupportedPythonMessage);
  return nullptr;
}
}  // namespace pj::codegen

#endif  // PJ_PY_CAPTURE_BUILT
