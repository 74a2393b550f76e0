# SPDX-License-Identifier: Apache-2.0
# aarch64-linux-gnu cross toolchain (Debian g++-aarch64-linux-gnu, default
# -march=armv8-a: NEON, nothing newer) with Debian's arm64 XNNPACK, pthreadpool
# and cpuinfo unpacked into a private sysroot by fetch-sysroot.sh (the :arm64
# -dev packages conflict with the amd64 ones, so they are never installed).
# Tests run under qemu-aarch64 via CMAKE_CROSSCOMPILING_EMULATOR; RUNPATH is not
# transitive, so the emulator passes the sysroot's library dir as LD_LIBRARY_PATH.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(FLOE_ARM64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../../build/arm64-sysroot" CACHE PATH
    "Debian arm64 XNNPACK/pthreadpool/cpuinfo unpacked by ports/aarch64-linux/fetch-sysroot.sh")
# CPU QEMU emulates for tests: cortex-a53 proves nothing beyond ARMv8.0 is needed.
set(FLOE_QEMU_CPU "cortex-a53" CACHE STRING "qemu-aarch64 -cpu for tests (cortex-a53, max, ...)")
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FLOE_ARM64_SYSROOT FLOE_QEMU_CPU)
get_filename_component(FLOE_ARM64_SYSROOT "${FLOE_ARM64_SYSROOT}" ABSOLUTE)
# First configure on a fresh machine: fetch the arm64 packages (apt-get download).
if(NOT EXISTS "${FLOE_ARM64_SYSROOT}/usr/include/xnnpack.h")
  execute_process(COMMAND sh "${CMAKE_CURRENT_LIST_DIR}/fetch-sysroot.sh" "${FLOE_ARM64_SYSROOT}"
                  RESULT_VARIABLE _floe_fetch_rc)
  if(NOT _floe_fetch_rc EQUAL 0)
    message(FATAL_ERROR "ports/aarch64-linux/fetch-sysroot.sh failed (${_floe_fetch_rc}): the arm64 "
                        "XNNPACK sysroot is missing at ${FLOE_ARM64_SYSROOT}")
  endif()
endif()

set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu "${FLOE_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-aarch64 -cpu ${FLOE_QEMU_CPU} -L /usr/aarch64-linux-gnu
    -E LD_LIBRARY_PATH=${FLOE_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu)
