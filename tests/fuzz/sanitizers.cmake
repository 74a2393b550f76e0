# SPDX-License-Identifier: Apache-2.0
# FLOE_SANITIZE / FLOE_FUZZ: sanitizer and libFuzzer instrumentation for every
# target, included from the root CMakeLists.txt before any target is defined.
# Relies on Debian's clang (libclang-rt-14-dev) for -fsanitize=fuzzer; ASan and
# UBSan also work with g++. Incoherent combinations stop configuration.
set(_floe_known_sanitizers address undefined leak)
string(REPLACE "," ";" _floe_sanitizers "${FLOE_SANITIZE}")
foreach(s IN LISTS _floe_sanitizers)
  if(NOT s IN_LIST _floe_known_sanitizers)
    message(FATAL_ERROR "FLOE_SANITIZE: '${s}' is not one of: ${_floe_known_sanitizers}")
  endif()
endforeach()

if(FLOE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "FLOE_FUZZ needs clang (libFuzzer ships with clang's compiler-rt), "
                        "not ${CMAKE_CXX_COMPILER_ID}: configure with CMAKE_CXX_COMPILER=clang++ "
                        "(cmake --preset fuzz)")
  endif()
  if(NOT FLOE_BUILD_CONVERTER)
    message(FATAL_ERROR "FLOE_FUZZ needs FLOE_BUILD_CONVERTER: the converter harnesses link it")
  endif()
  if(NOT FLOE_BUILD_TESTS)
    message(FATAL_ERROR "FLOE_FUZZ needs FLOE_BUILD_TESTS: the harnesses are built and registered by tests/fuzz")
  endif()
  if(NOT _floe_sanitizers)
    set(_floe_sanitizers address undefined)
  elseif(NOT "address" IN_LIST _floe_sanitizers)
    message(FATAL_ERROR "FLOE_FUZZ runs harnesses under ASan: FLOE_SANITIZE must include "
                        "'address' (or be empty), not '${FLOE_SANITIZE}'")
  endif()
endif()

if(_floe_sanitizers)
  if(CMAKE_CROSSCOMPILING)
    message(FATAL_ERROR "FLOE_SANITIZE is for host builds; the target toolchain has no sanitizer runtime")
  endif()
  list(JOIN _floe_sanitizers "," _floe_sanitize_list)
  # Every report is fatal: a sanitizer finding fails the test that triggered it.
  add_compile_options(-fsanitize=${_floe_sanitize_list} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${_floe_sanitize_list} -fno-sanitize-recover=all)
  add_compile_definitions(FLOE_SANITIZED=1)
  set(FLOE_SANITIZERS_ACTIVE ON)  # tests that interpose the allocator opt out
  # The host preset (g++, no sanitizers) is the warning gate. Sanitizer builds
  # use clang (GCC's UBSan makes function-pointer null checks non-constant,
  # which breaks the constexpr kernel tables), and clang-only warnings must
  # not hide the sanitizer results.
  list(APPEND FLOE_RUNTIME_FLAGS -Wno-error)
  list(APPEND FLOE_HOST_FLAGS -Wno-error)
  message(STATUS "floe: sanitizers ${_floe_sanitize_list}")
endif()

if(FLOE_FUZZ)
  # Coverage instrumentation everywhere; only the harness executables link the
  # libFuzzer driver (-fsanitize=fuzzer, set in tests/fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link)
  add_compile_definitions(FLOE_FUZZING=1)
endif()
