// SPDX-License-Identifier: Apache-2.0
// Conversion-time evaluation: the converter's one way to compute values. It
// runs a lowered fragment through the runtime's own interpreter and reference
// kernels (one definition of each op's semantics), from a model it packs
// itself: no memory planner, no emitter. Graph passes, the op handlers and the
// optimizer call it; it depends on nothing of the converter but the IR.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "converter/ir/host_tensor.h"
#include "converter/ir/lowered.h"
#include "runtime/core/tensor.h"

namespace floe::conv {

// `model` must have no inputs (every operand constant). Throws ConvertError
// carrying the runtime's status and message on failure.
std::vector<HostTensor> run_lowered(const LoweredModel& model, const std::string& context);

// A lowered model with inputs, run many times (calibration, accuracy checks):
// packed and prepared once, reference kernels only, every value in its own
// arena slot. int8 ops run with the integers converter/quantize gave them;
// each run starts from a reset state (variable tensors as after Init()).
class LoweredRunner {
 public:
  // Called with the inputs, then each op's outputs as the op finishes.
  using Observer = std::function<void(int value, const TensorView& tensor)>;

  // Throws ConvertError when the runtime refuses the model. `model` must
  // outlive the runner.
  LoweredRunner(const LoweredModel& model, const std::string& context);
  ~LoweredRunner();
  LoweredRunner(const LoweredRunner&) = delete;
  LoweredRunner& operator=(const LoweredRunner&) = delete;

  // `inputs` in model.inputs order, each of its input's dtype and size.
  std::vector<HostTensor> run(const std::vector<HostTensor>& inputs, const Observer& observe = {});

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A copy of a runtime tensor (an interpreter's input, output or intermediate).
HostTensor host_tensor_of(const TensorView& view);

// Bytes of the runtime's persistent region (prepared ops: records, bound
// operands, params blocks; runtime/core/registry.h) for `model` on a target
// with `pointer_bytes`-byte pointers.
uint64_t persistent_region_bytes(const LoweredModel& model, uint64_t pointer_bytes);

}  // namespace floe::conv
