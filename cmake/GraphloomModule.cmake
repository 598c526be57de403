# graphloom_module(NAME SOURCES ... DEPS ...): one static library per module folder.
# Warnings are on everywhere; the heavy ATen header is precompiled once (in `base`) and
# reused by every other module, which keeps the build inside CI's budget on 2 cores.
set(GRAPHLOOM_WARNINGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
# Unity batches: every translation unit that sees libtorch or CLI11 pays 5-15 s for the
# templates and inline functions those headers instantiate, however little of them it uses
# (`-ftime-report`: "template instantiation" on an empty file). Compiling a module's sources
# in batches pays that once per batch: the clean build went from ~21 to ~6.5 minutes here.
# Names in anonymous namespaces must therefore be unique within a module.
# -DGRAPHLOOM_UNITY_BUILD=OFF compiles file by file, which shows a file's missing includes.
option(GRAPHLOOM_UNITY_BUILD "Compile each module in unity batches" ON)
set(GRAPHLOOM_UNITY_BATCH 8)

function(graphloom_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(graphloom_${name} STATIC ${ARG_SOURCES})
  target_include_directories(graphloom_${name} PUBLIC ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(graphloom_${name} PRIVATE ${GRAPHLOOM_WARNINGS})
  target_link_libraries(graphloom_${name} PUBLIC ${ARG_DEPS})
  set_target_properties(graphloom_${name} PROPERTIES UNITY_BUILD ${GRAPHLOOM_UNITY_BUILD}
                                                     UNITY_BUILD_BATCH_SIZE ${GRAPHLOOM_UNITY_BATCH})
  if(name STREQUAL "base")
    target_precompile_headers(graphloom_base PRIVATE <ATen/ATen.h> <fmt/format.h> <vector> <string>)
  elseif(name STREQUAL "nn")
    # nn, train and benchmarks share one precompiled <torch/torch.h>; the CLI needs only ATen.
    target_precompile_headers(graphloom_nn PRIVATE <torch/torch.h> <fmt/format.h> <vector> <string>)
  elseif(name STREQUAL "train")
    target_precompile_headers(graphloom_${name} REUSE_FROM graphloom_nn)
  elseif(name STREQUAL "benchmarks")
    target_precompile_headers(graphloom_${name} REUSE_FROM graphloom_nn)
  else()
    target_precompile_headers(graphloom_${name} REUSE_FROM graphloom_base)
  endif()
endfunction()

# What every test process (and what it starts) runs with. ctest runs tests side by side, one
# per core: OpenMP threads that spin while they wait (libgomp's default) take the core of the
# test beside them. Passive waiting cut the suite from 676 s to 495 s on 2 cores.
set(GRAPHLOOM_TEST_ENVIRONMENT "OMP_WAIT_POLICY=PASSIVE")

# graphloom_test(NAME SOURCES ... DEPS ... [LABELS ...]): one GoogleTest binary per module.
function(graphloom_test name)
  cmake_parse_arguments(ARG "TORCH" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${GRAPHLOOM_WARNINGS})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} graphloom_test_support GTest::gtest_main)
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${GRAPHLOOM_UNITY_BUILD}
                                           UNITY_BUILD_BATCH_SIZE ${GRAPHLOOM_UNITY_BATCH})
  if(ARG_TORCH)
    target_precompile_headers(${name} REUSE_FROM graphloom_nn)
  else()
    target_precompile_headers(${name} REUSE_FROM graphloom_base)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${ARG_LABELS}"
                       ENVIRONMENT "${GRAPHLOOM_TEST_ENVIRONMENT}")
endfunction()
