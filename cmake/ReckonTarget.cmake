# Shared settings for Reckon's own targets. Generated code (Cap'n Proto) is compiled in separate
# targets that do not use these flags.
#
# Include paths. Every header of the product is included with the `reckon/` prefix
# ("reckon/engine/engine.h"), in the source tree as in an installed prefix, so Reckon's folder
# names never collide with a user's. In the build tree the prefix is a symbolic link,
# <build>/include/reckon -> the source directory; generated headers (Cap'n Proto) are written
# under <build>/generated/reckon/. Installed, both are <prefix>/include/reckon/.
set(RECKON_INCLUDE_ROOT "${PROJECT_BINARY_DIR}/include")
set(RECKON_GENERATED_ROOT "${PROJECT_BINARY_DIR}/generated")
file(MAKE_DIRECTORY "${RECKON_INCLUDE_ROOT}" "${RECKON_GENERATED_ROOT}/reckon")
if(NOT IS_SYMLINK "${RECKON_INCLUDE_ROOT}/reckon")
  file(CREATE_LINK "${PROJECT_SOURCE_DIR}" "${RECKON_INCLUDE_ROOT}/reckon" SYMBOLIC)
endif()

# Warnings for Reckon's code; errors too with RECKON_WERROR (on only when Reckon is the
# top-level project: a user's newer compiler must not break their build on a new warning).
function(reckon_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
                         -Wno-missing-field-initializers
                         # GCC 12 false positive on Asio coroutine frames (awaitable_frame_base)
                         -Wno-mismatched-new-delete)
  if(RECKON_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# reckon_library(TARGET SOURCES...): a library of the product. Alias reckon::<name> (the target
# name without `reckon_`), the same name find_package(Reckon) gives it; headers by the
# `reckon/` prefix; exported and installed (cmake/ReckonInstall.cmake) unless TESTING (a test
# helper) or INTERNAL (used by this repository's programs only) is given.
function(reckon_library target)
  cmake_parse_arguments(ARG "TESTING;INTERNAL" "" "" ${ARGN})
  add_library(${target} ${ARG_UNPARSED_ARGUMENTS})
  string(REGEX REPLACE "^reckon_" "" name "${target}")
  add_library(reckon::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  reckon_target_defaults(${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${RECKON_INCLUDE_ROOT}>
    $<BUILD_INTERFACE:${RECKON_GENERATED_ROOT}>
    $<INSTALL_INTERFACE:include>)
  if(NOT ARG_TESTING AND NOT ARG_INTERNAL)
    set_property(GLOBAL APPEND PROPERTY RECKON_EXPORTED_TARGETS ${target})
  endif()
endfunction()

# reckon_capnp_library(TARGET SCHEMA...): the code Cap'n Proto generates for SCHEMA (a path
# relative to the source root's current folder), compiled without our warning flags; headers
# at "reckon/<folder>/<schema>.h".
function(reckon_capnp_library target)
  set(CAPNPC_SRC_PREFIX "${PROJECT_SOURCE_DIR}")
  set(CAPNPC_OUTPUT_DIR "${RECKON_GENERATED_ROOT}/reckon")
  capnp_generate_cpp(srcs hdrs ${ARGN})
  add_library(${target} STATIC ${srcs})
  string(REGEX REPLACE "^reckon_" "" name "${target}")
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} RECKON_HEADERS "${hdrs}")
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${RECKON_GENERATED_ROOT}>
    $<INSTALL_INTERFACE:include>)
  target_link_libraries(${target} PUBLIC CapnProto::capnp)
  set_property(GLOBAL APPEND PROPERTY RECKON_EXPORTED_TARGETS ${target})
endfunction()

# reckon_program(TARGET SOURCES...): an executable of Reckon's own (CLI, samples, tests, bench).
# It may include the non-product folders (tests/, samples/, bench/) from the source root.
function(reckon_program target)
  add_executable(${target} ${ARGN})
  reckon_target_defaults(${target})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
endfunction()

# reckon_test(NAME SOURCES... [LIBS ...] [LABELS ...]): a GoogleTest executable registered
# with ctest, one ctest entry per test case. Nothing when RECKON_BUILD_TESTS is off.
function(reckon_test name)
  if(NOT RECKON_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  reckon_program(${name} ${ARG_SOURCES})
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
