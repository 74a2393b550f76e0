// SPDX-License-Identifier: Apache-2.0
// What the int8 Cortex-M prepares (conv2d.cc, matmul.cc, depthwise_conv2d.cc)
// check in common: the layout the converter promises for an op with
// Operator.cortexm_kernel != NONE (converter/lower/backend_cortexm.cc), and the
// S8Requant the eval hands to the microkernels (s8_microkernels.h).
#pragma once

#include "runtime/core/quantization.h"
#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/cortexm/s8_microkernels.h"

namespace floe::cortexm {

// The *_SHORT_REQUANT kernels are their general kernel with a doubled bias
// and the converter's proof that the short requantization is exact.
inline bool is_short_requant(schema::CortexMKernel k) {
  return k == schema::CortexMKernel::S8_GEMM_SHORT_REQUANT || k == schema::CortexMKernel::S8_IM2COL_GEMM_SHORT_REQUANT ||
         k == schema::CortexMKernel::S8_DEPTHWISE_SHORT_REQUANT ||
         k == schema::CortexMKernel::S8_GEMM_PACKED_SHORT_REQUANT;
}
// The *_NARROW_WEIGHTS kernels are their general kernel with the
// converter's proof that no weight is -128 (S8Requant::narrow_weights).
inline bool is_narrow_weights(schema::CortexMKernel k) {
  return kS8NarrowWeightsUsed && (k == schema::CortexMKernel::S8_GEMM_NARROW_WEIGHTS ||
                                  k == schema::CortexMKernel::S8_IM2COL_GEMM_NARROW_WEIGHTS);
}
inline schema::CortexMKernel general_kernel(schema::CortexMKernel k) {
  switch (k) {
    case schema::CortexMKernel::S8_GEMM_SHORT_REQUANT:
    case schema::CortexMKernel::S8_GEMM_NARROW_WEIGHTS:
      return schema::CortexMKernel::S8_GEMM;
    case schema::CortexMKernel::S8_IM2COL_GEMM_SHORT_REQUANT:
    case schema::CortexMKernel::S8_IM2COL_GEMM_NARROW_WEIGHTS:
      return schema::CortexMKernel::S8_IM2COL_GEMM;
    case schema::CortexMKernel::S8_DEPTHWISE_SHORT_REQUANT:
      return schema::CortexMKernel::S8_DEPTHWISE;
    default:
      return k;
  }
}

#if defined(__x86_64__)
// Input 5 of a GEMM (S8Requant::bias_unsigned): int32 [channels], each
// bias[c] - 128 * sum_k w[c][k] in wrapping int32 arithmetic, so that the
// unsigned-byte sums give exactly the signed sums' outputs.
inline const char* check_unsigned_input_bias(const OpContext& ctx, int32_t channels) {
  const TensorView unsigned_bias = ctx.input(5), weights = ctx.input(1);
  if (unsigned_bias.dtype != DType::kInt32 || unsigned_bias.shape.rank != 1 ||
      unsigned_bias.shape.dims[0] != channels || channels <= 0 || weights.shape.num_elements() % channels != 0) {
    return FLOE_MSG("int8 Cortex-M GEMM: the unsigned-input bias must be int32 [output channels]");
  }
  const size_t k = static_cast<size_t>(weights.shape.num_elements() / channels);
  const int8_t* w = static_cast<const int8_t*>(weights.data);
  const int32_t* bias = static_cast<const int32_t*>(ctx.input(2).data);
  const int32_t* given = static_cast<const int32_t*>(unsigned_bias.data);
  for (int32_t c = 0; c < channels; ++c, w += k) {
    uint32_t sum = 0;
    for (size_t i = 0; i < k; ++i) sum += static_cast<uint32_t>(static_cast<int32_t>(w[i]));
    if (static_cast<uint32_t>(given[c]) != static_cast<uint32_t>(bias[c]) - 128u * sum) {
      return FLOE_MSG("int8 Cortex-M GEMM: the unsigned-input bias does not match the weights and bias");
    }
  }
  return nullptr;
}
#endif

struct S8Quantization {
  int32_t input_offset;  // minus the input zero point
  int32_t output_offset, act_min, act_max;
};

// int8 input, weights and output 0; `outputs` outputs; the int32 bias
// [channels] present (folded or raw, by kernel); per-channel int32 multiplier
// and shift arrays [channels]; symmetric weights.
inline const char* prepare_s8_operands(const OpContext& ctx, int32_t channels, int outputs,
                                       S8Quantization* q) {
  if (ctx.op->backend() != schema::Backend::CORTEX_M) {
    return FLOE_MSG("int8 Cortex-M kernel chosen for an op not on the CORTEX_M backend");
  }
  // Input 5, the unsigned-input bias: x86-64 builds, on a GEMM (checked below).
#if defined(__x86_64__)
  const schema::CortexMKernel kernel = general_kernel(ctx.op->cortexm_kernel());
  const bool unsigned_bias = ctx.input_count() == 6 && (kernel == schema::CortexMKernel::S8_GEMM ||
                                                        kernel == schema::CortexMKernel::S8_IM2COL_GEMM);
#else
  constexpr bool unsigned_bias = false;
#endif
  if (ctx.input_count() != (unsigned_bias ? 6 : 5) || ctx.output_count() != outputs) {
    return FLOE_MSG("int8 Cortex-M op: wrong number of inputs or outputs");
  }
  // Checked here once (shifts, multipliers, a packed filter's constants), so
  // they must not change after: constants of the model.
  for (int i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i) || (i > 0 && !ctx.input_is_constant(i))) {
      return FLOE_MSG("int8 Cortex-M op: weights, bias, multipliers and shifts must be constants");
    }
  }
  // The packed 1x1 kernel's weights are int32 words (s8_pack_gemm_pair).
  const bool packed = ctx.op->cortexm_kernel() == schema::CortexMKernel::S8_GEMM_PACKED_SHORT_REQUANT;
  if (!ops::is_s8(ctx.input(0)) || !(packed ? ctx.input(1).dtype == DType::kInt32 : ops::is_s8(ctx.input(1))) ||
      !ops::is_s8(ctx.output(0))) {
    return FLOE_MSG("int8 Cortex-M op: input, weights and output must be int8");
  }
  const TensorView bias = ctx.input(2), mult = ctx.input(3), shift = ctx.input(4);
  for (const TensorView* v : {&bias, &mult, &shift}) {
    if (v->dtype != DType::kInt32 || v->shape.rank != 1 || v->shape.dims[0] != channels) {
      return FLOE_MSG("int8 Cortex-M op: bias, multipliers and shifts must be int32 [output channels]");
    }
  }
#if defined(__x86_64__)
  if (unsigned_bias) {
    if (const char* err = check_unsigned_input_bias(ctx, channels)) return err;
  }
#endif
  const int32_t* m = static_cast<const int32_t*>(mult.data);
  const int32_t* sh = static_cast<const int32_t*>(shift.data);
  for (int32_t c = 0; c < channels; ++c) {
    if (!ops::valid_multiplier(m[c], sh[c])) return FLOE_MSG("int8 op: multiplier or shift out of range");
  }
  if (is_short_requant(ctx.op->cortexm_kernel())) {
#if defined(FLOE_CORTEXM_S8_MVE)
    return FLOE_MSG("int8 Cortex-M op: the short requantization is an M4/M33 layout, not Helium's");
#else
    // The ranges the short path's shifts rely on (the accumulator bound is
    // the converter's proof).
    for (int32_t c = 0; c < channels; ++c) {
      if (m[c] < (int32_t{1} << 30) || sh[c] < -22 || sh[c] > -1) {
        return FLOE_MSG("int8 Cortex-M op: short requantization with a multiplier or shift out of its range");
      }
    }
#endif
  }
  const char* why = nullptr;
  const schema::Requantization* r = ops::requantization_of(ctx, &why);
  if (r == nullptr) return why;
  const int32_t input_offset = ops::entry(r->input_offsets(), 0);
  if (input_offset < -127 || input_offset > 128 || ops::entry(r->input_offsets(), 1) != 0) {
    return FLOE_MSG("int8 Cortex-M op: input offset out of range or weights not symmetric");
  }
  *q = {input_offset, r->output_offset(), r->activation_min(), r->activation_max()};
  return nullptr;
}

// The microkernels' requantization from the bound operands 2, 3, 4.
inline S8Requant s8_requant(const PreparedOp& op, int32_t output_offset, int32_t act_min, int32_t act_max,
                            bool short_path, bool narrow_weights = false) {
  return {static_cast<const int32_t*>(op.operands[2].data),
          static_cast<const int32_t*>(op.operands[3].data),
          static_cast<const int32_t*>(op.operands[4].data),
          output_offset,
          act_min,
          act_max,
          short_path,
          kS8NarrowWeightsUsed && narrow_weights,
#if defined(__x86_64__)
          op.inputs == 6 ? static_cast<const int32_t*>(op.operands[5].data) : nullptr,
#endif
  };
}

}  // namespace floe::cortexm
