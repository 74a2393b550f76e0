# SPDX-License-Identifier: Apache-2.0
# Instructions per inference under QEMU (cmake -P; the floe_bench target runs
# it). Reads:
#   QEMU, MACHINE   qemu-system-arm and the board
#   CORE            the board's core (cortex-m4, ...), for the "bench" lines
#   PLUGIN          libinsncount.so (../shared/tools/qemu-insncount, built by the port)
#   RUNS            |-separated "<elf>=<model header>" pairs
#   REPS            N: each firmware runs with "reps=N" and "reps=2N" extra inferences
#   WORK_DIR        where the counter files go
#   KERNEL_BENCH    optional: the kernel bench firmware (bench/kernel_bench.cc),
#                   run per kernel, reference and Cortex-M, on fixed layer shapes
#   PROFILE         optional: |-separated firmware examples whose per-op table
#                   is printed (instructions per op, share), floe-bench's layout
#   PROFILE_ONLY    ON: only the PROFILE tables (the per-op profile test)
# Per inference = (count(2N) - count(N)) / N: boot, Load, Init, the checked
# first inference and the printing cancel out. QEMU's count is deterministic
# (same binary, same board: same number), unlike its wall time.
cmake_minimum_required(VERSION 3.25)
foreach(var RUNS PROFILE)
  string(REPLACE "|" ";" ${var} "${${var}}")
endforeach()
math(EXPR REPS2 "2 * ${REPS}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Runs `elf` with the command line `args`; sets <out> to the instruction count
# and <out>_LOG to what the firmware printed.
function(count_insns out elf args)
  get_filename_component(name "${elf}" NAME_WE)
  string(MAKE_C_IDENTIFIER "${name}_${args}" tag)
  set(file "${WORK_DIR}/${tag}.txt")
  file(REMOVE "${file}")
  execute_process(
    COMMAND ${QEMU} -M ${MACHINE} -nographic -semihosting-config enable=on,target=native
            -plugin "${PLUGIN},out=${file}" -kernel "${elf}" -append "${args}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} ${args}: exit ${rc}\n${stdout}${stderr}")
  endif()
  file(READ "${file}" text)
  if(NOT text MATCHES "insns: ([0-9]+)")
    message(FATAL_ERROR "${file}: no instruction count")
  endif()
  set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  set(${out}_LOG "${stdout}${stderr}" PARENT_SCOPE)
endfunction()

# "<per> instructions per inference, x.yz per MAC"
function(per_mac out per macs)
  set(text "")
  if(macs GREATER 0)
    math(EXPR hundredths "(${per} * 100 + ${macs} / 2) / ${macs}")
    math(EXPR whole "${hundredths} / 100")
    math(EXPR frac "${hundredths} % 100")
    if(frac LESS 10)
      set(frac "0${frac}")
    endif()
    set(text ", ${whole}.${frac} per MAC (${macs} MACs)")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

if(NOT PROFILE_ONLY)
message("floe bench: ${MACHINE}, guest instructions per inference ((C(reps=${REPS2}) - C(reps=${REPS})) / ${REPS})")
foreach(run IN LISTS RUNS)
  if(NOT run MATCHES "^(.+)=(.+)$")
    message(FATAL_ERROR "bad run '${run}'")
  endif()
  set(elf "${CMAKE_MATCH_1}")
  set(header "${CMAKE_MATCH_2}")
  get_filename_component(name "${elf}" NAME_WE)
  file(STRINGS "${header}" macs_line REGEX "_MACS [0-9]+u")
  string(REGEX MATCH "[0-9]+u$" macs "${macs_line}")
  string(REPLACE "u" "" macs "${macs}")
  file(STRINGS "${header}" ops_line REGEX "_OPERATOR_COUNT [0-9]+u")
  string(REGEX MATCH "[0-9]+u$" ops "${ops_line}")
  string(REPLACE "u" "" ops "${ops}")
  count_insns(c1 "${elf}" "reps=${REPS}")
  count_insns(c2 "${elf}" "reps=${REPS2}")
  math(EXPR per "(${c2} - ${c1}) / ${REPS}")
  per_mac(text ${per} "${macs}")
  if(ops GREATER 0)
    math(EXPR per_op "(${per} + ${ops} / 2) / ${ops}")
    set(text "${text}, ${per_op} per op (${ops} ops)")
  endif()
  message("  ${name}: ${per} instructions per inference${text}")
  # One machine-readable line per model: the arena is the 32-bit one (the
  # header's first _ARENA_SIZE, under UINTPTR_MAX == 0xFFFFFFFF).
  file(STRINGS "${header}" arena_lines REGEX "_ARENA_SIZE [0-9]+u")
  list(GET arena_lines 0 arena_line)
  string(REGEX MATCH "[0-9]+u$" arena "${arena_line}")
  string(REPLACE "u" "" arena "${arena}")
  string(REGEX REPLACE "^floe_example_" "" model "${name}")
  list(APPEND bench_lines "bench ${model} ${CORE} insns_per_inference=${per} arena=${arena}")
endforeach()
foreach(line IN LISTS bench_lines)
  message("${line}")
endforeach()

if(KERNEL_BENCH)
  message("kernels alone, one layer each (matmul [1,256]x[256,64]; conv2d 16x16x16 -> 16, 3x3;"
          " depthwise 16x16x32, 3x3), instructions per call:")
  foreach(kernel matmul conv2d depthwise)
    foreach(variant reference cortexm)
      count_insns(c1 "${KERNEL_BENCH}" "op=${kernel}_${variant} reps=2")
      count_insns(c2 "${KERNEL_BENCH}" "op=${kernel}_${variant} reps=4")
      string(REGEX MATCH "macs: ([0-9]+)" m "${c1_LOG}")
      math(EXPR per "(${c2} - ${c1}) / 2")
      per_mac(text ${per} "${CMAKE_MATCH_1}")
      message("  ${kernel} ${variant}: ${per}${text}")
    endforeach()
  endforeach()
  # int8: each layer shape of KWS and person_detect on the int8 Cortex-M kernels.
  count_insns(unused "${KERNEL_BENCH}" "op=s8_list")
  string(REGEX MATCHALL "layer [A-Za-z0-9_]+" layers "${unused_LOG}")
  message("int8 layers on the Cortex-M kernels, instructions per call:")
  foreach(layer IN LISTS layers)
    string(REPLACE "layer " "" layer "${layer}")
    count_insns(c1 "${KERNEL_BENCH}" "op=s8_${layer} reps=2")
    count_insns(c2 "${KERNEL_BENCH}" "op=s8_${layer} reps=4")
    string(REGEX MATCH "macs: ([0-9]+)" m "${c1_LOG}")
    math(EXPR per "(${c2} - ${c1}) / 2")
    per_mac(text ${per} "${CMAKE_MATCH_1}")
    message("  s8 ${layer}: ${per}${text}")
  endforeach()
endif()
endif()

# Per-op instructions. QEMU's counter is read at exit only (the plugin writes
# it when the guest ends), so the firmware ends itself at op boundaries:
# "stop_after_op=K" runs the usual boot, self-test and checked inference, then
# one more inference that exits as op K finishes; op K's instructions are
# C(K) - C(K - 1), with C(-1) exiting just before that inference's first op.
# Deterministic, like the per-inference figure. The observer that ends the run
# is called after every op, so the sum over ops exceeds the plain inference by
# that call per op; both are printed. "profile=1" lists the ops (and prints
# cycles itself on a core with DWT CYCCNT; QEMU has none).
function(pad out text width)  # text padded with spaces to `width`, on the right (or left: width < 0)
  string(LENGTH "${text}" n)
  set(w ${width})
  if(w LESS 0)
    math(EXPR w "-${w}")
  endif()
  set(spaces "")
  if(n LESS w)
    math(EXPR missing "${w} - ${n}")
    string(REPEAT " " ${missing} spaces)
  endif()
  if(width LESS 0)
    set(${out} "${spaces}${text}" PARENT_SCOPE)
  else()
    set(${out} "${text}${spaces}" PARENT_SCOPE)
  endif()
endfunction()

foreach(elf IN LISTS PROFILE)
  get_filename_component(name "${elf}" NAME_WE)
  string(REGEX REPLACE "^floe_example_" "" model "${name}")
  count_insns(listing "${elf}" "profile=1")
  string(REPLACE ";" "," log "${listing_LOG}")
  string(REPLACE "\n" ";" log_lines "${log}")
  set(ops 0)
  foreach(l IN LISTS log_lines)
    if(l MATCHES "^  +([0-9]+)  ([A-Z0-9_]+) +([a-z-]+) *(.*)$")
      if(NOT CMAKE_MATCH_1 EQUAL ops)
        message(FATAL_ERROR "${name}: op list out of order at '${l}'")
      endif()
      set(op_${ops} "${CMAKE_MATCH_2}")
      set(backend_${ops} "${CMAKE_MATCH_3}")
      set(node_${ops} "${CMAKE_MATCH_4}")
      math(EXPR ops "${ops} + 1")
    endif()
  endforeach()
  if(ops EQUAL 0)
    message(FATAL_ERROR "${name} profile=1 listed no ops:\n${listing_LOG}")
  endif()
  count_insns(previous "${elf}" "stop_after_op=-1")
  set(total 0)
  math(EXPR last "${ops} - 1")
  foreach(k RANGE ${last})
    count_insns(current "${elf}" "stop_after_op=${k}")
    math(EXPR insns_${k} "${current} - ${previous}")
    math(EXPR total "${total} + ${insns_${k}}")
    set(previous ${current})
  endforeach()
  count_insns(c1 "${elf}" "reps=${REPS}")
  count_insns(c2 "${elf}" "reps=${REPS2}")
  math(EXPR per "(${c2} - ${c1}) / ${REPS}")
  message("per-op profile: ${model} on ${CORE} (guest instructions under QEMU, C(stop after op k) - C(stop after op k-1); share of the sum over ops):")
  message("    #  op                 backend          insns   share  node")
  foreach(k RANGE ${last})
    math(EXPR permille "(${insns_${k}} * 1000 + ${total} / 2) / ${total}")
    math(EXPR whole "${permille} / 10")
    math(EXPR tenth "${permille} % 10")
    pad(index "${k}" -3)
    pad(op "${op_${k}}" 18)
    pad(backend "${backend_${k}}" 10)
    pad(insns "${insns_${k}}" -12)
    pad(share "${whole}.${tenth}%" -7)
    message("  ${index}  ${op} ${backend} ${insns} ${share}  ${node_${k}}")
  endforeach()
  math(EXPR observer "${total} - ${per}")
  message("  sum over ops: ${total} instructions; one inference without the observer: ${per} (the per-op exit check adds ${observer})")
  message("profile ${model} ${CORE} ops=${ops} sum_over_ops=${total} insns_per_inference=${per}")
endforeach()
