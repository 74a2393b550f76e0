// SPDX-License-Identifier: Apache-2.0
// The port interface: the few services an application, a bench or an on-board
// test needs from its target. Each target defines these once, in
// ports/<target>/platform.cc (ports/host, ports/cortex-m); a program links
// exactly one. The runtime core itself calls none of them, so it stays free of
// board headers and I/O. No function here allocates.
#pragma once

#include <stdint.h>

namespace floe::platform {

// Prepares the target's services (e.g. enables the Cortex-M cycle counter).
// Call once, first thing in main(); the others may be called only after it.
void init();

// Writes `text` (NUL-terminated) to the target's console as is: no formatting,
// no newline added. Cortex-M: semihosting SYS_WRITE0; host: stdout.
void log(const char* text);

// A free-running counter for profiling, `ticks_per_second()` per second.
// Cortex-M: core cycles from DWT CYCCNT (wraps every 2^32 cycles);
// host: nanoseconds of a monotonic clock.
uint64_t ticks();
// 0 when the target has no counter (QEMU emulates no DWT); ticks() is 0 then.
uint64_t ticks_per_second();

// The program's command line, space-separated, program name first (at most
// 255 characters; "" when the target has none). Cortex-M: semihosting
// SYS_GET_CMDLINE, under QEMU the ELF path then -append's text. Benches read
// their repeat count here.
const char* command_line();

// Ends the program with `status` as its exit code (0 = success). Cortex-M under
// QEMU: semihosting SYS_EXIT_EXTENDED, so qemu-system-arm exits with `status`.
[[noreturn]] void exit(int status);

}  // namespace floe::platform
