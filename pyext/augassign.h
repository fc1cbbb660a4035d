// MindSpore's meaning of `x += y` on a Tensor (pyext/tensor_object.cc implements it).
//
// By default an augmented assignment is the plain operator: `x += y` binds x to a new tensor
// `x + y` (promoted as `+` promotes) and every other name of the old tensor keeps it, as MindSpore
// does on CPU and GPU and, in graph mode, unless its compile config JIT_ENABLE_AUGASSIGN_INPLACE
// is "1". With that switch on (pijit: mindspore._extends.parse.compile_config, or
// MS_JIT=JIT_ENABLE_AUGASSIGN_INPLACE:1) the five MindSpore makes in-place, += -= *= /= //=,
// write the result into x (cast to x's dtype where numpy's same_kind rule allows); %= **= @= and
// the bitwise ones stay out-of-place in both modes.
#pragma once

#include "py/opcodes.h"

namespace pj::py {

bool augassign_inplace();            // the switch
void set_augassign_inplace(bool on);  // (pijit._C._set_augassign_inplace; Python keeps it in step)

// Whether the augmented-assignment opcode `op` writes into a tensor operand under the switch now.
bool augassign_writes(Opcode op);

}  // namespace pj::py
