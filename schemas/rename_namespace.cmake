# SPDX-License-Identifier: Apache-2.0
# Copies floe.fbs with its namespace renamed to floe.${NAMESPACE} (see
# floe_schema_variant() in CMakeLists.txt).
file(READ ${IN} _schema)
string(REPLACE "namespace floe.schema;" "namespace floe.${NAMESPACE};" _schema "${_schema}")
file(WRITE ${OUT} "${_schema}")
