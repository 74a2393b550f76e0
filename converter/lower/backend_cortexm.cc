// SPDX-License-Identifier: Apache-2.0
// CORTEX_M backend assignment: a per-op decision from the op's code, dtype and
// options, recorded in the model so the device never decides (it dispatches on
// Operator.backend; see runtime/core/dispatch.cc).
#include "converter/lower/backend_cortexm.h"

namespace floe::conv {
namespace {

bool all_f32(const LoweredModel& model, const std::vector<int>& values) {
  for (int v : values) {
    if (v >= 0 && model.values[static_cast<size_t>(v)].dtype != DType::kFloat32) return false;
  }
  return true;
}

bool takes(const LoweredModel& model, const LoweredOp& op) {
  if (!runs_on(op.opcode, schema::Backend::CORTEX_M)) return false;
  // AUDIO_SPECTROGRAM's int32 input is the FFT's constant bit-reversal table.
  if (op.opcode == schema::OpCode::AUDIO_SPECTROGRAM) return all_f32(model, {op.inputs[0]}) && all_f32(model, op.outputs);
  if (!all_f32(model, op.inputs) || !all_f32(model, op.outputs)) return false;
  if (op.opcode == schema::OpCode::DEPTHWISE_CONV2D) {
    // Other multipliers would run the reference loop inside the Cortex-M
    // kernel anyway; saying so in the model keeps the plan truthful.
    const auto* options = op.options.AsDepthwiseConv2DOptions();
    return options != nullptr && options->depth_multiplier == 1;
  }
  return true;
}

}  // namespace

bool is_cortexm_target(const std::string& target) {
  return target == "cortex-m4" || target == "cortex-m33" || target == "cortex-m55";
}

int assign_cortexm_backends(LoweredModel* model, const std::string& target) {
  int assigned = 0;
  for (LoweredOp& op : model->ops) {
    if (takes(*model, op)) {
      op.backend = schema::Backend::CORTEX_M;
      ++assigned;
    }
  }
  model->target = target;
  return assigned;
}

}  // namespace floe::conv
