// SPDX-License-Identifier: Apache-2.0
// Bench firmware for the peers' networks (../shared/tools/peers/make_bench_models.py:
// mlp 784-300-100-10 at batch 1, the small cnn), built only when
// FLOE_BENCH_PEER_MODELS_DIR names their folder, so floe_bench can put floe's
// instructions per inference next to TFLM's on the same weights
// (../shared/docs/arm-anchors.md). One source for every network: the build
// passes the model's name as PEER (upper case, for the header's macros) and
// peer (lower case, for its arrays), and the output node is `prob` and the
// input `x` in all of them.
#include "examples/firmware/common/example.h"
#include "runtime/platform.h"

#define FLOE_STR2(x) #x
#define FLOE_STR(x) FLOE_STR2(x)
#define FLOE_CAT3(a, b, c) a##b##c
#define FLOE_MACRO(a, b, c) FLOE_CAT3(a, b, c)
#include FLOE_STR(FLOE_MACRO(floe_, peer, _model.h))
#include FLOE_STR(FLOE_MACRO(floe_, peer, _reference.h))

alignas(16) static uint8_t arena[FLOE_MACRO(FLOE_, PEER, _ARENA_SIZE)];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      FLOE_STR(peer),
      FLOE_MACRO(floe_, peer, _model), FLOE_MACRO(FLOE_, PEER, _MODEL_SIZE),
      arena, sizeof arena,
      FLOE_MACRO(FLOE_, PEER, _INPUT_X), FLOE_MACRO(floe_, peer, _reference_input_0),
      FLOE_MACRO(FLOE_, PEER, _REFERENCE_INPUT_0_ELEMENTS),
      FLOE_MACRO(FLOE_, PEER, _OUTPUT_PROB), FLOE_MACRO(floe_, peer, _reference_output_0),
      FLOE_MACRO(FLOE_, PEER, _REFERENCE_OUTPUT_0_ELEMENTS),
  };
  return floe::examples::run_example(example);
}
