// SPDX-License-Identifier: Apache-2.0
// Pad, dimension by dimension: for each output coordinate of dim d, either the
// whole sub-block lies in the constant border (filled with the pad element) or it
// maps to one input coordinate (directly, or mirrored once), and the walk
// descends into dim d + 1. In the last dim the in-range run is one memcpy.
// Recursion depth is the rank (<= kMaxRank); no allocation.
#include "runtime/kernels/reference/pad.h"

#include <stdint.h>
#include <string.h>

namespace floe::ref {
namespace {

struct Walk {
  const PadParams* params;
  const int32_t* in_dims;
  const int32_t* out_dims;
  int32_t rank;
  size_t in_block[kMaxRank];   // bytes of one step along dim d in the input
  size_t out_block[kMaxRank];  // bytes of one step along dim d in the output
};

void fill(unsigned char* dst, size_t bytes, const PadParams& params) {
  const size_t size = params.element_size;
  const unsigned char* value = static_cast<const unsigned char*>(params.constant_value);
  for (size_t i = 0; i + size <= bytes; i += size) memcpy(dst + i, value, size);
}

// Input coordinate of output coordinate `o` along a dim of `n` input elements
// with `before` padding, or -1 for the constant border.
int32_t source(PadMode mode, int32_t o, int32_t before, int32_t n) {
  int32_t i = o - before;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kReflect:
      return i < 0 ? -i : 2 * (n - 1) - i;
    case PadMode::kSymmetric:
      return i < 0 ? -i - 1 : 2 * n - 1 - i;
  }
  return -1;
}

void pad_dim(const Walk& w, int32_t d, const unsigned char* src, unsigned char* dst) {
  const int32_t before = w.params->paddings[2 * d];
  const int32_t n = w.in_dims[d];
  const int32_t out = w.out_dims[d];
  if (d == w.rank - 1) {
    const size_t size = w.params->element_size;
    for (int32_t o = 0; o < out;) {
      const int32_t i = o - before;
      if (i >= 0 && i < n) {  // the whole in-range run at once
        const int32_t run = n - i < out - o ? n - i : out - o;
        memcpy(dst + static_cast<size_t>(o) * size, src + static_cast<size_t>(i) * size,
               static_cast<size_t>(run) * size);
        o += run;
        continue;
      }
      const int32_t s = source(w.params->mode, o, before, n);
      if (s < 0) {
        fill(dst + static_cast<size_t>(o) * size, size, *w.params);
      } else {
        memcpy(dst + static_cast<size_t>(o) * size, src + static_cast<size_t>(s) * size, size);
      }
      ++o;
    }
    return;
  }
  for (int32_t o = 0; o < out; ++o) {
    unsigned char* block = dst + static_cast<size_t>(o) * w.out_block[d];
    const int32_t s = source(w.params->mode, o, before, n);
    if (s < 0) {
      fill(block, w.out_block[d], *w.params);
    } else {
      pad_dim(w, d + 1, src + static_cast<size_t>(s) * w.in_block[d], block);
    }
  }
}

}  // namespace

void pad(const PadParams& params, const In<void>& input, const Out<void>& output) {
  const int32_t rank = input.shape.rank;
  const size_t size = params.element_size;
  if (output.shape.num_elements() == 0) return;
  if (rank == 0) {
    memcpy(output.data, input.data, size);
    return;
  }
  if (input.shape.num_elements() == 0) {  // nothing to copy or mirror: all border
    fill(static_cast<unsigned char*>(output.data),
         static_cast<size_t>(output.shape.num_elements()) * size, params);
    return;
  }
  Walk w;
  w.params = &params;
  w.in_dims = input.shape.dims;
  w.out_dims = output.shape.dims;
  w.rank = rank;
  size_t in_bytes = size, out_bytes = size;
  for (int32_t d = rank - 1; d >= 0; --d) {
    w.in_block[d] = in_bytes;
    w.out_block[d] = out_bytes;
    in_bytes *= static_cast<size_t>(input.shape.dims[d]);
    out_bytes *= static_cast<size_t>(output.shape.dims[d]);
  }
  pad_dim(w, 0, static_cast<const unsigned char*>(input.data),
          static_cast<unsigned char*>(output.data));
}

}  // namespace floe::ref
