# SPDX-License-Identifier: Apache-2.0
# Tests for converter/plan (the arena memory planner).
floe_add_test(memory_planner_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/memory_planner_test.cc
  LIBS floe_plan
  LABELS converter)
