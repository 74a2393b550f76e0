// SPDX-License-Identifier: Apache-2.0
// Console and exit over Arm semihosting (QEMU: -semihosting-config
// enable=on,target=native): SYS_WRITE0 prints a string, SYS_EXIT_EXTENDED
// ends the run with the firmware's status, which QEMU returns as its own.
#include <stdint.h>

#include "../console.h"

enum {
  kSysWrite0 = 0x04,
  kSysExitExtended = 0x20,
  kApplicationExit = 0x20026,
};

static uint32_t semihosting(uint32_t operation, const void* argument) {
  register uint32_t r0 __asm__("r0") = operation;
  register const void* r1 __asm__("r1") = argument;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void console_write(const char* text) { semihosting(kSysWrite0, text); }

void console_exit(int status) {
  const uint32_t block[2] = {kApplicationExit, (uint32_t)status};
  semihosting(kSysExitExtended, block);
  for (;;) {
  }
}
