// SPDX-License-Identifier: Apache-2.0
// Transpose as a walk over the output in row-major order. Each output dim i
// advances the input by the stride of input dim perm[i]; an odometer over the
// leading output dims keeps the input offset incrementally, and the last output
// dim is an inner strided loop, or one memcpy per row when perm keeps the last
// axis last (then each output row is contiguous in the input).
#include "runtime/kernels/reference/transpose.h"

#include <stdint.h>
#include <string.h>
#include "runtime/kernels/common/op_adapter.h"

namespace floe::ref {
namespace {

// Copies `count` elements, reading every `stride` elements of `src`.
template <typename T>
void gather_row(const unsigned char* src, ptrdiff_t stride, int32_t count, unsigned char* dst) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (int32_t i = 0; i < count; ++i) d[i] = s[i * stride];
}

void gather_row_bytes(const unsigned char* src, ptrdiff_t stride, int32_t count, size_t size,
                      unsigned char* dst) {
  for (int32_t i = 0; i < count; ++i) {
    memcpy(dst + static_cast<size_t>(i) * size, src + i * stride * static_cast<ptrdiff_t>(size), size);
  }
}

}  // namespace

void transpose(const TransposeParams& params, const In<void>& input, const Out<void>& output) {
  const int32_t rank = input.shape.rank;
  const size_t size = params.element_size;
  if (output.shape.num_elements() == 0) return;
  if (rank == 0) {
    memcpy(output.data, input.data, size);
    return;
  }
  // Input strides in elements, then the stride each output dim walks with.
  ptrdiff_t in_stride[kMaxRank] = {0};
  ptrdiff_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    in_stride[d] = stride;
    stride *= input.shape.dims[d];
  }
  ptrdiff_t walk[kMaxRank] = {0};
  for (int32_t i = 0; i < rank; ++i) walk[i] = in_stride[params.perm[i]];

  const unsigned char* src = static_cast<const unsigned char*>(input.data);
  unsigned char* dst = static_cast<unsigned char*>(output.data);
  const int32_t inner = output.shape.dims[rank - 1];
  const ptrdiff_t inner_stride = walk[rank - 1];
  const size_t row_bytes = static_cast<size_t>(inner) * size;
  const int64_t rows = output.shape.span(0, rank - 1);

  int32_t index[kMaxRank] = {0};
  ptrdiff_t offset = 0;  // input element offset of the current output row
  for (int64_t r = 0; r < rows; ++r) {
    const unsigned char* row = src + offset * static_cast<ptrdiff_t>(size);
    if (inner_stride == 1) {
      memcpy(dst, row, row_bytes);
    } else if (size == 4) {
      gather_row<uint32_t>(row, inner_stride, inner, dst);
    } else if (size == 1) {
      gather_row<uint8_t>(row, inner_stride, inner, dst);
    } else if (size == 2) {
      gather_row<uint16_t>(row, inner_stride, inner, dst);
    } else if (size == 8) {
      gather_row<uint64_t>(row, inner_stride, inner, dst);
    } else {
      gather_row_bytes(row, inner_stride, inner, size, dst);
    }
    dst += row_bytes;
    // Advance the odometer over output dims [0, rank-1).
    for (int32_t d = rank - 2; d >= 0; --d) {
      offset += walk[d];
      if (++index[d] < output.shape.dims[d]) break;
      offset -= walk[d] * output.shape.dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace floe::ref

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_transpose(const OpContext& ctx) {
  if (ctx.input_count() != 1 || ctx.output_count() != 1 || !same_io_dtype(ctx)) {
    return FLOE_MSG("transpose takes one input and one output of the same dtype");
  }
  const Shape in = ctx.input(0).shape, out = ctx.output(0).shape;
  const auto* perm = ctx.op->options_as_TransposeOptions()->perm();
  const int32_t rank = in.rank;
  if (rank > kMaxRank || out.rank != rank) return FLOE_MSG("transpose rank is wrong or too large");
  if ((perm ? static_cast<int32_t>(perm->size()) : 0) != rank) {
    return FLOE_MSG("transpose perm length differs from the rank");
  }
  bool seen[kMaxRank] = {false};
  for (int32_t i = 0; i < rank; ++i) {
    const int32_t p = perm->Get(static_cast<uint32_t>(i));
    if (p < 0 || p >= rank || seen[p]) return FLOE_MSG("transpose perm is not a permutation");
    seen[p] = true;
    if (out.dims[i] != in.dims[p]) return FLOE_MSG("transpose output shape is not the permuted input");
  }
  TransposePrepared& prepared = ctx.params<TransposePrepared>();
  for (int32_t i = 0; i < rank; ++i) prepared.perm[i] = perm->Get(static_cast<uint32_t>(i));
  prepared.element_size = static_cast<int32_t>(dtype_size(ctx.input(0).dtype));
  return nullptr;
}

Status eval_transpose(const PreparedOp& ctx) {
  const TensorView &input = ctx.input(0), &output = ctx.output(0);
  const TransposePrepared& prepared = ctx.params_as<TransposePrepared>();
  ref::TransposeParams params;
  params.perm = prepared.perm;
  params.element_size = static_cast<size_t>(prepared.element_size);
  ref::transpose(params, In<void>{input.data, input.shape}, Out<void>{output.data, output.shape});
  return Status::kOk;
}

}  // namespace floe::ops

FLOE_KERNEL(REFERENCE, TRANSPOSE, ANY, ops::TransposePrepared, ops::prepare_transpose, ops::eval_transpose)
