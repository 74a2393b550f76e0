// SPDX-License-Identifier: Apache-2.0
// Firmware example: a TF1 tf.cond whose predicate depends on the input and
// whose then branch holds a Gather (examples/runtime_if), run by the
// interpreter as an IF op; checked against the output the host build computed.
#include "examples/firmware/common/example.h"
#include "floe_runtime_if_model.h"
#include "floe_runtime_if_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_RUNTIME_IF_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "runtime_if",
      floe_runtime_if_model, FLOE_RUNTIME_IF_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_RUNTIME_IF_INPUT_X, floe_runtime_if_reference_input_0, FLOE_RUNTIME_IF_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_RUNTIME_IF_OUTPUT_Y, floe_runtime_if_reference_output_0,
      FLOE_RUNTIME_IF_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
