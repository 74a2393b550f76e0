# SPDX-License-Identifier: Apache-2.0
# ctest script (cmake -P): floe_add_model() re-runs the conversion exactly when
# its inputs change. A throw-away project in WORK_DIR embeds a copy of the
# conv_seed example; it builds four times and checks the converter's build
# line ("floe_add_model(seed): converting"):
#   first build: converts;  no change: does not;  graph touched: converts;
#   checkpoint index touched: converts.
# Inputs: FLOE_SOURCE_DIR, WORK_DIR, GENERATOR, optionally TOOLCHAIN (a cross
# build), and either CONVERT + EMBED (prebuilt host tools) or HOST_TOOLS_DIR
# (the nested host-tools build, already up to date, is what runs).
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/model")
set(seed "${FLOE_SOURCE_DIR}/examples/conv_seed/model")
file(COPY "${seed}/conv_seed.meta" "${seed}/checkpoint" "${seed}/model.ckpt.index"
     "${seed}/model.ckpt.data-00000-of-00001" DESTINATION "${WORK_DIR}/model")
file(WRITE "${WORK_DIR}/CMakeLists.txt" "cmake_minimum_required(VERSION 3.25)
project(reconvert LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
include(\"${FLOE_SOURCE_DIR}/converter/cmake/floe_add_model.cmake\")
add_library(app STATIC app.cc)
floe_add_model(app NAME seed GRAPH model/conv_seed.meta CHECKPOINT model OUTPUTS conv)
")
file(WRITE "${WORK_DIR}/app.cc" "#include \"floe_seed_model.h\"
static_assert(FLOE_SEED_ARENA_SIZE > 0, \"the header carries the arena size\");
const unsigned char* model_bytes() { return floe_seed_model; }
")

set(args -S "${WORK_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}")
if(TOOLCHAIN)
  list(APPEND args "-DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN}")
endif()
if(CONVERT)
  list(APPEND args "-DFLOE_CONVERT_EXECUTABLE=${CONVERT}" "-DFLOE_EMBED_EXECUTABLE=${EMBED}")
else()
  list(APPEND args "-DFLOE_HOST_TOOLS_BINARY_DIR=${HOST_TOOLS_DIR}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure failed:\n${out}${err}")
endif()

function(build_expect step expect_conversion)
  foreach(attempt 1 2 3)
    execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${step}: build failed:\n${out}${err}")
    endif()
    # A converter rebuilt meanwhile (its sources were edited) rightly converts
    # again: that build proves nothing about the model's inputs, so repeat it.
    if(expect_conversion OR NOT out MATCHES "Linking CXX executable bin/floe-(convert|embed)")
      break()
    endif()
  endforeach()
  string(FIND "${out}" "floe_add_model(seed): converting" at)
  if(expect_conversion AND at EQUAL -1)
    message(FATAL_ERROR "${step}: expected a conversion, the build did not run one:\n${out}")
  elseif(NOT expect_conversion AND NOT at EQUAL -1)
    message(FATAL_ERROR "${step}: nothing changed, yet the build converted again:\n${out}")
  endif()
  message(STATUS "${step}: ok (${expect_conversion})")
endfunction()

build_expect("first build" TRUE)
build_expect("no change" FALSE)
# Later than any output: a plain touch could land in the same second as the build.
execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 1.1)
file(TOUCH "${WORK_DIR}/model/conv_seed.meta")
build_expect("graph touched" TRUE)
build_expect("no change again" FALSE)
execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 1.1)
file(TOUCH "${WORK_DIR}/model/model.ckpt.index")
build_expect("checkpoint touched" TRUE)
file(REMOVE_RECURSE "${WORK_DIR}")
