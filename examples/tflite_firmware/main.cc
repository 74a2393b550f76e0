// SPDX-License-Identifier: Apache-2.0
// Runs the embedded model once on the host's input and compares every output
// byte with the host's output (floe_add_model_reference). Built WITHOUT_FLOE
// it does everything but the model: the flash base line.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "console.h"
#include "floe_m_model.h"
#include "floe_m_reference.h"
#if !defined(WITHOUT_FLOE)
#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#endif

namespace {

#if !defined(WITHOUT_FLOE)
alignas(16) uint8_t arena[FLOE_M_ARENA_SIZE];

int fail(const char* what, const char* message) {
  console_write(what);
  console_write(": ");
  console_write(message);
  console_write("\n");
  return 2;
}
#endif

// What the firmware computes: the model's output for the reference input.
uint8_t output[sizeof floe_m_reference_output_0];

}  // namespace

int main() {
#if defined(WITHOUT_FLOE)
  // The data the real firmware moves, so that the base line keeps it.
  memcpy(output, floe_m_reference_input_0,
         sizeof output < sizeof floe_m_reference_input_0 ? sizeof output : sizeof floe_m_reference_input_0);
#else
  floe::Model model;
  if (model.Load(floe_m_model, FLOE_M_MODEL_SIZE) != floe::Status::kOk) {
    return fail("Model::Load", model.error().message);
  }
  floe::Interpreter interpreter(model, arena, sizeof arena);
  if (interpreter.Init() != floe::Status::kOk) return fail("Interpreter::Init", interpreter.error().message);
  memcpy(interpreter.input(0).data, floe_m_reference_input_0, sizeof floe_m_reference_input_0);
  if (interpreter.Invoke() != floe::Status::kOk) return fail("Interpreter::Invoke", interpreter.error().message);
  memcpy(output, interpreter.output(0).data, sizeof output);
#endif
  const bool same = memcmp(output, floe_m_reference_output_0, sizeof output) == 0;
  console_write(same ? "firmware: PASS, the output equals the host's\n" : "firmware: FAIL, the output differs\n");
  return same ? 0 : 1;
}
