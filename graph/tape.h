// Eager reverse-mode autodiff: a tape records the ops that run while it is recording and read a
// tensor it tracks (a watched tensor, or an output of a recorded op), then replays their gradient
// rules backwards (graph/autodiff.h: the same rules differentiate() uses).
//
// Tapes nest: an op is recorded on every recording tape of the thread that tracks one of its
// inputs, and a tape's backward runs ops like any other, so an outer tape records an inner
// tape's backward (gradients of gradients). Under capture (an op recorder is set) the tensors
// are symbolic: the tape records graph values and its backward becomes graph nodes, so a grad
// call inside a captured function is one forward+backward graph.
//
// Tracking is by tensor identity (TensorImpl): an in-place write into a tracked tensor rebinds it
// to the value written (tape_rebind). Before any in-place write (tape_before_write) tapes copy the
// recorded tensors that share the written storage, so a backward always reads the values the
// forward computed with; a write that bypasses the hook (through a numpy view) is caught by the
// storage version instead, and the backward raises rather than compute with other values.
//
// Floating tensors carry gradients. An integer leaf asked for explicitly does too (MindSpore
// differentiates int32 inputs: d(x * w)/dx = w), through ops with a gradient rule whose outputs
// are integers; booleans never do.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "graph/autodiff.h"

namespace pj {

class Tape {
 public:
  Tape() = default;
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;
  ~Tape();

  // A handle for `t` as a leaf gradients may be asked for (the same handle when watched twice).
  // Booleans are not tracked (their gradient is zero): -1.
  int watch(const Tensor& t);
  void start();
  void stop();
  bool recording() const { return recording_; }
  bool tracks(const Tensor& t) const { return current_.count(t.impl()) != 0; }
  int num_records() const { return static_cast<int>(recs_.size()); }

  // The gradients of sum_k <seeds[k], outputs[k]> with respect to the leaves (handles from
  // watch(); -1 gives zeros like `zeros_like[k]`). An output the tape does not track contributes
  // nothing. While it runs this tape does not record; others do.
  Tensors gradient(const Tensors& outputs, const Tensors& seeds, const std::vector<int>& leaves,
                   const Tensors& zeros_like);

  void record(const OpDef* op, const Tensors& in, const Attrs& attrs, const Tensors& out, CustomGradFn custom,
              std::string name);
  void rebind(const Tensor& written, const Tensor& value);
  void before_write(const Tensor& t);

 private:
  struct Rec {
    const OpDef* op;
    Attrs attrs;
    std::vector<int> in, out;
    CustomGradFn custom;
    std::string name;
  };
  int add_value(const Tensor& t);

  std::unordered_map<const TensorImpl*, int> current_;  // what each tracked tensor holds now
  Tensors values_;                                      // by handle (keeps impls alive: unique)
  std::vector<uint64_t> versions_;                      // storage version when recorded
  std::vector<const char*> used_by_;                    // the first op that read it
  std::vector<bool> carries_;                           // by handle: whether gradients flow through it
  std::unordered_multimap<const Storage*, int> by_storage_;
  Tensors rebound_;  // tensors written in place while tracked (their impls key current_)
  std::vector<Rec> recs_;
  bool recording_ = false;
};

// Whether any tape of this thread records (one thread-local load: the eager hot path asks).
bool tape_active();
// How many tapes of this thread record (2 and more: a gradient of a gradient is being taken).
int tape_depth();
// Hooks of the eager op call (graph/op.cc) and of writers of tensor data.
void tape_record_op(const OpDef& op, const Tensors& in, const Attrs& attrs, const Tensors& out);
// A call whose backward is `custom` (a Cell's bprop), recorded on each recording tape that tracks
// one of `in`. `name` appears in errors.
void tape_record_custom(const Tensors& in, const Tensors& out, CustomGradFn custom, const std::string& name);
// `written` now holds `value`'s data (an in-place operator): tapes tracking either follow.
void tape_rebind(const Tensor& written, const Tensor& value);
// t's storage is about to be written in place: tapes keep copies of what they recorded from it.
void tape_before_write(const Tensor& t);
// Whether a recording tape tracks t.
bool tape_tracks(const Tensor& t);

// No tape of this thread records while one is alive (a custom-gradient call's own forward).
class TapePause {
 public:
  TapePause();
  ~TapePause();

 private:
  std::vector<Tape*> saved_;
};

}  // namespace pj
