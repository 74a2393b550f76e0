# SPDX-License-Identifier: Apache-2.0
# ctest script (cmake -P): every firmware was linked without libstdc++ and
# libsupc++ (the C driver, LINKER_LANGUAGE C), so the runtime needs no C++
# library at all and the 1.5 GB libstdc++-arm-none-eabi-newlib package is not
# needed. MAPS: |-separated linker maps. Fails naming the map and the library.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" MAPS "${MAPS}")
set(checked 0)
foreach(map IN LISTS MAPS)
  if(NOT EXISTS "${map}")
    message(FATAL_ERROR "${map}: missing (build the firmware first)")
  endif()
  file(STRINGS "${map}" loads REGEX "^LOAD ")
  if(NOT loads)
    message(FATAL_ERROR "${map}: no LOAD lines; not a GNU ld map?")
  endif()
  foreach(line IN LISTS loads)
    if(line MATCHES "lib(stdc\\+\\+|supc\\+\\+)[^/]*\\.a")
      message(FATAL_ERROR "${map}: links ${CMAKE_MATCH_0}")
    endif()
  endforeach()
  math(EXPR checked "${checked} + 1")
endforeach()
message(STATUS "${checked} firmware link(s) without libstdc++/libsupc++")
