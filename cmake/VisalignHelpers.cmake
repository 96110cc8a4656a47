# visalign_add_module(NAME SOURCES ... [DEPS ...] [PRIVATE_DEPS ...] [PRIVATE_INCLUDE dir])
#   A static library `visalign_<NAME>` with the public include dir; DEPS are linked PUBLIC.
#   PRIVATE_INCLUDE (visalign_private_include) is its only view of src/: its own folder.
#   Every module is also added to the umbrella interface target `visalign`.
add_library(visalign INTERFACE)
function(visalign_add_module name)
  cmake_parse_arguments(M "" "PRIVATE_INCLUDE" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target visalign_${name})
  add_library(${target} STATIC ${M_SOURCES})
  target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR}/include PRIVATE ${M_PRIVATE_INCLUDE})
  target_link_libraries(${target} PUBLIC ${M_DEPS} PRIVATE ${M_PRIVATE_DEPS})
  target_link_libraries(visalign INTERFACE ${target})
endfunction()

# visalign_private_include(OUT_VAR PATH SOURCE): an include directory in the build tree in which
#   `PATH` (a folder such as clip or benchmarks/hues, or one header such as backends/curl_library.h)
#   is a symbolic link to SOURCE, so `#include "PATH/..."` works there and nothing else of src/ is
#   visible: a module sees its own private headers, never another module's (docs/architecture.md,
#   "Modules are folders"; tests/module_deps_test.cc checks the includes against the DEPS).
function(visalign_private_include out path source)
  string(REPLACE "/" "_" key ${path})
  set(dir ${CMAKE_BINARY_DIR}/private_include/${key})
  get_filename_component(parent ${dir}/${path} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  if(NOT IS_SYMLINK ${dir}/${path})
    file(CREATE_LINK ${source} ${dir}/${path} SYMBOLIC)
  endif()
  set(${out} ${dir} PARENT_SCOPE)
endfunction()

# visalign_add_test(NAME SOURCES ... [DEPS ...] [LABELS ...] [TIMEOUT s] [INCLUDES dir ...])
#   A GoogleTest executable registered with CTest; label `unit` unless LABELS say otherwise.
#   It includes from tests/ and INCLUDES (a module's tests: its private include dir), else from
#   src/ (the integration tests, which also test modules' internals).
#   Tests run with VISALIGN_TEST_ENV: VISALIGN_DATA pointing at the source tree's data/ (and, in a
#   sanitizer build, the sanitizers' options).
function(visalign_add_test name)
  if(NOT VISALIGN_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "USES_CLI" "TIMEOUT" "SOURCES;DEPS;LABELS;INCLUDES" ${ARGN})
  if(NOT T_INCLUDES)
    set(T_INCLUDES ${CMAKE_SOURCE_DIR}/src)
  endif()
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${T_INCLUDES} ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    VISALIGN_TEST_DATA_DIR="${VISALIGN_SOURCE_DATA_DIR}"
    VISALIGN_TEST_SHARED_DIR="${VISALIGN_SHARED_DIR}"
    VISALIGN_TEST_BINARY="${CMAKE_BINARY_DIR}/visalign")
  if(T_USES_CLI)
    add_dependencies(${name} visalign_cli)
  endif()
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "${VISALIGN_TEST_ENV}")
endfunction()

# visalign_add_bench(NAME SOURCES ... [DEPS ...]): a Google Benchmark program (not run by ctest).
function(visalign_add_bench name)
  if(NOT VISALIGN_BUILD_BENCH)
    return()
  endif()
  cmake_parse_arguments(B "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${B_SOURCES})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(${name} PRIVATE ${B_DEPS} benchmark::benchmark)
endfunction()

# visalign_module(NAME [DEPS ...] [PRIVATE_DEPS ...])
#   The module in the current source folder: every *.cc except *_test.cc / *_benchmark.cc is a
#   source of `visalign_<NAME>`; every *_test.cc goes into one GoogleTest program `<NAME>_test`
#   (label `unit`). Both include from include/ and, of src/, only from this folder
#   (visalign_private_include). A folder without sources yet gives an interface (header-only) target.
function(visalign_module name)
  cmake_parse_arguments(M "" "" "DEPS;PRIVATE_DEPS;TEST_DEPS" ${ARGN})
  file(GLOB all_cc CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  set(srcs)
  set(tests)
  foreach(f ${all_cc})
    if(f MATCHES "_test\\.cc$")
      list(APPEND tests ${f})
    elseif(NOT f MATCHES "_benchmark\\.cc$")
      list(APPEND srcs ${f})
    endif()
  endforeach()
  string(REPLACE "/" "_" target_suffix ${name})
  set(target visalign_${target_suffix})
  visalign_private_include(private_include ${name} ${CMAKE_CURRENT_SOURCE_DIR})
  if(srcs)
    visalign_add_module(${target_suffix} SOURCES ${srcs} DEPS ${M_DEPS} PRIVATE_DEPS ${M_PRIVATE_DEPS}
                        PRIVATE_INCLUDE ${private_include})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${CMAKE_SOURCE_DIR}/include)
    target_link_libraries(${target} INTERFACE ${M_DEPS})
  endif()
  if(tests)
    visalign_add_test(${target_suffix}_test SOURCES ${tests} DEPS ${target} ${M_PRIVATE_DEPS} ${M_TEST_DEPS}
                      INCLUDES ${private_include})
  endif()
endfunction()
