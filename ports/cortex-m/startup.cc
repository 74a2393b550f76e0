// SPDX-License-Identifier: Apache-2.0
// Cortex-M startup without an assembler file: the vector table, Reset_Handler
// (FPU/MVE on, stack limit on ARMv8-M, .data copy, .bss zero, static
// constructors, main, semihosting exit), one fault handler that reports and
// exits 99, and the two C++ ABI hooks the compiler may reference. Relies on the
// symbols ld/sections.ld defines. Deliberately no operator delete: code that
// would free memory must fail to link (see the malloc ban in the toolchain file).
#include <stdint.h>

#include "ports/cortex-m/semihosting.h"

extern "C" {
// From ld/sections.ld.
extern uint32_t __stack_top;
extern uint32_t __stack_limit;
extern uint32_t __data_load;
extern uint32_t __data_start;
extern uint32_t __data_end;
extern uint32_t __bss_start;
extern uint32_t __bss_end;
extern void (*__init_array_start[])();
extern void (*__init_array_end[])();

int main();
void Reset_Handler();
void floe_fault_handler();
}

namespace {

constexpr int kFaultExitStatus = 99;
constexpr uintptr_t kCpacr = 0xE000ED88;  // Coprocessor Access Control
constexpr uint32_t kCpacrCp10Cp11Full = 0xFu << 20;

[[noreturn]] __attribute__((noinline)) void start_c() {
  for (uint32_t *src = &__data_load, *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (uint32_t* dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
  for (void (**ctor)() = __init_array_start; ctor < __init_array_end; ++ctor) (*ctor)();
  floe::cortexm::semihosting_exit(main());
}

}  // namespace

extern "C" void Reset_Handler() {
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  // The FPU (and MVE, which shares CP10/CP11) is off at reset; any VFP or
  // vector instruction before this would fault.
  *reinterpret_cast<volatile uint32_t*>(kCpacr) |= kCpacrCp10Cp11Full;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
#if defined(__ARM_ARCH_8M_MAIN__)
  // ARMv8-M checks the main stack against MSPLIM: an overflow raises a fault
  // (reported, exit 99) instead of silently overwriting .bss.
  __asm__ volatile("msr msplim, %0" ::"r"(&__stack_limit));
#endif
  start_c();
}

// NMI, HardFault and every configurable fault, SVC, PendSV, SysTick: none is
// expected in a firmware that runs one model, so each one ends the run.
extern "C" void floe_fault_handler() {
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  char message[] = "floe: unexpected exception 00 (fault), exiting 99\n";
  message[27] = static_cast<char>('0' + (ipsr / 10) % 10);
  message[28] = static_cast<char>('0' + ipsr % 10);
  floe::cortexm::semihosting_write0(message);
  floe::cortexm::semihosting_exit(kFaultExitStatus);
}

using Handler = void (*)();

// The 16 architectural entries; no device interrupts are enabled.
__attribute__((section(".isr_vector"), used)) const Handler g_vector_table[16] = {
    reinterpret_cast<Handler>(&__stack_top),
    Reset_Handler,
    floe_fault_handler,  // NMI
    floe_fault_handler,  // HardFault
    floe_fault_handler,  // MemManage
    floe_fault_handler,  // BusFault
    floe_fault_handler,  // UsageFault
    floe_fault_handler,  // SecureFault (ARMv8-M)
    nullptr,
    nullptr,
    nullptr,
    floe_fault_handler,  // SVCall
    floe_fault_handler,  // DebugMonitor
    nullptr,
    floe_fault_handler,  // PendSV
    floe_fault_handler,  // SysTick
};

// C++ ABI hooks. Static destructors never run on a device that never returns
// from main, so registering them is a no-op; a pure virtual call is a bug.
extern "C" {
void* __dso_handle = nullptr;
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }
void __cxa_pure_virtual() { floe_fault_handler(); }
}
