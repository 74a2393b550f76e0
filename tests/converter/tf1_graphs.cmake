# SPDX-License-Identifier: Apache-2.0
# Tests of what TF1 users bring: training-only structure, batch norm,
# partitioned variables, signatures / --info, front-end throughput. Included from
# tests/converter/CMakeLists.txt; corpus cases skip visibly without ../shared.
floe_add_test(training_structure_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/training_structure_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)

floe_add_test(cond_to_select_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/cond_to_select_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)

floe_add_test(backend_assignment_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/backend_assignment_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)

floe_add_test(batch_norm_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/batch_norm_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)

floe_add_test(scatter_ops_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/scatter_ops_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file floe_npy
  LABELS converter)

floe_add_test(freeze_partitioned_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/freeze_partitioned_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)

floe_add_test(signature_info_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/signature_info_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)

floe_add_test(frontend_throughput_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/frontend_throughput_test.cc
  LIBS floe_converter
  LABELS converter)

foreach(test training_structure_test cond_to_select_test backend_assignment_test batch_norm_test freeze_partitioned_test signature_info_test
             frontend_throughput_test scatter_ops_test)
  target_compile_options(${test} PRIVATE ${FLOE_HOST_FLAGS})
endforeach()
