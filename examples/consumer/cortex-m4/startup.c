// SPDX-License-Identifier: Apache-2.0
// Minimal Cortex-M4F startup: vector table, FPU on, .data copied, .bss zeroed,
// static constructors, main(), its status reported over semihosting. Any
// exception ends the run with status 99.
#include <stdint.h>

#include "../console.h"

extern uint32_t __stack_top, __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);
int main(void);
void console_exit(int status);

void Reset_Handler(void) {
  // CPACR: full access to CP10/CP11 (the FPU) before any float instruction.
  *(volatile uint32_t*)0xE000ED88 |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  for (uint32_t *src = &__data_load, *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (uint32_t* dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
  for (void (**ctor)(void) = __init_array_start; ctor < __init_array_end; ++ctor) (*ctor)();
  console_exit(main());
}

static void Fault_Handler(void) {
  console_write("consumer: unexpected exception, exiting 99\n");
  console_exit(99);
}

// The runtime has no virtual functions or static destructors to register, but
// a C++ toolchain may still reference these two hooks.
void* __dso_handle = 0;
void __cxa_pure_virtual(void) { Fault_Handler(); }

typedef void (*Handler)(void);
__attribute__((section(".vectors"), used)) const Handler vectors[16] = {
    (Handler)&__stack_top, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler,         0,             0,             0,             0,             Fault_Handler,
    Fault_Handler,         0,             Fault_Handler, Fault_Handler,
};
