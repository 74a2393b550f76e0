# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file for bare-metal Cortex-M (arm-none-eabi-gcc, newlib-nano,
# no OS, no heap). Pick the board with -DFLOE_CORTEXM_BOARD=mps2-an386 (M4F,
# default) | mps2-an505 (M33) | mps3-an547 (M55); tests run it under
# qemu-system-arm with semihosting. The malloc ban lives here: every heap entry
# point is --wrap'ed to a symbol nobody defines, so heap use fails at link time
# (and there is deliberately no syscall library: nosys.specs would let malloc work).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# Compiler checks cannot link a program without startup code.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FLOE_CORTEXM_BOARD)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(FLOE_CORTEXM_BOARD "mps2-an386" CACHE STRING "QEMU board: mps2-an386 (M4F), mps2-an505 (M33), mps3-an547 (M55)")
set_property(CACHE FLOE_CORTEXM_BOARD PROPERTY STRINGS mps2-an386 mps2-an505 mps3-an547)

# Per board: CPU flags, the variant the Cortex-M float kernels compile to
# (runtime/kernels/cortexm/isa.h decides from the same flags; named here for
# reports), the QEMU machine and the core clock (for ticks_per_second()).
if(FLOE_CORTEXM_BOARD STREQUAL "mps2-an386")
  set(_floe_cpu_flags "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard")
  set(FLOE_CORTEXM_CORE cortex-m4)
  set(FLOE_CORTEXM_ISA_NAME fpu)
  set(FLOE_CORTEXM_CORE_CLOCK_HZ 25000000)
elseif(FLOE_CORTEXM_BOARD STREQUAL "mps2-an505")
  set(_floe_cpu_flags "-mcpu=cortex-m33 -mfpu=fpv5-sp-d16 -mfloat-abi=hard")
  set(FLOE_CORTEXM_CORE cortex-m33)
  set(FLOE_CORTEXM_ISA_NAME fpu)
  set(FLOE_CORTEXM_CORE_CLOCK_HZ 20000000)
elseif(FLOE_CORTEXM_BOARD STREQUAL "mps3-an547")
  # -mcpu=cortex-m55 implies MVE-I+F and the FPU (__ARM_FEATURE_MVE == 3).
  set(_floe_cpu_flags "-mcpu=cortex-m55 -mfloat-abi=hard")
  set(FLOE_CORTEXM_CORE cortex-m55)
  set(FLOE_CORTEXM_ISA_NAME mve)
  set(FLOE_CORTEXM_CORE_CLOCK_HZ 32000000)
else()
  message(FATAL_ERROR "FLOE_CORTEXM_BOARD='${FLOE_CORTEXM_BOARD}': expected mps2-an386, mps2-an505 or mps3-an547")
endif()
set(FLOE_CORTEXM_QEMU_MACHINE ${FLOE_CORTEXM_BOARD})
# Which Cortex-M port this build is for; the root CMakeLists.txt keys on it.
set(FLOE_PORT cortex-m)
# floe_add_model() converts for this core (--target): the CORTEX_M kernels.
set(FLOE_MODEL_TARGET ${FLOE_CORTEXM_CORE})

set(_floe_common "-mthumb ${_floe_cpu_flags} -ffunction-sections -fdata-sections")
set(CMAKE_C_FLAGS_INIT "${_floe_common}")
set(CMAKE_CXX_FLAGS_INIT "${_floe_common} -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-unwind-tables -fno-asynchronous-unwind-tables")
set(CMAKE_ASM_FLAGS_INIT "${_floe_common}")
# Release is -O2 (not CMake's -O3, which unrolls for size nobody asked for);
# the port compiles the interpreter core with -Os on top (ports/cortex-m/CMakeLists.txt).
# (Cache entries: the compiler modules append -O3 to any *_FLAGS_RELEASE_INIT.)
set(CMAKE_C_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "Release flags")
set(CMAKE_CXX_FLAGS_RELEASE "-O2 -DNDEBUG" CACHE STRING "Release flags")

set(_floe_heap_symbols malloc calloc realloc free _malloc_r _calloc_r _realloc_r _free_r
    memalign _memalign_r aligned_alloc posix_memalign)
list(TRANSFORM _floe_heap_symbols PREPEND "--wrap=")
list(JOIN _floe_heap_symbols "," _floe_wrap_list)
# No syscall library (neither nosys nor rdimon): printf-family and malloc cannot
# link, and -Wl,--wrap turns every heap entry point into an undefined __wrap_*.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles --specs=nano.specs -Wl,--gc-sections -Wl,${_floe_wrap_list}")

# libm after everything else on the link line (the reference kernels use expf,
# tanhf, ...; none of newlib's float math allocates).
set(CMAKE_C_STANDARD_LIBRARIES "-lm" CACHE STRING "Libraries linked into every firmware")

# The Generic platform resets CMAKE_EXECUTABLE_SUFFIX; the per-language ones stick.
set(CMAKE_EXECUTABLE_SUFFIX_C .elf)
set(CMAKE_EXECUTABLE_SUFFIX_CXX .elf)

# ctest runs each firmware as: <emulator...> <firmware.elf>.
find_program(FLOE_QEMU_SYSTEM_ARM qemu-system-arm)
if(FLOE_QEMU_SYSTEM_ARM)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${FLOE_QEMU_SYSTEM_ARM} -M ${FLOE_CORTEXM_QEMU_MACHINE} -nographic
      -semihosting-config enable=on,target=native -kernel)
endif()
