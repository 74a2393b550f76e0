# SPDX-License-Identifier: Apache-2.0
# Decides FLOE_WITH_XNNPACK and defines the imported target floe::xnnpack
# (XNNPACK + pthreadpool + cpuinfo, Debian's 2022-02 snapshot; find_library only:
# Debian's cpuinfo CMake config computes a wrong prefix). Default: ON when the
# libraries are found for an x86_64 or aarch64 Linux target, else OFF.
set(_floe_xnn_arch_ok OFF)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|aarch64|arm64)$")
  set(_floe_xnn_arch_ok ON)
endif()
if(_floe_xnn_arch_ok)
  find_path(FLOE_XNNPACK_INCLUDE_DIR xnnpack.h)
  find_library(FLOE_XNNPACK_LIBRARY XNNPACK)
  find_library(FLOE_PTHREADPOOL_LIBRARY pthreadpool)
  find_library(FLOE_CPUINFO_LIBRARY cpuinfo)
endif()
set(_floe_xnn_found OFF)
if(FLOE_XNNPACK_INCLUDE_DIR AND FLOE_XNNPACK_LIBRARY AND FLOE_PTHREADPOOL_LIBRARY AND FLOE_CPUINFO_LIBRARY)
  set(_floe_xnn_found ON)
endif()
if(NOT DEFINED FLOE_WITH_XNNPACK)
  set(FLOE_WITH_XNNPACK ${_floe_xnn_found})
endif()
option(FLOE_WITH_XNNPACK "Run the converter-assigned ops with XNNPACK (x86_64/aarch64 Linux); OFF = reference kernels only" ${_floe_xnn_found})
if(FLOE_WITH_XNNPACK AND NOT _floe_xnn_arch_ok)
  message(FATAL_ERROR "FLOE_WITH_XNNPACK=ON needs an x86_64 or aarch64 Linux target; "
                      "this is ${CMAKE_SYSTEM_NAME}/${CMAKE_SYSTEM_PROCESSOR} (use OFF: reference kernels)")
endif()
if(FLOE_WITH_XNNPACK AND NOT _floe_xnn_found)
  message(FATAL_ERROR "FLOE_WITH_XNNPACK=ON but XNNPACK/pthreadpool/cpuinfo were not found "
                      "(host: apt-get install libxnnpack-dev libpthreadpool-dev libcpuinfo-dev; "
                      "aarch64: ports/aarch64-linux/fetch-sysroot.sh), or configure with -DFLOE_WITH_XNNPACK=OFF")
endif()
if(FLOE_WITH_XNNPACK AND NOT TARGET floe::xnnpack)
  add_library(floe::xnnpack INTERFACE IMPORTED)
  set_target_properties(floe::xnnpack PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${FLOE_XNNPACK_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${FLOE_XNNPACK_LIBRARY};${FLOE_PTHREADPOOL_LIBRARY};${FLOE_CPUINFO_LIBRARY}")
  message(STATUS "floe: XNNPACK backend ON (${FLOE_XNNPACK_LIBRARY})")
else()
  message(STATUS "floe: XNNPACK backend OFF (reference kernels only)")
endif()
