# Shared settings for Reckon's own targets: C++20 and warnings as errors. Generated code
# (Cap'n Proto) is compiled in separate targets that do not use these flags.
function(reckon_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror
                         -Wno-missing-field-initializers
                         # GCC 12 false positive on Asio coroutine frames (awaitable_frame_base)
                         -Wno-mismatched-new-delete)
endfunction()

# reckon_test(NAME SOURCES... [LIBS ...] [LABELS ...]): a GoogleTest executable registered
# with ctest, one ctest entry per test case.
function(reckon_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  reckon_target_defaults(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(NOT ARG_LABELS)
    set(ARG_LABELS fast)
  endif()
  gtest_discover_tests(${name}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    DISCOVERY_TIMEOUT 60)
endfunction()
