# SPDX-License-Identifier: Apache-2.0
# cmake -DMODE=... -DSOURCE_DIR=<floe> -DBUILD_DIR=<floe host build> -DWORK_DIR=...
#       -DGENERATOR=... -DCONVERT=<floe-convert> -DEMBED=<floe-embed> -P run_consumer.cmake
# Builds and runs examples/consumer one way (tests/package/CMakeLists.txt) and
# fails unless it prints PASS: the device's logits equal the host's.
cmake_minimum_required(VERSION 3.25)
set(consumer ${SOURCE_DIR}/examples/consumer)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

include(${CMAKE_CURRENT_LIST_DIR}/steps.cmake)

# Runs the consumer program (directly, or the firmware under QEMU) and checks its verdict.
function(run_consumer)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "run: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output
                  TIMEOUT 120)
  message("${output}")
  if(NOT status EQUAL 0 OR NOT output MATCHES "consumer: PASS")
    message(FATAL_ERROR "the consumer failed (exit ${status})")
  endif()
endfunction()

set(cross_mode OFF)
if(MODE MATCHES "cortex_m4$")
  set(cross_mode ON)
  find_program(ARM_GCC arm-none-eabi-gcc)
  find_program(QEMU qemu-system-arm)
  if(NOT ARM_GCC OR NOT QEMU)
    message("SKIPPED: ${MODE} needs arm-none-eabi-gcc and qemu-system-arm "
            "(.ci/install-deps.sh --all installs them)")
    return()
  endif()
  set(qemu ${QEMU} -M mps2-an386 -nographic -semihosting-config enable=on,target=native -kernel)
  set(consumer_args --toolchain ${consumer}/cortex-m4/toolchain.cmake
      -DFLOE_CONVERT_EXECUTABLE=${CONVERT} -DFLOE_EMBED_EXECUTABLE=${EMBED})
endif()

if(MODE STREQUAL "package_consumer_host")
  step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  step(${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/consumer -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
       -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  step(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
  run_consumer(${WORK_DIR}/consumer/consumer)
  step(${WORK_DIR}/consumer/consumer_convert ${SOURCE_DIR}/examples/mnist_mlp/model)
elseif(MODE STREQUAL "package_consumer_cortex_m4")
  # The README's Cortex-M install: floe's toolchain file and board, libraries only.
  step(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/floe -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
       --toolchain ${SOURCE_DIR}/ports/cortex-m/toolchain.cmake -DFLOE_CORTEXM_BOARD=mps2-an386
       -DFLOE_BUILD_EXAMPLES=OFF)
  step(${CMAKE_COMMAND} --build ${WORK_DIR}/floe --parallel 2)
  step(${CMAKE_COMMAND} --install ${WORK_DIR}/floe --prefix ${WORK_DIR}/prefix)
  step(${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/consumer -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
       ${consumer_args} -Dfloe_DIR=${WORK_DIR}/prefix/lib/cmake/floe)
  step(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
  run_consumer(${qemu} ${WORK_DIR}/consumer/consumer.elf)
elseif(MODE STREQUAL "firmware_add_subdirectory_cortex_m4")
  step(${CMAKE_COMMAND} -S ${consumer} -B ${WORK_DIR}/consumer -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release
       ${consumer_args} -DFLOE_SOURCE_DIR=${SOURCE_DIR})
  step(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer --parallel 2)
  run_consumer(${qemu} ${WORK_DIR}/consumer/consumer.elf)
else()
  message(FATAL_ERROR "run_consumer.cmake: unknown MODE '${MODE}'")
endif()
