// SPDX-License-Identifier: Apache-2.0
// Gather, GatherNd and OneHot (see gather.h). Each copies contiguous runs of
// `inner` elements; the index check is one compare per gathered run.
#include "runtime/kernels/reference/gather.h"

#include <string.h>

#include "runtime/kernels/reference/element_copy.h"

namespace floe::ref {
namespace {

inline int64_t index_at(const void* indices, bool is64, int64_t i) {
  return is64 ? static_cast<const int64_t*>(indices)[i] : static_cast<const int32_t*>(indices)[i];
}

}  // namespace

bool gather(const GatherParams& p, In<void> params, In<void> indices, Out<void> output) {
  const Shape& ps = params.shape;
  const int64_t batch = ps.span(0, p.batch_dims);
  const int64_t outer = ps.span(p.batch_dims, p.axis);
  const int64_t axis_size = ps.dims[p.axis];
  const int64_t inner = ps.span(p.axis + 1, ps.rank);
  const int64_t index_count = indices.shape.span(p.batch_dims, indices.shape.rank);
  const size_t run = static_cast<size_t>(inner) * p.element_size;
  const uint8_t* src = static_cast<const uint8_t*>(params.data);
  uint8_t* dst = static_cast<uint8_t*>(output.data);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < index_count; ++i) {
        const int64_t k = index_at(indices.data, p.indices_int64, b * index_count + i);
        if (k < 0 || k >= axis_size) return false;
        const int64_t from = ((b * outer + o) * axis_size + k) * inner;
        if (run) memcpy(dst, src + static_cast<size_t>(from) * p.element_size, run);
        dst += run;
      }
    }
  }
  return true;
}

bool gather_nd(size_t element_size, bool indices_int64, In<void> params, In<void> indices, Out<void> output) {
  const Shape& ps = params.shape;
  const int32_t k = indices.shape.dims[indices.shape.rank - 1];
  const int64_t count = indices.shape.span(0, indices.shape.rank - 1);
  const int64_t inner = ps.span(k, ps.rank);
  const size_t run = static_cast<size_t>(inner) * element_size;
  const uint8_t* src = static_cast<const uint8_t*>(params.data);
  uint8_t* dst = static_cast<uint8_t*>(output.data);
  for (int64_t i = 0; i < count; ++i) {
    int64_t offset = 0;
    for (int32_t d = 0; d < k; ++d) {
      const int64_t v = index_at(indices.data, indices_int64, i * k + d);
      if (v < 0 || v >= ps.dims[d]) return false;
      offset = offset * ps.dims[d] + v;
    }
    if (run) memcpy(dst, src + static_cast<size_t>(offset * inner) * element_size, run);
    dst += run;
  }
  return true;
}

void one_hot(size_t element_size, bool indices_int64, int32_t axis, In<void> indices, const void* on_value,
             const void* off_value, Out<void> output) {
  const Shape& out = output.shape;
  const int64_t outer = out.span(0, axis);
  const int64_t depth = out.dims[axis];
  const int64_t inner = out.span(axis + 1, out.rank);
  with_element_type(element_size, [&](auto tag) {
    using U = decltype(tag);
    U on, off;
    memcpy(&on, on_value, sizeof(U));
    memcpy(&off, off_value, sizeof(U));
    U* dst = static_cast<U*>(output.data);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t d = 0; d < depth; ++d) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t k = index_at(indices.data, indices_int64, o * inner + i);
          *dst++ = k == d ? on : off;
        }
      }
    }
  });
}

}  // namespace floe::ref
