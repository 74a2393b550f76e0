// SPDX-License-Identifier: Apache-2.0
// runtime/platform.h for Cortex-M (M3 and up): semihosting console and exit,
// the DWT cycle counter as the tick source. QEMU emulates no DWT: init() sees
// DWT_CTRL.NOCYCCNT (or a zero CTRL) and ticks_per_second() then reports 0.
#include "runtime/platform.h"

#include "ports/cortex-m/semihosting.h"

#ifndef FLOE_CORE_CLOCK_HZ
#error "FLOE_CORE_CLOCK_HZ (the board's core clock) is set by ports/cortex-m/CMakeLists.txt"
#endif

namespace floe::platform {
namespace {

// ARMv7-M / ARMv8-M debug registers (Architecture Reference Manual, C1.6 / D1.2).
volatile uint32_t& reg(uintptr_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }
constexpr uintptr_t kDemcr = 0xE000EDFC;     // Debug Exception and Monitor Control
constexpr uint32_t kDemcrTrcena = 1u << 24;  // enables DWT and ITM
constexpr uintptr_t kDwtCtrl = 0xE0001000;
constexpr uint32_t kDwtCtrlCyccntena = 1u << 0;
constexpr uint32_t kDwtCtrlNocyccnt = 1u << 25;  // set: this core has no cycle counter
constexpr uintptr_t kDwtCyccnt = 0xE0001004;

bool g_has_cycle_counter = false;
char g_command_line[256];

}  // namespace

void init() {
  reg(kDemcr) |= kDemcrTrcena;
  const uint32_t ctrl = reg(kDwtCtrl);
  // A core without DWT reads CTRL as zero (NUMCOMP = 0 and no other feature).
  if (ctrl == 0 || (ctrl & kDwtCtrlNocyccnt) != 0) return;
  reg(kDwtCyccnt) = 0;
  reg(kDwtCtrl) = ctrl | kDwtCtrlCyccntena;
  g_has_cycle_counter = true;
}

void log(const char* text) { cortexm::semihosting_write0(text); }

uint64_t ticks() { return g_has_cycle_counter ? reg(kDwtCyccnt) : 0; }

uint64_t ticks_per_second() { return g_has_cycle_counter ? FLOE_CORE_CLOCK_HZ : 0; }

const char* command_line() {
  if (!cortexm::semihosting_cmdline(g_command_line, sizeof g_command_line)) g_command_line[0] = '\0';
  return g_command_line;
}

void exit(int status) { cortexm::semihosting_exit(status); }

}  // namespace floe::platform
