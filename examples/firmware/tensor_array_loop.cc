// SPDX-License-Identifier: Apache-2.0
// Firmware example: examples/while_loop's input-dependent loop writing each
// iteration's value into a TensorArray stacked after it (examples/tensor_array_loop):
// one WHILE op that updates a [16, 4] buffer row by row; checked against the
// output the host build computed.
#include "examples/firmware/common/example.h"
#include "floe_tensor_array_loop_model.h"
#include "floe_tensor_array_loop_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_TENSOR_ARRAY_LOOP_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "tensor_array_loop",
      floe_tensor_array_loop_model, FLOE_TENSOR_ARRAY_LOOP_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_TENSOR_ARRAY_LOOP_INPUT_X, floe_tensor_array_loop_reference_input_0, FLOE_TENSOR_ARRAY_LOOP_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_TENSOR_ARRAY_LOOP_OUTPUT_Y, floe_tensor_array_loop_reference_output_0,
      FLOE_TENSOR_ARRAY_LOOP_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
