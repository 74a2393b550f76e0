# SPDX-License-Identifier: Apache-2.0
# floe_add_model(): convert a TF1 model while the firmware builds and compile
# it into a target. The converter is a host program: in a host build the
# in-tree floe-convert/floe-embed targets are used; in a cross build (Cortex-M,
# aarch64) they are built for the host by a nested ExternalProject of this same
# source tree (no downloads), configured with the host compilers; a project
# outside this tree may instead point FLOE_CONVERT_EXECUTABLE and
# FLOE_EMBED_EXECUTABLE at prebuilt tools (find_package(floe) sets them to the
# installed ones).
#
#   floe_add_model(<target> NAME <c_identifier> GRAPH <file|SavedModel dir>
#                  [CHECKPOINT <prefix|dir>] [OUTPUTS <tensor>...] [INPUTS <tensor>...]
#                  [INPUT_SHAPES <name=d0,d1,...>...] [TARGET <conversion target>]
#                  [MEMORY_REGIONS <region=size>...] [CONVERT_ARGS <extra floe-convert args>...])
#     Adds floe_<name>_model.{h,cc} to <target>: the model as a 16-byte-aligned
#     const array (section .rodata.floe_model.<name> on Cortex-M: flash), and
#     FLOE_<NAME>_ARENA_SIZE (exact bytes), _MODEL_SIZE, input/output indices.
#     MEMORY_REGIONS (floe-convert --memory-regions, fastest first) adds
#     FLOE_<NAME>_REGION_COUNT and FLOE_<NAME>_ARENA_SIZE_<REGION> per region.
#     TARGET defaults to FLOE_MODEL_TARGET (the Cortex-M toolchain sets the core,
#     e.g. cortex-m4), else floe-convert's default (host).
#     OUTPUTS may be left out where the model names its outputs (a .tflite, a
#     SavedModel's signature); floe-convert says when it needs them.
#     Re-converts when the graph, the checkpoint files or the converter change.
#     Kernel selection (FLOE_OPS=auto, the default): <target> links the kernel
#     registry of the rows its models run with (floe-embed ops, written once
#     every floe_add_model() call of the build has been seen), so it links
#     those kernels and no others (runtime/core/registry.h); FLOE_OPS=all
#     links every kernel (a program that also runs models it loads itself).
#
#   floe_add_model_reference(<target> NAME <name> INPUTS <input=file.npy>...)
#     Runs <target>'s model <name> on the host (floe-embed reference) and adds
#     floe_<name>_reference.{h,cc}: the inputs and the outputs the host computed,
#     floe_<name>_reference_{input,output}_<i>[], for a device to check itself.
include_guard(GLOBAL)

set(_FLOE_SOURCE_ROOT "${CMAKE_CURRENT_LIST_DIR}/../.." CACHE INTERNAL "floe source tree")
set(FLOE_OPS "auto" CACHE STRING
    "Kernels a target that embeds models links: auto (the rows of the models floe_add_model() gives it) or all")
set_property(CACHE FLOE_OPS PROPERTY STRINGS auto all)
cmake_path(NORMAL_PATH _FLOE_SOURCE_ROOT)

# Sets FLOE_CONVERT_COMMAND / FLOE_EMBED_COMMAND / FLOE_HOST_TOOL_DEPENDS in the caller.
function(_floe_host_tools)
  get_property(ready GLOBAL PROPERTY _FLOE_HOST_TOOLS_READY)
  if(NOT ready)
    if(FLOE_CONVERT_EXECUTABLE AND FLOE_EMBED_EXECUTABLE)
      # Prebuilt host tools (e.g. a floe host build's bin/), used as they are.
      set_property(GLOBAL PROPERTY _FLOE_CONVERT "${FLOE_CONVERT_EXECUTABLE}")
      set_property(GLOBAL PROPERTY _FLOE_EMBED "${FLOE_EMBED_EXECUTABLE}")
      set_property(GLOBAL PROPERTY _FLOE_TOOL_DEPENDS "${FLOE_CONVERT_EXECUTABLE}" "${FLOE_EMBED_EXECUTABLE}")
    elseif(TARGET floe-convert AND TARGET floe-embed AND NOT CMAKE_CROSSCOMPILING)
      set_property(GLOBAL PROPERTY _FLOE_CONVERT "$<TARGET_FILE:floe-convert>")
      set_property(GLOBAL PROPERTY _FLOE_EMBED "$<TARGET_FILE:floe-embed>")
      set_property(GLOBAL PROPERTY _FLOE_TOOL_DEPENDS floe-convert floe-embed)
    elseif(NOT EXISTS "${_FLOE_SOURCE_ROOT}/converter/CMakeLists.txt")
      # An installed package (find_package(floe)) has no sources to build them from.
      message(FATAL_ERROR "floe_add_model: floe-convert / floe-embed not found: put a host floe install's "
                          "bin/ on PATH, or set FLOE_CONVERT_EXECUTABLE and FLOE_EMBED_EXECUTABLE")
    else()
      set(FLOE_HOST_TOOLS_BINARY_DIR "${CMAKE_BINARY_DIR}/host-tools" CACHE PATH
          "Build tree of the host floe-convert/floe-embed for floe_add_model() (may be shared by several cross builds, used one at a time)")
      find_program(FLOE_HOST_C_COMPILER NAMES cc gcc clang NO_CMAKE_FIND_ROOT_PATH)
      find_program(FLOE_HOST_CXX_COMPILER NAMES c++ g++ clang++ NO_CMAKE_FIND_ROOT_PATH)
      if(NOT FLOE_HOST_C_COMPILER OR NOT FLOE_HOST_CXX_COMPILER)
        message(FATAL_ERROR "floe_add_model: no host C/C++ compiler found to build floe-convert "
                            "(set FLOE_HOST_C_COMPILER and FLOE_HOST_CXX_COMPILER)")
      endif()
      set(bin "${FLOE_HOST_TOOLS_BINARY_DIR}/bin")
      include(ExternalProject)
      # The two tools only: no tests, examples, install rules or Python module.
      # A Makefile build joins the caller's jobserver ($(MAKE)); any other
      # build tool takes the caller's CMAKE_BUILD_PARALLEL_LEVEL (else its own default).
      if(CMAKE_GENERATOR MATCHES "Make")
        set(build_command "$(MAKE)" -C <BINARY_DIR> floe-convert floe-embed)
      else()
        set(build_command ${CMAKE_COMMAND} --build <BINARY_DIR> --target floe-convert floe-embed)
      endif()
      ExternalProject_Add(floe_host_tools
        SOURCE_DIR "${_FLOE_SOURCE_ROOT}"
        BINARY_DIR "${FLOE_HOST_TOOLS_BINARY_DIR}"
        CMAKE_ARGS
          -DCMAKE_BUILD_TYPE=Release
          -DCMAKE_C_COMPILER=${FLOE_HOST_C_COMPILER}
          -DCMAKE_CXX_COMPILER=${FLOE_HOST_CXX_COMPILER}
          -DFLOE_BUILD_CONVERTER=ON
          -DFLOE_BUILD_TESTS=OFF
          -DFLOE_BUILD_EXAMPLES=OFF
          -DFLOE_BUILD_PYTHON=OFF
          -DFLOE_INSTALL=OFF
        BUILD_COMMAND ${build_command}
        INSTALL_COMMAND ""
        # Always ask the nested build (a no-op when nothing changed), so edits to
        # the converter reach the firmware's models.
        BUILD_ALWAYS TRUE
        BUILD_BYPRODUCTS "${bin}/floe-convert" "${bin}/floe-embed")
      set_property(GLOBAL PROPERTY _FLOE_CONVERT "${bin}/floe-convert")
      set_property(GLOBAL PROPERTY _FLOE_EMBED "${bin}/floe-embed")
      set_property(GLOBAL PROPERTY _FLOE_TOOL_DEPENDS floe_host_tools "${bin}/floe-convert" "${bin}/floe-embed")
    endif()
    set_property(GLOBAL PROPERTY _FLOE_HOST_TOOLS_READY TRUE)
  endif()
  get_property(convert GLOBAL PROPERTY _FLOE_CONVERT)
  get_property(embed GLOBAL PROPERTY _FLOE_EMBED)
  get_property(depends GLOBAL PROPERTY _FLOE_TOOL_DEPENDS)
  set(FLOE_CONVERT_COMMAND "${convert}" PARENT_SCOPE)
  set(FLOE_EMBED_COMMAND "${embed}" PARENT_SCOPE)
  set(FLOE_HOST_TOOL_DEPENDS "${depends}" PARENT_SCOPE)
endfunction()

# The files a graph / checkpoint argument stands for, so the build re-converts
# when any of them changes. (Globbed at configure time: a checkpoint that gains
# shards later needs a re-configure, which any change of arguments causes anyway.)
function(_floe_model_inputs out graph checkpoint)
  set(files)
  if(IS_DIRECTORY "${graph}")
    file(GLOB_RECURSE graph_files LIST_DIRECTORIES false "${graph}/*")
    list(APPEND files ${graph_files})
  elseif(EXISTS "${graph}")
    list(APPEND files "${graph}")
  else()
    message(FATAL_ERROR "floe_add_model: GRAPH '${graph}' does not exist")
  endif()
  if(checkpoint)
    if(IS_DIRECTORY "${checkpoint}")
      file(GLOB ckpt_files LIST_DIRECTORIES false "${checkpoint}/checkpoint" "${checkpoint}/*.index"
           "${checkpoint}/*.data-*")
    else()
      string(REGEX REPLACE "\\.(index|data-[0-9]+-of-[0-9]+)$" "" prefix "${checkpoint}")
      file(GLOB ckpt_files LIST_DIRECTORIES false "${prefix}.index" "${prefix}.data-*")
    endif()
    if(NOT ckpt_files)
      message(FATAL_ERROR "floe_add_model: CHECKPOINT '${checkpoint}' names no checkpoint files")
    endif()
    list(APPEND files ${ckpt_files})
  endif()
  set(${out} "${files}" PARENT_SCOPE)
endfunction()

function(floe_add_model target)
  cmake_parse_arguments(M "" "NAME;GRAPH;CHECKPOINT;TARGET"
                        "OUTPUTS;INPUTS;INPUT_SHAPES;MEMORY_REGIONS;CONVERT_ARGS" ${ARGN})
  if(M_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "floe_add_model: unexpected arguments: ${M_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "floe_add_model: '${target}' is not a target")
  endif()
  if(NOT M_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "floe_add_model: NAME '${M_NAME}' must be a C identifier (it names symbols and macros)")
  endif()
  if(NOT M_GRAPH)
    message(FATAL_ERROR "floe_add_model(${M_NAME}): GRAPH is required")
  endif()
  get_property(existing GLOBAL PROPERTY FLOE_MODEL_${target}_${M_NAME}_FILE SET)
  if(existing)
    message(FATAL_ERROR "floe_add_model: ${target} already has a model named '${M_NAME}'")
  endif()
  cmake_path(ABSOLUTE_PATH M_GRAPH BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
  if(M_CHECKPOINT)
    cmake_path(ABSOLUTE_PATH M_CHECKPOINT BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
  endif()
  if(NOT M_TARGET AND FLOE_MODEL_TARGET)
    set(M_TARGET "${FLOE_MODEL_TARGET}")
  endif()
  _floe_host_tools()
  _floe_model_inputs(model_inputs "${M_GRAPH}" "${M_CHECKPOINT}")

  # Per target: two firmware may embed the same NAME converted differently
  # (e.g. for another TARGET); the symbols only meet within one link.
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/floe_models/${target}/${M_NAME}")
  set(model "${dir}/${M_NAME}.floe")
  set(args --graph "${M_GRAPH}")
  if(M_CHECKPOINT)
    list(APPEND args --checkpoint "${M_CHECKPOINT}")
  endif()
  if(M_OUTPUTS)
    list(JOIN M_OUTPUTS "," outputs)
    list(APPEND args --outputs "${outputs}")
  endif()
  if(M_INPUTS)
    list(JOIN M_INPUTS "," inputs)
    list(APPEND args --inputs "${inputs}")
  endif()
  foreach(shape IN LISTS M_INPUT_SHAPES)
    list(APPEND args --input-shape "${shape}")
  endforeach()
  if(M_TARGET)
    list(APPEND args --target "${M_TARGET}")
  endif()
  if(M_MEMORY_REGIONS)
    # NAME=SIZE entries, fastest first; the header then defines
    # FLOE_<NAME>_ARENA_SIZE_<REGION> per region (floe-embed).
    list(JOIN M_MEMORY_REGIONS "," regions)
    list(APPEND args --memory-regions "${regions}")
  endif()
  list(APPEND args ${M_CONVERT_ARGS})
  add_custom_command(OUTPUT "${model}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
    COMMAND ${FLOE_CONVERT_COMMAND} -q ${args} -o "${model}"
    DEPENDS ${model_inputs} ${FLOE_HOST_TOOL_DEPENDS}
    COMMENT "floe_add_model(${M_NAME}): converting ${M_GRAPH}"
    VERBATIM)

  set(header "${dir}/floe_${M_NAME}_model.h")
  set(source "${dir}/floe_${M_NAME}_model.cc")
  add_custom_command(OUTPUT "${header}" "${source}"
    COMMAND ${FLOE_EMBED_COMMAND} model --model "${model}" --name ${M_NAME}
            --header "${header}" --source "${source}"
    DEPENDS "${model}" ${FLOE_HOST_TOOL_DEPENDS}
    COMMENT "floe_add_model(${M_NAME}): embedding ${M_NAME}.floe"
    VERBATIM)
  # The generated sources build in an object library of their own: it depends
  # on nothing but the host tools, so the conversion never waits for (or, with
  # op selection, cycles through) the runtime the firmware links.
  set(lib ${target}_floe_${M_NAME})
  add_library(${lib} OBJECT "${source}" "${header}")
  target_include_directories(${lib} PUBLIC "${dir}")
  target_link_libraries(${target} PRIVATE ${lib})
  set_property(GLOBAL PROPERTY FLOE_MODEL_${target}_${M_NAME}_LIB ${lib})
  set_property(GLOBAL PROPERTY FLOE_MODEL_${target}_${M_NAME}_FILE "${model}")
  set_property(GLOBAL PROPERTY FLOE_MODEL_${target}_${M_NAME}_DIR "${dir}")
  set_property(GLOBAL APPEND PROPERTY FLOE_MODEL_HEADERS "${header}")
  set_property(GLOBAL APPEND PROPERTY FLOE_MODEL_FILES "${model}")
  set_property(GLOBAL APPEND PROPERTY FLOE_MODEL_HEADERS_OF_${target} "${header}")
  set_property(GLOBAL APPEND PROPERTY FLOE_MODEL_FILES_OF_${target} "${model}")
  set_property(GLOBAL APPEND PROPERTY FLOE_MODEL_LIBS_OF_${target} ${lib})
  get_property(selected GLOBAL PROPERTY _FLOE_SELECTION_TARGETS)
  if(NOT target IN_LIST selected)
    set_property(GLOBAL APPEND PROPERTY _FLOE_SELECTION_TARGETS ${target})
  endif()
  # Once per build: at the end of the top-level directory every model is known.
  get_property(scheduled GLOBAL PROPERTY _FLOE_SELECTION_SCHEDULED)
  if(NOT scheduled)
    set_property(GLOBAL PROPERTY _FLOE_SELECTION_SCHEDULED TRUE)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _floe_kernel_selections)
  endif()
endfunction()

# Each target that embeds models gets the kernel registry of their rows
# (floe-embed ops), compiled as an object library linked into it: its
# kKernelRegistry then keeps the linker from floe_runtime's registry of every
# kernel, and from every kernel no row of its models names.
function(_floe_kernel_selections)
  if(FLOE_OPS STREQUAL "all")
    return()
  elseif(NOT FLOE_OPS STREQUAL "auto")
    message(FATAL_ERROR "FLOE_OPS is '${FLOE_OPS}': expected auto or all")
  elseif(NOT TARGET floe::runtime)
    return()  # the models are embedded, but no floe runtime is part of this build
  endif()
  _floe_host_tools()
  get_property(targets GLOBAL PROPERTY _FLOE_SELECTION_TARGETS)
  foreach(target IN LISTS targets)
    get_property(models GLOBAL PROPERTY FLOE_MODEL_FILES_OF_${target})
    set(dir "${CMAKE_BINARY_DIR}/floe_kernels/${target}")
    set(source "${dir}/floe_kernels.cc")
    set(args)
    foreach(model IN LISTS models)
      list(APPEND args --model "${model}")
    endforeach()
    add_custom_command(OUTPUT "${source}"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
      COMMAND ${FLOE_EMBED_COMMAND} ops ${args} --source "${source}"
      DEPENDS ${models} ${FLOE_HOST_TOOL_DEPENDS}
      COMMENT "floe kernel selection of ${target}: the kernels of its models"
      VERBATIM)
    add_library(${target}_floe_kernels OBJECT "${source}")
    target_link_libraries(${target}_floe_kernels PRIVATE floe::runtime)
    target_link_libraries(${target} PRIVATE ${target}_floe_kernels)
    # The models check their rows against it at link time.
    get_property(libs GLOBAL PROPERTY FLOE_MODEL_LIBS_OF_${target})
    foreach(lib IN LISTS libs)
      target_compile_definitions(${lib} PRIVATE FLOE_KERNEL_SELECTION)
    endforeach()
  endforeach()
endfunction()

function(floe_add_model_reference target)
  cmake_parse_arguments(R "" "NAME" "INPUTS" ${ARGN})
  get_property(model GLOBAL PROPERTY FLOE_MODEL_${target}_${R_NAME}_FILE)
  get_property(dir GLOBAL PROPERTY FLOE_MODEL_${target}_${R_NAME}_DIR)
  get_property(lib GLOBAL PROPERTY FLOE_MODEL_${target}_${R_NAME}_LIB)
  if(NOT model)
    message(FATAL_ERROR "floe_add_model_reference: no floe_add_model(${target} NAME ${R_NAME}) before it")
  endif()
  _floe_host_tools()
  set(args)
  set(files)
  foreach(spec IN LISTS R_INPUTS)
    if(NOT spec MATCHES "^([^=]+)=(.+)$")
      message(FATAL_ERROR "floe_add_model_reference(${R_NAME}): INPUTS '${spec}' is not NAME=file.npy")
    endif()
    set(file "${CMAKE_MATCH_2}")
    cmake_path(ABSOLUTE_PATH file BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}" NORMALIZE)
    list(APPEND args --input "${CMAKE_MATCH_1}=${file}")
    list(APPEND files "${file}")
  endforeach()
  set(header "${dir}/floe_${R_NAME}_reference.h")
  set(source "${dir}/floe_${R_NAME}_reference.cc")
  add_custom_command(OUTPUT "${header}" "${source}"
    COMMAND ${FLOE_EMBED_COMMAND} reference --model "${model}" --name ${R_NAME}
            --header "${header}" --source "${source}" ${args}
    DEPENDS "${model}" ${files} ${FLOE_HOST_TOOL_DEPENDS}
    COMMENT "floe_add_model_reference(${R_NAME}): running ${R_NAME}.floe on the host"
    VERBATIM)
  target_sources(${lib} PRIVATE "${source}" "${header}")
endfunction()
