// SPDX-License-Identifier: Apache-2.0
// Firmware example: keyword spotting from raw audio with the network in int8.
// The same DS_CNN_S graph as kws_audio, quantized after training at build time
// (calibrated on the corpus clips, examples/firmware/audio_calibration.py):
// the front end (AUDIO_SPECTROGRAM, MFCC) stays float, a QUANTIZE feeds the
// int8 network on the Cortex-M int8 kernels, a DEQUANTIZE gives float scores.
// Prints the top label and checks every score against the host's.
#include "examples/firmware/common/example.h"
#include "examples/firmware/common/kws_labels.h"
#include "floe_kws_audio_int8_model.h"
#include "floe_kws_audio_int8_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_KWS_AUDIO_INT8_ARENA_SIZE];

static_assert(floe::examples::kKwsLabelCount == FLOE_KWS_AUDIO_INT8_REFERENCE_OUTPUT_0_ELEMENTS, "one label a class");

int main() {
  floe::platform::init();
  floe::examples::Example example = {
      "kws_audio_int8",
      floe_kws_audio_int8_model, FLOE_KWS_AUDIO_INT8_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_KWS_AUDIO_INT8_INPUT_DECODED_SAMPLE_DATA, floe_kws_audio_int8_reference_input_0,
      FLOE_KWS_AUDIO_INT8_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_KWS_AUDIO_INT8_OUTPUT_LABELS_SOFTMAX, floe_kws_audio_int8_reference_output_0,
      FLOE_KWS_AUDIO_INT8_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  example.labels = floe::examples::kKwsLabels;
  return floe::examples::run_example(example);
}
