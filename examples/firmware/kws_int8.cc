// SPDX-License-Identifier: Apache-2.0
// Firmware example: MLPerf Tiny's keyword-spotting DS-CNN exactly as TFLM users
// ship it (kws_ref_model.tflite, int8), converted at build time from the
// .tflite, run on the reference submission's only sample and
// checked byte for byte against the output the host computed.
#include "examples/firmware/common/example.h"
#include "floe_kws_int8_model.h"
#include "floe_kws_int8_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_KWS_INT8_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "kws_int8",
      floe_kws_int8_model, FLOE_KWS_INT8_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_KWS_INT8_INPUT_INPUT_1, floe_kws_int8_reference_input_0,
      FLOE_KWS_INT8_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_KWS_INT8_OUTPUT_IDENTITY, floe_kws_int8_reference_output_0,
      FLOE_KWS_INT8_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
