# SPDX-License-Identifier: Apache-2.0
# Tests for converter/optimize/ (the lowered-model optimization passes).
floe_add_test(optimize_passes_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/optimize_passes_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
floe_add_test(control_flow_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/control_flow_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
floe_add_test(optimize_pipeline_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/optimize_pipeline_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
add_dependencies(optimize_pipeline_test floe-convert)
floe_add_test(layout_ops_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/layout_ops_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
floe_add_test(inference_ops_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/inference_ops_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
floe_add_test(reduction_ops_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/reduction_ops_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
floe_add_test(audio_ops_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/audio_ops_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file floe_npy
  LABELS converter)
