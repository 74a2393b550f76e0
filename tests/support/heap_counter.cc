// SPDX-License-Identifier: Apache-2.0
// The interposed allocator behind heap_counter.h.
#include "tests/support/heap_counter.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void __libc_free(void*);

namespace {
std::atomic<bool> counting{false};
std::atomic<int> calls{0};
void note() {
  if (counting.load(std::memory_order_relaxed)) calls.fetch_add(1);
}
}  // namespace

namespace floe::testing {
void count_heap_calls(bool on) { counting = on; }
int heap_calls() { return calls.load(); }
void reset_heap_calls() { calls = 0; }
}  // namespace floe::testing

extern "C" void* malloc(size_t n) { note(); return __libc_malloc(n); }
extern "C" void* calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
extern "C" void* realloc(void* p, size_t n) { note(); return __libc_realloc(p, n); }
extern "C" void free(void* p) { if (p) note(); __libc_free(p); }
void* operator new(size_t n) { note(); void* p = __libc_malloc(n ? n : 1); if (!p) std::abort(); return p; }
void* operator new[](size_t n) { note(); void* p = __libc_malloc(n ? n : 1); if (!p) std::abort(); return p; }
void operator delete(void* p) noexcept { if (p) note(); __libc_free(p); }
void operator delete[](void* p) noexcept { if (p) note(); __libc_free(p); }
void operator delete(void* p, size_t) noexcept { if (p) note(); __libc_free(p); }
void operator delete[](void* p, size_t) noexcept { if (p) note(); __libc_free(p); }
