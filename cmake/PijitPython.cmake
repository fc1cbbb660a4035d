# pijit_add_python_module(<python executable>)
# Builds pijit._C for one interpreter, named with that interpreter's EXT_SUFFIX so that builds for
# several versions can live side by side in pyscripts/pijit/.
function(pijit_add_python_module PY)
  execute_process(
    COMMAND ${PY} -c "import sysconfig as s; print(s.get_paths()['include']); print(s.get_config_var('EXT_SUFFIX')); import sys; print('%d%d' % sys.version_info[:2])"
    OUTPUT_VARIABLE _out OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "pijit: cannot query ${PY}")
  endif()
  string(REPLACE "\n" ";" _out "${_out}")
  list(GET _out 0 _inc)
  list(GET _out 1 _suffix)
  list(GET _out 2 _ver)
  set(_target pijit_C_py${_ver})
  # One static library per layer (cmake/PijitLayers.cmake), each linking only the layers below it;
  # the module is the runtime layer on top.
  set(_below ${PIJIT_CORE_WHOLE})
  foreach(_layer py pyext guards codegen capture)
    file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${_layer}/*.cc ${CMAKE_SOURCE_DIR}/${_layer}/*.c)
    set(_lib pijit_${_layer}_py${_ver})
    add_library(${_lib} STATIC ${_srcs})
    target_include_directories(${_lib} PUBLIC ${_inc} ${CMAKE_SOURCE_DIR})
    target_link_libraries(${_lib} PUBLIC ${_below})
    set_target_properties(${_lib} PROPERTIES CXX_VISIBILITY_PRESET hidden UNITY_BUILD ${PIJIT_UNITY})
    add_dependencies(${_lib} pijit_layer_check)
    set(_below ${_lib})
  endforeach()
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/runtime/*.cc)
  # (its hidden `stderr` must not meet stdio.h's declaration in a batch)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/runtime/asmjit_link.cc PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  add_library(${_target} MODULE ${_srcs})
  target_include_directories(${_target} PRIVATE ${_inc} ${CMAKE_SOURCE_DIR})
  target_link_libraries(${_target} PRIVATE ${_below})
  add_dependencies(${_target} pijit_layer_check)
  set_target_properties(${_target} PROPERTIES
    PREFIX "" OUTPUT_NAME "_C" SUFFIX "${_suffix}"
    CXX_VISIBILITY_PRESET hidden UNITY_BUILD ${PIJIT_UNITY}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/py${_ver}/pijit)
  if(PIJIT_INPLACE)
    # Copy, then rename: a process that has the old extension loaded keeps its file (overwriting a
    # mapped .so in place crashes it, e.g. a test run during a rebuild).
    set(_dst ${CMAKE_SOURCE_DIR}/pyscripts/pijit/_C${_suffix})
    add_custom_command(TARGET ${_target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy $<TARGET_FILE:${_target}> ${_dst}.tmp
      COMMAND ${CMAKE_COMMAND} -E rename ${_dst}.tmp ${_dst})
  endif()
  message(STATUS "pijit: pijit._C for ${PY} (${_suffix})")
endfunction()
