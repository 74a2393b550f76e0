# SPDX-License-Identifier: Apache-2.0
# Tests of the GraphDef / MetaGraphDef / SavedModel reader (converter/frontend/graphdef),
# included from tests/converter/CMakeLists.txt. Corpus-based cases skip visibly
# without ../shared.
floe_add_test(graphdef_tensor_proto_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/graphdef_tensor_proto_test.cc
  LIBS floe_conv_tf
  LABELS converter)

floe_add_test(graphdef_attrs_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/graphdef_attrs_test.cc
  LIBS floe_graphdef
  LABELS converter)

floe_add_test(graph_loader_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/graph_loader_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/graph_loader_errors_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/graph_loader_corpus_sweep_test.cc
  LIBS floe_graphdef
  LABELS converter)

foreach(test graphdef_tensor_proto_test graphdef_attrs_test graph_loader_test)
  target_compile_options(${test} PRIVATE ${FLOE_HOST_FLAGS})
endforeach()
