# SPDX-License-Identifier: Apache-2.0
# Copies floe.fbs with its namespace renamed to floe.schema_obj (see CMakeLists.txt).
file(READ ${IN} _schema)
string(REPLACE "namespace floe.schema;" "namespace floe.schema_obj;" _schema "${_schema}")
file(WRITE ${OUT} "${_schema}")
