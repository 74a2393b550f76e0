// SPDX-License-Identifier: Apache-2.0
// Counting heap calls: a test binary linking tests/support/heap_counter.cc
// interposes malloc/calloc/realloc/free and operator new/delete (they still
// allocate, through glibc's __libc_* entry points) and counts every call made
// while counting is on.
#pragma once

namespace floe::testing {

void count_heap_calls(bool on);
int heap_calls();  // since the last reset
void reset_heap_calls();

}  // namespace floe::testing
