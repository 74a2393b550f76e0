// SPDX-License-Identifier: Apache-2.0
// Firmware example: keyword spotting from raw audio. ML-KWS-for-MCU's DS_CNN_S
// frozen graph, converted at build time from its decoded samples (the sample
// rate fixed at 16 kHz), so one floe model holds the front end
// (AUDIO_SPECTROGRAM, MFCC) and the network. It runs on one second of
// embedded 16 kHz speech ("yes"), prints the top label over semihosting and
// checks every score against the host's.
#include "examples/firmware/common/example.h"
#include "examples/firmware/common/kws_labels.h"
#include "floe_kws_audio_model.h"
#include "floe_kws_audio_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_KWS_AUDIO_ARENA_SIZE];

static_assert(floe::examples::kKwsLabelCount == FLOE_KWS_AUDIO_REFERENCE_OUTPUT_0_ELEMENTS, "one label a class");

int main() {
  floe::platform::init();
  floe::examples::Example example = {
      "kws_audio",
      floe_kws_audio_model, FLOE_KWS_AUDIO_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_KWS_AUDIO_INPUT_DECODED_SAMPLE_DATA, floe_kws_audio_reference_input_0,
      FLOE_KWS_AUDIO_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_KWS_AUDIO_OUTPUT_LABELS_SOFTMAX, floe_kws_audio_reference_output_0,
      FLOE_KWS_AUDIO_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  example.labels = floe::examples::kKwsLabels;
  return floe::examples::run_example(example);
}
