// SPDX-License-Identifier: Apache-2.0
// Firmware example: the MNIST MLP (examples/mnist_mlp), converted at build time
// by floe_add_model(), classifies a held-out "7" and checks its logits against
// the ones the host build computed. Everything is static: the model is a const
// array in flash, the arena is sized by the converter's exact number.
#include "examples/firmware/common/example.h"
#include "floe_mnist_model.h"
#include "floe_mnist_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_MNIST_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "mnist_mlp",
      floe_mnist_model, FLOE_MNIST_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_MNIST_INPUT_IMAGES, floe_mnist_reference_input_0, FLOE_MNIST_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_MNIST_OUTPUT_SOFTMAX_LINEAR_ADD, floe_mnist_reference_output_0,
      FLOE_MNIST_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
