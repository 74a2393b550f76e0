# SPDX-License-Identifier: Apache-2.0
# TF.js's converter op list against `floe-convert --list-ops --all`: nothing
# missing, and converter/ops/tfjs_op_coverage.md is what they say now. Skipped (77), with
# the reason, without node or the peers' node_modules (.ci/install-deps.sh --all).
find_program(FLOE_OP_COVERAGE_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(FLOE_OP_COVERAGE_PYTHON3)
  add_test(NAME converter_tfjs_op_coverage
    COMMAND ${FLOE_OP_COVERAGE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/tfjs_op_coverage.py
            --floe-convert $<TARGET_FILE:floe-convert> --peers ${FLOE_SHARED_DIR}/tools/peers
            --table ${PROJECT_SOURCE_DIR}/converter/ops/tfjs_op_coverage.md)
  set_tests_properties(converter_tfjs_op_coverage PROPERTIES LABELS "converter;peers" SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()

# What a conversion reports: its stages as they start, and the summary's folding.
floe_add_test(conversion_report_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/conversion_report_test.cc ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file
  LABELS converter)
