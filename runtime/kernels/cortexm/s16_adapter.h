// SPDX-License-Identifier: Apache-2.0
// What the int16x8 Cortex-M prepares (conv2d.cc, matmul.cc,
// depthwise_conv2d.cc) check in common: the layout the converter promises for
// an op with Operator.cortexm_kernel S16_* (converter/lower/backend_cortexm.cc),
// and their params blocks (each no larger than the op's params union member).
#pragma once

#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/cortexm/s16_microkernels.h"

namespace floe::cortexm {

struct Conv2DS16Plan {
  int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c;
  int32_t k_size;      // k_h * k_w * in_c: one GEMM row
  int32_t chunk_rows;  // im2col rows per s16_gemm call (the scratch holds that many)
  int16_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int16_t act_min, act_max;
};

struct FullyConnectedS16Plan {
  int32_t rows, k_size, channels;
  int16_t act_min, act_max;
};

struct DepthwiseS16Plan {
  int32_t batches, channels;
  int16_t in_h, in_w, k_h, k_w, out_h, out_w;
  int16_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int16_t act_min, act_max;

  DepthwiseS16Shape shape() const {
    return {batches, in_h, in_w, channels, k_h, k_w, out_h, out_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left};
  }
};

// int16 input and output 0, int8 weights; `outputs` outputs; every array
// [channels]: the int64 offsets (bias and rounding folded, S16Requant), the
// multipliers (>= 0), the right shifts in [8, 46]; zero offsets. Sets the clamp range.
inline const char* prepare_s16_operands(const OpContext& ctx, int32_t channels, int outputs, int16_t* act_min,
                                        int16_t* act_max) {
  if (ctx.op->backend() != schema::Backend::CORTEX_M) {
    return FLOE_MSG("int16 Cortex-M kernel chosen for an op not on the CORTEX_M backend");
  }
  if (ctx.input_count() != 5 || ctx.output_count() != outputs) {
    return FLOE_MSG("int16 Cortex-M op: wrong number of inputs or outputs");
  }
  // Checked here once (shifts, multipliers, the depthwise filter's sum bound)
  // and trusted by every Invoke(): constants of the model.
  for (int i = 0; i < 5; ++i) {
    if (!ctx.has_input(i) || (i > 0 && !ctx.input_is_constant(i))) {
      return FLOE_MSG("int16 Cortex-M op: weights, offsets, multipliers and shifts must be present constants");
    }
  }
  if (ctx.input(0).dtype != DType::kInt16 || !ops::is_s8(ctx.input(1)) || ctx.output(0).dtype != DType::kInt16) {
    return FLOE_MSG("int16 Cortex-M op: input and output must be int16, weights int8");
  }
  const TensorView bias = ctx.input(2), mult = ctx.input(3), shift = ctx.input(4);
  if (bias.dtype != DType::kInt64 || bias.shape.rank != 1 || bias.shape.dims[0] != channels) {
    return FLOE_MSG("int16 Cortex-M op: offsets must be int64 [output channels]");
  }
  for (const TensorView* v : {&mult, &shift}) {
    if (v->dtype != DType::kInt32 || v->shape.rank != 1 || v->shape.dims[0] != channels) {
      return FLOE_MSG("int16 Cortex-M op: multipliers and shifts must be int32 [output channels]");
    }
  }
  const int32_t* m = static_cast<const int32_t*>(mult.data);
  const int32_t* sh = static_cast<const int32_t*>(shift.data);
  for (int32_t c = 0; c < channels; ++c) {
    if (m[c] < 0 || sh[c] < 8 || sh[c] > 46) {
      return FLOE_MSG("int16 Cortex-M op: multiplier or right shift out of range");
    }
  }
  const char* why = nullptr;
  const schema::Requantization* r = ops::requantization_of(ctx, &why, DType::kInt16);
  if (r == nullptr) return why;
  if (ops::entry(r->input_offsets(), 0) != 0 || ops::entry(r->input_offsets(), 1) != 0) {
    return FLOE_MSG("int16 Cortex-M op: input and weight offsets must be 0");
  }
  *act_min = static_cast<int16_t>(r->activation_min());
  *act_max = static_cast<int16_t>(r->activation_max());
  return nullptr;
}

// The microkernels' requantization from the bound operands 2, 3, 4.
inline S16Requant s16_requant(const PreparedOp& op, int32_t act_min, int32_t act_max) {
  return {static_cast<const int64_t*>(op.operands[2].data), static_cast<const int32_t*>(op.operands[3].data),
          static_cast<const int32_t*>(op.operands[4].data), act_min, act_max};
}

}  // namespace floe::cortexm
