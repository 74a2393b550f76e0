// SPDX-License-Identifier: Apache-2.0
#include <stdio.h>

#include "console.h"

void console_write(const char* text) { fputs(text, stdout); }
