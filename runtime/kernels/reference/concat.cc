// SPDX-License-Identifier: Apache-2.0
// Concatenation along one axis for any element size. Seen as bytes, every tensor
// is [outer, axis_dim * inner]: outer = product of the dims before the axis
// (shared by all inputs), inner = product of the dims after it times the element
// size. Each outer slice of the output is the inputs' slices back to back, so the
// whole op is outer * input_count memcpy calls. Inputs must not overlap the output.
#include "runtime/kernels/reference/concat.h"

#include <stddef.h>
#include <string.h>
#include "runtime/kernels/common/op_adapter.h"

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

// ---- adapter: prepare validates the op once at Init() and fills its params
// block; eval runs the kernel on the bound operands (runtime/core/registry.h).
namespace floe::ops {

const char* prepare_concat(const OpContext& ctx) {
  const int count = ctx.input_count();
  if (count < 1 || count > kMaxConcatInputs || ctx.output_count() != 1) {
    return FLOE_MSG("concat takes 1..64 inputs and one output");
  }
  const TensorView output = ctx.output(0);
  const int32_t axis = ctx.op->options_as_ConcatOptions()->axis();
  if (axis < 0 || axis >= output.shape.rank) return FLOE_MSG("concat axis out of range");
  int64_t axis_total = 0;
  for (int i = 0; i < count; ++i) {
    if (!ctx.has_input(i)) return FLOE_MSG("concat input missing");
    const TensorView input = ctx.input(i);
    if (input.dtype != output.dtype || input.shape.rank != output.shape.rank) {
      return FLOE_MSG("concat input differs in dtype or rank");
    }
    for (int d = 0; d < output.shape.rank; ++d) {
      if (d != axis && input.shape.dims[d] != output.shape.dims[d]) {
        return FLOE_MSG("concat input differs off the concat axis");
      }
    }
    axis_total += input.shape.dims[axis];
  }
  if (axis_total != output.shape.dims[axis]) return FLOE_MSG("concat axis sizes do not add up");
  ConcatPrepared& prepared = ctx.params<ConcatPrepared>();
  prepared.axis = axis;
  prepared.element_size = static_cast<int32_t>(dtype_size(output.dtype));
  return nullptr;
}

Status eval_concat(const PreparedOp& ctx) {
  In<void> inputs[kMaxConcatInputs];
  const int count = ctx.input_count();
  for (int i = 0; i < count; ++i) {
    const TensorView& v = ctx.input(i);
    inputs[i] = In<void>{v.data, v.shape};
  }
  const TensorView& output = ctx.output(0);
  const ConcatPrepared& prepared = ctx.params_as<ConcatPrepared>();
  ref::ConcatParams params;
  params.axis = prepared.axis;
  params.element_size = static_cast<size_t>(prepared.element_size);
  ref::concat(params, inputs, count, Out<void>{output.data, output.shape});
  return Status::kOk;
}

}  // namespace floe::ops

namespace floe::ref {

void concat_s8(const ConcatS8Params& params, const In<int8_t>* inputs,
               const ConcatS8InputQuant* quant, int32_t input_count, const Out<int8_t>& output) {
  const int32_t axis = params.axis;
  const ptrdiff_t outer = static_cast<ptrdiff_t>(output.shape.span(0, axis));
  const ptrdiff_t inner = static_cast<ptrdiff_t>(output.shape.span(axis + 1, output.shape.rank));
  if (outer == 0 || inner == 0) return;

  int8_t* dst = output.data;
  for (ptrdiff_t o = 0; o < outer; ++o) {
    for (int32_t i = 0; i < input_count; ++i) {
      const ptrdiff_t block = static_cast<ptrdiff_t>(inputs[i].shape.dims[axis]) * inner;
      if (block == 0) continue;  // an empty input may carry a null pointer
      const int8_t* src = inputs[i].data + o * block;
      const ConcatS8InputQuant& q = quant[i];
      if (q.identity) {
        memcpy(dst, src, static_cast<size_t>(block));
      } else {
        for (ptrdiff_t k = 0; k < block; ++k) {
          const int32_t v = multiply_by_quantized_multiplier(src[k] - q.input_zero_point,
                                                             q.multiplier, q.shift) +
                            params.output_zero_point;
          dst[k] = static_cast<int8_t>(clamp_to(v, INT8_MIN, INT8_MAX));
        }
      }
      dst += block;
    }
  }
}

}  // namespace floe::ref

FLOE_KERNEL(REFERENCE, CONCAT, ANY, ops::ConcatPrepared, ops::prepare_concat, ops::eval_concat)
