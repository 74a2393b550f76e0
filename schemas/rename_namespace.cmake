# SPDX-License-Identifier: Apache-2.0
# Copies floe.fbs with its namespace renamed to floe.${NAMESPACE} (default
# schema_obj; see CMakeLists.txt).
if(NOT NAMESPACE)
  set(NAMESPACE schema_obj)
endif()
file(READ ${IN} _schema)
string(REPLACE "namespace floe.schema;" "namespace floe.${NAMESPACE};" _schema "${_schema}")
file(WRITE ${OUT} "${_schema}")
