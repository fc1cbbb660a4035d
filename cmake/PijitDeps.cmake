# Finds pijit's dependencies and, when one is missing, stops with the Debian package that provides
# it instead of a CMake trace from deep inside another package's config (tools/deps.sh installs
# them all).

function(pijit_missing what package)
  message(FATAL_ERROR
    "pijit: ${what} not found. On Debian 12: apt-get install --no-install-recommends ${package}"
    " (or run: bash tools/deps.sh)")
endfunction()

# oneDNN. Debian's build uses the OpenCL GPU runtime, so its dnnl-config.cmake calls
# find_package(OpenCL REQUIRED); ocl-icd-opencl-dev is only a Recommends of libdnnl-dev.
find_path(PIJIT_DNNL_CONFIG_DIR dnnl-config.cmake
  PATH_SUFFIXES lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/dnnl lib/cmake/dnnl lib64/cmake/dnnl)
if(NOT PIJIT_DNNL_CONFIG_DIR)
  pijit_missing("oneDNN (dnnl-config.cmake)" libdnnl-dev)
endif()
file(STRINGS ${PIJIT_DNNL_CONFIG_DIR}/dnnl-config.cmake _dnnl_ocl REGEX "DNNL_GPU_RUNTIME \"OCL\"")
if(_dnnl_ocl)
  find_package(OpenCL QUIET)
  if(NOT OpenCL_FOUND)
    pijit_missing("OpenCL (needed by oneDNN's CMake config)" "ocl-icd-opencl-dev opencl-c-headers")
  endif()
endif()
find_package(dnnl REQUIRED CONFIG HINTS ${PIJIT_DNNL_CONFIG_DIR})

find_package(absl CONFIG QUIET)
if(NOT absl_FOUND)
  pijit_missing("abseil (abslConfig.cmake)" libabsl-dev)
endif()

find_package(OpenMP QUIET COMPONENTS CXX)
if(NOT OpenMP_CXX_FOUND)
  pijit_missing("OpenMP for C++" g++)
endif()

find_library(ASMJIT_LIB asmjit)
find_path(ASMJIT_INCLUDE asmjit/asmjit.h)
if(NOT ASMJIT_LIB OR NOT ASMJIT_INCLUDE)
  pijit_missing("AsmJit (libasmjit, asmjit/asmjit.h)" libasmjit-dev)
endif()

if(PIJIT_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    pijit_missing("GoogleTest" "libgtest-dev googletest")
  endif()
endif()
