// SPDX-License-Identifier: Apache-2.0
// Runs a lowered model through the real runtime (serialize, Model::Load,
// Interpreter) and returns its outputs. Constant folding uses this, so folded
// values come from the same reference kernels the device runs.
#pragma once

#include <vector>

#include "converter/ir/host_tensor.h"
#include "converter/ir/lowered.h"

namespace floe::conv {

// `model` must have no inputs (every operand constant). Throws ConvertError
// carrying the runtime's status and message on failure.
std::vector<HostTensor> run_lowered(const LoweredModel& model, const std::string& context);

}  // namespace floe::conv
