// SPDX-License-Identifier: Apache-2.0
// Runs the embedded MNIST model on a held-out "7" and checks every logit
// against the one the host computed (floe_add_model_reference). Nothing is
// allocated: the model is a const array, the arena a static buffer of the
// converter's exact size. Then the model's embedded self-test checks every op
// against the host's. Exit status 0 = the device agrees with the host.
#include <stddef.h>
#include <stdint.h>

#include "console.h"
#include "floe_mnist_model.h"
#include "floe_mnist_reference.h"
#include "runtime/core/backend.h"
#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "runtime/core/selftest.h"

namespace {

alignas(16) uint8_t arena[FLOE_MNIST_ARENA_SIZE];

// Float printing without printf("%f") (newlib's allocates): milli-units.
void write_number(const char* label, long long value) {
  char text[48];
  size_t n = 0;
  for (const char* s = label; *s != '\0'; ++s) text[n++] = *s;
  if (value < 0) {
    text[n++] = '-';
    value = -value;
  }
  char digits[24];
  size_t count = 0;
  do {
    digits[count++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (count > 0) text[n++] = digits[--count];
  text[n++] = '\n';
  text[n] = '\0';
  console_write(text);
}

int fail(const char* what, const floe::Error& error) {
  console_write(what);
  console_write(": ");
  console_write(error.message);
  console_write("\n");
  return 2;
}

}  // namespace

int main() {
  // Installs floe's arena allocator into XNNPACK (host builds); a no-op without it.
  if (floe::backend_initialize() != floe::Status::kOk) {
    console_write("floe::backend_initialize failed\n");
    return 2;
  }
  floe::Model model;
  if (model.Load(floe_mnist_model, FLOE_MNIST_MODEL_SIZE) != floe::Status::kOk) {
    return fail("Model::Load", model.error());
  }
  floe::Interpreter interpreter(model, arena, sizeof arena);
  if (interpreter.Init() != floe::Status::kOk) return fail("Interpreter::Init", interpreter.error());
  float* image = interpreter.input(FLOE_MNIST_INPUT_IMAGES).as<float>();
  for (size_t i = 0; i < FLOE_MNIST_REFERENCE_INPUT_0_ELEMENTS; ++i) image[i] = floe_mnist_reference_input_0[i];
  if (interpreter.Invoke() != floe::Status::kOk) return fail("Interpreter::Invoke", interpreter.error());

  const float* logits = interpreter.output(FLOE_MNIST_OUTPUT_SOFTMAX_LINEAR_ADD).as<float>();
  size_t best = 0;
  bool agrees = true;
  for (size_t i = 0; i < FLOE_MNIST_REFERENCE_OUTPUT_0_ELEMENTS; ++i) {
    const float host = floe_mnist_reference_output_0[i];
    const float diff = logits[i] > host ? logits[i] - host : host - logits[i];
    const float scale = host > 1.0f ? host : (host < -1.0f ? -host : 1.0f);
    // Float kernels may sum in another order than the host's: 1e-4 relative.
    if (!(diff <= 1e-4f * scale)) agrees = false;
    if (logits[i] > logits[best]) best = i;
    write_number("logit x1000: ", static_cast<long long>(logits[i] * 1000.0f));
  }
  write_number("arena bytes: ", static_cast<long long>(sizeof arena));
  write_number("predicted digit: ", static_cast<long long>(best));

  // Every op against the host's digests (same arena: the run above is done).
  const floe::SelfTestResult self_test = floe::SelfTest(model, arena, sizeof arena);
  if (self_test.status == floe::Status::kOk) {
    write_number("self-test: PASS, ops checked: ", static_cast<long long>(self_test.ops_checked));
  } else {
    console_write("self-test: FAIL at ");
    console_write(self_test.op_name);
    console_write(": ");
    console_write(self_test.message);
    console_write("\n");
  }
  const bool pass = agrees && best == 7 && self_test.status == floe::Status::kOk;
  console_write(pass ? "consumer: PASS (matches the host, digit 7)\n" : "consumer: FAIL (differs from the host)\n");
  return pass ? 0 : 1;
}
