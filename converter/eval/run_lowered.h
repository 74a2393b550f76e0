// SPDX-License-Identifier: Apache-2.0
// Conversion-time evaluation: the converter's one way to compute values. It
// runs a lowered fragment through the runtime's own interpreter and reference
// kernels (one definition of each op's semantics), from a model it packs
// itself: no memory planner, no emitter. Graph passes, the op handlers and the
// optimizer call it; it depends on nothing of the converter but the IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/ir/host_tensor.h"
#include "converter/ir/lowered.h"
#include "runtime/core/tensor.h"

namespace floe::conv {

// `model` must have no inputs (every operand constant). Throws ConvertError
// carrying the runtime's status and message on failure.
std::vector<HostTensor> run_lowered(const LoweredModel& model, const std::string& context);

// A copy of a runtime tensor (an interpreter's input, output or intermediate).
HostTensor host_tensor_of(const TensorView& view);

// Bytes of the runtime's persistent region (prepared ops: records, bound
// operands, params blocks; runtime/core/dispatch.h) for `model` on a target
// with `pointer_bytes`-byte pointers.
uint64_t persistent_region_bytes(const LoweredModel& model, uint64_t pointer_bytes);

}  // namespace floe::conv
