// SPDX-License-Identifier: Apache-2.0
// The two things the example needs from its platform: a line of text out, and
// (on a board) a way to report the exit status. Host: stdio; Cortex-M4: the
// project's own semihosting calls (cortex-m4/console.c).
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

void console_write(const char* text);

#ifdef __cplusplus
}
#endif
