# SPDX-License-Identifier: Apache-2.0
# cmake --install: what a project outside this tree needs to use floe.
#   include/floe/           runtime/, schemas/ (contract + generated accessors),
#                           converter/ (with the converter), third_party/flatbuffers
#   lib/                    the runtime and kernel libraries; the converter stages
#   bin/                    floe-convert, floe-run, floe-embed, floe-inspect, floe-bench (host builds)
#   lib/cmake/floe/         floeConfig.cmake (+ version), floeTargets.cmake,
#                           floe_add_model.cmake
# find_package(floe CONFIG) then gives floe::runtime (the interpreter with every
# kernel this build compiled), floe::converter (the whole conversion pipeline,
# converter/pipeline/convert.h), floe::platform (the port's runtime/platform.h,
# when one was built) and floe_add_model(), which uses the installed tools.
# One install is one target: a host install (tools + converter + host runtime),
# a Cortex-M install (runtime built with that core's flags) in a prefix of its own.
# Within another project (add_subdirectory) floe installs nothing unless asked.
option(FLOE_INSTALL "Add floe's install rules (cmake --install)" ${PROJECT_IS_TOP_LEVEL})
if(NOT FLOE_INSTALL)
  return()
endif()
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(FLOE_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/floe)
set(FLOE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/floe)

# In-tree targets name the source and build trees as include directories; the
# installed ones name include/floe instead.
function(_floe_installed_includes target)
  foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES)
    get_target_property(dirs ${target} ${property})
    if(NOT dirs)
      continue()
    endif()
    set(rewritten)
    foreach(dir IN LISTS dirs)
      if(dir MATCHES "^\\$<")
        list(APPEND rewritten "${dir}")
      else()
        list(APPEND rewritten "$<BUILD_INTERFACE:${dir}>")
      endif()
    endforeach()
    set_property(TARGET ${target} PROPERTY ${property} "${rewritten}")
  endforeach()
  target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${FLOE_INSTALL_INCLUDEDIR}>)
  # floe::runtime, floe::converter, floe::kernels_ref, floe::conv_ops, ...
  string(REGEX REPLACE "^floe_" "" export_name ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
endfunction()

set(_floe_exported floe_schema floe_contract floe_kernels_common floe_kernels_ref floe_kernels_cortexm floe_runtime)
if(TARGET floe_platform)
  list(APPEND _floe_exported floe_platform)
endif()
if(FLOE_BUILD_CONVERTER)
  get_property(_floe_stages GLOBAL PROPERTY FLOE_CONV_STAGES)
  list(APPEND _floe_exported floe_conv_common floe_tfproto floe_schema_obj floe_npy floe_model_file ${_floe_stages})
  list(REMOVE_DUPLICATES _floe_exported)
endif()
foreach(target IN LISTS _floe_exported)
  _floe_installed_includes(${target})
endforeach()
# The FlatBuffers headers the generated accessors were made for, so a device
# build needs nothing from the host's /usr/include.
target_include_directories(floe_schema SYSTEM INTERFACE $<INSTALL_INTERFACE:${FLOE_INSTALL_INCLUDEDIR}/third_party>)

install(TARGETS ${_floe_exported} EXPORT floeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT floeTargets NAMESPACE floe:: DESTINATION ${FLOE_INSTALL_CMAKEDIR})

# Headers keep their source paths (#include "runtime/core/interpreter.h").
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/ DESTINATION ${FLOE_INSTALL_INCLUDEDIR}/runtime
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/contract/ DESTINATION ${FLOE_INSTALL_INCLUDEDIR}/schemas/contract
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
install(FILES ${PROJECT_SOURCE_DIR}/schemas/floe.fbs ${CMAKE_BINARY_DIR}/generated/schemas/floe_generated.h
        DESTINATION ${FLOE_INSTALL_INCLUDEDIR}/schemas)
find_path(FLOE_FLATBUFFERS_INCLUDE_DIR flatbuffers/flatbuffers.h
          PATHS /usr/include /usr/local/include NO_CMAKE_FIND_ROOT_PATH)
install(DIRECTORY ${FLOE_FLATBUFFERS_INCLUDE_DIR}/flatbuffers DESTINATION ${FLOE_INSTALL_INCLUDEDIR}/third_party)
if(FLOE_BUILD_CONVERTER)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/converter/ DESTINATION ${FLOE_INSTALL_INCLUDEDIR}/converter
          FILES_MATCHING PATTERN "*.h" PATTERN "python" EXCLUDE)
  install(DIRECTORY ${CMAKE_BINARY_DIR}/generated/converter/ DESTINATION ${FLOE_INSTALL_INCLUDEDIR}/converter
          FILES_MATCHING PATTERN "*.h")
  install(FILES ${CMAKE_BINARY_DIR}/generated/schemas/floe_obj_generated.h
          DESTINATION ${FLOE_INSTALL_INCLUDEDIR}/schemas)
  install(TARGETS floe-convert floe-run floe-embed floe-inspect floe-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(FLOE_PACKAGE_HAS_CONVERTER ${FLOE_BUILD_CONVERTER})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/floeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/floeConfig.cmake
  INSTALL_DESTINATION ${FLOE_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API. The pointer width is checked too
# (a 64-bit host install is never picked up by a 32-bit firmware build).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/floeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/package/floeConfig.cmake
  ${PROJECT_BINARY_DIR}/package/floeConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/floe_add_model.cmake
  DESTINATION ${FLOE_INSTALL_CMAKEDIR})
