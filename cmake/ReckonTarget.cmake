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
  if(RECKON_PCH)
    reckon_use_pch(${target})
  endif()
endfunction()

# Precompiled headers (docs/ARCHITECTURE.md, decision 55). The third-party headers that most
# files include (Boost.Asio, Boost.JSON, Boost.Outcome, spdlog, the standard library; for the
# tests GoogleTest and GoogleMock too) are compiled once per build, by reckon_pch (cmake/pch/),
# and every target of Reckon's own reuses that one result. GCC uses a precompiled header only
# when the macros its headers look at are defined exactly as they were when it was made, so a
# target that reuses it is given the definitions reckon_pch was compiled with (those of the
# libraries above); with -Werror, a precompiled header that cannot be used fails the build
# (-Winvalid-pch) instead of being silently parsed again. Headers stay self-contained: the
# out-of-tree test compiles every installed header without it.
if(RECKON_PCH)
  add_library(reckon_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch/pch.cc)
  target_compile_features(reckon_pch PUBLIC cxx_std_20)
  target_compile_options(reckon_pch PRIVATE -Wall -Wextra -Wpedantic
                         -Wno-missing-field-initializers -Wno-mismatched-new-delete)
  if(RECKON_WERROR)
    target_compile_options(reckon_pch PRIVATE -Werror)
  endif()
  target_link_libraries(reckon_pch PRIVATE Boost::headers Boost::json spdlog::spdlog)
  if(RECKON_BUILD_TESTS)
    target_link_libraries(reckon_pch PRIVATE GTest::gtest GTest::gmock)
    target_compile_definitions(reckon_pch PRIVATE RECKON_PCH_TESTS)
  endif()
  target_precompile_headers(reckon_pch PRIVATE ${PROJECT_SOURCE_DIR}/cmake/pch/pch.h)
endif()

function(reckon_use_pch target)
  set_property(TARGET ${target} PROPERTY PRECOMPILE_HEADERS_REUSE_FROM reckon_pch)
  target_compile_definitions(${target} PRIVATE
    $<TARGET_PROPERTY:reckon_pch,COMPILE_DEFINITIONS>)
  target_compile_options(${target} PRIVATE $<TARGET_PROPERTY:reckon_pch,COMPILE_OPTIONS>)
  # GCC 12 reports -Warray-bounds and -Wstringop-overflow inside std::string's inlined copy
  # (operator+ of a string and a literal, storage/sqlite/sqlite_journal.cc) once the standard
  # headers come from a precompiled header: its known false positives (with -Wrestrict) in
  # libstdc++, which the same file does not get without it because they are then reported in a
  # system header and suppressed. The RECKON_PCH=OFF build (the ASan+UBSan build of the heavy
  # tier) keeps the three warnings.
  target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow
                         -Wno-restrict)
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
