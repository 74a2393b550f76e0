// SPDX-License-Identifier: Apache-2.0
// Firmware example: a TF1 while loop whose trip count depends on the input,
// nested in a 3-iteration outer loop (examples/nested_loop), run by the
// interpreter as a WHILE op inside another WHILE's body; checked against the
// output the host build computed.
#include "examples/firmware/common/example.h"
#include "floe_nested_loop_model.h"
#include "floe_nested_loop_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_NESTED_LOOP_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "nested_loop",
      floe_nested_loop_model, FLOE_NESTED_LOOP_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_NESTED_LOOP_INPUT_X, floe_nested_loop_reference_input_0, FLOE_NESTED_LOOP_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_NESTED_LOOP_OUTPUT_Y, floe_nested_loop_reference_output_0,
      FLOE_NESTED_LOOP_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
