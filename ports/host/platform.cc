// SPDX-License-Identifier: Apache-2.0
// runtime/platform.h for hosted builds (Linux, macOS): stdout, a monotonic
// nanosecond clock, exit(). Lets the firmware examples run unchanged as host
// programs, which is how the host build checks them.
#include "runtime/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

namespace floe::platform {

void init() {}

void log(const char* text) {
  fputs(text, stdout);
  fflush(stdout);
}

uint64_t ticks() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

uint64_t ticks_per_second() { return 1000000000u; }

// Linux: /proc/self/cmdline (arguments NUL-separated); elsewhere none.
const char* command_line() {
  static char line[256];
  line[0] = '\0';
  if (FILE* f = fopen("/proc/self/cmdline", "rb")) {
    const size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    for (size_t i = 0; i < n; ++i) {
      if (line[i] == '\0') line[i] = ' ';
    }
    line[n > 0 && line[n - 1] == ' ' ? n - 1 : n] = '\0';
  }
  return line;
}

void exit(int status) {
  fflush(stdout);
  ::exit(status);
}

}  // namespace floe::platform
