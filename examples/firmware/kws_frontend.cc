// SPDX-License-Identifier: Apache-2.0
// Firmware example: the keyword-spotting front end alone (DS_CNN_S's graph up
// to Mfcc: AUDIO_SPECTROGRAM over one second of 16 kHz audio, 49 frames of
// 640 samples, then MFCC with 40 mel channels and 10 coefficients), checked
// against the host; floe_bench counts its instructions per second of audio.
#include "examples/firmware/common/example.h"
#include "floe_kws_frontend_model.h"
#include "floe_kws_frontend_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_KWS_FRONTEND_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "kws_frontend",
      floe_kws_frontend_model, FLOE_KWS_FRONTEND_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_KWS_FRONTEND_INPUT_DECODED_SAMPLE_DATA, floe_kws_frontend_reference_input_0,
      FLOE_KWS_FRONTEND_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_KWS_FRONTEND_OUTPUT_MFCC, floe_kws_frontend_reference_output_0,
      FLOE_KWS_FRONTEND_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
