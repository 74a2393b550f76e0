// SPDX-License-Identifier: Apache-2.0
// The interpreter core as a minimal application links it: Model::Load,
// Interpreter::Init and Invoke on the seed conv, nothing else of the runtime
// (no self-test, no profile). floe_footprint reports this firmware's "core"
// line as the core figure of ports/README.md; the _checksum variant also verifies the
// file's CRC32C at Load (FLOE_VERIFY_CHECKSUM=1), which gives the checksum's
// cost. Checked like the examples: the output against the host's.
#include "floe_conv_seed_model.h"
#include "floe_conv_seed_reference.h"
#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "runtime/platform.h"

alignas(16) static uint8_t arena[FLOE_CONV_SEED_ARENA_SIZE];

namespace {

int fail(const char* what, const floe::Error& error) {
  floe::platform::log("FAIL: ");
  floe::platform::log(what);
  floe::platform::log(": ");
  floe::platform::log(floe::status_name(error.status));
  floe::platform::log(": ");
  floe::platform::log(error.message);
  floe::platform::log("\n");
  return 1;
}

}  // namespace

int main() {
  floe::platform::init();
  floe::Model model;
#if FLOE_VERIFY_CHECKSUM
  floe::LoadOptions options;
  options.verify_checksum = true;
  const floe::Status loaded = model.Load(floe_conv_seed_model, FLOE_CONV_SEED_MODEL_SIZE, options);
#else
  const floe::Status loaded = model.Load(floe_conv_seed_model, FLOE_CONV_SEED_MODEL_SIZE);
#endif
  if (loaded != floe::Status::kOk) return fail("Model::Load", model.error());
  floe::Interpreter interpreter(model, arena, sizeof arena);
  if (interpreter.Init() != floe::Status::kOk) return fail("Interpreter::Init", interpreter.error());
  const floe::TensorView in = interpreter.input(FLOE_CONV_SEED_INPUT_IMAGE);
  const floe::TensorView out = interpreter.output(FLOE_CONV_SEED_OUTPUT_CONV);
  if (in.bytes != sizeof floe_conv_seed_reference_input_0 ||
      out.bytes != sizeof floe_conv_seed_reference_output_0) {
    floe::platform::log("FAIL: input/output sizes differ from the host's reference\n");
    return 1;
  }
  float* input = static_cast<float*>(in.data);
  for (size_t i = 0; i < FLOE_CONV_SEED_REFERENCE_INPUT_0_ELEMENTS; ++i) input[i] = floe_conv_seed_reference_input_0[i];
  if (interpreter.Invoke() != floe::Status::kOk) return fail("Interpreter::Invoke", interpreter.error());
  const float* output = static_cast<const float*>(out.data);
  for (size_t i = 0; i < FLOE_CONV_SEED_REFERENCE_OUTPUT_0_ELEMENTS; ++i) {
    const float host = floe_conv_seed_reference_output_0[i];
    const float magnitude = host < 0 ? -host : host;
    const float diff = output[i] > host ? output[i] - host : host - output[i];
    if (diff > 1e-4f * (magnitude > 1.0f ? magnitude : 1.0f)) {
      floe::platform::log("FAIL: output differs from the host's (tolerance 1e-4 x max(1, |host|))\n");
      return 1;
    }
  }
  floe::platform::log("core footprint: PASS, output matches the host's\n");
  return 0;
}
