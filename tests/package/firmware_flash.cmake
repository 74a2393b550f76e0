# SPDX-License-Identifier: Apache-2.0
# cmake -DMODE=add_subdirectory|find_package -DSOURCE_DIR=<floe> -DSHARED_DIR=<../shared>
#       -DWORK_DIR=... -DGENERATOR=... -DCONVERT=<floe-convert> -DEMBED=<floe-embed>
#       -DPYTHON=<python3> -P firmware_flash.cmake
# floe's flash in a firmware of one's own: examples/tflite_firmware built as a
# TFLM user would build theirs (a generic arm-none-eabi toolchain, MinSizeRel:
# -Os, --gc-sections) for MLPerf Tiny KWS int8 and TFLM's person_detect, floe
# taken by add_subdirectory() or by find_package() from a Cortex-M4 install
# built MinSizeRel too. Each firmware must reproduce the host's output under
# qemu-system-arm, and floe's code (firmware - the same firmware without floe -
# the model) must stay within three quarters of TFLM + CMSIS-NN's int8-only
# registrations with its core (../shared/docs/arm-anchors.md): KWS 34,000 B,
# person_detect 27,000 B (tests/package/firmware_flash.py).
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

find_program(ARM_GCC arm-none-eabi-gcc)
find_program(QEMU qemu-system-arm)
if(NOT ARM_GCC OR NOT QEMU)
  message("SKIPPED: firmware_flash needs arm-none-eabi-gcc and qemu-system-arm (.ci/install-deps.sh --all)")
  return()
endif()
set(corpus ${SHARED_DIR}/corpus/int8)
set(kws ${corpus}/mlperf_tiny/kws)
set(person ${corpus}/tflite_micro/person_detection)
if(NOT EXISTS ${kws}/kws_ref_model.tflite OR NOT EXISTS ${person}/person_detect.tflite)
  message("SKIPPED: firmware_flash needs ${corpus} (the shared corpus beside the checkout)")
  return()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)

set(example ${SOURCE_DIR}/examples/tflite_firmware)
set(args -G ${GENERATOR} -DCMAKE_BUILD_TYPE=MinSizeRel
    --toolchain ${SOURCE_DIR}/examples/consumer/cortex-m4/toolchain.cmake
    -DFLOE_CONVERT_EXECUTABLE=${CONVERT} -DFLOE_EMBED_EXECUTABLE=${EMBED} -C ${WORK_DIR}/models.cmake
    -DMISMATCH=kws:person_detect)
# The model list is one argument holding a list: an initial cache file passes it.
file(WRITE ${WORK_DIR}/models.cmake "set(FIRMWARE_MODELS \"kws=${kws}/kws_ref_model.tflite=input_1=${kws}/kws_input0_int8.npy;person_detect=${person}/person_detect.tflite=input=${person}/person_tflm_int8.npy\" CACHE STRING \"\")\n")
if(MODE STREQUAL "add_subdirectory")
  list(APPEND args -DFLOE_SOURCE_DIR=${SOURCE_DIR})
elseif(MODE STREQUAL "find_package")
  # The README's Cortex-M install, built for size as the firmware is.
  step(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/floe -G ${GENERATOR} -DCMAKE_BUILD_TYPE=MinSizeRel
       --toolchain ${SOURCE_DIR}/ports/cortex-m/toolchain.cmake -DFLOE_CORTEXM_BOARD=mps2-an386
       -DFLOE_BUILD_EXAMPLES=OFF)
  step(${CMAKE_COMMAND} --build ${WORK_DIR}/floe)
  step(${CMAKE_COMMAND} --install ${WORK_DIR}/floe --prefix ${WORK_DIR}/prefix)
  list(APPEND args -Dfloe_DIR=${WORK_DIR}/prefix/lib/cmake/floe)
else()
  message(FATAL_ERROR "firmware_flash.cmake: unknown MODE '${MODE}'")
endif()
step(${CMAKE_COMMAND} -S ${example} -B ${WORK_DIR}/firmware ${args})
step(${CMAKE_COMMAND} --build ${WORK_DIR}/firmware)
step(${PYTHON} ${SOURCE_DIR}/tests/package/firmware_flash.py --build ${WORK_DIR}/firmware --qemu ${QEMU}
     --limit kws=34000 --limit person_detect=27000)
# KWS's model with person_detect's kernel selection, which has no int8
# FULLY_CONNECTED (MATMUL) kernel: the link must fail and name that row.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/firmware --target app_kws_with_person_detect_kernels
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(status EQUAL 0 OR NOT out MATCHES "undefined reference to `floe_kernel_row_CORTEX_M_MATMUL_INT8'")
  message(FATAL_ERROR "a firmware whose kernel selection lacks its model's MATMUL int8 row linked, or failed "
                      "without naming the row (exit ${status}):\n${out}")
endif()
message(STATUS "the mismatched firmware failed to link, naming floe_kernel_row_CORTEX_M_MATMUL_INT8")
