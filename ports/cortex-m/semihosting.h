// SPDX-License-Identifier: Apache-2.0
// Arm semihosting calls (BKPT 0xAB, operation in r0, argument in r1), the
// debugger/QEMU channel the Cortex-M port prints and exits through. Only the two
// operations the port needs; anything needing a heap or files stays out.
// Under qemu-system-arm: -semihosting-config enable=on,target=native.
#pragma once

#include <stdint.h>

namespace floe::cortexm {

constexpr uint32_t kSysWrite0 = 0x04;         // print a NUL-terminated string
constexpr uint32_t kSysGetCmdline = 0x15;     // the command line into a buffer
constexpr uint32_t kSysExitExtended = 0x20;   // exit with a full 32-bit status
constexpr uint32_t kAdpStoppedApplicationExit = 0x20026;

inline uint32_t semihosting_call(uint32_t operation, const void* argument) {
  register uint32_t r0 __asm__("r0") = operation;
  register const void* r1 __asm__("r1") = argument;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

inline void semihosting_write0(const char* text) { semihosting_call(kSysWrite0, text); }

// Copies the command line (NUL-terminated) into `buffer`; false when the host
// has none or it does not fit.
inline bool semihosting_cmdline(char* buffer, uint32_t size) {
  struct {
    char* buffer;
    uint32_t size;
  } block = {buffer, size};
  return semihosting_call(kSysGetCmdline, &block) == 0;
}

// SYS_EXIT_EXTENDED: qemu-system-arm exits with `status` (plain SYS_EXIT can
// only report 0 or 1 on 32-bit targets).
[[noreturn]] inline void semihosting_exit(int status) {
  const uint32_t block[2] = {kAdpStoppedApplicationExit, static_cast<uint32_t>(status)};
  semihosting_call(kSysExitExtended, block);
  for (;;) {
  }  // a debugger without semihosting: park here
}

}  // namespace floe::cortexm
