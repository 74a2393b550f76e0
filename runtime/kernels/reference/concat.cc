// SPDX-License-Identifier: Apache-2.0
// Concatenation along one axis for any element size. Seen as bytes, every tensor
// is [outer, axis_dim * inner]: outer = product of the dims before the axis
// (shared by all inputs), inner = product of the dims after it times the element
// size. Each outer slice of the output is the inputs' slices back to back, so the
// whole op is outer * input_count memcpy calls. Inputs must not overlap the output.
#include "runtime/kernels/reference/concat.h"

#include <stddef.h>
#include <string.h>

namespace floe::ref {

void concat(const ConcatParams& params, const In<void>* inputs, int32_t input_count,
            const Out<void>& output) {
  const int32_t axis = params.axis;
  const ptrdiff_t outer = static_cast<ptrdiff_t>(output.shape.span(0, axis));
  const size_t inner_bytes =
      static_cast<size_t>(output.shape.span(axis + 1, output.shape.rank)) * params.element_size;
  if (outer == 0 || inner_bytes == 0) return;

  unsigned char* dst = static_cast<unsigned char*>(output.data);
  for (ptrdiff_t o = 0; o < outer; ++o) {
    for (int32_t i = 0; i < input_count; ++i) {
      const size_t block = static_cast<size_t>(inputs[i].shape.dims[axis]) * inner_bytes;
      if (block == 0) continue;  // an empty input may carry a null pointer
      const unsigned char* src = static_cast<const unsigned char*>(inputs[i].data);
      memcpy(dst, src + static_cast<size_t>(o) * block, block);
      dst += block;
    }
  }
}

}  // namespace floe::ref
