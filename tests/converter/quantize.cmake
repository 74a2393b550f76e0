# SPDX-License-Identifier: Apache-2.0
# Tests for converter/quantize (int8 arithmetic derived on the host).
floe_add_test(requantization_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/requantization_test.cc
  LIBS floe_conv_quantize
  LABELS converter)
floe_add_test(int8_ops_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/int8_ops_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
find_package(ZLIB REQUIRED)  # post_training_test deflates members itself
floe_add_test(post_training_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/post_training_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file ZLIB::ZLIB
  LABELS converter)
floe_add_test(quantization_aware_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/quantization_aware_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
if(TARGET quantization_aware_test AND TARGET floe-convert)
  add_dependencies(quantization_aware_test floe-convert)  # the CLI refusal case runs the tool
endif()
