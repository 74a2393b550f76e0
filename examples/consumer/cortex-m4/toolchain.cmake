# SPDX-License-Identifier: Apache-2.0
# A generic bare-metal toolchain file, as a firmware vendor would write one:
# arm-none-eabi-gcc for a Cortex-M4 with hardware floating point, newlib-nano,
# nothing from floe. Tests run the firmware on QEMU's mps2-an386 (Cortex-M4F).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)

set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m4 -mfloat-abi=hard -mthumb -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${CMAKE_C_FLAGS_INIT} -fno-exceptions -fno-rtti")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections")
set(CMAKE_EXECUTABLE_SUFFIX_C .elf)
set(CMAKE_EXECUTABLE_SUFFIX_CXX .elf)
