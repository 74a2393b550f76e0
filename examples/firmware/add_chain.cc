// SPDX-License-Identifier: Apache-2.0
// Firmware example: 64 chained one-element ADDs (examples/add_chain), the
// interpreter's per-op cost with almost no kernel work; checked against the
// output the host build computed.
#include "examples/firmware/common/example.h"
#include "floe_add_chain_model.h"
#include "floe_add_chain_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_ADD_CHAIN_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "add_chain",
      floe_add_chain_model, FLOE_ADD_CHAIN_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_ADD_CHAIN_INPUT_X, floe_add_chain_reference_input_0, FLOE_ADD_CHAIN_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_ADD_CHAIN_OUTPUT_Y, floe_add_chain_reference_output_0,
      FLOE_ADD_CHAIN_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
