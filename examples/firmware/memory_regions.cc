// SPDX-License-Identifier: Apache-2.0
// Firmware example: the MNIST MLP converted twice by floe_add_model(), once
// for one arena and once with --memory-regions fast=1K,slow=1M, which puts the
// most-accessed activations in the fast region and the rest (and the prepared
// ops) in the slow one. On mps3-an547 the fast arena is in the DTCM (.bss) and
// the slow one in the DDR (section .floe_slow_arena, mps3-an547.ld); elsewhere
// both are ordinary static arrays. Both models run on the same held-out "7":
// the split run must equal the one-arena run bit for bit, and both the host's
// logits within the examples' tolerance.
#include <stddef.h>
#include <stdint.h>

#include "floe_mnist_one_model.h"
#include "floe_mnist_one_reference.h"
#include "floe_mnist_split_model.h"
#include "runtime/core/interpreter.h"
#include "runtime/core/model.h"
#include "runtime/platform.h"

#if defined(FLOE_SLOW_ARENA_SECTION)
#define FLOE_SLOW_ARENA __attribute__((section(FLOE_SLOW_ARENA_SECTION)))
#else
#define FLOE_SLOW_ARENA
#endif

alignas(16) static uint8_t one_arena[FLOE_MNIST_ONE_ARENA_SIZE];
alignas(16) static uint8_t fast_arena[FLOE_MNIST_SPLIT_ARENA_SIZE_FAST];
alignas(16) static uint8_t slow_arena[FLOE_MNIST_SPLIT_ARENA_SIZE_SLOW] FLOE_SLOW_ARENA;

namespace {

// A log line without printf (newlib's formatted output may allocate).
class Line {
 public:
  Line& text(const char* s) {
    while (*s != '\0' && length_ + 2 < sizeof buffer_) buffer_[length_++] = *s++;
    return *this;
  }
  Line& number(uint64_t v, unsigned base = 10) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[v % base];
      v /= base;
    } while (v != 0);
    if (base == 16) text("0x");
    while (n > 0 && length_ + 2 < sizeof buffer_) buffer_[length_++] = digits[--n];
    return *this;
  }
  void print() {
    buffer_[length_++] = '\n';
    buffer_[length_] = '\0';
    floe::platform::log(buffer_);
    length_ = 0;
  }

 private:
  char buffer_[160] = {};
  size_t length_ = 0;
};

int fail(const char* what, const floe::Error& error) {
  Line().text("FAIL: ").text(what).text(": ").text(error.message).print();
  return 2;
}

// Loads the input, runs, and copies output 0 (10 floats) out.
int run(floe::Interpreter& interpreter, float* logits) {
  if (interpreter.Init() != floe::Status::kOk) return fail("Interpreter::Init", interpreter.error());
  const floe::TensorView in = interpreter.input(FLOE_MNIST_ONE_INPUT_IMAGES);
  const auto* source = reinterpret_cast<const uint8_t*>(floe_mnist_one_reference_input_0);
  for (size_t i = 0; i < in.bytes; ++i) static_cast<uint8_t*>(in.data)[i] = source[i];
  if (interpreter.Invoke() != floe::Status::kOk) return fail("Interpreter::Invoke", interpreter.error());
  const floe::TensorView out = interpreter.output(FLOE_MNIST_ONE_OUTPUT_SOFTMAX_LINEAR_ADD);
  for (size_t i = 0; i < FLOE_MNIST_ONE_REFERENCE_OUTPUT_0_ELEMENTS; ++i) logits[i] = out.as<float>()[i];
  return 0;
}

}  // namespace

int main() {
  floe::platform::init();
  constexpr size_t kClasses = FLOE_MNIST_ONE_REFERENCE_OUTPUT_0_ELEMENTS;
  float one[kClasses], split[kClasses];

  floe::Model one_model;
  if (one_model.Load(floe_mnist_one_model, FLOE_MNIST_ONE_MODEL_SIZE) != floe::Status::kOk) {
    return fail("Model::Load (one arena)", one_model.error());
  }
  floe::Interpreter one_interpreter(one_model, one_arena, sizeof one_arena);
  if (int status = run(one_interpreter, one)) return status;
  Line().text("one arena: ").number(sizeof one_arena).text(" B at ").number(reinterpret_cast<uintptr_t>(one_arena), 16).print();

  floe::Model split_model;
  if (split_model.Load(floe_mnist_split_model, FLOE_MNIST_SPLIT_MODEL_SIZE) != floe::Status::kOk) {
    return fail("Model::Load (regions)", split_model.error());
  }
  void* arenas[] = {fast_arena, slow_arena};
  const size_t sizes[] = {sizeof fast_arena, sizeof slow_arena};
  floe::Interpreter split_interpreter(split_model, arenas, sizes, FLOE_MNIST_SPLIT_REGION_COUNT);
  if (int status = run(split_interpreter, split)) return status;
  // Which activations each region holds, and where its arena is.
  for (uint32_t r = 0; r < split_model.region_count(); ++r) {
    char name[16];
    split_model.region_name(r, name, sizeof name);
    uint64_t tensors = 0, bytes = 0;
    for (size_t t = 0; t < split_model.tensor_count(); ++t) {
      if (split_model.is_constant(t) || split_model.tensor_region(t) != r) continue;
      ++tensors;
      bytes += split_interpreter.tensor(t).bytes;
    }
    Line()
        .text("region ")
        .text(name)
        .text(": arena ")
        .number(sizes[r])
        .text(" B at ")
        .number(reinterpret_cast<uintptr_t>(arenas[r]), 16)
        .text(", ")
        .number(tensors)
        .text(" activation tensors, ")
        .number(bytes)
        .text(" B")
        .print();
  }

  // Bit-exact against the one-arena run; both within tolerance of the host.
  size_t differing = 0, off_host = 0;
  for (size_t i = 0; i < kClasses; ++i) {
    uint32_t a, b;
    __builtin_memcpy(&a, &one[i], 4);
    __builtin_memcpy(&b, &split[i], 4);
    differing += a != b ? 1 : 0;
    const float host = floe_mnist_one_reference_output_0[i];
    const float diff = split[i] > host ? split[i] - host : host - split[i];
    const float scale = host > 1.0f ? host : (host < -1.0f ? -host : 1.0f);
    off_host += diff <= 1e-4f * scale ? 0 : 1;
  }
  size_t top = 0;
  for (size_t i = 1; i < kClasses; ++i) top = split[i] > split[top] ? i : top;
  Line()
      .text("memory_regions: digit ")
      .number(top)
      .text(", ")
      .number(differing)
      .text(" logits differ from the one-arena run (must be 0), ")
      .number(off_host)
      .text(" beyond the host's tolerance")
      .print();
  return differing == 0 && off_host == 0 ? 0 : 1;
}
