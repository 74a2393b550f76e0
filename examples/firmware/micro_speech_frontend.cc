// SPDX-License-Identifier: Apache-2.0
// Firmware example: TFLite Micro's micro_speech audio preprocessor
// (audio_preprocessor_int8.tflite, TFLM's Signal custom ops) on one 30 ms
// window of "yes": 480 int16 samples to 40 int8 features, checked against the
// host (which equals TFLM's yes_30ms_features.npy); floe_bench counts its
// instructions per window.
#include "examples/firmware/common/example.h"
#include "floe_micro_speech_frontend_model.h"
#include "floe_micro_speech_frontend_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_MICRO_SPEECH_FRONTEND_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "micro_speech_frontend",
      floe_micro_speech_frontend_model, FLOE_MICRO_SPEECH_FRONTEND_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_MICRO_SPEECH_FRONTEND_INPUT_SERVING_DEFAULT_AUDIO_FRAME, floe_micro_speech_frontend_reference_input_0,
      FLOE_MICRO_SPEECH_FRONTEND_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_MICRO_SPEECH_FRONTEND_OUTPUT_PARTITIONEDCALL, floe_micro_speech_frontend_reference_output_0,
      FLOE_MICRO_SPEECH_FRONTEND_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
