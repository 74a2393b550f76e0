// SPDX-License-Identifier: Apache-2.0
// Strided slice and tile, for any element size. STRIDED_SLICE covers TF's
// Slice, StridedSlice (masks resolved by the converter), Split/SplitV/Unpack
// (one slice per output) and ReverseV2 (stride -1): output element (i0, i1, ..)
// reads input (begin[0] + i0*stride[0], ...). TILE repeats the input along each
// dim (output dim = input dim * multiple). The caller validates every index.
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/core/registry.h"

namespace floe::ref {

struct StridedSliceParams {
  const int32_t* begin = nullptr;   // one per dim
  const int32_t* stride = nullptr;  // one per dim, != 0
  size_t element_size = 4;
};

void strided_slice(const StridedSliceParams& params, In<void> input, Out<void> output);
void tile(size_t element_size, In<void> input, Out<void> output);

}  // namespace floe::ref

// The op's adapter (registered as a row in the .cc, runtime/core/registry.h).
namespace floe::ops {

struct StridedSlicePrepared {
  int32_t begin[kMaxRank];
  int32_t stride[kMaxRank];
  int32_t element_size;
};

const char* prepare_strided_slice(const OpContext& ctx);
Status eval_strided_slice(const PreparedOp& ctx);
const char* prepare_tile(const OpContext& ctx);
Status eval_tile(const PreparedOp& ctx);

}  // namespace floe::ops
