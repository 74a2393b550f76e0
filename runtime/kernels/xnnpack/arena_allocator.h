// SPDX-License-Identifier: Apache-2.0
// The xnn_allocator floe installs in XNNPACK: a bump allocator over the
// persistent region of the arena of the Interpreter::Init() running on this
// thread. XNNPACK's allocator is process-global and first-caller-wins (checked
// against Debian's 2022-02 build), so the region is selected per thread while
// Init() runs; outside it every request fails (returns null) instead of
// falling back to the heap, so an allocation during Invoke() cannot go unseen.
#pragma once

#include <stddef.h>
#include <stdint.h>

struct xnn_allocator;

namespace floe::xnnpack {

struct ArenaRegion {
  uint8_t* base = nullptr;   // kBackendRegionAlignment-aligned
  size_t limit = 0;          // bytes usable from base (may shrink for Init scratch)
  size_t used = 0;           // bump offset from base
  size_t peak = 0;           // most bytes from base Init needed: allocations, or those made
                             // while an Init scratch sat at the top plus the scratch
  size_t calls = 0;          // successful allocations
  bool exhausted = false;    // a request did not fit
};

// Installs `region` as the target of this thread's XNNPACK allocations until
// the returned scope ends (nesting is not supported: one Init at a time per thread).
class RegionScope {
 public:
  explicit RegionScope(ArenaRegion* region);
  ~RegionScope();
  // Deleted copies only forbid duplicating the scope; nothing here allocates.
  RegionScope(const RegionScope&) = delete;
  RegionScope& operator=(const RegionScope&) = delete;
};

// Bump-allocates from the current thread's region (nullptr outside a scope).
void* region_allocate(ArenaRegion* region, size_t alignment, size_t size);

// The allocator passed to xnn_initialize().
const xnn_allocator* arena_allocator();

}  // namespace floe::xnnpack
