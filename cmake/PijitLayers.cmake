# The layers of pijit and the folders each may include. Dependencies point one way (DESIGN.md):
#   common <- kernels <- graph                       Python-independent (pijit_core)
#   py <- pyext <- guards <- codegen <- capture <- runtime   per Python version
# A folder may include itself and the folders listed for it; an entry with a file name allows only
# that header (capture reads codegen's plan type, nothing else of codegen). cmake/check_layers.cmake
# enforces the table on every build, so a wrong-way include fails the build.
set(PIJIT_LAYERS common kernels graph py pyext guards codegen capture runtime)
set(PIJIT_LAYER_DEPS_common "")
set(PIJIT_LAYER_DEPS_kernels common)
set(PIJIT_LAYER_DEPS_graph common kernels)
set(PIJIT_LAYER_DEPS_py common)
set(PIJIT_LAYER_DEPS_pyext common kernels graph py)
set(PIJIT_LAYER_DEPS_guards common kernels graph py pyext)
# codegen/asm (the machine-code half, built into pijit_core) implements kernels/fused.h's backend.
set(PIJIT_LAYER_DEPS_codegen common py guards kernels/fused.h kernels/fused_math.h kernels/tensor.h)
set(PIJIT_LAYER_DEPS_capture common kernels graph py pyext guards codegen/plan.h)
set(PIJIT_LAYER_DEPS_runtime common kernels graph py pyext guards codegen capture)
# Outside pijit: quoted includes of these are third-party headers, not layers.
set(PIJIT_EXTERNAL_INCLUDE_ROOTS absl oneapi asmjit)
