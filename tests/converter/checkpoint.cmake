# SPDX-License-Identifier: Apache-2.0
# Tests of the checkpoint reader (V2 bundles; V1 tables below) (converter/frontend/checkpoint), included from
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

# V1 checkpoints (tensor-slices tables): synthetic files, the corpus' V1 files
# through floe-convert --info, and freezing compared with V2.
find_package(Snappy REQUIRED)
floe_add_test(checkpoint_v1_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/checkpoint_v1_test.cc
    ${PROJECT_SOURCE_DIR}/tests/support/model_runner.cc
  LIBS floe_converter floe_model_file Snappy::snappy
  LABELS converter)
target_compile_options(checkpoint_v1_test PRIVATE ${FLOE_HOST_FLAGS})
add_dependencies(checkpoint_v1_test floe-convert)
