// SPDX-License-Identifier: Apache-2.0
// Firmware example: TFLM's person-detection model (MobileNetV1 0.25, 96x96
// grayscale, int8) as TFLM ships it, converted at build time from the .tflite,
// run on the image TFLM's own test feeds (person.bmp) and checked byte for byte
// against the output the host computed (-113 no person, 113 person).
#include "examples/firmware/common/example.h"
#include "floe_person_detect_int8_model.h"
#include "floe_person_detect_int8_reference.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_PERSON_DETECT_INT8_ARENA_SIZE];

int main() {
  floe::platform::init();
  const floe::examples::Example example = {
      "person_detect_int8",
      floe_person_detect_int8_model, FLOE_PERSON_DETECT_INT8_MODEL_SIZE,
      arena, sizeof arena,
      FLOE_PERSON_DETECT_INT8_INPUT_INPUT, floe_person_detect_int8_reference_input_0,
      FLOE_PERSON_DETECT_INT8_REFERENCE_INPUT_0_ELEMENTS,
      FLOE_PERSON_DETECT_INT8_OUTPUT_MOBILENETV1_PREDICTIONS_RESHAPE_1, floe_person_detect_int8_reference_output_0,
      FLOE_PERSON_DETECT_INT8_REFERENCE_OUTPUT_0_ELEMENTS,
  };
  return floe::examples::run_example(example);
}
