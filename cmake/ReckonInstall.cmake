# Install rules: `cmake --install <build> --prefix P` puts
#   P/include/reckon/<folder>/*.h        the product's headers (not tests, not testing/ helpers;
#                                        testkit/ is the public test library, so it is installed)
#   P/include/reckon/<folder>/*.capnp.h  the generated Cap'n Proto headers
#   P/lib/libreckon_*.a                  the libraries
#   P/lib/cmake/Reckon/                  ReckonConfig.cmake, its version file, the exported targets
#   P/bin/reckon                         the command (when built)
# so that a project outside this tree writes find_package(Reckon 0.1 CONFIG REQUIRED) and links
# reckon::host (tests/out_of_tree is such a project; ctest builds it against a fresh prefix).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(reckon_exported GLOBAL PROPERTY RECKON_EXPORTED_TARGETS)
install(TARGETS ${reckon_exported} EXPORT ReckonTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET reckon)
  install(TARGETS reckon RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# Headers of the product folders; what only tests use stays behind.
foreach(folder base auth storage outbox contract plan engine telemetry protocol worker host testkit tools api/server)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/reckon/${folder}
    FILES_MATCHING PATTERN "*.h"
    PATTERN "testing" EXCLUDE
    PATTERN "testdata" EXCLUDE
    PATTERN "sqlite" EXCLUDE
    PATTERN "tls_flags.h" EXCLUDE)  # reckon::tls_flags is INTERNAL (protocol/CMakeLists.txt)
endforeach()
# storage/sqlite is a product folder of its own (excluded above so that storage/ does not
# install it twice).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/storage/sqlite/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/reckon/storage/sqlite FILES_MATCHING PATTERN "*.h")
foreach(target reckon_storage_capnp reckon_protocol_capnp)
  get_target_property(headers ${target} RECKON_HEADERS)
  foreach(header IN LISTS headers)
    file(RELATIVE_PATH relative "${RECKON_GENERATED_ROOT}" "${header}")
    get_filename_component(dir "${relative}" DIRECTORY)
    install(FILES "${header}" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir})
  endforeach()
endforeach()

set(reckon_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Reckon)
install(EXPORT ReckonTargets NAMESPACE reckon:: DESTINATION ${reckon_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ReckonConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ReckonConfig.cmake INSTALL_DESTINATION ${reckon_cmake_dir})
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ReckonConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ReckonConfig.cmake ${PROJECT_BINARY_DIR}/ReckonConfigVersion.cmake
  DESTINATION ${reckon_cmake_dir})
