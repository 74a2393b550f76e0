// SPDX-License-Identifier: Apache-2.0
// Runtime harness: bytes -> floe::Model::Load (checksum on, then off) ->
// Interpreter::Init -> Invoke on zeroed inputs, with the model buffer and the
// arena in guarded heap buffers. The invariant: a model that validates runs
// without touching memory outside the arena and the model buffer (ASan), with
// no undefined behaviour (UBSan) and in bounded time.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_support.h"

#if defined(FLOE_LIBFUZZER)
#include "tests/fuzz/model_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// Three of four mutations go through the model's structure (model_mutator.h);
// the rest, and any input that is not a valid model, are libFuzzer's own.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 4 != 0) {
    const size_t structured = floe::fuzz::mutate_model(data, size, max_size, seed);
    if (structured != 0) return structured;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::fuzz::run_model_bytes(data, size);
  return 0;
}
