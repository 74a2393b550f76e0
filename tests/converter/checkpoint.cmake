# SPDX-License-Identifier: Apache-2.0
# Tests of the V2 checkpoint reader (converter/frontend/checkpoint), included from
# tests/converter/CMakeLists.txt. Corpus-based cases skip visibly without ../shared.
floe_add_test(checkpoint_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/checkpoint_format_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/checkpoint_corpus_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/checkpoint_corruption_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/checkpoint_synthetic_test.cc
  LIBS floe_checkpoint
  LABELS converter)
target_compile_options(checkpoint_test PRIVATE ${FLOE_HOST_FLAGS})
