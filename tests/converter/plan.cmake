# SPDX-License-Identifier: Apache-2.0
# Tests for converter/plan (the arena memory planner).
floe_add_test(memory_planner_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/memory_planner_test.cc
  LIBS floe_plan
  LABELS converter)
floe_add_test(arena_plan_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/arena_plan_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
floe_add_test(memory_regions_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/memory_regions_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
