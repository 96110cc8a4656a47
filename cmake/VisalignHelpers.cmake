# visalign_add_module(NAME SOURCES ... [DEPS ...])
#   A static library `visalign_<NAME>` with the public include dir; DEPS are linked PUBLIC.
#   Every module is also added to the umbrella interface target `visalign`.
add_library(visalign INTERFACE)
function(visalign_add_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target visalign_${name})
  add_library(${target} STATIC ${M_SOURCES})
  target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR}/include PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(${target} PUBLIC ${M_DEPS} PRIVATE ${M_PRIVATE_DEPS})
  target_link_libraries(visalign INTERFACE ${target})
endfunction()

# visalign_add_test(NAME SOURCES ... [DEPS ...] [LABELS ...] [TIMEOUT s])
#   A GoogleTest executable registered with CTest; label `unit` unless LABELS say otherwise.
#   Tests run with VISALIGN_TEST_ENV: VISALIGN_DATA pointing at the source tree's data/ (and, in a
#   sanitizer build, the sanitizers' options).
function(visalign_add_test name)
  if(NOT VISALIGN_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "USES_CLI" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tests)
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
#   (label `unit`). A folder without sources yet gives an interface (header-only) target.
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
  if(srcs)
    visalign_add_module(${target_suffix} SOURCES ${srcs} DEPS ${M_DEPS} PRIVATE_DEPS ${M_PRIVATE_DEPS})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${CMAKE_SOURCE_DIR}/include)
    target_link_libraries(${target} INTERFACE ${M_DEPS})
  endif()
  if(tests)
    visalign_add_test(${target_suffix}_test SOURCES ${tests} DEPS ${target} ${M_PRIVATE_DEPS} ${M_TEST_DEPS})
  endif()
endfunction()
