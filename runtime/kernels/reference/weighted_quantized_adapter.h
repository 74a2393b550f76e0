// SPDX-License-Identifier: Apache-2.0
// The adapter half the reference int8 and 16x8 weighted ops (CONV2D,
// DEPTHWISE_CONV2D, MATMUL as FULLY_CONNECTED) share: the checks their
// prepare starts with, and the eval that binds the operands and runs the
// op's kernel, chosen once at Init() by activation dtype and by per-channel
// or per-tensor requantization.
#pragma once

#include "runtime/kernels/common/op_adapter.h"
#include "runtime/kernels/reference/weighted_quantized.h"

namespace floe::ops {

// Weights laid out for the reference kernels (not a Cortex-M kernel's
// layout), and the operand counts, before any operand is looked at.
inline const char* check_reference_weighted_s8(const OpContext& ctx) {
  if (ctx.op->cortexm_kernel() != schema::CortexMKernel::NONE) {
    return FLOE_MSG("int8 op laid out for a Cortex-M kernel on another backend");
  }
  return weighted_s8_operands(ctx);
}

template <typename Params, void (*kS8)(const Params&, const ref::WeightedOperands<int8_t>&),
          void (*kS16)(const Params&, const ref::WeightedOperands<int16_t>&)>
struct WeightedQuantizedEval {
  template <typename T, bool kPerChannel>
  static Status run(const PreparedOp& ctx) {
    const ref::WeightedOperands<T> operands = {
        in_as<T>(ctx.input(0)),
        in_as<int8_t>(ctx.input(1)),
        in_as<typename ref::QuantizedScheme<T>::Bias>(ctx.input(2)),
        channel_multipliers(ctx, kPerChannel),
        channel_shifts(ctx, kPerChannel),
        out_as<T>(ctx.output(0))};
    if constexpr (sizeof(T) == 2) {
      kS16(ctx.params_as<Params>(), operands);
    } else {
      kS8(ctx.params_as<Params>(), operands);
    }
    return Status::kOk;
  }
  static constexpr EvalFn kS8PerTensor = run<int8_t, false>;
  static constexpr EvalFn kS16PerTensor = run<int16_t, false>;

  static void select(const OpContext& ctx, DType activations, bool per_channel) {
    if (activations == DType::kInt16) {
      ctx.set_eval(per_channel ? run<int16_t, true> : run<int16_t, false>);
    } else {
      ctx.set_eval(per_channel ? run<int8_t, true> : run<int8_t, false>);
    }
  }
};

}  // namespace floe::ops
