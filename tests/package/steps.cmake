# SPDX-License-Identifier: Apache-2.0
# step(<command> <args>...): runs a command of a package test script (cmake -P),
# shown first, failing the test with its exit status.
function(step)
  string(REPLACE ";" " " shown "${ARGN}")
  message(STATUS "run: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "failed (${status}): ${shown}")
  endif()
endfunction()
