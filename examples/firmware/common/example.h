// SPDX-License-Identifier: Apache-2.0
// The shared body of the firmware examples: load an embedded model into a
// static arena, run it on a fixed input, print the output through
// runtime/platform.h and compare it with the output the host build computed
// (floe_add_model_reference). The same code runs as a host program and as
// Cortex-M firmware; nothing here allocates.
#pragma once

#include <stddef.h>
#include <stdint.h>

namespace floe::examples {

struct Example {
  const char* name;
  const uint8_t* model;        // 16-byte aligned (floe_add_model)
  size_t model_size;
  uint8_t* arena;              // 16-byte aligned, arena_size bytes
  size_t arena_size;
  size_t input_index;          // interpreter.input(i)
  const void* input;           // float, int8 or int16, as the model's input
  size_t input_elements;
  size_t output_index;         // interpreter.output(i)
  const void* expected;        // what the host computed for `input`, the output's dtype
  size_t output_elements;
  // Optional: one name per class of a float classifier output (output_elements
  // of them): the top label and its score are printed, device and host.
  const char* const* labels = nullptr;
};

// Float: device and host may differ by fused multiply-add and summation order
// in the Cortex-M kernels: |device - host| <= kTolerance * max(1, |host|) per
// element. int8: the integer arithmetic is the same everywhere, so every byte
// must be equal.
constexpr float kTolerance = 1e-4f;

// Runs the model's embedded self-test (floe::SelfTest; a model converted
// without --selftest-input has none and says so), then the example once, and
// checks it; then, when the command line holds
// "reps=N", N more inferences (for instruction-count benches). "profile=1"
// adds one inference timed op by op and prints the per-op table (cycles from
// DWT CYCCNT where the core has it; else the op list alone); "stop_after_op=K"
// ends the program as op K of one more inference finishes (K = -1: before its
// first op), for per-op instruction counts under QEMU. Returns the
// process exit status: 0 on a match, 1 on a mismatch, 2 if the runtime failed.
int run_example(const Example& example);

}  // namespace floe::examples
