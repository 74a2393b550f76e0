// SPDX-License-Identifier: Apache-2.0
// Firmware example: the seed article's small convolution (examples/conv_seed,
// 5x5x3 image, 3x3x3x1 kernel, stride 2, SAME), converted at build time by
// floe_add_model(), run on the example's fixed image and checked against the
// output the host build computed.
#include "examples/firmware/common/example.h"
#include "floe_conv_seed_model.h"
#include "floe_conv_seed_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_CONV_SEED_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "conv_seed",
      floe_conv_seed_model, FLOE_CONV_SEED_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_CONV_SEED_INPUT_IMAGE, floe_conv_seed_reference_input_0,
      FLOE_CONV_SEED_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_CONV_SEED_OUTPUT_CONV, floe_conv_seed_reference_output_0,
      FLOE_CONV_SEED_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
