// SPDX-License-Identifier: Apache-2.0
// Bump allocation from the arena for XNNPACK (see arena_allocator.h). Freeing is
// a no-op: the caller owns the arena, and dropping it releases everything.
// reallocate() of an existing block fails (XNNPACK only grows indirection
// buffers when an operator is set up again, which floe never does).
#include "runtime/kernels/xnnpack/arena_allocator.h"

#include <xnnpack.h>

#include "schemas/contract/xnnpack_budget.h"

namespace floe::xnnpack {
namespace {

using xnnpack_budget::kMinAlignment;

thread_local ArenaRegion* t_region = nullptr;

void* allocate(void*, size_t size) { return region_allocate(t_region, kMinAlignment, size); }
void* aligned_allocate(void*, size_t alignment, size_t size) {
  return region_allocate(t_region, alignment, size);
}
void* reallocate(void*, void* pointer, size_t size) {
  if (pointer != nullptr) return nullptr;  // must not release the old block: it stays
  return region_allocate(t_region, kMinAlignment, size);
}
void deallocate(void*, void*) {}

constexpr xnn_allocator kAllocator = {nullptr, allocate, reallocate, deallocate,
                                      aligned_allocate, deallocate};

}  // namespace

RegionScope::RegionScope(ArenaRegion* region) { t_region = region; }
RegionScope::~RegionScope() { t_region = nullptr; }

void* region_allocate(ArenaRegion* region, size_t alignment, size_t size) {
  if (region == nullptr) return nullptr;
  // The base is kBackendRegionAlignment-aligned, so aligning the address is
  // aligning the offset: the converter's replay (xnnpack_budget::bump) agrees.
  if (alignment < kMinAlignment) alignment = kMinAlignment;
  const uintptr_t base = reinterpret_cast<uintptr_t>(region->base);
  const uintptr_t start = (base + region->used + alignment - 1) & ~(uintptr_t{alignment} - 1);
  const size_t offset = start - base;
  if (offset > region->limit || size > region->limit - offset) {
    region->exhausted = true;
    return nullptr;
  }
  region->used = offset + size;
  if (region->used > region->peak) region->peak = region->used;
  ++region->calls;
  return reinterpret_cast<void*>(start);
}

const xnn_allocator* arena_allocator() { return &kAllocator; }

}  // namespace floe::xnnpack
