# SPDX-License-Identifier: Apache-2.0
# Robustness: input dtypes per op definition, validate-before-write, user
# errors, and the resource limits (converter/README.md "Limits"). Included from
# tests/converter/CMakeLists.txt. The limit tests run floe-convert on inputs
# they generate just over each limit and bound its time and peak RSS.
floe_add_test(robustness_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/robustness_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
floe_add_test(resource_limits_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/resource_limits_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
add_dependencies(robustness_test floe-convert)
add_dependencies(resource_limits_test floe-convert)
